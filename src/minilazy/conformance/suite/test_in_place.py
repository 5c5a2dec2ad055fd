"""``x op= y``: exactly NumPy's results, and NumPy's errors at the call.

``x op= y`` is ``x = (x op y)`` cast back to ``x``'s dtype with same-kind casting, for every op
with a Python in-place operator; a Python scalar ``y`` is weak (NEP 50).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close
from minilazy.conformance.oracle.strategies import allowed, arrays, dtypes_for, shapes
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import fresh, matches, numpy_outcome, raises_at_the_call

Array = np.ndarray[Any, Any]
# x op= y for every op with a Python in-place operator (matmul has a test of its own).
IN_PLACE: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.iadd, "subtract": operator.isub, "multiply": operator.imul,
    "divide": operator.itruediv, "floor_divide": operator.ifloordiv,
    "remainder": operator.imod, "pow": operator.ipow, "bitwise_and": operator.iand,
    "bitwise_or": operator.ior, "bitwise_xor": operator.ixor,
    "bitwise_left_shift": operator.ilshift, "bitwise_right_shift": operator.irshift,
}


def weak_scalar(draw: Any, domain: str) -> bool | int | float:
    """A Python scalar operand, kept in the op's input domain."""
    kind = draw(st.sampled_from([bool, int, float]))
    if kind is bool:
        return bool(draw(st.booleans()))
    if kind is int:
        return int(draw(st.integers(0, 6) if domain else st.integers(-300, 300)))
    return float(draw(st.floats(-1e3, 1e3, allow_subnormal=False) if domain  # LZ-NUM-004
                      else st.floats(allow_subnormal=False)))


def _check_in_place(adapter: OptionalAdapter, op: str, x: Array, y: Any) -> None:
    """``x op= y`` (``y`` a NumPy array, passed as a tensor, or a Python scalar) as NumPy's."""
    fn = IN_PLACE[op]

    def run() -> Any:
        return adapter.inplace(op, adapter.from_numpy(x),
                               adapter.from_numpy(y) if isinstance(y, np.ndarray) else y)

    fresh(adapter)
    want, errors = numpy_outcome(lambda: fn(x.copy(), y))
    if not errors:
        assert want is not None
        assert_close(adapter.to_numpy(run()), want, ops()[op].tolerance, what=f"{op}=")
        return
    try:
        fits = np.broadcast_shapes(x.shape, np.shape(y)) == x.shape
    except ValueError:
        fits = False
    # A bad shape *and* a bad cast: which one is reported first is free.
    raises_at_the_call(adapter, run, errors if fits else (*errors, ValueError))


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.parametrize("op", sorted(IN_PLACE))
@given(data=st.data())
def test_in_place_operators_match_numpy(adapter: OptionalAdapter, op: str,
                                        data: st.DataObject) -> None:
    """``x op= y`` is ``x = (x op y)`` cast back to ``x``'s dtype with same-kind casting.

    As NumPy: int8 += int16 wraps, int8 /= int8 is a TypeError, and a result that does not fit
    ``x``'s shape is a ValueError -- at the call. ``y``: a tensor of any dtype, of a shape that
    may or may not broadcast into ``x`` (Python scalars: the next test).
    """
    spec = ops()[op]
    dtypes = dtypes_for(adapter)
    dx, dy = data.draw(st.sampled_from(dtypes)), data.draw(st.sampled_from(dtypes))
    assume(allowed(adapter, op, dx, dy))
    x = np.asarray(data.draw(arrays(dx, shapes(), spec.domain, 0), label="x"))
    shape = data.draw(st.one_of(st.just(x.shape), hnp.broadcastable_shapes(
        x.shape, min_side=0, max_side=4)))
    _check_in_place(adapter, op, x, np.asarray(data.draw(arrays(dy, shape, spec.domain, 1),
                                                         label="y")))


@pytest.mark.spec("LZ-NUM-003")
@pytest.mark.requires("setitem")
@pytest.mark.parametrize("op", sorted(IN_PLACE))
@given(data=st.data())
def test_in_place_operators_with_python_scalars_are_weak(adapter: OptionalAdapter, op: str,
                                                         data: st.DataObject) -> None:
    """``x op= s`` with a Python scalar ``s``: weak, as NumPy 2.

    int8 += 300 is an OverflowError, int8 += 1.5 a TypeError, both at the call.
    """
    spec = ops()[op]
    dx = data.draw(st.sampled_from(dtypes_for(adapter)))
    assume(allowed(adapter, op, dx))
    x = np.asarray(data.draw(arrays(dx, shapes(), spec.domain, 0), label="x"))
    _check_in_place(adapter, op, x, weak_scalar(data.draw, spec.domain))


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.ops("matmul")
@given(data=st.data())
def test_in_place_matmul_matches_numpy(adapter: OptionalAdapter, data: st.DataObject) -> None:
    """``x @= w`` with a square ``w`` (the result has ``x``'s shape).

    Small integers, so the products are exact in every dtype and the comparison can be exact.
    """
    dtype = data.draw(st.sampled_from([d for d in dtypes_for(adapter) if d.kind in "iuf"]))
    assume(allowed(adapter, "matmul", dtype))
    x = np.asarray(data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3,
                                                                max_side=4),
                                        elements=st.integers(0, 3)), label="x"))
    w = np.asarray(data.draw(hnp.arrays(dtype, (x.shape[-1],) * 2, elements=st.integers(0, 3)),
                             label="w"))

    def want() -> Array:
        out = x.copy()
        out @= w
        return out

    matches(adapter, want, lambda: adapter.inplace("matmul", adapter.from_numpy(x),
                                                   adapter.from_numpy(w)))
