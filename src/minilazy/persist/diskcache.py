"""The persistent compile cache: compiled programs kept on disk, for the next process.

Above core. The compile cache asks its store (``executables.DiskStore``), which asks this module,
only when its in-memory LRU misses. :func:`program_text` writes the cut out canonically (every
node's op, attributes, shape, dtype and operand positions; the parameter layout; the outputs; the
device). :func:`entry` hashes that with what else decides the program (JAX version, device kind,
shardings) into a file name stable across processes, and :func:`load` / :func:`save` move the
runtime's serialized executables in and out of entry files (their layout:
:mod:`minilazy.persist.diskformat`), written atomically. Never imports jax: the runtime serializes
and deserializes executables.

The directory must be trusted: loading an executable unpickles it, which can run code (as with
JAX's own compilation cache). It is made with mode 0o700.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple, TypeVar

from minilazy.core.cut import Cut
from minilazy.persist.diskformat import FORMAT, contents, pack, unpack

T = TypeVar("T")
ENV: Final = "MINILAZY_CACHE_DIR"
SUFFIX: Final = ".program"
DEFAULT_MAX_BYTES: Final = 1 << 30
_STALE_TEMP_S: Final = 3600.0  # a temporary file this old is a crashed writer's: removed


class CacheWarning(UserWarning):
    """A persistent compile cache entry was ignored, or the cache directory cannot be used.

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
    estimate: int | None = None  # bytes in the directory (this process's estimate)

    def reset(self) -> None:
        """Forget ``set_cache_dir``'s choice and a failed directory."""
        with _LOCK:
            self.chosen, self.max_bytes = _Unset(), DEFAULT_MAX_BYTES
            self.broken = self.estimate = None


SETTINGS: Final = Settings(_Unset(), DEFAULT_MAX_BYTES)
_LOCK: Final = threading.Lock()


def _from_environment() -> Path | None:
    value = os.environ.get(ENV)
    if value is not None:
        return Path(value).expanduser() if value else None
    base = os.environ.get("XDG_CACHE_HOME", "")
    try:
        root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    except (RuntimeError, KeyError):  # no home directory: no default place
        return None
    return root / "minilazy"


def cache_dir() -> Path | None:
    """The directory of the persistent compile cache, or ``None`` when it is off.

    Set by :func:`set_cache_dir`; until then by ``MINILAZY_CACHE_DIR`` (set but empty: off),
    else ``$XDG_CACHE_HOME/minilazy``, else ``~/.cache/minilazy``. ``None`` too after the
    directory failed (a :class:`CacheWarning` said why).

    Example:
        >>> import minilazy as ml
        >>> ml.cache_dir() is None or ml.cache_dir().name != ""
        True
    """
    with _LOCK:
        chosen = SETTINGS.chosen
        found = _from_environment() if isinstance(chosen, _Unset) else chosen
        return None if found is None or found == SETTINGS.broken else found


def set_cache_dir(path: str | os.PathLike[str] | None, *,
                  max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Keep compiled programs in ``path`` from now on, for every thread; ``None`` turns it off.

    Overrides ``MINILAZY_CACHE_DIR``. Entries not used for longest are deleted when the
    directory holds more than about ``max_bytes``. The directory must be trusted (loading an
    entry unpickles it); it is made with mode 0o700.

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
        SETTINGS.broken = None
        SETTINGS.estimate = None


def program_text(c: Cut, donated: tuple[bool, ...]) -> str:
    """The cut's program, written out canonically: the same text in every process.

    Never Python's ``hash`` (salted for ``str``, and by address for ``None`` before 3.12): each
    node's op, ``repr`` of its attributes, shape, dtype and operand positions, one per line,
    then which nodes are parameters and outputs, the device and the donation mask.

    Example:
        >>> import minilazy as ml, numpy as np
        >>> from minilazy.core.cut import cut
        >>> x = ml.asarray(np.ones(2, np.float32))
        >>> print(program_text(cut([(x * 2.0 + x)._node], x.device), (False,)))
        data NoAttrs() (2,) float32 []
        scalar NoAttrs() () float32 []
        multiply NoAttrs() (2,) float32 [0, 1]
        add NoAttrs() (2,) float32 [2, 0]
        params [0] scalars [1] groups [('float32', 1)]
        outputs (3,) device cpu:0 donated (False,)
    """
    p = c.positions
    lines = [f"{n.op.value} {n.attrs!r} {n.shape} {n.dtype.name} {[p[o] for o in n.operands]}"
             for n in c.order]
    lines.append(f"params {[p[n] for n in c.params]} scalars {[p[n] for n in c.scalars]} "
                 f"groups {[(d.name, k) for d, k in c.groups]}")
    lines.append(f"outputs {c.outputs} device {c.device} donated {donated}")
    return "\n".join(lines)


class Entry(NamedTuple):
    """A program's entry in the persistent cache: its name, and what loading it needs.

    Example:
        >>> Entry("0" * 64, {}, (), 1, 1).inputs
        1
    """

    name: str  # SHA-256 of its program and environment: the same in every process
    about: dict[str, str]  # versions and device kind, to name a foreign entry in a warning
    devices: tuple[Any, ...]  # the JAX devices the program runs on, in its mesh's order
    inputs: int  # how many parameters it takes
    outputs: int


def entry(c: Cut, donated: tuple[bool, ...], about: dict[str, str],
          params: Sequence[tuple[tuple[int, ...], object, Any]], devices: tuple[Any, ...],
          process: str) -> Entry:
    """The entry of ``c``'s program, from what the runtime knows of the devices.

    The key covers the program text, ``about`` (JAX and jaxlib versions, device kind, platform
    version), each parameter's shape, dtype and sharding with its device ids (a program for 8
    devices never loads for 1), ``process`` (its place in a multi-process run), ``XLA_FLAGS``
    and the engine's source.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.ones((2,))
        >>> entry(cut([(x + 1.0)._node], x.device), (), {}, [], (), "").outputs
        1
    """
    placed = [f"{shape} {dtype} {_placement(s)}" for shape, dtype, s in params]
    text = (f"{FORMAT}\n{_fingerprint()}\n{about} {process} XLA_FLAGS="
            f"{os.environ.get('XLA_FLAGS', '')!r} {placed}\n{program_text(c, donated)}")
    return Entry(hashlib.sha256(text.encode()).hexdigest(), about, devices, len(params),
                 len(c.outputs))


def _placement(s: Any) -> str:
    # A JAX sharding's repr names its mesh's axes, not its devices: add their ids, in order.
    mesh = getattr(s, "mesh", None)
    found = list(mesh.devices.flat) if mesh is not None else sorted(
        s.device_set, key=lambda d: d.id)
    return f"{s!r} on devices {[d.id for d in found]}"


@functools.cache
def _fingerprint() -> str:
    # The engine's source (core's lowering, this package's formats): a lowering rule that changed
    # must never load an old program.
    digest = hashlib.sha256()
    package = Path(__file__).parent.parent
    for path in sorted([*package.glob("core/*.py"), *package.glob("persist/*.py")]):
        name = path.relative_to(package).as_posix()
        try:
            digest.update(name.encode() + b"\0" + path.read_bytes())
        except OSError:
            digest.update(name.encode())
    return digest.hexdigest()


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
    if directory is None:
        return None
    path = directory / f"{key}{SUFFIX}"
    try:
        payload = unpack(contents(path, SETTINGS.max_bytes), key, about)
    except FileNotFoundError:
        return None
    except NotADirectoryError as e:  # the cache cannot be used here
        _fail(directory, f"cannot read {path} ({e})")
        return None
    except (OSError, RecursionError) as e:  # an odd entry (a FIFO, a device, a deep header)
        payload = f"{type(e).__name__}: {e}"
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
    directory, data = cache_dir(), pack(key, payload, about)
    if directory is None or len(data) > SETTINGS.max_bytes:
        return False
    temp, path = None, directory / f"{key}{SUFFIX}"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
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


def _fail(directory: Path, problem: str) -> None:
    """Warn once, and use ``directory`` no more (until :func:`set_cache_dir`)."""
    with _LOCK:
        if SETTINGS.broken == directory:
            return
        SETTINGS.broken = directory
    warn(f"{problem}: going on without it")


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
