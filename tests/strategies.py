"""The numerics tests' strategies: the oracle's own (one harness, one set of input domains)."""

from __future__ import annotations

from typing import Any

from minilazy.conformance.oracle.strategies import DTYPES, arrays, elements, loop_exists, shapes
from minilazy.conformance.registry import OpSpec

__all__ = ["DTYPES", "SHAPES", "arrays", "elements", "loop_exists", "numpy_fn"]

SHAPES = shapes()


def numpy_fn(spec: OpSpec) -> Any:
    """The NumPy function an op is defined by."""
    return spec.numpy_callable()
