"""`python -m minilazy.launch`: N processes, prefixed output, fail fast, timeout, env contract."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from minilazy.scaleout import cluster
from minilazy.scaleout import launch as ml_launch
from minilazy.scaleout.cluster import (
    ENV_COORDINATOR,
    ENV_NUM_PROCESSES,
    ENV_PROCESS_ID,
    Cluster,
    env,
)
from minilazy.scaleout.launch import launch


def _script(tmp_path, body: str, name: str = "script.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def _run(argv, n, **kw):
    out = io.StringIO()
    start = time.monotonic()
    code = launch(argv, n, out=out, **kw)
    return code, out.getvalue().splitlines(), time.monotonic() - start


def test_children_learn_their_ids_and_share_one_coordinator(tmp_path):
    s = _script(tmp_path, """
        import os, sys
        from minilazy.scaleout.cluster import env
        c = env()
        print("id", c.process_id, "of", c.num_processes, "at", c.coordinator, "args", sys.argv[1:])
        print("cpu devices:", os.environ.get("JAX_NUM_CPU_DEVICES"),
              os.environ["JAX_COORDINATOR_BIND_ADDRESS"] == c.coordinator)
    """)
    code, lines, _ = _run([s, "--lr", "0.1"], 2, devices_per_process=3)
    assert code == 0, lines
    ids = sorted(line for line in lines if " id " in line)
    assert [line[:9] for line in ids] == ["[0] id 0 ", "[1] id 1 "]
    assert all("of 2 at 127.0.0.1:" in line and "['--lr', '0.1']" in line for line in ids)
    assert len({line.split(" at ")[1] for line in ids}) == 1  # the same address in both
    assert sorted(line for line in lines if "cpu devices" in line) == [
        "[0] cpu devices: 3 True", "[1] cpu devices: 3 True"]


def test_a_script_runs_as_main_with_its_directory_importable(tmp_path):
    _script(tmp_path, "VALUE = 42\n", name="helper_mod.py")
    s = _script(tmp_path, """
        import sys, helper_mod
        if __name__ == "__main__":
            print(helper_mod.VALUE, sys.argv[0].endswith("script.py"))
    """)
    assert _run([s], 1)[:2] == (0, ["[0] 42 True"])


def test_one_failing_child_stops_the_others_and_sets_the_exit_code(tmp_path, capsys):
    s = _script(tmp_path, """
        import os, sys, time
        pid = int(os.environ["MINILAZY_PROCESS_ID"])
        marker = os.path.join(os.path.dirname(__file__), "pid0")
        if pid == 1:  # fail once process 0 is surely running (a loaded machine starts it late)
            while not os.path.exists(marker):
                time.sleep(0.05)
            sys.exit(3)
        open(marker + ".tmp", "w").write(str(os.getpid()))
        os.replace(marker + ".tmp", marker)  # whole, when process 1 sees it
        time.sleep(60)
        print("never")
    """)
    code, lines, took = _run([s], 2)
    assert code == 3 and took < 20 and "[0] never" not in lines
    err = capsys.readouterr().err
    assert "process 1 failed first (exit 3 at " in err and "; stopped processes 0" in err, err
    with pytest.raises(ProcessLookupError):  # process 0 is gone, not left behind
        os.kill(int((tmp_path / "pid0").read_text()), 0)


def test_an_uncaught_exception_exits_1_at_once_with_its_traceback(tmp_path):
    s = _script(tmp_path, """
        import atexit, time
        atexit.register(time.sleep, 60)  # like jax.distributed's shutdown barrier: skipped
        raise ValueError("boom")
    """)
    code, lines, took = _run([s], 1)
    assert code == 1 and took < 20
    assert "[0] ValueError: boom" in lines and "[0] Traceback (most recent call last):" in lines


@pytest.mark.parametrize("body, code, line, why", [
    ("import sys; sys.exit('bad input')", 1, "[0] bad input", "exit 1"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 128 + 9, None,
     "killed by SIGKILL"),
    ("import sys; sys.exit(256 + 3)", 3, None, "exit 3"),  # as the shell sees it
    ("import sys; print('ok'); sys.exit(0)", 0, "[0] ok", None),
])
def test_exit_codes_follow_the_shell(tmp_path, capsys, body, code, line, why):
    got, lines, _ = _run([_script(tmp_path, body)], 1)
    err = capsys.readouterr().err
    assert got == code and (line is None or line in lines)
    assert (f"process 0 failed first ({why} at " in err) if why else err == "", err


def test_timeout_stops_every_process(tmp_path):
    s = _script(tmp_path, "import time; print('start', flush=True); time.sleep(60)\n")
    code, lines, took = _run([s], 2, timeout=1.0)
    assert code == ml_launch.TIMEOUT_EXIT and took < 15
    assert sorted(lines) == ["[0] start", "[1] start"]


def test_env_parses_and_validates():
    good = {ENV_COORDINATOR: "127.0.0.1:9", ENV_NUM_PROCESSES: "2", ENV_PROCESS_ID: "0"}
    assert env(good) == Cluster("127.0.0.1:9", 2, 0)
    assert env({ENV_COORDINATOR: "127.0.0.1:9"}) is None  # not launched by us
    with pytest.raises(ValueError, match="not in"):
        env({**good, ENV_PROCESS_ID: "2"})
    with pytest.raises(ValueError, match="malformed"):
        env({ENV_NUM_PROCESSES: "2", ENV_PROCESS_ID: "0"})
    with pytest.raises(ValueError, match="at least one"):
        launch(["x.py"], 0)


def test_the_launcher_never_imports_jax():
    # Under a bare package (minilazy's __init__ imports jax), as _BARE_LAUNCHER runs it: the
    # command's face, the launcher, the one module it reads and their packages, nothing else.
    code = ("import sys, types\n"
            "sys.modules['minilazy'] = package = types.ModuleType('minilazy')\n"
            "package.__path__ = [sys.argv[1]]\n"
            "import minilazy.launch\n"
            "print('jax' in sys.modules,\n"
            "      sorted(m for m in sys.modules if m.startswith('minilazy.')))")
    root = os.path.dirname(os.path.dirname(cluster.__file__))
    out = subprocess.run([sys.executable, "-c", code, root], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ("False ['minilazy.launch', 'minilazy.scaleout', "
                                  "'minilazy.scaleout.cluster', 'minilazy.scaleout.launch']")


def test_the_command_line(tmp_path):
    s = _script(tmp_path, "import sys; print(sys.argv[1:])\n")
    out = subprocess.run([sys.executable, "-m", "minilazy.launch", "-n", "2", "--timeout", "60",
                          s, "-n", "5"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.splitlines()) == ["[0] ['-n', '5']", "[1] ['-n', '5']"]


def test_two_jax_processes_all_reduce_through_the_launched_environment(tmp_path):
    # What the runtime does on first use: join with the launcher's variables, then a global mesh.
    s = _script(tmp_path, """
        import os
        import jax, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        jax.distributed.initialize(num_processes=int(os.environ["MINILAZY_NUM_PROCESSES"]),
                                   process_id=int(os.environ["MINILAZY_PROCESS_ID"]))
        mesh = Mesh(np.array(jax.devices()), ("data",))
        x = jax.make_array_from_callback(
            (4,), NamedSharding(mesh, P("data")), lambda i: np.arange(4.0, dtype=np.float32)[i])
        total = jax.jit(lambda a: a.sum(), out_shardings=NamedSharding(mesh, P()))(x)
        print(jax.process_index(), len(jax.devices()), float(total.addressable_data(0)))
    """)
    code, lines, _ = _run([s], 2, devices_per_process=1, timeout=120)
    assert code == 0, lines
    assert sorted(line for line in lines if line.endswith("6.0")) == ["[0] 0 2 6.0", "[1] 1 2 6.0"]


def _wait_for(*paths, limit: float = 60.0) -> None:
    """Until every file exists (a loaded machine starts processes late): markers, not sleeps."""
    end = time.monotonic() + limit
    while not all(os.path.exists(p) for p in paths):
        assert time.monotonic() < end, f"never appeared: {paths}"
        time.sleep(0.02)


def _gone(pid: int, limit: float = 10.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


# `python -m minilazy.launch` without the package's __init__ (and so without JAX): fast to start.
_BARE_LAUNCHER = [sys.executable, "-c", (
    "import runpy, sys, types\n"
    "sys.modules['minilazy'] = package = types.ModuleType('minilazy')\n"
    f"package.__path__ = [{os.path.dirname(os.path.dirname(ml_launch.__file__))!r}]\n"
    "runpy.run_module('minilazy.launch', run_name='__main__', alter_sys=True)")]

# Each process starts a child of its own, writes both pids, and waits to be stopped.
_SLEEPERS = """
    import os, subprocess, sys, time
    here, i = os.path.dirname(__file__), os.environ["MINILAZY_PROCESS_ID"]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    open(f"{here}/pids{i}.tmp", "w").write(f"{os.getpid()} {child.pid}")
    os.replace(f"{here}/pids{i}.tmp", f"{here}/pids{i}")
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_launcher_stops_every_process_and_its_children(tmp_path, sig):
    if signal.getsignal(sig) == signal.SIG_IGN:  # inherited; the launcher keeps it ignored
        pytest.skip(f"{sig.name} is ignored here (as under nohup)")
    s = _script(tmp_path, _SLEEPERS)
    launcher = subprocess.Popen([*_BARE_LAUNCHER, "-n", "2", s],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        _wait_for(tmp_path / "pids0", tmp_path / "pids1")
        pids = [int(p) for i in (0, 1) for p in (tmp_path / f"pids{i}").read_text().split()]
        launcher.send_signal(sig)
        _, err = launcher.communicate(timeout=30)
        assert launcher.returncode == 128 + sig, err
        assert f"stopped by {sig.name}" in err
        assert all(_gone(pid) for pid in pids), "left behind: " + str(pids)
    finally:  # today's launcher would leave them running: clean up what this test started
        launcher.kill()
        launcher.wait()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_process_that_ends_early_is_reported_within_the_grace_period(tmp_path, capsys):
    # Process 1 leaves mid-run with code 0 and, like jax.distributed's shutdown barrier, then
    # waits for the others, who wait for it: a deadlock the launcher must break.
    s = _script(tmp_path, """
        import atexit, os, sys, time
        marker = os.path.join(os.path.dirname(__file__), "pid0")
        if os.environ["MINILAZY_PROCESS_ID"] == "1":
            while not os.path.exists(marker):
                time.sleep(0.02)
            atexit.register(time.sleep, 60)
            sys.exit(0)
        open(marker + ".tmp", "w").write(str(os.getpid()))
        os.replace(marker + ".tmp", marker)
        time.sleep(60)
    """)
    code, _, took = _run([s], 2, grace=2.0)
    err = capsys.readouterr().err
    assert code == ml_launch.EARLY_EXIT and 2.0 <= took < 15, (code, took, err)
    assert "process 1 ended (exit 0) at " in err, err
    assert "but processes 0 still ran 2 s later (--grace 2)" in err, err
    assert "stopped processes 0, 1" in err, err
    assert _gone(int((tmp_path / "pid0").read_text()))


def test_processes_that_end_within_the_grace_period_succeed(tmp_path):
    s = _script(tmp_path, """
        import os, time
        done0 = os.path.join(os.path.dirname(__file__), "done0")
        if os.environ["MINILAZY_PROCESS_ID"] == "1":
            while not os.path.exists(done0):
                time.sleep(0.02)
            time.sleep(0.5)  # an uneven finish: a little more work after process 0 is done
            print("done")
        else:
            open(done0, "w").close()
    """)
    assert _run([s], 2, grace=5.0)[:2] == (0, ["[1] done"])


def test_the_process_that_failed_first_is_named(tmp_path, capsys):
    # Process 0 fails (exit 1) as soon as process 1 is gone, as a collective peer does: both are
    # gone within a millisecond (one poll of the launcher), and process 1's failure is the cause.
    s = _script(tmp_path, """
        import fcntl, os, sys, time
        here = os.path.dirname(__file__)
        lock = open(os.path.join(here, "lock"), "w")
        if os.environ["MINILAZY_PROCESS_ID"] == "1":
            fcntl.flock(lock, fcntl.LOCK_EX)  # released by its death
            open(os.path.join(here, "locked"), "w").close()
            raise ValueError("the cause")
        while not os.path.exists(os.path.join(here, "locked")):
            time.sleep(0.001)
        fcntl.flock(lock, fcntl.LOCK_EX)
        sys.exit("lost my peer")
    """)
    code, lines, _ = _run([s], 2)
    err = capsys.readouterr().err
    assert code == 1 and "[1] ValueError: the cause" in lines, lines
    assert "process 1 failed first (exit 1 at " in err, err
    # Process 0 either fails on its own or is stopped first: both are said, never blamed.
    assert "process 0 failed after it (exit 1)" in err or "; stopped processes 0" in err, err


@pytest.mark.parametrize("args, message", [
    (["-n", "0"], "at least one process"),
    (["-n", "-3"], "at least one process"),
    (["-n", str(ml_launch.MAX_PROCESSES + 1)], f"at most {ml_launch.MAX_PROCESSES}"),
    (["--grace", "0"], "--grace must be > 0"),
    (["--grace", "nan"], "--grace must be > 0"),
    (["--timeout", "-1"], "--timeout must be > 0"),
    (["--devices-per-process", "0"], "--devices-per-process must be >= 1"),
    # Absurd, negative and non-numeric values: usage errors too, never a run or a traceback.
    (["-n", "99999999999999999999999"], f"at most {ml_launch.MAX_PROCESSES}"),
    (["-n", "1.5"], "invalid int value: '1.5'"),
    (["--devices-per-process", "99999999999999999999"],
     f"at most {ml_launch.MAX_DEVICES_PER_PROCESS}"),
    (["--devices-per-process", "-2"], "--devices-per-process must be >= 1"),
    (["--timeout", "nan"], "--timeout must be > 0"),
    (["--timeout", "ten"], "invalid float value: 'ten'"),
    (["--grace=-1e999"], "--grace must be > 0"),
])
def test_bad_arguments_are_usage_errors(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as e:
        ml_launch.main([*args, _script(tmp_path, "print('ran')\n")])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and message in err and "ran" not in out, err


def test_a_missing_script_is_named_before_anything_starts(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        ml_launch.main(["-n", "2", str(tmp_path / "nope.py")])
    assert e.value.code == 2 and "no such script: " in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="nope.py"):
        launch([str(tmp_path / "nope.py")], 2)


class _GoneReader(io.StringIO):
    """An output whose reader has left after the first line, as `launch ... | head -1`."""

    def write(self, s: str) -> int:
        if self.tell():
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(s)


def test_output_nobody_reads_does_not_block_the_processes(tmp_path):
    s = _script(tmp_path, "for k in range(5000):\n    print('line', k, 'x' * 60)\nprint('end')\n")
    out = _GoneReader()
    assert launch([s], 2, timeout=60, out=out) == 0  # more than a pipe holds (64 KiB), drained
    assert out.getvalue() in ("[0] line 0 " + "x" * 60, "[1] line 0 " + "x" * 60)
