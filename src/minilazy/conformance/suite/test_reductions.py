"""Reductions, ``matmul`` and ``tensordot``: NumPy's shapes and dtypes, values within the bound."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close, numpy_apply, reduction_bound
from minilazy.conformance.registry import ops
from minilazy.conformance.strategies import allowed, arrays, axes, dtypes_for, examples
from minilazy.conformance.suite.util import explain_call, fresh

REDUCTIONS = sorted(n for n, s in ops().items() if s.kind == "reduction")


def check(adapter: OptionalAdapter, op: str, args: list[Any], kwargs: dict[str, Any]) -> None:
    """``op`` on the adapter matches NumPy's (or raises at the call where NumPy raises)."""
    spec = ops()[op]
    assume(allowed(adapter, op, *(a.dtype for a in args)))  # the adapter's dtype policy
    fresh(adapter)
    explain_call(op, args, kwargs)
    try:
        want = numpy_apply(op, *args, **kwargs)
    except (TypeError, ValueError) as e:
        with pytest.raises((type(e), TypeError, ValueError, IndexError)):
            adapter.apply(op, *map(adapter.from_numpy, args), **kwargs)
        return
    got = adapter.to_numpy(adapter.apply(op, *map(adapter.from_numpy, args), **kwargs))
    bound = reduction_bound(op, args, kwargs, want) if spec.tolerance == "reduction" else None
    assert_close(got, want, spec.tolerance, bound=bound, what=f"{op}(**{kwargs})")


@pytest.mark.spec("LZ-NUM-010")
@pytest.mark.parametrize("op", REDUCTIONS)
@given(data=st.data())
def test_reductions_match_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    spec = ops()[op]
    dtype = data.draw(st.sampled_from(dtypes_for(adapter)), label="dtype")
    x = data.draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                                 max_side=4), spec.domain), label="x")
    kwargs: dict[str, Any] = {"keepdims": data.draw(st.booleans(), label="keepdims")}
    if op in ("argmax", "argmin"):  # one axis or none, as the Array API says
        kwargs["axis"] = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1))
                                   if x.ndim else st.none(), label="axis")
    else:
        kwargs["axis"] = data.draw(axes(x.ndim), label="axis")
    if op in ("var", "std"):
        kwargs["correction"] = data.draw(st.sampled_from([0, 1]), label="correction")
    check(adapter, op, [x], kwargs)


@pytest.mark.spec("LZ-NUM-010")
@pytest.mark.parametrize("op", REDUCTIONS)
@given(data=st.data())
def test_a_keepdims_reduction_read_in_the_same_graph(adapter: OptionalAdapter, op: str,
                                                     data: st.DataObject) -> None:
    # x - op(x, axis, keepdims=True), as softmax does: the reduction is read by an op of the
    # same program, which sees its shape before any output reshape could hide a wrong one.
    spec = ops()[op]
    dtype = data.draw(st.sampled_from([d for d in dtypes_for(adapter) if d.kind == "f"]))
    x = data.draw(arrays(dtype, hnp.array_shapes(min_dims=2, max_dims=3, min_side=2,
                                                 max_side=4), spec.domain), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    kwargs: dict[str, Any] = {"axis": axis, "keepdims": True}
    fresh(adapter)
    want = numpy_apply("subtract", x, numpy_apply(op, x, **kwargs))
    t = adapter.from_numpy(x)
    got = adapter.to_numpy(adapter.apply("subtract", t, adapter.apply(op, t, **kwargs)))
    bound = None
    if spec.tolerance == "reduction":  # x's own magnitude plus the reduction's slack
        bound = reduction_bound(op, [x], kwargs, numpy_apply(op, x, **kwargs))
    assert_close(got, want, spec.tolerance, bound=bound,
                 what=f"x - {op}(x, axis={axis}, keepdims=True)")


@st.composite
def matmul_shapes(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Operand shapes ``matmul`` accepts: 1-D vectors, matrices, broadcast batches."""
    n, k, m = (draw(st.integers(0, 3)) for _ in range(3))
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=2))
    a = draw(st.sampled_from([(k,), (n, k), (*batch.input_shapes[0], n, k)]))
    b = draw(st.sampled_from([(k,), (k, m), (*batch.input_shapes[1], k, m)]))
    return a, b


@pytest.mark.spec("LZ-NUM-011")
@pytest.mark.parametrize("op", ["matmul"])
@given(data=st.data())
def test_matmul_matches_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    a_shape, b_shape = data.draw(matmul_shapes(), label="shapes")
    da, db = (data.draw(st.sampled_from(dtypes_for(adapter)), label="dtype") for _ in range(2))
    domain = ops()[op].domain
    check(adapter, op, [data.draw(arrays(da, a_shape, domain)),
                        data.draw(arrays(db, b_shape, domain))], {})


@pytest.mark.spec("LZ-NUM-011")
@pytest.mark.parametrize("op", ["tensordot"])
@examples(0.5)
@given(data=st.data())
def test_tensordot_matches_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes_for(adapter)), label="dtype")
    shared = data.draw(st.lists(st.integers(0, 3), max_size=2), label="contracted")
    a_free = data.draw(st.lists(st.integers(1, 3), max_size=2))
    b_free = data.draw(st.lists(st.integers(1, 3), max_size=2))
    a = data.draw(arrays(dtype, (*a_free, *shared), "bounded"))
    b = data.draw(arrays(dtype, (*shared, *b_free), "bounded"))
    if data.draw(st.booleans(), label="named axes"):  # the same contraction, axes spelled out
        n = len(shared)
        axes_arg: Any = (tuple(range(len(a_free), len(a_free) + n)), tuple(range(n)))
    else:
        axes_arg = len(shared)
    check(adapter, op, [a, b], {"axes": axes_arg})
