"""The adapter protocol: how the oracle drives a lazy tensor implementation.

An implementation plugs into the conformance suite through one small object. Required: move
data in and out (``from_numpy``, ``to_numpy``: an observation), ``apply`` an op by its spec name
(``ops.toml``), and a ``barrier`` (``mark_step``). Optional, each declared as a capability:
counters, graph keys, IR and HLO dumps, a cache reset, pending-state queries, several devices.
Tests that need a capability the adapter does not declare are skipped, naming it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

# Capabilities an adapter may declare (rules.toml gates rules on them).
CAPABILITIES = frozenset({
    "counters",   # counters(): ops recorded, compiles, cache hits, executions
    "keys",       # key(*xs): the cache key the next barrier on xs would use
    "pending",    # is_pending(x): whether x's value is only recorded
    "ir",         # ir(*xs): the pending graph as text
    "hlo",        # hlo(*xs): the compiled program as text; params_are_parameters(*xs)
    "reset",      # reset(): forget compiled programs and zero the counters
    "setitem",    # apply("setitem", x, key, value) and in-place ops rebind x
    "autocut",    # long loops without barriers stay bounded
    "eager",      # eager(): a context manager running op by op
    "donation",   # counters().donations counts buffers reused at mark_step
    "devices",    # devices(): two or more devices; apply("to_device", x, d)
    "float64",    # 64-bit floats and ints are computed in 64 bits
    "sync",       # sync(*xs): materialise just these
})


@dataclass(frozen=True)
class Counters:
    """What the oracle reads from an implementation's metrics (a snapshot).

    Example:
        >>> Counters(ops_recorded=3, compiles=1, cache_hits=0, executions=1).compiles
        1
    """

    ops_recorded: int
    compiles: int
    cache_hits: int
    executions: int
    donations: int = 0


@runtime_checkable
class Adapter(Protocol):
    """The required part of the protocol (see the module docstring for the optional part).

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


class OptionalAdapter(Adapter, Protocol):
    """The optional methods, each behind a capability."""

    def counters(self) -> Counters:
        """A snapshot of the counters (capability ``counters``)."""

    def key(self, *xs: Any) -> Hashable:
        """The cache key a barrier on ``xs`` would use (capability ``keys``)."""

    def is_pending(self, x: Any) -> bool:
        """Whether ``x`` is recorded but not materialised (capability ``pending``)."""

    def ir(self, *xs: Any) -> str:
        """The pending graph of ``xs`` as text (capability ``ir``)."""

    def hlo(self, *xs: Any) -> str:
        """The compiled program of ``xs`` as text (capability ``hlo``)."""

    def reset(self) -> None:
        """Forget compiled programs and zero the counters (capability ``reset``)."""

    def sync(self, *xs: Any) -> None:
        """Materialise just ``xs`` (capability ``sync``)."""
