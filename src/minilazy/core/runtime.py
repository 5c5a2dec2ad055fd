"""The device runtime: the default device, transfers, compiling, and execution.

With the lowering the only part of core that imports jax. Devices are JAX platforms (``cpu``,
``gpu``, ``tpu``) named by minilazy :class:`~minilazy.core.ir.Device` values (which there are,
across processes too, ``minilazy.scaleout.processes`` says). Compiled programs go to the
compile cache (:mod:`minilazy.core.cache`; ``minilazy.persist`` keeps them on disk). Execution
is asynchronous (JAX dispatch): results are device buffers that host transfers wait on.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

import jax
import numpy as np
from jax.experimental import multihost_utils

from minilazy.core.attrs import Attrs
from minilazy.core.ir import Device
from minilazy.core.lowering import PLACEMENT, jax_device, x64
from minilazy.core.metrics import COUNTERS

_DEVICES: Final[dict[tuple[str, int], Device]] = {}


def interned(platform: str, index: int) -> Device:
    """The one :class:`Device` of a JAX device: the same-device check is then usually ``is``."""
    return _DEVICES.setdefault((platform, index), Device(platform, index))


class Processes:
    """What the runtime calls before each use of JAX (``minilazy.scaleout.processes``).

    It joins a launch's other processes before JAX starts, and refuses to run in a process
    forked after (JAX's threads do not survive ``fork``). Without it, this process runs alone.
    """

    def __init__(self) -> None:
        self.start: Callable[[], None] | None = None


PROCESSES: Final = Processes()


def check_usable() -> None:
    """What runs before JAX is used (a transfer, a barrier): the installed :class:`Processes`."""
    if PROCESSES.start is not None:
        PROCESSES.start()


def default_device() -> Device:
    """The device new tensors go to: JAX's first default device of this process.

    Example:
        >>> import minilazy as ml
        >>> ml.default_device().index
        0
    """
    check_usable()  # a launch's processes join before JAX starts
    local = jax.local_devices()[0]  # in process p > 0 of a launch, jax.devices()[0] is not ours
    return interned(local.platform, jax.devices(local.platform).index(local))


def to_device(array: np.ndarray[Any, Any], device: Device) -> Any:
    """Copy a host array to ``device`` (64-bit types stay 64-bit).

    Example:
        >>> from minilazy.core.ir import Device
        >>> to_device(np.zeros(2), Device("cpu", 0)).dtype
        dtype('float64')
    """
    return put(array, jax.sharding.SingleDeviceSharding(jax_device(device)))


@x64
def put(value: Any, target: Any) -> Any:
    """Copy a host array (or move a buffer) to ``target``, a JAX sharding."""
    check_usable()
    # Host data is copied now, into memory nobody else holds, unaligned: JAX's CPU client adopts a
    # 64-byte-aligned array, and a program that reads one runs in this thread, not behind it.
    if isinstance(value, np.ndarray):
        raw = np.empty(value.nbytes + 64 + value.itemsize, np.uint8)
        start = -raw.ctypes.data % 64 + value.itemsize
        mine = raw[start:start + value.nbytes].view(value.dtype).reshape(value.shape)
        np.copyto(mine, value)
        value = mine
    elif not target.is_fully_addressable:
        value = np.asarray(value)  # one process's buffer onto every process's devices
    out = (jax.make_array_from_callback(value.shape, target, lambda i: value[i])
           if isinstance(value, np.ndarray) else jax.device_put(value, target))
    COUNTERS.transfers_to_device += 1
    COUNTERS.bytes_to_device += out.nbytes
    return out


@x64
def move(buffer: Any, device: Device) -> Any:
    """Copy a device buffer to another device."""
    out = jax.device_put(buffer, jax_device(device))
    COUNTERS.transfers_to_device += 1
    COUNTERS.bytes_to_device += buffer.nbytes
    return out


def copy_to_host(buffer: Any) -> np.ndarray[Any, Any]:
    """A writable host copy of a device buffer (waits for the computation producing it)."""
    with _numpy_errors():
        if buffer.is_fully_addressable or buffer.is_fully_replicated:
            array = np.array(buffer)  # a copy: np.asarray would be a read-only view of it
        else:  # split over other processes' devices too: a collective, every process gathers
            array = np.array(multihost_utils.process_allgather(buffer, tiled=True))
    COUNTERS.transfers_to_host += 1
    COUNTERS.bytes_to_host += array.nbytes
    return array


def block_until_ready(buffer: Any) -> None:
    """Block until the computation producing ``buffer`` has finished."""
    with _numpy_errors():
        buffer.block_until_ready()


@contextlib.contextmanager
def _numpy_errors() -> Iterator[None]:
    try:
        yield
    except jax.errors.JaxRuntimeError as e:  # XLA's out of memory is NumPy's MemoryError
        if str(e).startswith("RESOURCE_EXHAUSTED"):
            raise MemoryError(str(e)) from e
        raise


_LIVE_ARRAYS: Final = cast(Callable[[], list[Any]], jax.live_arrays)  # untyped in jax


def is_deleted(buffer: Any) -> bool:
    """Whether a device buffer is gone (donated to a program that consumed it)."""
    return bool(buffer.is_deleted())


def live() -> tuple[int, int]:
    """How many device buffers are alive in this process, and their bytes (``ml.metrics()``)."""
    arrays = _LIVE_ARRAYS()
    return len(arrays), sum(a.nbytes for a in arrays)


# -- compiling: XLA's part, and what the runtime needs to know of a program ---------------
@dataclass(eq=False)
class Compiled:
    """A compiled program and what it was compiled for.

    Attributes:
        executable: the XLA executable (call it with the parameter values).
        donated: which parameters' buffers it may reuse for its outputs.
        ran: whether it has run once (the runtime donates only to a program that has).
        structure: the structure of the cut it was compiled for (compared by value on a hit).
        shardings: for a program on a mesh, each parameter's JAX sharding (a buffer placed
            otherwise is moved before the call); ``None`` on one device.
        placements: for a program on a mesh, each result's sharding; ``None`` on one device.
    """

    executable: Any
    donated: tuple[bool, ...]
    ran: bool = False
    structure: tuple[object, ...] = ()
    shardings: tuple[Any, ...] | None = None
    placements: tuple[Attrs, ...] | None = None


def _options(device: Device) -> dict[str, Any] | None:
    # XLA:CPU's older emitters compile about twice as fast, with no run-time cost measured.
    return {"xla_cpu_use_fusion_emitters": False} if device.platform == "cpu" else None


@x64
def compile_lowered(lowered: Any, device: Device, donated: tuple[bool, ...] = ()) -> Compiled:
    """Compile a lowered program for ``device`` (XLA's part of compile time)."""
    executable = lowered.compile(_options(device))
    return compiled(executable, donated)


def forget_traces() -> None:
    """Empty JAX's own in-memory caches of traces and programs (``jax.clear_caches()``).

    JAX keeps traces long after the compile cache evicted their programs: it calls this.
    """
    cast(Callable[[], None], jax.clear_caches)()  # untyped in jax


def compiled(executable: Any, donated: tuple[bool, ...]) -> Compiled:
    """The :class:`Compiled` of an XLA executable, with its placements when over a mesh."""
    found = PLACEMENT.part.compiled(executable) if PLACEMENT.part is not None else None
    if found is None:
        return Compiled(executable, donated)
    return Compiled(executable, donated, shardings=found[0], placements=found[1])


@x64
def execute(entry: Compiled, args: Sequence[Any]) -> Sequence[Any]:
    """Run a compiled program; returns its output buffers (possibly still being computed).

    A first run gets copies of the buffers it would consume (JAX deletes donated inputs even
    when a run fails, and a new program may well fail) and is waited for; after that, programs
    consume donated inputs and run asynchronously (``execute_seconds`` counts until the call
    returns). Over a mesh the :class:`~minilazy.core.lowering.Placement` places the arguments.
    """
    start = time.perf_counter()
    part = PLACEMENT.part
    if entry.shardings is not None and part is not None:  # over a mesh: placed as it takes them
        args = part.arguments(entry.shardings, args)
    with _numpy_errors():
        if not entry.ran and any(entry.donated):
            args = [jax.device_put(a, a.sharding, may_alias=False) if d else a
                    for a, d in zip(args, (*entry.donated, *[False] * len(args)))]
        outs: Sequence[Any] = entry.executable(*args)
        if not entry.ran:
            # A first run's failure (out of memory) may surface only when its results are
            # read: wait for them here, where the barrier can still isolate the failure.
            for out in outs:
                out.block_until_ready()
    entry.ran = True
    if entry.shardings is not None and part is not None:
        part.ran(entry.shardings, outs)
    seconds = time.perf_counter() - start
    COUNTERS.executions += 1
    COUNTERS.execute_seconds += seconds
    COUNTERS.execute_times.append(seconds)
    COUNTERS.donations += sum(entry.donated)
    return outs
