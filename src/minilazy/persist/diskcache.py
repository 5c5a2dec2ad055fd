"""The persistent compile cache: compiled programs kept on disk, for the next process.

Above core. The compile cache asks its store (``executables.DiskStore``), which asks this module,
only when its in-memory LRU misses. An entry is named by :mod:`minilazy.persist.keys`;
:func:`load` / :func:`save` move the runtime's serialized executables in and out of entry files
(their layout: :mod:`minilazy.persist.diskformat`), written atomically. Never imports jax: the
runtime serializes and deserializes executables.

Loading an executable unpickles it, which can run code (as with JAX's own compilation cache): a
directory is used only if it is this user's and nobody else can write it, and an entry only if
its tag says this user wrote it (:mod:`minilazy.persist.trust`). The cache never fails a
program: whatever goes wrong is a :class:`CacheWarning`, and the program is compiled instead.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from minilazy.core.barrier import interruption
from minilazy.persist import trust
from minilazy.persist.diskformat import Untrusted, contents, pack, unpack
from minilazy.persist.keys import Entry

T = TypeVar("T")
ENV: Final = "MINILAZY_CACHE_DIR"
SUFFIX: Final = ".program"
DEFAULT_MAX_BYTES: Final = 1 << 30
_STALE_TEMP_S: Final = 3600.0  # a temporary file this old is a crashed writer's: removed


class CacheWarning(UserWarning):
    """A persistent compile cache entry was ignored, or the cache cannot be used (or trusted).

    Never an error: minilazy compiles the program instead, and goes on.

    Example:
        >>> import minilazy as ml
        >>> issubclass(ml.CacheWarning, UserWarning)
        True
    """


class _Unset:
    """No :func:`set_cache_dir` call yet: the environment decides."""


@dataclass
class Settings:
    """Where the persistent cache is and how big it may grow: one of the engine's parts.

    Example:
        >>> SETTINGS.reset()  # as in a new process: the environment decides the directory
        >>> isinstance(SETTINGS.chosen, _Unset)
        True
    """

    chosen: Path | None | _Unset
    max_bytes: int
    broken: Path | None = None  # a directory that failed: unused until set_cache_dir is called
    failed: bool = False  # the cache failed where no directory was known: off till set_cache_dir
    estimate: int | None = None  # bytes in the directory (this process's estimate)
    secret: tuple[object, bytes] | None = None  # this user's, by what decides where it is

    def reset(self) -> None:
        """Forget ``set_cache_dir``'s choice, a failed directory and the secret read."""
        with _LOCK:
            self.chosen, self.max_bytes = _Unset(), DEFAULT_MAX_BYTES
            self.broken = self.estimate = self.secret = None
            self.failed = False


SETTINGS: Final = Settings(_Unset(), DEFAULT_MAX_BYTES)
_LOCK: Final = threading.Lock()


def _from_environment() -> Path | None:
    value = os.environ.get(ENV)
    if not value:
        return None if value is not None else trust.user_root()
    try:
        return Path(value).expanduser()
    except (RuntimeError, KeyError):  # "~" with no home directory: used as it is (and warned of)
        return Path(value)


def cache_dir() -> Path | None:
    """The directory of the persistent compile cache, or ``None`` when it is off.

    Set by :func:`set_cache_dir`; until then by ``MINILAZY_CACHE_DIR`` (set but empty: off),
    else ``$XDG_CACHE_HOME/minilazy``, else ``~/.cache/minilazy``. ``None`` too after the
    directory failed, or was found unsafe (a :class:`CacheWarning` said why).

    Example:
        >>> import minilazy as ml
        >>> ml.cache_dir() is None or ml.cache_dir().name != ""
        True
    """
    with _LOCK:
        chosen = SETTINGS.chosen
        found = _from_environment() if isinstance(chosen, _Unset) else chosen
        return None if found is None or found == SETTINGS.broken or SETTINGS.failed else found


def set_cache_dir(path: str | os.PathLike[str] | None, *,
                  max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Keep compiled programs in ``path`` from now on, for every thread; ``None`` turns it off.

    Overrides ``MINILAZY_CACHE_DIR``. Entries not used for longest are deleted when the
    directory holds more than about ``max_bytes``. It is made with mode 0o700; one that exists
    is used only if it is yours and nobody else can write it (loading an entry unpickles it),
    else a :class:`CacheWarning` says why and the process runs without it. A directory that
    failed is tried again after this call.

    Example:
        >>> import minilazy as ml, tempfile
        >>> before = ml.cache_dir()
        >>> ml.set_cache_dir(tempfile.mkdtemp()); ml.clear_cache()
        >>> ml.sync(ml.ones((5,)) * 3.0)  # compiled, and written to disk
        >>> ml.clear_cache(); ml.reset_metrics()  # as in a new process
        >>> ml.sync(ml.ones((5,)) * 4.0)  # read from disk
        >>> ml.metrics().disk_hits, len(list(ml.cache_dir().iterdir()))
        (1, 1)
        >>> ml.set_cache_dir(before)
    """
    if type(max_bytes) is not int or max_bytes < 0:
        raise ValueError(f"max_bytes must be an int >= 0, got {max_bytes!r}")
    with _LOCK:
        SETTINGS.chosen = None if path is None else Path(path).expanduser()
        SETTINGS.max_bytes = max_bytes
        SETTINGS.broken = SETTINGS.estimate = SETTINGS.secret = None
        SETTINGS.failed = False


def warn(message: str) -> None:
    """Warn with a :class:`CacheWarning`: an entry or the directory is not used, never fatal."""
    warnings.warn(f"minilazy persistent compile cache: {message}", CacheWarning, stacklevel=2)


def read(key: str, about: Mapping[str, str]) -> bytes | None:
    """The payload of entry ``key``, or ``None``: no entry, or one ignored with a warning.

    ``about`` says what this process would have written for the entry (versions, device
    kind): an entry made elsewhere is named as such in the warning.

    Example:
        >>> read("0" * 64, {}) is None
        True
    """
    directory = cache_dir()
    secret = None if directory is None else _trusted(directory, make=False)
    if directory is None or secret is None:
        return None
    path = directory / f"{key}{SUFFIX}"
    try:
        data = contents(path, SETTINGS.max_bytes)
    except FileNotFoundError:
        return None
    except Untrusted as e:  # someone else's entry: this directory is not used again
        _fail(directory, str(e))
        return None
    except OSError as e:  # an odd entry (a FIFO, a device, a link), or a directory gone bad
        if isinstance(e, NotADirectoryError) or not os.access(directory, os.W_OK | os.X_OK):
            _fail(directory, f"cannot read {path} ({e})")
            return None
        payload: bytes | str = f"{type(e).__name__}: {e}"
    else:
        payload = unpack(data, key, about, secret)
    if isinstance(payload, str):
        warn(f"ignored {path}: {payload}; compiling instead")
        return None
    try:
        os.utime(path)  # the time of last use, which eviction goes by
    except OSError:
        pass
    return payload


def load(e: Entry, deserialize: Callable[[bytes], T]) -> T | None:
    """Entry ``e``'s program, made by ``deserialize`` from its payload; ``None`` if there is none.

    An entry that ``deserialize`` fails on, whatever it raises, is ignored with a warning.

    Example:
        >>> load(Entry("0" * 64, {}, (), 0, 1), bytes.decode) is None
        True
    """
    payload = read(e.name, e.about)
    if payload is None:
        return None
    try:
        return deserialize(payload)
    except Exception as err:  # a damaged or foreign entry: the caller compiles instead
        if isinstance(err, CacheWarning) or interruption(err) is not None:
            raise  # not the entry's: a filter's error, or a user's timeout
        warn(f"cannot load entry {e.name} ({type(err).__name__}: {err}); compiling instead")
        return None


def save(e: Entry, serialize: Callable[[], bytes | None]) -> bool:
    """Write the payload ``serialize`` makes as entry ``e``; ``False`` if it could not be.

    ``serialize`` returns ``None`` for a program that must not be kept (the runtime says which:
    one calling a kernel that a process loading it could not bind): not written, not warned of.

    Example:
        >>> save(Entry("0" * 64, {}, (), 0, 1), lambda: b"") in (True, False)
        True
    """
    try:
        payload = serialize()
    except Exception as err:  # a program that cannot be serialized still runs
        if isinstance(err, CacheWarning) or interruption(err) is not None:
            raise
        warn(f"cannot serialize this program ({type(err).__name__}: {err})")
        return False
    return payload is not None and write(e.name, payload, e.about)


def write(key: str, payload: bytes, about: Mapping[str, str]) -> bool:
    """Store ``payload`` as entry ``key``, atomically; ``False`` if the cache is off or failed.

    Written to a temporary file in the directory, then renamed over the entry: a reader, or
    another process writing the same entry, never sees half a file. A directory that cannot be
    written is warned about once, and not used again until :func:`set_cache_dir`; an entry
    that cannot be replaced (a directory in its place) is warned about. An entry larger than
    the cache's limit is not written (it could not be read).

    Example:
        >>> write("0" * 64, b"", {}) in (True, False)
        True
    """
    directory = cache_dir()
    secret = None if directory is None else _trusted(directory, make=True)
    if directory is None or secret is None:
        return False
    data = pack(key, payload, about, secret)
    if len(data) > SETTINGS.max_bytes:
        return False
    temp, path = None, directory / f"{key}{SUFFIX}"
    try:
        fd, temp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except OSError as e:
        if temp is not None:
            _remove(temp)
        if os.path.lexists(path) and not os.path.isfile(path):
            warn(f"cannot replace {path} ({e})")  # the entry's trouble, not the directory's
        else:
            _fail(directory, f"cannot write to {directory} ({e})")
        return False
    _evict(directory, len(data))
    return True


def _trusted(directory: Path, make: bool) -> bytes | None:
    """The secret to sign and check entries with, once ``directory`` is found safe.

    The directory is checked each time (a ``stat``), made first if ``make``; the secret is read
    once. ``None`` if the directory does not exist, or cannot be used (warned of once).
    """
    try:
        if make:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        trust.check_directory(directory)
    except FileNotFoundError:
        if make:  # a parent vanished meanwhile
            _fail(directory, f"cannot make {directory}")
        return None
    except (Untrusted, OSError) as e:
        _fail(directory, str(e) if isinstance(e, Untrusted) else f"cannot use {directory} ({e})")
        return None
    where = (os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"))  # decide its place
    with _LOCK:
        known = SETTINGS.secret
    if known is not None and known[0] == where:
        return known[1]
    try:
        secret = trust.secret()
    except (Untrusted, OSError) as e:
        _fail(directory, str(e) if isinstance(e, Untrusted) else
              f"cannot keep the secret that signs your entries in {trust.user_root()} ({e}). "
              "Fix: set XDG_CACHE_HOME to a directory of yours")
        return None
    with _LOCK:
        SETTINGS.secret = (where, secret)
    return secret


def trouble(doing: str, error: Exception) -> None:
    """An error the cache did not expect while ``doing``: warned of once, and the cache off.

    Never fatal: the program is compiled instead. Raised again if it is not the cache's: one a
    signal handler raised (a user's timeout), or a :class:`CacheWarning` a filter made an error.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     trouble("reading", OSError("no"))
        >>> SETTINGS.failed, "reading failed (OSError: no)" in str(w[0].message)
        (True, True)
        >>> SETTINGS.reset()
    """
    if isinstance(error, CacheWarning) or interruption(error) is not None:
        raise error
    try:
        directory = cache_dir()
    except Exception:  # the very lookup fails: whatever the setting is, it is off
        directory = None
    _fail(directory, f"{doing} failed ({type(error).__name__}: {error})")


def _fail(directory: Path | None, problem: str) -> None:
    """Warn once, and use ``directory`` (``None``: any) no more (until :func:`set_cache_dir`)."""
    with _LOCK:
        if SETTINGS.failed or (directory is not None and SETTINGS.broken == directory):
            return
        if directory is None:
            SETTINGS.failed = True
        else:
            SETTINGS.broken = directory
    warn(f"{problem}: going on without the persistent cache")


def _evict(directory: Path, added: int) -> None:
    """Delete the entries used longest ago while the directory holds more than the limit.

    Scans the directory only when this process's estimate passes the limit (and once at the
    start): other processes' writes are seen at the next scan, so the bound is approximate.
    """
    with _LOCK:
        limit = SETTINGS.max_bytes
        if SETTINGS.estimate is not None:
            SETTINGS.estimate += added
            if SETTINGS.estimate <= limit:
                return
    now = time.time()
    entries: list[tuple[float, int, str]] = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                try:
                    info = e.stat(follow_symlinks=False)  # a link's own size
                except OSError:  # removed meanwhile (by another process's eviction)
                    continue
                if e.name.startswith(".tmp-") and now - info.st_mtime > _STALE_TEMP_S:
                    _remove(e.path)
                elif e.name.endswith(SUFFIX):
                    entries.append((info.st_mtime, info.st_size, e.path))
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    if total > limit:
        for _, size, path in sorted(entries):
            if total <= limit * 3 // 4:  # some room, so that the next write does not scan
                break
            if _remove(path):
                total -= size
    with _LOCK:
        SETTINGS.estimate = total


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return True  # another process evicted it
    except OSError:
        return False
