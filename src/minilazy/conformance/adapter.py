"""The adapter protocol: how the oracle drives a lazy tensor implementation.

An implementation plugs into the conformance suite through one small object. Required: move
data in and out (``from_numpy``, ``to_numpy``: an observation), ``apply`` an op by its spec name
(``ops.toml``), and a ``barrier`` (``mark_step``). Optional, each declared as a capability:
counters, graph keys, IR and HLO dumps, a cache reset, pending-state queries, several devices.
Tests that need a capability the adapter does not declare are skipped, naming it.

How ``apply`` is called: positional and keyword arguments follow the Array API signature of the
op (as ``numpy`` and ``minilazy`` spell it), with the implementation's tensors where tensors go,
Python scalars where scalars go (weak, NEP 50), ``numpy.dtype`` objects for dtypes, tuples for
shapes and axes, and a list of tensors for ``concat`` and ``stack``. Indexing has no function of
its own: ``apply("getitem", x, key)`` is ``x[key]`` and ``apply("setitem", x, key, value)`` is
``x[key] = value``, which rebinds ``x`` and returns it; keys hold ints, slices, ``None``,
``Ellipsis``, integer index arrays as the implementation's tensors, and lists of ints (index
lists, known on the host); with capability ``dynamic``, also boolean masks as tensors.
Convolution and pooling are methods of their own (capability ``conv``), in torch's layout;
so are ``sort``, ``argsort`` and the ``linalg`` extension (capability ``linalg``), and the
``fft`` extension (capability ``fft``).

An adapter may implement only some ops: ``supports(op)`` (no capability needed; absent means
every op of the registry) says which, and the suite skips tests of the others.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from minilazy.conformance.dtype_policy import DtypePolicy as DtypePolicy
from minilazy.conformance.extensions import Extensions

# Capabilities an adapter may declare (rules.toml gates rules on them).
CAPABILITIES = frozenset({
    "counters",   # counters(): every count of Counters (implies the three below)
    "executions",  # counters().executions: programs run (kernel launches, for some libraries)
    "compiles",   # counters().compiles: programs compiled
    "cache_hits",  # counters().cache_hits: compiled programs reused
    "keys",       # key(*xs): the cache key the next barrier on xs would use
    "pending",    # is_pending(x): whether x's value is only recorded
    "ir",         # ir(*xs): the pending graph as text
    "hlo",        # hlo(*xs): the compiled program as text
    "reset",      # reset(): forget compiled programs and zero the counters
    "setitem",    # apply("setitem", x, key, value) and inplace(op, x, y) rebind x
    "autocut",    # long loops without barriers stay bounded
    "eager",      # eager(): a context manager running op by op
    "donation",   # counters().donations counts buffers reused at mark_step
    "devices",    # devices(): two or more devices; to_device(x, d)
    "float64",    # 64-bit floats and ints are computed in 64 bits
    "complex",    # complex64 tensors (complex128 too, with float64): elementwise ops, reductions
    "sync",       # sync(*xs): materialise just these
    "metadata",   # shape(x), dtype(x): known without running anything
    "autodiff",   # grad(f, argnums)(*xs): reverse-mode gradients, recorded lazily
    "dynamic",    # ops whose result shape depends on data: nonzero, unique_*, x[mask]
    "fallbacks",  # counters().fallbacks: data-dependent op calls run on the host
    "no_fallback",  # no_fallback(): a context in which host fallbacks raise RuntimeError
    "conv",       # conv2d, max_pool2d, avg_pool2d: convolution and pooling in torch's layout
    "linalg",     # sort, argsort, linalg(name, ...): the Array API's sorts and linalg extension
    "fft",        # fft(name, ...): the Array API's fft extension, on real and complex tensors
    "optim",      # optim(name, params, grads, state, **hyper): an optimizer step (extensions.py)
    "random",     # random(name, ...): keys, split, uniform, normal (extensions.py)
    "sharding",   # shard(x, axis): x split over devices() (extensions.py)
    "persistent",  # persist(directory): compiled programs kept across processes (extensions.py)
})

# The variable that names an implementation when ``--lazy-impl`` does not.
IMPL_VARIABLE = "MINILAZY_IMPL"
DEFAULT_IMPL = "minilazy.conformance.adapters.minilazy_adapter:cpu"


# The counts a capability of their own stands for; ``counters`` declares them all.
COUNTS = ("executions", "compiles", "cache_hits")


@dataclass(frozen=True)
class Counters:
    """What the oracle reads from an implementation's metrics (a snapshot).

    A count the implementation does not keep is ``None``: declare the capabilities of the
    counts you do keep (``executions``, ``compiles``, ``cache_hits``), and the oracle checks
    every rule those counts can decide.

    Example:
        >>> Counters(ops_recorded=3, compiles=1, cache_hits=0, executions=1).compiles
        1
        >>> Counters(executions=2).compiles is None
        True
    """

    ops_recorded: int | None = None
    compiles: int | None = None
    cache_hits: int | None = None
    executions: int | None = None
    donations: int | None = 0
    fallbacks: int | None = None


def policy_of(adapter: Adapter) -> DtypePolicy:
    """The adapter's declared ``dtype_policy``, or NumPy's own.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> policy_of(toy()).default_float
        'float64'
    """
    found = getattr(adapter, "dtype_policy", None)
    return found if isinstance(found, DtypePolicy) else DtypePolicy()


def capabilities_of(adapter: Adapter) -> frozenset[str]:
    """The capabilities ``adapter`` declares, with those they imply (``counters``: every count).

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> {"executions", "compiles"} <= capabilities_of(toy())
        True
    """
    return implied(adapter.capabilities)


def implied(capabilities: Iterable[str]) -> frozenset[str]:
    """``capabilities`` with those they imply (``counters``: every count).

    Example:
        >>> sorted(implied(["counters"]))
        ['cache_hits', 'compiles', 'counters', 'executions']
    """
    caps = set(capabilities)
    if "counters" in caps:
        caps.update(COUNTS)
    return frozenset(caps)


def satisfies(capabilities: frozenset[str], requirement: str) -> bool:
    """Whether ``capabilities`` meet ``requirement``: a capability, or alternatives ``a|b``.

    Example:
        >>> satisfies(frozenset({"compiles"}), "executions|compiles")
        True
    """
    return not requirement or any(c in capabilities for c in requirement.split("|"))


@runtime_checkable
class Adapter(Protocol):
    """The required part of the protocol (see the module docstring for the optional part).

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> isinstance(toy(), Adapter)
        True

    Attributes:
        name: a short name for reports, e.g. ``"minilazy-cpu"``.
        version: the implementation's version string.
        capabilities: the optional features it offers (a subset of :data:`CAPABILITIES`).
    """

    name: str
    version: str
    capabilities: frozenset[str]

    def from_numpy(self, array: np.ndarray[Any, Any]) -> Any:
        """A tensor of the implementation holding ``array`` (same shape and dtype)."""

    def to_numpy(self, x: Any) -> np.ndarray[Any, Any]:
        """The value of ``x`` on the host: an observation barrier."""

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        """Record op ``op`` (a name from ``ops.toml``) on tensors and Python scalars."""

    def barrier(self) -> None:
        """``mark_step``: materialise every live pending tensor."""


class OptionalAdapter(Adapter, Extensions, Protocol):
    """The optional methods, each behind a capability (``supports`` behind none; ``Extensions``).

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> t: OptionalAdapter = toy()
        >>> t.counters().compiles if "counters" in t.capabilities else None
        0
    """

    def supports(self, op: str) -> bool:
        """Whether ``apply(op, ...)`` is implemented (absent: every op of the registry)."""

    def counters(self) -> Counters:
        """A snapshot of the counts it keeps (``counters``: all; else those it declares)."""

    def key(self, *xs: Any) -> Hashable:
        """The cache key a barrier on ``xs`` would use (capability ``keys``).

        Its ``repr`` must be the same in every process that builds the same graph.
        """

    def is_pending(self, x: Any) -> bool:
        """Whether ``x`` is recorded but not materialised (capability ``pending``)."""

    def ir(self, *xs: Any) -> str:
        """The pending graph of ``xs`` as text (capability ``ir``)."""

    def hlo(self, *xs: Any) -> str:
        """The compiled program of ``xs`` as text (capability ``hlo``)."""

    def reset(self) -> None:
        """Forget compiled programs and zero the counters (capability ``reset``)."""

    def isolate(self) -> None:
        """Leave nothing of the earlier tests behind (no capability: optional, but do it).

        Called before every spec test. After it, no tensor made before may join a barrier:
        materialise or forget the leftovers (a failing one must not fail the next test), and
        start any count of pending work over. Tensors made before stay readable.
        """

    def sync(self, *xs: Any) -> None:
        """Materialise just ``xs`` (capability ``sync``)."""

    def inplace(self, op: str, x: Any, other: Any) -> Any:
        """``x op= other``: rebinds ``x``, returns it (capability ``setitem``).

        ``op`` is a binary op with a Python in-place operator (``add`` for ``+=``, ``subtract``,
        ``multiply``, ``divide``, ``floor_divide``, ``remainder``, ``pow``, the bitwise ones,
        ``matmul``).
        """

    def eager(self) -> AbstractContextManager[Any]:
        """A context in which every op runs as it is recorded (capability ``eager``)."""

    def devices(self) -> Sequence[Any]:
        """The devices ``to_device`` accepts, two or more (capability ``devices``)."""

    def to_device(self, x: Any, device: Any) -> Any:
        """A copy of ``x`` on ``device`` (capability ``devices``)."""

    def shape(self, x: Any) -> tuple[int, ...]:
        """The shape of ``x``, read without running anything (capability ``metadata``)."""

    def dtype(self, x: Any) -> np.dtype[Any]:
        """The dtype of ``x`` as a NumPy dtype (capability ``metadata``)."""

    def no_fallback(self) -> AbstractContextManager[Any]:
        """A context in which an op that would run on the host raises ``RuntimeError``.

        Capability ``no_fallback`` (minilazy: ``ml.policy(fallback="error")``).
        """

    def conv2d(self, x: Any, w: Any, b: Any = None, *, stride: int | tuple[int, int] = 1,
               padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1,
               groups: int = 1) -> Any:
        """As torch's ``conv2d``: ``x`` (N, C, H, W), ``w`` (O, C / groups, kH, kW), ``b`` (O,).

        Zero padding; capability ``conv``.
        """

    def max_pool2d(self, x: Any, kernel_size: int | tuple[int, int],
                   stride: int | tuple[int, int] | None = None,
                   padding: int | tuple[int, int] = 0) -> Any:
        """As torch's ``max_pool2d`` of ``x`` (N, C, H, W).

        -inf padding, ``stride`` defaulting to ``kernel_size``; capability ``conv``.
        """

    def avg_pool2d(self, x: Any, kernel_size: int | tuple[int, int],
                   stride: int | tuple[int, int] | None = None,
                   padding: int | tuple[int, int] = 0) -> Any:
        """As torch's ``avg_pool2d`` of ``x`` (N, C, H, W).

        Padded zeros count in the mean; capability ``conv``.
        """

    def sort(self, x: Any, *, axis: int = -1, descending: bool = False) -> Any:
        """The Array API's ``sort`` (stable; NaNs last when ascending). Capability ``linalg``."""

    def argsort(self, x: Any, *, axis: int = -1, descending: bool = False) -> Any:
        """The Array API's stable ``argsort``, indices int64. Capability ``linalg``."""

    def linalg(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The Array API's ``linalg.<name>(*args, **kwargs)`` (capability ``linalg``).

        Tensors where the standard takes arrays; a function of several results (``eigh``,
        ``qr``, ``svd``, ``slogdet``) returns them as a tuple, in the standard's order.
        """

    def fft(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The Array API's ``fft.<name>(*args, **kwargs)`` (capability ``fft``).

        Tensors where the standard takes arrays (complex ones too: ``from_numpy`` of complex64
        and complex128 arrays), and ``numpy.dtype`` objects for ``fftfreq``'s ``dtype``.
        """

    def grad(self, f: Callable[..., Any], argnums: tuple[int, ...]) -> Callable[..., Any]:
        """The gradient of ``f`` (capability ``autodiff``).

        ``f`` maps tensors (or lists and dicts of them) to a 0-d floating tensor; the returned
        function gives a tuple with one gradient per argument in ``argnums``, shaped like it.
        """


def supports(adapter: Adapter, op: str) -> bool:
    """Whether ``adapter`` implements op ``op`` (adapters without ``supports`` do them all).

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> supports(toy(), "add")
        True
    """
    check = getattr(adapter, "supports", None)
    return True if check is None else bool(check(op))


def load(spec: str | None = None) -> Adapter:
    """Make the adapter named by ``spec`` (``"package.module:factory"``).

    ``spec`` defaults to the ``MINILAZY_IMPL`` environment variable, then to minilazy on the CPU.
    The factory is called with no arguments; its result must satisfy :class:`Adapter` and
    declare only known capabilities.

    Example:
        >>> load("minilazy.conformance.mutate.toy:toy").name
        'toy'
    """
    spec = spec or os.environ.get(IMPL_VARIABLE) or DEFAULT_IMPL
    module_name, sep, factory_name = spec.partition(":")
    if not sep or not module_name or not factory_name:
        raise ValueError(f"an implementation is named 'package.module:factory', got {spec!r}")
    factory = getattr(importlib.import_module(module_name), factory_name)
    adapter = factory()
    if not isinstance(adapter, Adapter):
        raise TypeError(f"{spec} made {type(adapter).__name__}, which is not an Adapter "
                        "(name, version, capabilities, from_numpy, to_numpy, apply, barrier)")
    unknown = set(adapter.capabilities) - CAPABILITIES
    if unknown:
        raise ValueError(f"{spec} declares unknown capabilities {sorted(unknown)}; known: "
                         f"{sorted(CAPABILITIES)}")
    return adapter
