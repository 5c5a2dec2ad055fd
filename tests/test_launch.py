"""`python -m minilazy.launch`: N processes, prefixed output, fail fast, timeout, env contract."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time

import pytest

from minilazy import launch as ml_launch
from minilazy.cluster import ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID, Cluster, env
from minilazy.launch import launch


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
        from minilazy.cluster import env
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


def test_one_failing_child_stops_the_others_and_sets_the_exit_code(tmp_path):
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


@pytest.mark.parametrize("body, code, line", [
    ("import sys; sys.exit('bad input')", 1, "[0] bad input"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 128 + 9, None),
    ("import sys; print('ok'); sys.exit(0)", 0, "[0] ok"),
])
def test_exit_codes_follow_the_shell(tmp_path, body, code, line):
    got, lines, _ = _run([_script(tmp_path, body)], 1)
    assert got == code and (line is None or line in lines)


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
    # Loaded from their files alone, under a bare package (importing `minilazy.launch` would
    # import the package, and jax): the launcher and the one module it reads, nothing else.
    code = ("import sys, types, importlib.util as u\n"
            "sys.modules['minilazy'] = types.ModuleType('minilazy')\n"
            "for name, path in (('minilazy.cluster', sys.argv[1]), ('launch', sys.argv[2])):\n"
            "    spec = u.spec_from_file_location(name, path)\n"
            "    sys.modules[name] = module = u.module_from_spec(spec)\n"
            "    spec.loader.exec_module(module)\n"
            "print('jax' in sys.modules)")
    cluster_file = ml_launch.__file__.replace("launch.py", "cluster.py")
    out = subprocess.run([sys.executable, "-c", code, cluster_file, ml_launch.__file__],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


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
