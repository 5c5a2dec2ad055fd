"""The device runtime: devices, transfers, the compile cache, and execution.

Eighth layer; with the lowering the only one that imports jax. Devices are JAX platforms
(``cpu``, ``gpu``, ``tpu``) named by minilazy :class:`~minilazy.ir.Device` values. The compile
cache is a bounded LRU keyed by the cut's key and the donation mask; a hit never re-traces.
Execution is asynchronous (JAX dispatch): results are device buffers that host transfers wait on.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

import jax
import numpy as np

from minilazy.cut import Cut
from minilazy.ir import Device
from minilazy.lowering import Compiled, compile_lowered, jax_device, lower
from minilazy.metrics import COUNTERS
from minilazy.state import ENGINE

_DEVICES: Final[dict[tuple[str, int], Device]] = {}
_USED: list[bool] = [False]  # has this process started JAX's runtime (a transfer, a compile)?


def forked() -> None:
    """What a ``fork()`` child runs (``os.register_at_fork``): JAX cannot be used there.

    JAX's runtime is multithreaded and its threads do not survive ``fork``: a child that
    compiles or transfers hangs. Its first barrier or transfer raises instead.
    """
    if _USED[0]:
        ENGINE.forked = True


def check_usable() -> None:
    """Raise ``RuntimeError`` in a process forked after JAX started (see :func:`forked`).

    Example:
        >>> check_usable()
    """
    _USED[0] = True
    if ENGINE.forked:
        raise RuntimeError(
            "minilazy cannot run in a process forked after JAX started (os.fork, or "
            "multiprocessing's 'fork' start method): JAX's threads do not survive fork. "
            "Start workers with multiprocessing.get_context('spawn') or 'forkserver'.")


def _intern(platform: str, index: int) -> Device:
    # One Device object per device, so the tracer's same-device check is usually an `is`.
    return _DEVICES.setdefault((platform, index), Device(platform, index))


def devices(platform: str | None = None) -> list[Device]:
    """The devices of ``platform`` (``cpu``, ``gpu``, ``tpu``), or of JAX's default platform.

    Raises ``RuntimeError`` naming the platform when it has no devices here.

    Example:
        >>> import minilazy as ml
        >>> ml.devices("cpu")[0]
        Device(platform='cpu', index=0)
    """
    try:
        found = jax.devices(platform)
    except RuntimeError as e:
        raise RuntimeError(f"no {platform} devices available: {e}") from None
    by_platform: dict[str, int] = {}
    out = []
    for d in found:
        index = by_platform.get(d.platform, 0)
        by_platform[d.platform] = index + 1
        out.append(_intern(d.platform, index))
    return out


def default_device() -> Device:
    """The device new tensors go to: JAX's first default device.

    Example:
        >>> import minilazy as ml
        >>> ml.default_device().index
        0
    """
    return devices()[0]


def platforms() -> list[str]:
    """The JAX platforms available here, e.g. ``['cpu']`` or ``['gpu', 'cpu']``.

    Example:
        >>> "cpu" in platforms()
        True
    """
    found = []
    for name in ("cpu", "gpu", "tpu"):
        try:
            if jax.devices(name):
                found.append(name)
        except RuntimeError:
            pass
    return found


def to_device(array: np.ndarray[Any, Any], device: Device) -> Any:
    """Copy a host array to ``device`` (64-bit types stay 64-bit).

    Example:
        >>> from minilazy.ir import Device
        >>> to_device(np.zeros(2), Device("cpu", 0)).dtype
        dtype('float64')
    """
    check_usable()
    with jax.enable_x64(True):
        buffer = jax.device_put(array, jax_device(device))
    COUNTERS.transfers_to_device += 1
    COUNTERS.bytes_to_device += array.nbytes
    return buffer


def move(buffer: Any, device: Device) -> Any:
    """Copy a device buffer to another device."""
    with jax.enable_x64(True):
        out = jax.device_put(buffer, jax_device(device))
    COUNTERS.transfers_to_device += 1
    COUNTERS.bytes_to_device += buffer.nbytes
    return out


def to_host(buffer: Any) -> np.ndarray[Any, Any]:
    """A writable host copy of a device buffer (waits for the computation producing it).

    Example:
        >>> from minilazy.ir import Device
        >>> to_host(to_device(np.ones(2), Device("cpu", 0))).flags.writeable
        True
    """
    array = np.array(buffer)  # a copy: np.asarray would be a read-only view of the buffer
    COUNTERS.transfers_to_host += 1
    COUNTERS.bytes_to_host += array.nbytes
    return array


def wait(buffer: Any) -> None:
    """Block until the computation producing ``buffer`` has finished."""
    buffer.block_until_ready()


_LIVE_ARRAYS: Final = cast(Callable[[], list[Any]], jax.live_arrays)  # untyped in jax


def _live_arrays() -> list[Any]:
    return _LIVE_ARRAYS()


def is_deleted(buffer: Any) -> bool:
    """Whether a device buffer is gone (donated to a program that consumed it).

    Example:
        >>> from minilazy.ir import Device
        >>> is_deleted(to_device(np.ones(2), Device("cpu", 0)))
        False
    """
    return bool(buffer.is_deleted())


# Gauges read at snapshot time (``minilazy/__init__.py`` adds them to the metrics).
GAUGES: Final[dict[str, Callable[[], int]]] = {
    "live_buffers": lambda: len(_live_arrays()),
    "live_bytes": lambda: sum(a.nbytes for a in _live_arrays()),
}


class CompileCache:
    """A bounded LRU of compiled programs keyed by (cut key, donation mask).

    Example:
        >>> cache = CompileCache(capacity=2)
        >>> len(cache), cache.capacity
        (0, 2)
    """

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[int, tuple[bool, ...]], Compiled] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, c: Cut, donated: tuple[bool, ...]) -> Compiled | None:
        """The program cached for ``c``, marked most recently used; ``None`` on a miss.

        A hit is checked against the structure it was compiled for: two structures whose
        64-bit keys collide never share a program (the second one compiles, and replaces it).
        """
        entry = self._entries.get((c.key, donated))
        if entry is None or entry.structure != c.structure:
            return None
        self._entries.move_to_end((c.key, donated))
        return entry

    def compile(self, c: Cut, donated: tuple[bool, ...]) -> Compiled:
        """Compile ``c`` and cache it, evicting the least recently used entry when full."""
        start = time.perf_counter()
        lowered = lower(c, donated)
        traced = time.perf_counter()
        entry = compile_lowered(lowered, c.device, donated)
        seconds = time.perf_counter() - traced
        COUNTERS.trace_seconds += traced - start
        COUNTERS.trace_times.append(traced - start)
        COUNTERS.compiles += 1
        COUNTERS.compile_seconds += seconds
        COUNTERS.compile_times.append(seconds)
        entry.structure = c.structure
        self._entries[(c.key, donated)] = entry
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
        return entry

    def clear(self) -> None:
        """Forget every compiled program."""
        self._entries.clear()


CACHE: Final = CompileCache()


def clear_cache() -> None:
    """Forget every compiled program: the next barrier of each structure compiles again.

    For measurements and tests that must start cold (the conformance oracle does, before each
    spec test); a program in use keeps running.

    Example:
        >>> import minilazy as ml
        >>> ml.sync(ml.ones((3,)) * 2.0)
        >>> ml.clear_cache(); ml.reset_metrics()
        >>> ml.sync(ml.ones((3,)) * 2.0)
        >>> ml.metrics().compiles
        1
    """
    CACHE.clear()


def execute(entry: Compiled, args: Sequence[Any]) -> Sequence[Any]:
    """Run a compiled program; returns its output buffers (possibly still being computed).

    A program's first run gets copies of the buffers it would consume (JAX deletes donated
    inputs even when the run fails, out of memory say, and a program that never ran may well
    fail), and is waited for (a failure may otherwise surface only when a result is read).
    Once it has run, it consumes its donated inputs and runs asynchronously.

    ``execute_seconds`` counts until the call returns: JAX dispatches asynchronously, so device
    time that outlasts the call shows up where the host first waits (``to_host``).
    """
    start = time.perf_counter()
    with jax.enable_x64(True):
        if not entry.ran and any(entry.donated):
            args = [jax.device_put(a, may_alias=False) if d else a
                    for a, d in zip(args, (*entry.donated, *[False] * len(args)))]
        outs: Sequence[Any] = entry.executable(*args)
        if not entry.ran:
            # A first run's failure (out of memory) may surface only when its results are
            # read: wait for them here, where the barrier can still isolate the failure.
            for out in outs:
                out.block_until_ready()
    entry.ran = True
    seconds = time.perf_counter() - start
    COUNTERS.executions += 1
    COUNTERS.execute_seconds += seconds
    COUNTERS.execute_times.append(seconds)
    COUNTERS.donations += sum(entry.donated)
    return outs
