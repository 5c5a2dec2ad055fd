"""Run one script in N processes on this machine, joined by ``jax.distributed``.

``python -m minilazy.launch -n 2 [--devices-per-process K] [--timeout S] script.py [args...]``
starts N processes running ``script.py``, each told by its environment the coordinator address
(a free localhost port), the number of processes and its own id (:mod:`minilazy.cluster`);
minilazy's runtime joins them up on first use. Output lines get a ``[i]`` prefix. If one
process fails, the others are stopped and the launcher exits with the first nonzero code (124 on
timeout). This module only spawns processes: it never imports JAX.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, TextIO

from minilazy.cluster import ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID

TIMEOUT_EXIT = 124  # like timeout(1)

# `python script.py`, except that an uncaught exception or sys.exit(k != 0) ends the process at
# once, skipping jax.distributed's shutdown barrier (it would hold a failed process 5 minutes).
_BOOT = """\
import os, runpy, sys, traceback
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
code = 0
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as e:  # sys.exit("message") prints the message and means 1
    code = e.code if isinstance(e.code, int | None) else print(e.code, file=sys.stderr) or 1
except BaseException:
    traceback.print_exc()
    code = 1
if code:
    sys.stdout.flush(); sys.stderr.flush(); os._exit(code)
"""


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
    for raw in iter(stream.readline, b""):
        with lock:
            print(f"[{i}] {raw.decode(errors='replace').rstrip()}", file=out, flush=True)


def _stop(procs: Sequence[subprocess.Popen[bytes]], grace: float = 1.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):  # jax.distributed catches SIGTERM (preemption)
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, sig)  # the child's own session: its children go too
        end = time.monotonic() + grace
        while any(p.poll() is None for p in procs) and time.monotonic() < end:
            time.sleep(0.01)


def launch(argv: Sequence[str], n: int, *, devices_per_process: int | None = None,
           timeout: float | None = None, out: TextIO | None = None) -> int:
    """Run ``python argv[0] argv[1:]`` in ``n`` processes; return the first nonzero exit code.

    ``devices_per_process`` sets ``JAX_NUM_CPU_DEVICES`` (CPU devices in each process); after
    ``timeout`` seconds all are stopped (result 124); death by signal k is 128 + k.

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
    if n < 1:
        raise ValueError(f"need at least one process, got n={n}")
    out, port, lock = sys.stdout if out is None else out, free_port(), threading.Lock()
    procs: list[subprocess.Popen[bytes]] = []
    pumps: list[threading.Thread] = []
    deadline = None if timeout is None else time.monotonic() + timeout
    note: Callable[[str], None] = lambda m: print(f"minilazy.launch: {m}", file=sys.stderr)
    code = 0
    try:
        for i in range(n):
            procs.append(subprocess.Popen(
                [sys.executable, "-P", "-c", _BOOT, *argv], env=_child_env(i, n, port,
                devices_per_process), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True))
            pumps.append(threading.Thread(target=_pump, args=(i, procs[i].stdout, out, lock)))
            pumps[i].start()
        while None in [p.poll() for p in procs] and not any(p.returncode for p in procs):
            if deadline is not None and time.monotonic() > deadline:
                code = TIMEOUT_EXIT
                note(f"timed out after {timeout} s; stopping all processes")
                break
            time.sleep(0.02)
        bad = [(i, p.returncode) for i, p in enumerate(procs) if p.returncode]
        if bad and code == 0:  # the first to fail (or the lowest id among those seen together)
            code = 128 - bad[0][1] if bad[0][1] < 0 else bad[0][1]
            note(f"process {bad[0][0]} exited with {code}")
    except KeyboardInterrupt:
        code = 130
    finally:
        _stop(procs)
        for t in pumps:
            t.join(timeout=5)
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
        f"each reads {ENV_COORDINATOR}, {ENV_NUM_PROCESSES} and {ENV_PROCESS_ID}.")
    ap.add_argument("-n", "--nprocs", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--devices-per-process", type=int, metavar="K", help="CPU devices each")
    ap.add_argument("--timeout", type=float, metavar="S", help="stop all after S seconds")
    ap.add_argument("script", help="the Python script every process runs")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    a = ap.parse_args(argv)
    return launch([a.script, *a.args], a.nprocs, devices_per_process=a.devices_per_process,
                  timeout=a.timeout)


if __name__ == "__main__":
    raise SystemExit(main())
