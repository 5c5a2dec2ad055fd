"""A program is reused for its own structure only, compared by value: never by a hash of it.

CPython's ``hash`` is not injective where programs differ: ``hash(-1) == hash(-2)``, and ints wrap
modulo ``2**61 - 1``. An implementation that checks a cache hit against hashes of its attributes
(an axis of -1 or -2, a diagonal offset, a size) serves one program for the other. Each test runs
two structures that differ only there, then the first again, and checks every value against NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.suite.util import settle

Array = np.ndarray[Any, Any]
WRAP = 2**61 - 1  # CPython hashes ints modulo this prime: hash(3 + WRAP) == hash(3)
SQUARE = np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3) ** 1.5  # same shape either axis
# (op, keywords of the first call, of the second): results of one shape and dtype, other values
PAIRS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("sum", {"axis": -1}, {"axis": -2}),
    ("prod", {"axis": -2}, {"axis": -1}),
    ("max", {"axis": -1}, {"axis": -2}),
    ("argmax", {"axis": -2}, {"axis": -1}),
    ("mean", {"axis": -1}, {"axis": -2}),
    ("cumulative_sum", {"axis": -1}, {"axis": -2}),
    ("flip", {"axis": -2}, {"axis": -1}),
    ("tril", {"k": -1}, {"k": -2}),
    ("triu", {"k": -2}, {"k": -1}),
]


@pytest.mark.spec("LZ-CACHE-009")
@pytest.mark.parametrize("op,first,second", PAIRS, ids=[p[0] for p in PAIRS])
def test_attributes_that_hash_alike_get_their_own_programs(adapter: OptionalAdapter, op: str,
                                                           first: dict[str, Any],
                                                           second: dict[str, Any]) -> None:
    settle(adapter)
    for kwargs in (first, second, first):
        got = adapter.to_numpy(adapter.apply(op, adapter.from_numpy(SQUARE), **kwargs))
        assert_close(got, numpy_apply(op, SQUARE, **kwargs), "ulp",
                     what=f"{op}(x, {kwargs}) after {op} with the other value")


@pytest.mark.spec("LZ-CACHE-009")
@pytest.mark.ops("negative")
def test_shapes_that_hash_alike_get_their_own_programs(adapter: OptionalAdapter) -> None:
    # (0, 3) and (0, 3 + 2**61 - 1): both empty, both legal in NumPy (int8), one hash; no
    # scalar operand, whose promotion (another rule's) could make the array too big for NumPy
    settle(adapter)
    for n in (3, 3 + WRAP, 3):
        empty = np.zeros((0, n), np.int8)
        try:
            x = adapter.from_numpy(empty)
        except (ValueError, MemoryError, OverflowError, TypeError) as e:
            pytest.skip(f"the implementation refuses an empty array of shape {empty.shape}: {e}")
        got = adapter.to_numpy(adapter.apply("negative", x))
        assert got.shape == numpy_apply("negative", empty).shape, (
            f"(-x).shape is {got.shape} for x of shape {empty.shape}")


@pytest.mark.spec("LZ-CACHE-009")
@pytest.mark.ops("cumulative_sum", "multiply", "sum")
def test_taped_gradients_of_attributes_that_hash_alike(adapter: OptionalAdapter) -> None:
    if "autodiff" not in capabilities_of(adapter):
        pytest.skip("the implementation does not declare autodiff")
    settle(adapter)
    weights = np.linspace(0.5, 2.0, SQUARE.size, dtype=np.float32).reshape(SQUARE.shape)
    for axis in (-1, -2, -1):  # d/dx sum(w * cumsum(x, axis)): a reversed cumsum of w
        def f(t: Any, axis: int = axis) -> Any:
            scan = adapter.apply("cumulative_sum", t, axis=axis)
            return adapter.apply("sum", adapter.apply("multiply", scan,
                                                      adapter.from_numpy(weights)))

        (g,) = adapter.grad(f, (0,))(adapter.from_numpy(SQUARE))
        want = np.flip(np.cumsum(np.flip(weights, axis), axis), axis)
        assert_close(adapter.to_numpy(g), want, "ulp", what=f"gradient, axis={axis}")

