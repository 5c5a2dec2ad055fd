"""The disk cache never fails a program (issue 41, item 3).

Every function the compile cache calls into ``minilazy.persist`` is made to raise, in turn, the
errors a file system, a bad setting or a bug can raise; then so are bad settings themselves
(``MINILAZY_CACHE_DIR`` or ``ml.set_cache_dir`` naming a path that cannot be a directory). Each
time: ``mark_step()`` returns, every pending tensor gets NumPy's value, one ``CacheWarning``
says why (once: the next programs compile in silence), and once the setting is fixed the disk
cache writes and loads again.
"""

from __future__ import annotations

import errno
import os
import signal
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minilazy as ml
from minilazy.persist import diskcache, diskformat, keys, trust
from minilazy.persist import executables as runtime_disk

# Every function the persistent cache's store calls, where the caller looks it up.
ENTRY_POINTS: dict[str, tuple[Any, str]] = {
    "cache_dir": (diskcache, "cache_dir"),
    "disk_entry (the key)": (runtime_disk, "disk_entry"),
    "entry": (keys, "entry"),
    "program_text": (keys, "program_text"),
    "fingerprint": (keys, "_fingerprint"),
    "load": (diskcache, "load"),
    "read": (diskcache, "read"),
    "check the directory": (trust, "check_directory"),
    "secret": (trust, "secret"),
    "user_root": (trust, "user_root"),
    "open an entry": (diskcache, "contents"),
    "unpack": (diskcache, "unpack"),
    "tag": (diskformat, "tag"),
    "deserialize": (runtime_disk, "deserialize"),
    "save": (diskcache, "save"),
    "serialize": (runtime_disk, "serialize"),
    "write": (diskcache, "write"),
    "pack": (diskcache, "pack"),
    "evict": (diskcache, "_evict"),
}
# An entry that cannot be loaded, or a program that cannot be kept, is that entry's trouble: a
# warning for it, the cache stays on; so is an entry the OS cannot open in a directory this user
# can use (a FIFO, a device, a link: tests/persist/test_diskcache.py). Any other failure turns the
# cache off, with one warning.
PER_ENTRY = {"deserialize", "serialize"}
PER_ENTRY_OS = {"open an entry"}
ERRORS: dict[str, Callable[[], Exception]] = {
    "permission denied": lambda: PermissionError(errno.EACCES, "Permission denied"),
    "disk full": lambda: OSError(errno.ENOSPC, "No space left on device"),
    "embedded null byte": lambda: ValueError("embedded null byte"),
    "a bug": lambda: RuntimeError("something unexpected"),
    "no memory": MemoryError,
    "a missing key": lambda: KeyError("HOME"),
}


def pending(n: int, seed: int) -> tuple[list[ml.Tensor], list[np.ndarray]]:
    """Three live tensors of one program, pending, and NumPy's values for them."""
    a = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    x = ml.asarray(a)
    return ([ml.exp(x * 0.5), x[::-1] - 1.0, ml.sum(x * x)],
            [np.exp(a * np.float32(0.5)), a[::-1] - np.float32(1.0), np.sum(a * a)])


def check(tensors: list[ml.Tensor], want: list[np.ndarray]) -> None:
    for t in tensors:
        assert "failed" not in repr(t), repr(t)
    for t, w in zip(tensors, want, strict=True):
        np.testing.assert_allclose(t.numpy(), w, rtol=1e-5)


def step(n: int, seed: int) -> None:
    """A step of three live tensors, pending at ``mark_step``; each checked against NumPy."""
    tensors, want = pending(n, seed)
    ml.mark_step()  # raised, and failed them for good, with an unusable cache directory
    check(tensors, want)


def warned(run: Callable[[], object]) -> list[str]:
    """The CacheWarnings ``run`` gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught if w.category is ml.CacheWarning]


def works_again(directory: Path) -> None:
    """With the setting fixed, a new program is written, and loaded by a cold memory cache."""
    ml.set_cache_dir(directory)
    ml.clear_cache()
    ml.reset_metrics()
    assert warned(lambda: step(11, 1)) == []
    assert ml.metrics().disk_writes == 1
    ml.clear_cache()
    ml.reset_metrics()
    assert warned(lambda: step(11, 2)) == []
    assert (ml.metrics().disk_hits, ml.metrics().compiles) == (1, 0)


@pytest.mark.parametrize("error", ERRORS, ids=list(ERRORS))
@pytest.mark.parametrize("where", ENTRY_POINTS, ids=list(ENTRY_POINTS))
def test_a_failure_anywhere_in_the_disk_cache_never_fails_a_step(
        disk: Path, monkeypatch: pytest.MonkeyPatch, where: str, error: str) -> None:
    step(5, 0)  # on disk: the next cold step reads it
    ml.clear_cache()
    ml.set_cache_dir(disk)  # as a new process: nothing of the setting's checked or read yet
    owner, name = ENTRY_POINTS[where]
    calls = [0]

    def broken(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        raise ERRORS[error]()

    monkeypatch.setattr(owner, name, broken)
    said = warned(lambda: (step(5, 1), step(6, 2), step(7, 3)))  # a read, then two writes
    assert calls[0] > 0, f"{where} was never called: the test tests nothing"
    if where in PER_ENTRY or (where in PER_ENTRY_OS and isinstance(ERRORS[error](), OSError)):
        assert 1 <= len(said) <= 3 and all("cannot" in s or "ignored" in s for s in said), said
        assert ml.cache_dir() == disk
    else:
        assert len(said) == 1 and "going on without the persistent cache" in said[0], said
    monkeypatch.undo()
    works_again(disk)


class Timeout(Exception):
    """What a user's signal handler raises: theirs, not the cache's."""


def test_a_users_timeout_while_an_entry_loads_reaches_the_user(
        disk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The cache turns its own errors into warnings, never the exception a signal handler raised
    # while it ran (a timer's timeout): that reaches the caller, and nothing pending is lost.
    step(5, 0)
    ml.clear_cache()
    real = runtime_disk.deserialize

    def interrupted(*args: Any) -> Any:
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(5)  # the handler raises in here
        return real(*args)

    def handler(signum: int, frame: object) -> None:
        raise Timeout("too slow")

    monkeypatch.setattr(runtime_disk, "deserialize", interrupted)
    before = signal.signal(signal.SIGUSR1, handler)
    try:
        tensors, want = pending(5, 1)
        with pytest.raises(Timeout):
            ml.mark_step()
    finally:
        signal.signal(signal.SIGUSR1, before)
    monkeypatch.undo()
    ml.mark_step()
    check(tensors, want)


def _file(tmp_path: Path) -> Path:
    blocker = tmp_path / "a file"
    blocker.write_text("a file where the directory should be")
    return blocker


# Settings that name no usable directory: (the path, from the test's tmp_path).
BAD: dict[str, Callable[[Path], str]] = {
    "embedded null byte": lambda t: str(t / "bad\0name"),
    "a file": lambda t: str(_file(t)),
    "under a file": lambda t: str(_file(t) / "cache"),
    "under /dev/null": lambda t: "/dev/null/cache",
    "under /proc": lambda t: "/proc/1/minilazy-cache",
    "a name too long": lambda t: str(t / ("x" * 300)),
    "a path too long": lambda t: str(t / "/".join(["y" * 200] * 30)),
    "a device": lambda t: "/dev/null",
}


@pytest.mark.parametrize("how", ["MINILAZY_CACHE_DIR", "set_cache_dir"])
@pytest.mark.parametrize("bad", BAD, ids=list(BAD))
def test_an_unusable_cache_setting_is_one_warning_and_the_fix_works(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, how: str) -> None:
    path = BAD[bad](tmp_path)
    ml.clear_cache()
    try:
        if how == "set_cache_dir":
            ml.set_cache_dir(path)
        elif "\0" in path:
            pytest.skip("an environment variable cannot hold a null byte")
        else:
            monkeypatch.setattr(diskcache.SETTINGS, "chosen", diskcache._Unset())
            monkeypatch.setenv("MINILAZY_CACHE_DIR", path)
        said = warned(lambda: (step(5, 0), step(6, 1)))
        assert len(said) == 1, said
        works_again(tmp_path / "fixed")
    finally:
        ml.set_cache_dir(None)


def test_a_directory_this_user_cannot_write(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes any directory")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    ml.set_cache_dir(locked / "cache")
    try:
        ml.clear_cache()
        assert len(warned(lambda: (step(5, 0), step(6, 1)))) == 1
        works_again(tmp_path / "fixed")
    finally:
        ml.set_cache_dir(None)
