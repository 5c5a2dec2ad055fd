"""Crash and hang isolation: a test that kills or stalls its process is reported, not lost.

Libraries under test crash (an integer division by zero raising ``SIGFPE``) and hang (a
reduction that never returns). The oracle runs its tests in pytest-xdist workers (``python -m
minilazy.conformance`` does by default), which pytest-xdist restarts when one dies; this module
makes the death explicable. Each worker keeps a small *current-test file*: the test's id, its
rules, its op, and the programs the test has run so far (as Python); ``faulthandler`` writes a
fatal signal's name next to it; and a watchdog ends a worker whose test runs longer than
``--lazy-timeout`` seconds, after marking the file *hung*. When the controller hears that a
worker died, :func:`post_mortem` reads those files and says what happened, with the program.
"""

from __future__ import annotations

import atexit
import faulthandler
import functools
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import IO, Any

HUNG = 86  # the exit status of a worker the watchdog stopped


class Watch:
    """The watchdog and current-test file of one process (a worker, or a run without any)."""

    def __init__(self, directory: Path, worker: str, timeout: float) -> None:
        self.path = directory / f"{worker}.json"
        self.fault_path = directory / f"{worker}.fault"
        self.timeout = timeout
        self.current: dict[str, Any] = {}
        self.timer: threading.Timer | None = None
        self.fault: IO[str] | None = None

    def arm_faulthandler(self) -> None:
        """Have a fatal signal (SIGFPE, SIGSEGV...) write its name to the fault file."""
        self.fault = open(self.fault_path, "w")  # open for the process's life
        faulthandler.enable(file=self.fault, all_threads=False)

    def start(self, nodeid: str, rules: list[str], op: str | None) -> None:
        """A test begins: record it, and start the watchdog."""
        if self.fault is None:  # now, not at configure: pytest's own faulthandler comes later
            self.arm_faulthandler()
        self.current = {"nodeid": nodeid, "rules": rules, "op": op, "programs": []}
        self._write()
        if self.timeout > 0:
            self.timer = threading.Timer(self.timeout, self._hang)
            self.timer.daemon = True
            self.timer.start()

    def note(self, text: str) -> None:
        """The test runs a program: keep its text (the last few), in case the process dies."""
        if self.current:
            self.current["programs"] = [*self.current["programs"][-2:], text]
            self._write()

    def stop(self) -> None:
        """The test ended (whatever its outcome): nothing to explain any more."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.current = {}
        self.path.unlink(missing_ok=True)

    def _hang(self) -> None:
        self.current["hung"] = self.timeout
        self._write()
        os._exit(HUNG)  # a C call that never returns cannot be interrupted: end the process

    def _write(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.current))
        tmp.replace(self.path)  # atomic: a crash mid-write leaves the last whole record


_WATCH: list[Watch] = []  # this process's watch, once the plugin made one


def install(watch: Watch) -> None:
    """Make ``watch`` this process's watch (the plugin does, when the oracle runs)."""
    _WATCH[:] = [watch]


def note(text: str) -> None:
    """Record a program's text in this process's current-test file (where there is one).

    Example:
        >>> note("x = 1")  # outside an oracle run: nothing to do
    """
    if _WATCH:
        _WATCH[0].note(text)


def timeout() -> float:
    """Seconds a test of this process may run before the watchdog stops it (0: no limit).

    Example:
        >>> timeout()  # outside an oracle run: no watchdog
        0.0
    """
    return _WATCH[0].timeout if _WATCH else 0.0


_FATAL = re.compile(r"Fatal Python error: (.+)")


def post_mortem(directory: Path, worker: str) -> tuple[str, dict[str, Any]]:
    """Why ``worker`` died, and the test it was running (from its files).

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     post_mortem(Path(d), "gw0")[0]
        'crashed (no signal recorded)'
    """
    record: dict[str, Any] = {}
    path = directory / f"{worker}.json"
    if path.exists():
        try:
            record = json.loads(path.read_text())
        except json.JSONDecodeError:
            pass
    if "hung" in record:
        return f"hung (ran over {record['hung']:.0f} s, stopped)", record
    fault = directory / f"{worker}.fault"
    text = fault.read_text(errors="replace") if fault.exists() else ""
    found = _FATAL.findall(text)
    return (f"crashed ({found[-1].strip()})" if found else "crashed (no signal recorded)"), record


def describe(cause: str, record: dict[str, Any]) -> str:
    r"""The failure text of a test that crashed or hung: the cause, then its last program.

    Example:
        >>> print(describe("crashed (Floating point exception)", {"programs": ["x // 0"]}))
        crashed (Floating point exception)
        program as Python:
        x // 0
    """
    programs = record.get("programs") or []
    text = cause
    if programs:
        last = programs[-1]
        text += "\n" + (last if last.startswith("program as") else f"program as Python:\n{last}")
    return text


PREFIX = "minilazy-oracle-"
STALE_S = 3600.0  # a directory untouched this long, of a process that is gone, is left over


def fresh_directory(base: Path) -> Path:
    """A directory for the current-test files of one run, removed when this process exits.

    The directories of earlier runs whose process died without removing them (killed, or
    crashed by the library it ran) are removed first.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     fresh_directory(Path(d)).is_dir()
        True
    """
    for old in base.glob(f"{PREFIX}*"):
        if _left_over(old):
            shutil.rmtree(old, ignore_errors=True)
    path = base / f"{PREFIX}{os.getpid()}-{int(time.time() * 1000)}"
    path.mkdir(parents=True, exist_ok=True)
    atexit.register(functools.partial(shutil.rmtree, path, ignore_errors=True))
    return path


def _left_over(path: Path) -> bool:
    """Whether ``path`` is a run's directory whose process is gone (not a live run's)."""
    try:
        pid = int(path.name[len(PREFIX):].split("-")[0])
        idle = time.time() - path.stat().st_mtime
    except (ValueError, OSError):
        return False
    if os.name != "posix" or pid == os.getpid() or idle < STALE_S:
        return False  # (a live run's watch rewrites its files: the directory's time moves)
    try:
        os.kill(pid, 0)  # signal 0: is there such a process? (nothing is sent)
    except ProcessLookupError:
        return True
    except OSError:  # another user's: alive
        return False
    return False
