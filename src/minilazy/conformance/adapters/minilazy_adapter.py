"""minilazy as an implementation under test, through its public API only.

Factories ``cpu``, ``gpu`` and ``tpu`` adapt minilazy on the first device of that JAX platform:
``--lazy-impl=minilazy.conformance.adapters.minilazy_adapter:gpu``; ``bare`` is the CPU engine
without its installed parts (``minilazy.parts``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

import minilazy as ml
from minilazy.conformance.adapter import Counters
from minilazy.conformance.base import INPLACE
from minilazy.conformance.registry import ops

Pair = int | tuple[int, int]


class MinilazyAdapter:
    """minilazy on one platform, as the conformance suite drives it.

    Example:
        >>> a = cpu()
        >>> y = a.apply("multiply", a.from_numpy(np.arange(3.0)), 2.0)
        >>> a.is_pending(y), a.to_numpy(y).tolist()
        (True, [0.0, 2.0, 4.0])
    """

    def __init__(self, platform: str) -> None:
        self.platform = platform
        self._devices = ml.devices(platform)
        self.device = self._devices[0]
        self.name = f"minilazy-{platform}"
        self.version = ml.__version__
        caps = {"counters", "keys", "pending", "ir", "hlo", "setitem", "autocut", "eager",
                "donation", "sync", "metadata", "autodiff", "reset", "dynamic", "fallbacks",
                "no_fallback", "conv", "linalg", "fft", "complex", "optim", "random",
                "persistent"}
        if platform != "tpu":  # TPUs have no 64-bit floats
            caps.add("float64")
        if len(self._devices) >= 2:
            caps |= {"devices", "sharding"}
        self.capabilities = frozenset(caps)
        # The suite compiles a new graph at almost every observation on purpose: the analyzer's
        # advice for a user's loop ("the graph changes every step") would be noise here.
        warnings.filterwarnings("ignore", category=ml.RecompileWarning)
        # Every program is compiled here: one read from the persistent cache was compiled by
        # another process, perhaps by an engine a mutant patched (the cache cannot see a patch).
        ml.set_cache_dir(None)

    def from_numpy(self, array: np.ndarray[Any, Any]) -> ml.Tensor:
        return ml.asarray(array, device=self.device)

    def to_numpy(self, x: ml.Tensor) -> np.ndarray[Any, Any]:
        return x.numpy()

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        spec = ops()[op]
        if op == "setitem":
            x, key, value = args
            x[key] = value
            return x
        if spec.method:
            return getattr(args[0], spec.method)(*args[1:], **kwargs)
        if spec.kind == "creation":
            kwargs.setdefault("device", self.device)
        return getattr(ml, op)(*args, **kwargs)

    def conv2d(self, x: ml.Tensor, w: ml.Tensor, b: ml.Tensor | None = None, *,
               stride: Pair = 1, padding: Pair = 0, dilation: Pair = 1,
               groups: int = 1) -> ml.Tensor:
        return ml.nn.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation,
                            groups=groups)

    def max_pool2d(self, x: ml.Tensor, kernel_size: Pair, stride: Pair | None = None,
                   padding: Pair = 0) -> ml.Tensor:
        return ml.nn.max_pool2d(x, kernel_size, stride, padding)

    def avg_pool2d(self, x: ml.Tensor, kernel_size: Pair, stride: Pair | None = None,
                   padding: Pair = 0) -> ml.Tensor:
        return ml.nn.avg_pool2d(x, kernel_size, stride, padding)

    def sort(self, x: ml.Tensor, *, axis: int = -1, descending: bool = False) -> ml.Tensor:
        return ml.sort(x, axis=axis, descending=descending)

    def argsort(self, x: ml.Tensor, *, axis: int = -1, descending: bool = False) -> ml.Tensor:
        return ml.argsort(x, axis=axis, descending=descending)

    def linalg(self, name: str, *args: Any, **kwargs: Any) -> Any:
        out = getattr(ml.linalg, name)(*args, **kwargs)
        return tuple(out) if isinstance(out, tuple) else out

    def fft(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(ml.fft, name)(*args, **kwargs)

    def optim(self, name: str, params: Sequence[ml.Tensor], grads: Sequence[ml.Tensor],
              state: Any, **hyper: float) -> tuple[list[ml.Tensor], Any]:
        if name == "adam":
            opt = ml.optim.adam(hyper.pop("lr"), **hyper)
        else:
            opt = getattr(ml.optim, name)(hyper.pop("lr"), **hyper)
        new, state = opt.update(list(grads), opt.init(list(params)) if state is None else state,
                                list(params))
        assert isinstance(new, list)  # (a list of weights gives a list)
        return [p for p in new if isinstance(p, ml.Tensor)], state

    def random(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "key":
            return ml.random.key(int(args[0]), device=self.device)
        found = getattr(ml.random, name)(*args, **kwargs)
        return tuple(found) if name == "split" else found

    def shard(self, x: ml.Tensor, axis: int | None) -> ml.Tensor:
        spec = tuple("d" if i == axis else None for i in range(x.ndim))
        return ml.mark_sharding(x, ml.Mesh(self._devices, ("d",)), spec)

    def persist(self, directory: str | None) -> None:
        ml.set_cache_dir(directory)

    def inplace(self, op: str, x: ml.Tensor, other: Any) -> ml.Tensor:
        result: ml.Tensor = INPLACE[op](x, other)
        return result

    def barrier(self) -> None:
        ml.mark_step()

    def reset(self) -> None:
        ml.clear_cache()  # each test compiles its own programs: a cached one never leaks
        ml.reset_metrics()

    def isolate(self) -> None:
        try:  # what earlier tests left pending: materialised, or failed and holding its error
            ml.mark_step()
        except Exception:
            pass

    def grad(self, f: Callable[..., Any], argnums: tuple[int, ...]) -> Callable[..., Any]:
        return ml.grad(f, argnums=tuple(argnums))

    def sync(self, *xs: ml.Tensor) -> None:
        ml.sync(*xs)

    def counters(self) -> Counters:
        m = ml.metrics()
        return Counters(ops_recorded=m.ops_recorded, compiles=m.compiles,
                        cache_hits=m.cache_hits, executions=m.executions,
                        donations=m.donations, fallbacks=m.fallbacks)

    def key(self, *xs: ml.Tensor) -> int:
        return ml.graph(*xs).key

    def is_pending(self, x: ml.Tensor) -> bool:
        return x.is_pending

    def ir(self, *xs: ml.Tensor) -> str:
        return ml.graph(*xs).text()

    def hlo(self, *xs: ml.Tensor) -> str:
        return ml.graph(*xs).hlo()

    def eager(self) -> AbstractContextManager[Any]:
        return ml.eager()

    def no_fallback(self) -> AbstractContextManager[Any]:
        return ml.policy(fallback="error")

    def devices(self) -> Sequence[ml.Device]:
        return self._devices

    def to_device(self, x: ml.Tensor, device: ml.Device) -> ml.Tensor:
        return x.to(device)

    def shape(self, x: ml.Tensor) -> tuple[int, ...]:
        return x.shape

    def dtype(self, x: ml.Tensor) -> np.dtype[Any]:
        return x.dtype


def cpu() -> MinilazyAdapter:
    """The minilazy adapter on the CPU.

    Example:
        >>> cpu().name
        'minilazy-cpu'
    """
    return MinilazyAdapter("cpu")


def bare() -> MinilazyAdapter:
    """The minilazy adapter on the CPU with none of its parts: core and the op families alone.

    ``import minilazy`` installs parts into core (``minilazy.parts``, ``minilazy.scaleout``,
    the persistent cache); this takes them out again, for the rest of the process: every cut is
    walked (no plans), no buffer is donated, a deep graph compiles in one piece (no stages),
    every exception of a program is its own (no signal safety), every program runs on one device
    (no meshes) in one process (a fork() child is not refused), no program is kept on disk.
    Slower, and the same values: the oracle holds it to every rule but the capabilities it no
    longer has (donation, persistence, sharding).

    Example:
        >>> from minilazy.core.cut import CUTS
        >>> adapter = bare()
        >>> adapter.name, CUTS.planner is None, "sharding" in adapter.capabilities
        ('minilazy-bare', True, False)
        >>> from minilazy.parts import plans, refcounts, signals, staging
        >>> from minilazy.persist import executables
        >>> from minilazy.scaleout import placement, processes
        >>> for part in (plans, refcounts, signals, staging, executables, placement, processes):
        ...     part.install()  # (put back)
    """
    from minilazy.core.barrier import PARTS
    from minilazy.core.cache import CACHE
    from minilazy.core.cut import CUTS
    from minilazy.core.lowering import PLACEMENT
    from minilazy.core.runtime import PROCESSES

    CUTS.planner, CACHE.store = None, None
    PARTS.donor = PARTS.stager = PARTS.signals = None
    PLACEMENT.part, PROCESSES.start = None, None
    adapter = MinilazyAdapter("cpu")
    adapter.name = "minilazy-bare"
    adapter.capabilities -= {"donation", "persistent", "sharding"}
    return adapter


def gpu() -> MinilazyAdapter:
    """The minilazy adapter on the first GPU (raises ``RuntimeError`` where there is none).

    Example:
        >>> try:
        ...     gpu().platform
        ... except RuntimeError:
        ...     'gpu'
        'gpu'
    """
    return MinilazyAdapter("gpu")


def tpu() -> MinilazyAdapter:
    """The minilazy adapter on the first TPU (raises ``RuntimeError`` where there is none).

    Example:
        >>> try:
        ...     tpu().platform
        ... except RuntimeError:
        ...     'tpu'
        'tpu'
    """
    return MinilazyAdapter("tpu")
