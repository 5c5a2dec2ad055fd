"""The oracle's view of tinylazy (given): ``--lazy-impl=tinylazy.adapter:adapter``.

Plumbing only: every method calls the layer that does the work. The protocol is
``minilazy.conformance.adapter``; a rule whose capability is not declared is skipped, and a
skipped rule is not a passed one.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from tinylazy import autodiff, barrier, graph, lowering, runtime, tracer
from tinylazy.ir import STATE, or_else
from tinylazy.tracer import Tensor

try:  # the oracle's Counters, where minilazy is installed (the grader always has it)
    from minilazy.conformance.adapter import Counters
except ImportError:  # pragma: no cover
    from types import SimpleNamespace as Counters  # type: ignore[assignment]


class Adapter:
    """tinylazy as the conformance oracle drives it."""

    name = "tinylazy"
    version = "1.0"
    capabilities = frozenset({"counters", "keys", "pending", "sync", "setitem", "metadata",
                              "float64", "reset", "eager", "autocut", "donation", "hlo",
                              "autodiff"})

    def __init__(self) -> None:
        self.reset()

    def from_numpy(self, array: np.ndarray[Any, Any]) -> Tensor:
        return tracer.asarray(array)

    def to_numpy(self, x: Tensor) -> np.ndarray[Any, Any]:
        return barrier.observe(x)

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        return tracer.apply(op, *args, **kwargs)

    def supports(self, op: str) -> bool:
        # ops.py runs the NumPy function of an op's name: the multi-tensor pair has none.
        return op not in ("pack", "unpack")

    def inplace(self, op: str, x: Tensor, other: Any) -> Tensor:
        return tracer.inplace(op, x, other)

    def barrier(self) -> None:
        # Before assignment 2, a barrier does nothing: tests of assignment 1 settle with one.
        or_else(barrier.mark_step)

    def sync(self, *xs: Tensor) -> None:
        if or_else(barrier.sync, *xs, otherwise=False) is False:  # before assignment 2
            for x in xs:
                barrier.observe(x)

    def isolate(self) -> None:
        barrier.isolate()

    def reset(self) -> None:
        STATE.cache.clear()
        for name in STATE.counts:
            STATE.counts[name] = 0

    def counters(self) -> Any:
        return Counters(**STATE.counts)

    def key(self, *xs: Tensor) -> str:
        return graph.cut([x.node for x in xs]).key

    def hlo(self, *xs: Tensor) -> str:
        c = graph.cut([x.node for x in xs])
        with lowering.x64():
            return lowering.hlo(c, runtime.params(c))

    def is_pending(self, x: Tensor) -> bool:
        return x.node.pending

    def shape(self, x: Tensor) -> tuple[int, ...]:
        return x.shape

    def dtype(self, x: Tensor) -> np.dtype[Any]:
        return x.dtype

    def eager(self) -> AbstractContextManager[None]:
        return barrier.eager()

    def grad(self, f: Callable[..., Any], argnums: tuple[int, ...]) -> Callable[..., Any]:
        return autodiff.grad(f, argnums)


def adapter() -> Adapter:
    """The factory the oracle calls (``--lazy-impl=tinylazy.adapter:adapter``)."""
    return Adapter()

