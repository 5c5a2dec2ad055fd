"""Run one script in N processes on this machine, joined by ``jax.distributed``.

``python -m minilazy.launch -n 2 [--devices-per-process K] [--timeout S] [--grace S] script.py
[args...]`` starts N processes running ``script.py``, each told by its environment the
coordinator address (a free localhost port), the number of processes and its own id
(:mod:`minilazy.scaleout.cluster`); each joins the others on its first use of minilazy
(:mod:`minilazy.scaleout.processes`). Output lines get a ``[i]`` prefix. The launcher exits 0
only when every script ends with 0 within ``--grace`` seconds (default 30) of the first to
end. Otherwise it stops the others and says why:

- a process fails (nonzero exit, or killed by a signal): the launcher names the one that failed
  first and exits with its code (128 + k for signal k);
- a script ends with 0 while others still run ``--grace`` seconds later: under
  ``jax.distributed`` those would wait for it forever (exit 1);
- ``--timeout`` seconds pass (exit 124, like ``timeout(1)``);
- the launcher gets SIGINT, SIGTERM or SIGHUP: it forwards the signal, kills what is left after
  a short grace, and exits 128 + the signal.

Each process leads its own process group, so stopping it stops its children too. This module
only spawns processes: it never imports JAX.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import IO, NamedTuple, TextIO

from minilazy.scaleout.cluster import ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID

TIMEOUT_EXIT = 124  # like timeout(1)
EARLY_EXIT = 1  # a script ended (with 0) while the others ran on past the grace period
GRACE = 30.0  # seconds within which every script must end once the first has
MAX_PROCESSES = 64  # on one machine; more is a typo (a fork bomb), not a run
MAX_DEVICES_PER_PROCESS = 256  # CPU devices each: more is a typo too (XLA makes each one)
KILL_AFTER = 2.0  # seconds between asking a process to stop and SIGKILL
_TICK = 0.05  # how often the launcher looks at signals, the grace and the timeout
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# `python script.py`, except that it reports "<exit code> <time.monotonic()>" on the status pipe
# (argv[1]) when the script ends: before jax.distributed's shutdown barrier (which waits for the
# others), and before the script's objects are freed (a peer may notice that and fail at once).
# A nonzero exit skips that barrier: it would hold a failed process 5 minutes. The code is
# reduced as the OS does (sys.exit(256) is a success).
_BOOT = """\
import os, runpy, sys, time, traceback
status = os.fdopen(int(sys.argv[1]), "w")
os.set_inheritable(status.fileno(), False)
sys.argv = sys.argv[2:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
def ended(code, at):
    try:  # unless the script closed it: then its exit says the same, a little later
        status.write(f"{code & 255} {at}\\n"); status.close()
    except OSError:
        pass
    return code & 255
try:
    scope = runpy.run_path(sys.argv[0], run_name="__main__")  # its objects, kept till told
    code = ended(0, time.monotonic())
    del scope
except SystemExit as e:  # sys.exit("message") prints the message and means 1
    at = time.monotonic()
    code = e.code if isinstance(e.code, int | None) else print(e.code, file=sys.stderr) or 1
    code = ended(code or 0, at)
except BaseException:
    at = time.monotonic()
    traceback.print_exc()
    code = ended(1, at)
sys.stdout.flush(); sys.stderr.flush()
if code:
    os._exit(code)
"""


class _End(NamedTuple):
    """A process's script ended (reported by the boot code) or the process exited."""

    at: float  # time.monotonic(), one clock for all processes of this machine
    process: int
    rc: int  # exit code, or -k when killed by signal k (as Popen.returncode)
    exited: bool  # False: only the script ended; the process may still be shutting down


@dataclasses.dataclass
class _Ends:
    """What the launcher has learnt of its processes' ends, by process index.

    Threads report ends in whatever order they are scheduled: each table keeps the earliest.
    """

    first: dict[int, _End] = dataclasses.field(default_factory=dict)  # a script's end or exit
    failed: dict[int, _End] = dataclasses.field(default_factory=dict)  # nonzero, before the stop
    exited: dict[int, _End] = dataclasses.field(default_factory=dict)
    stop_at: float = float("inf")  # when the launcher began stopping them: later ends are its own

    def take(self, e: _End) -> None:
        """Record one end."""
        for table, keep in ((self.first, True), (self.failed, e.rc != 0 and e.at <= self.stop_at),
                            (self.exited, e.exited)):
            if keep and (e.process not in table or e.at < table[e.process].at):
                table[e.process] = e

    def stopped(self, n: int) -> list[int]:
        """The processes that were still running when the launcher began stopping them."""
        return [i for i in range(n) if i not in self.failed
                and (i not in self.exited or self.exited[i].at > self.stop_at)]


def free_port() -> int:
    """A TCP port on localhost that was free a moment ago (the OS picks it).

    Example:
        >>> 0 < free_port() < 65536
        True
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _child_env(i: int, n: int, port: int, devices_per_process: int | None) -> dict[str, str]:
    e = dict(os.environ, PYTHONUNBUFFERED="1")
    e.update({ENV_COORDINATOR: f"127.0.0.1:{port}", ENV_NUM_PROCESSES: str(n),
              ENV_PROCESS_ID: str(i), "JAX_COORDINATOR_BIND_ADDRESS": f"127.0.0.1:{port}"})
    e.setdefault("JAX_CPU_COLLECTIVES_IMPLEMENTATION", "gloo")
    if devices_per_process is not None:
        e["JAX_NUM_CPU_DEVICES"] = str(devices_per_process)  # wins over XLA_FLAGS' count
    return e


def _pump(i: int, stream: IO[bytes], out: TextIO, lock: threading.Lock) -> None:
    for raw in iter(stream.readline, b""):  # read to the end even when `out` is gone (`| head`),
        with lock, contextlib.suppress(OSError, ValueError):  # or the process would block
            print(f"[{i}] {raw.decode(errors='replace').rstrip()}", file=out, flush=True)


def _read_status(i: int, status: IO[bytes], ends: queue.Queue[_End]) -> None:
    with status:
        fields = status.readline().split()
    if len(fields) == 2:
        ends.put(_End(float(fields[1]), i, int(fields[0]), exited=False))


def _wait(i: int, p: subprocess.Popen[bytes], ends: queue.Queue[_End]) -> None:
    rc = p.wait()  # a thread each, so that every exit is timed when it happens
    ends.put(_End(time.monotonic(), i, rc, exited=True))


def _spawn(i: int, argv: Sequence[str], env: dict[str, str], out: TextIO, lock: threading.Lock,
           ends: queue.Queue[_End]) -> tuple[subprocess.Popen[bytes], list[threading.Thread]]:
    """Start process ``i``; threads relay its output and time its script's end and its exit.

    Returns the process and the threads that end with its output and status pipes.
    """
    r, w = os.pipe()
    try:
        p = subprocess.Popen(
            [sys.executable, "-P", "-c", _BOOT, str(w), *argv], env=env, pass_fds=(w,),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True)  # its own process group: a stop reaches its children
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)  # only the child writes: the reader sees EOF when it is gone
    threads = [threading.Thread(target=_pump, args=(i, p.stdout, out, lock), daemon=True),
               threading.Thread(target=_read_status, args=(i, open(r, "rb"), ends), daemon=True),
               threading.Thread(target=_wait, args=(i, p, ends), daemon=True)]
    for t in threads:  # daemons: a grandchild holding the output open cannot hold us
        t.start()
    return p, threads[:2]


@contextlib.contextmanager
def _catch_signals() -> Iterator[list[int]]:
    """Note SIGINT, SIGTERM and SIGHUP instead of dying of them (ignored ones stay ignored)."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught  # only the main thread may set handlers
        return
    old = {s: signal.getsignal(s) for s in _FORWARDED}
    for s, h in old.items():
        if h != signal.SIG_IGN:  # as under nohup
            signal.signal(s, lambda k, _: caught.append(k))
    try:
        yield caught
    finally:
        for s, h in old.items():
            signal.signal(s, signal.SIG_DFL if h is None else h)


def _describe(rc: int) -> str:
    if rc >= 0:
        return f"exit {rc}"
    with contextlib.suppress(ValueError):
        return f"killed by {signal.Signals(-rc).name}"
    return f"killed by signal {-rc}"


def _names(processes: Sequence[int]) -> str:
    return ", ".join(map(str, sorted(processes)))


def _stop(procs: Sequence[subprocess.Popen[bytes]], sig: int, ends: queue.Queue[_End],
          known: _Ends) -> None:
    """Send ``sig`` to every process group still running, SIGKILL after ``KILL_AFTER`` s."""
    for s, wait in ((sig, KILL_AFTER), (signal.SIGKILL, 10.0)):
        for i, p in enumerate(procs):  # jax.distributed catches SIGTERM (preemption): SIGKILL
            if i not in known.exited:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, s)
        end = time.monotonic() + wait
        while len(known.exited) < len(procs) and time.monotonic() < end:
            with contextlib.suppress(queue.Empty):
                known.take(ends.get(timeout=_TICK))


def _check(argv: Sequence[str], n: int, devices_per_process: int | None, timeout: float | None,
           grace: float) -> None:
    if not 1 <= n <= MAX_PROCESSES:
        raise ValueError(f"need at least one process and at most {MAX_PROCESSES}, got n={n}")
    for flag, value in (("--timeout", timeout), ("--grace", grace)):
        if value is not None and not value > 0:
            raise ValueError(f"{flag} must be > 0, got {value}")
    if devices_per_process is not None and not 1 <= devices_per_process <= \
            MAX_DEVICES_PER_PROCESS:
        raise ValueError(f"--devices-per-process must be >= 1 and at most "
                         f"{MAX_DEVICES_PER_PROCESS}, got {devices_per_process}")
    if not argv or not os.path.exists(argv[0]):
        script = argv[0] if argv else ""
        raise FileNotFoundError(errno.ENOENT, f"no such script: {script!r}", script)


def launch(argv: Sequence[str], n: int, *, devices_per_process: int | None = None,
           timeout: float | None = None, grace: float = GRACE, out: TextIO | None = None) -> int:
    """Run ``python argv[0] argv[1:]`` in ``n`` processes; return 0 or why not (module doc).

    ``devices_per_process`` sets ``JAX_NUM_CPU_DEVICES`` (CPU devices in each process). What
    went wrong is reported on stderr. Raises ``ValueError`` for a bad count or limit and
    ``FileNotFoundError`` for a missing script, before anything starts.

    Example:
        >>> import io, pathlib, tempfile
        >>> script = pathlib.Path(tempfile.mkdtemp()) / "hello.py"
        >>> _ = script.write_text("import os; print('hi from', os.environ['MINILAZY_PROCESS_ID'])")
        >>> buf = io.StringIO()
        >>> launch([str(script)], 2, out=buf)
        0
        >>> sorted(buf.getvalue().splitlines())
        ['[0] hi from 0', '[1] hi from 1']
    """
    _check(argv, n, devices_per_process, timeout, grace)
    out, port, lock = sys.stdout if out is None else out, free_port(), threading.Lock()
    start = time.monotonic()
    deadline = start + timeout if timeout is not None else float("inf")
    ends: queue.Queue[_End] = queue.Queue()
    procs: list[subprocess.Popen[bytes]] = []
    threads: list[threading.Thread] = []
    known, timed_out, early = _Ends(), False, False
    with _catch_signals() as caught:
        try:
            while len(procs) < n and not caught:
                p, relays = _spawn(len(procs), argv, _child_env(len(procs), n, port,
                                   devices_per_process), out, lock, ends)
                procs.append(p)
                threads += relays
            while len(known.exited) < n and not known.failed and not caught:
                now = time.monotonic()
                timed_out = now > deadline
                early = 0 < len(known.first) < n and now > min(known.first.values()).at + grace
                if timed_out or early:
                    break
                with contextlib.suppress(queue.Empty):
                    known.take(ends.get(timeout=_TICK))
        finally:
            known.stop_at = time.monotonic()
            _stop(procs, caught[0] if caught else signal.SIGTERM, ends, known)
            end = time.monotonic() + 2  # the last lines before our report; every status
            for t in threads:
                t.join(timeout=max(0.0, end - time.monotonic()))
            with contextlib.suppress(queue.Empty):
                while True:
                    known.take(ends.get_nowait())
    if not (caught or known.failed or timed_out or early):
        return 0
    alive = known.stopped(len(procs))
    stopped = f"; stopped processes {_names(alive)}" if alive else ""
    if caught:
        code, why = 128 + caught[0], f"stopped by {signal.Signals(caught[0]).name}"
    elif known.failed:
        first, *then = sorted(known.failed.values())
        code = 128 - first.rc if first.rc < 0 else first.rc
        why = f"process {first.process} failed first ({_describe(first.rc)} at " \
              f"{first.at - start:.2f} s)" + "".join(
                  f"; process {e.process} failed after it ({_describe(e.rc)})" for e in then)
    elif timed_out:
        code, why = TIMEOUT_EXIT, f"timed out after {timeout:g} s"
    else:
        first = min(known.first.values())
        running = [i for i in range(n) if i not in known.first or known.first[i].at > known.stop_at]
        code, why = EARLY_EXIT, (
            f"process {first.process} ended (exit 0) at {first.at - start:.2f} s, but processes "
            f"{_names(running)} still ran {grace:g} s later (--grace {grace:g})")
    print(f"minilazy.launch: {why}{stopped}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``python -m minilazy.launch -n N [options] script.py [args...]``.

    Example:
        >>> import pathlib, tempfile
        >>> script = pathlib.Path(tempfile.mkdtemp()) / "fail.py"
        >>> _ = script.write_text("import sys; print('bye'); sys.exit(3)")
        >>> main(["-n", "1", "--timeout", "60", str(script)])
        [0] bye
        3
    """
    ap = argparse.ArgumentParser(
        prog="python -m minilazy.launch", description=f"Run one script in N processes; "
        f"each reads {ENV_COORDINATOR}, {ENV_NUM_PROCESSES} and {ENV_PROCESS_ID}. Exit 0 "
        "when every script ends with 0; else the code of the process that failed first, 1 "
        "when one ended early, 124 on timeout, 128 + k on signal k.")
    ap.add_argument("-n", "--nprocs", type=int, default=2,
                    help=f"processes, 1 to {MAX_PROCESSES} (default 2)")
    ap.add_argument("--devices-per-process", type=int, metavar="K",
                    help=f"CPU devices each, 1 to {MAX_DEVICES_PER_PROCESS}")
    ap.add_argument("--timeout", type=float, metavar="S", help="stop all after S seconds")
    ap.add_argument("--grace", type=float, metavar="S", default=GRACE,
                    help="once one script has ended, stop the rest (a failure) if they have not "
                    f"ended S seconds later (default {GRACE:g})")
    ap.add_argument("script", help="the Python script every process runs")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    a = ap.parse_args(argv)
    argv = [a.script, *a.args]
    try:
        _check(argv, a.nprocs, a.devices_per_process, a.timeout, a.grace)
    except (ValueError, FileNotFoundError) as e:
        ap.error(e.strerror if isinstance(e, FileNotFoundError) and e.strerror else str(e))
    return launch(argv, a.nprocs, devices_per_process=a.devices_per_process, timeout=a.timeout,
                  grace=a.grace)


if __name__ == "__main__":
    raise SystemExit(main())
