"""Reductions, ``matmul`` and ``tensordot``: NumPy's shapes and dtypes, values within the bound.

Complex operands too, where the implementation declares capability ``complex`` (not for the
reductions the standard defines on real values only: ``max``, ``argmax``, ``var``...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies, supports
from minilazy.conformance.oracle import assert_close, numpy_apply, reduction_bound
from minilazy.conformance.oracle.strategies import (
    BOUND,
    allowed,
    arrays,
    axes,
    defined,
    dtypes_for,
    examples,
)
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.test_errors import names_shape, raised
from minilazy.conformance.suite.util import counting, explain_call, fresh

Array = np.ndarray[Any, Any]
REDUCTIONS = sorted(n for n, s in ops().items() if s.kind == "reduction")
FLOAT_REDUCTIONS = ["mean", "prod", "std", "sum", "var"]  # those that round


def operands(adapter: OptionalAdapter, args: list[Array], pending: bool) -> list[Any]:
    """``args`` on the adapter: data, or (``pending``) each the result of recorded ops.

    A pending operand is ``flip(flip(x))``: the op under test is then recorded on what other
    ops compute, and runs in one program with them, not on data alone.
    """
    tensors = [adapter.from_numpy(a) for a in args]
    if pending and supports(adapter, "flip"):
        tensors = [adapter.apply("flip", adapter.apply("flip", t)) for t in tensors]
    return tensors


def check(adapter: OptionalAdapter, op: str, args: list[Any], kwargs: dict[str, Any],
          pending: bool = False) -> None:
    """``op`` on the adapter matches NumPy's (or raises at the call where NumPy raises)."""
    spec = ops()[op]
    assume(allowed(adapter, op, *(a.dtype for a in args)))  # the adapter's dtype policy
    fresh(adapter)
    explain_call(op, args, kwargs)
    try:
        want = numpy_apply(op, *args, **kwargs)
    except (TypeError, ValueError) as e:
        with pytest.raises((type(e), TypeError, ValueError, IndexError)):
            adapter.apply(op, *operands(adapter, args, pending), **kwargs)
        return
    got = adapter.to_numpy(adapter.apply(op, *operands(adapter, args, pending), **kwargs))
    bound = reduction_bound(op, args, kwargs, want) if spec.tolerance == "reduction" else None
    assert_close(got, want, spec.tolerance, bound=bound, what=f"{op}(**{kwargs})")


def raised_at_the_call(adapter: OptionalAdapter, call: Any) -> Exception:
    """The exception ``call()`` raises, having run nothing (where the adapter counts runs)."""
    if not satisfies(capabilities_of(adapter), "executions|compiles"):
        return raised(call)
    with counting(adapter) as d:
        error = raised(call)
    assert d.ran_nothing(), f"ran the graph before raising {type(error).__name__}: {error}"
    return error


@pytest.mark.spec("LZ-NUM-010")
@pytest.mark.parametrize("op", REDUCTIONS)
@given(data=st.data())
def test_reductions_match_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    spec = ops()[op]
    dtype = data.draw(st.sampled_from([d for d in dtypes_for(adapter, complex_too=True)
                                       if defined(spec, d)]), label="dtype")
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
    check(adapter, op, [x], kwargs, data.draw(st.booleans(), label="pending"))


@pytest.mark.spec("LZ-NUM-010")
@pytest.mark.parametrize("op", REDUCTIONS)
@given(data=st.data())
def test_a_keepdims_reduction_read_in_the_same_graph(adapter: OptionalAdapter, op: str,
                                                     data: st.DataObject) -> None:
    # x - op(x, axis, keepdims=True), as softmax does: the reduction is read by an op of the
    # same program, which sees its shape before any output reshape could hide a wrong one.
    spec = ops()[op]
    dtype = data.draw(st.sampled_from([d for d in dtypes_for(adapter, complex_too=True)
                                       if d.kind in "fc" and defined(spec, d)]))
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
    da, db = (data.draw(st.sampled_from(dtypes_for(adapter, complex_too=True)), label="dtype")
              for _ in range(2))
    domain = ops()[op].domain
    check(adapter, op, [data.draw(arrays(da, a_shape, domain)),
                        data.draw(arrays(db, b_shape, domain))], {},
          data.draw(st.booleans(), label="pending"))


@st.composite
def tensordot_case(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], Any]:
    """Two shapes sharing contracted dims, and ``axes``: an int, or two lists of axes.

    Named axes put the contracted dims anywhere in either operand, paired in any order, maybe
    counted from the end.
    """
    k = draw(st.integers(0, 2), label="contracted")
    side = st.integers(0, 4)
    common = draw(st.lists(side, min_size=k, max_size=k))
    free_a = draw(st.lists(side, max_size=3 - k))
    free_b = draw(st.lists(side, max_size=3 - k))
    if draw(st.booleans(), label="int axes"):
        return (*free_a, *common), (*common, *free_b), k
    shape_a, shape_b = list(free_a), list(free_b)
    pos_a: list[int] = []
    pos_b: list[int] = []
    for n in common:
        i = draw(st.integers(0, len(shape_a)))
        shape_a.insert(i, n)
        pos_a = [p + (p >= i) for p in pos_a] + [i]
        j = draw(st.integers(0, len(shape_b)))
        shape_b.insert(j, n)
        pos_b = [p + (p >= j) for p in pos_b] + [j]
    neg = draw(st.booleans(), label="negative axes")
    axes_a = [p - len(shape_a) if neg else p for p in pos_a]
    axes_b = [p - len(shape_b) if neg else p for p in pos_b]
    return tuple(shape_a), tuple(shape_b), (axes_a, axes_b)


@pytest.mark.spec("LZ-NUM-011")
@pytest.mark.parametrize("op", ["tensordot"])
@examples(0.5)
@given(data=st.data())
def test_tensordot_matches_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    shape_a, shape_b, axes_arg = data.draw(tensordot_case(), label="shapes and axes")
    da, db = (data.draw(st.sampled_from(dtypes_for(adapter, complex_too=True)), label="dtype")
              for _ in range(2))
    domain = ops()[op].domain
    check(adapter, op, [data.draw(arrays(da, shape_a, domain), label="x1"),
                        data.draw(arrays(db, shape_b, domain), label="x2")], {"axes": axes_arg})


# -- edge cases: a dtype to accumulate in, NaN and infinities ----------------------------------

def accumulable(op: str, source: np.dtype[Any], target: np.dtype[Any], shape: Any
                ) -> st.SearchStrategy[Array]:
    """Operands of ``op(x, dtype=target)`` whose result does not depend on the order of terms.

    Integer results wrap modulo 2**bits in any order: every value. Float results take values
    of the `bounded` (sum) or `unit` (prod) domain of the narrower of the two dtypes, integers
    -1..2 for a product: no partial result overflows (``(big + big) - big`` is inf or big).
    """
    if target.kind != "f" or source.kind == "b":
        return arrays(source, shape)
    if source.kind in "iu":
        info = np.iinfo(source)
        if op == "prod":
            values = st.integers(max(int(info.min), -1), 2)
        else:
            limit = int(BOUND[target])
            values = st.integers(max(int(info.min), -limit), min(int(info.max), limit))
        return hnp.arrays(source, shape, elements=values)
    if op == "prod":
        return arrays(source, shape, "unit")
    limit_f = min(BOUND[source], BOUND[target])
    return hnp.arrays(source, shape, elements=st.floats(
        -limit_f, limit_f, allow_nan=False, allow_infinity=False, allow_subnormal=False,
        width=16 if source.itemsize == 2 else 32 if source.itemsize == 4 else 64))


@pytest.mark.spec("LZ-NUM-010")
@pytest.mark.parametrize("op", ["sum", "prod"])
@given(data=st.data())
def test_sum_and_prod_accumulate_in_the_dtype_asked_for(adapter: OptionalAdapter, op: str,
                                                         data: st.DataObject) -> None:
    # ``dtype=`` converts first and accumulates in it (integers wrap modulo 2**bits, as NumPy).
    dtypes = dtypes_for(adapter)
    source, target = data.draw(st.tuples(st.sampled_from(dtypes), st.sampled_from(dtypes)).filter(
        lambda p: not (p[0].kind == "f" and p[1].kind in "biu")), label="dtypes")  # C: undefined
    assume(allowed(adapter, op, source, target))
    shape = hnp.array_shapes(min_dims=0, max_dims=3 if op == "sum" else 2, min_side=0,
                             max_side=4 if op == "sum" else 3)  # products of <= 9 factors
    x = data.draw(accumulable(op, source, target, shape), label="x")
    kwargs: dict[str, Any] = {"axis": data.draw(axes(x.ndim), label="axis"), "dtype": target,
                              "keepdims": data.draw(st.booleans(), label="keepdims")}
    fresh(adapter)
    explain_call(op, [x], kwargs)
    want = numpy_apply(op, x, **kwargs)
    got = adapter.to_numpy(adapter.apply(op, adapter.from_numpy(x), **kwargs))
    with np.errstate(all="ignore"):
        converted = x.astype(target)  # what both sides accumulate
    assert_close(got, want, "reduction", bound=reduction_bound(op, [converted], kwargs, want),
                 what=f"{op}(x: {source}, **{kwargs})")


@st.composite
def with_nans(draw: Any, dtype: np.dtype[Any]) -> Array:
    """A non-empty float array of the `bounded` domain with NaN in at least one place."""
    x: Array = draw(arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1,
                                                   max_side=4), "bounded"))
    mask = draw(hnp.arrays(np.bool_, x.shape))
    mask.flat[draw(st.integers(0, x.size - 1))] = True
    x[mask] = np.nan
    return x


@pytest.mark.spec("LZ-NUM-010")
@pytest.mark.parametrize("op", ["argmax", "argmin", "max", "min"])
@given(data=st.data())
def test_nan_propagates_through_max_min_argmax_argmin(adapter: OptionalAdapter, op: str,
                                                       data: st.DataObject) -> None:
    # NaN wins: max and min are NaN, argmax and argmin the first NaN's index, as in NumPy.
    dtype = data.draw(st.sampled_from([d for d in dtypes_for(adapter) if d.kind == "f"]))
    x = data.draw(with_nans(dtype), label="x")
    if op.startswith("arg"):
        axis: Any = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)), label="axis")
    else:
        axis = data.draw(axes(x.ndim), label="axis")
    check(adapter, op, [x], {"axis": axis, "keepdims": data.draw(st.booleans(), label="keepdims")})


@pytest.mark.spec("LZ-NUM-010")
@pytest.mark.parametrize("op", FLOAT_REDUCTIONS)
@given(data=st.data())
def test_nan_and_inf_propagate_through_float_reductions(adapter: OptionalAdapter, op: str,
                                                         data: st.DataObject) -> None:
    # Values in [-1, 1] with NaN and +-inf sprinkled in: where results are NaN or +-inf is
    # exact. (With finite values this small, a result is non-finite only through the specials,
    # and which special comes out does not depend on the order of operations.)
    dtype = data.draw(st.sampled_from([d for d in dtypes_for(adapter) if d.kind == "f"]))
    x = data.draw(arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), "unit"),
                  label="finite")
    special = data.draw(hnp.arrays(np.int8, x.shape, elements=st.sampled_from([0, 0, 1, 2, 3])),
                        label="specials")
    x[special == 1], x[special == 2], x[special == 3] = np.nan, np.inf, -np.inf
    check(adapter, op, [x], {"axis": data.draw(axes(x.ndim), label="axis")})


# -- errors at the call ------------------------------------------------------------------------

BAD_AXES = [(op, axis) for op in REDUCTIONS for axis in (2, -3, (0, 0), (1, -1))
            if not (op.startswith("arg") and isinstance(axis, tuple))]  # arg*: one axis


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("op", "axis"), [pytest.param(o, a, id=f"{o}-{a}") for o, a in BAD_AXES])
def test_bad_axes_raise_at_the_call(adapter: OptionalAdapter, op: str, axis: Any) -> None:
    # Out of range for a 2-d operand, or repeated: NumPy raises, and so must the call.
    x = np.zeros((2, 3), np.float32)
    with pytest.raises((ValueError, IndexError)):
        numpy_apply(op, x, axis=axis)
    t = adapter.from_numpy(x)
    raised_at_the_call(adapter, lambda: adapter.apply(op, t, axis=axis))


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize("op", ["argmax", "argmin", "max", "min"])
@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((2, 0), 1), ((0, 3), 0)], ids=str)
def test_zero_size_reductions_without_identity_raise_at_the_call(
        adapter: OptionalAdapter, op: str, shape: tuple[int, ...], axis: Any) -> None:
    x = np.zeros(shape, np.float32)
    with pytest.raises(ValueError):
        numpy_apply(op, x, axis=axis)
    t = adapter.from_numpy(x)
    error = raised_at_the_call(adapter, lambda: adapter.apply(op, t, axis=axis))
    assert names_shape(str(error), shape), f"{error!r} does not name {shape}"


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize("op", ["matmul"])
@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3, 4), (5, 4, 2)),
                                        ((2, 3), ()), ((4,), (2, 3))], ids=str)
def test_matmul_shape_mismatch_raises_at_the_call_naming_the_shapes(
        adapter: OptionalAdapter, op: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    with pytest.raises(ValueError):
        numpy_apply(op, a, b)
    ta, tb = adapter.from_numpy(a), adapter.from_numpy(b)
    error = raised_at_the_call(adapter, lambda: adapter.apply(op, ta, tb))
    for shape in (sa, sb):
        assert names_shape(str(error), shape), f"{error!r} does not name {shape}"


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize("op", ["tensordot"])
@pytest.mark.parametrize(("sa", "sb", "axes_arg"), [
    ((2, 3), (4, 5), 1), ((2, 3), (3, 4), 3), ((2, 3), (2, 3), ([0, 1], [1, 0])),
    ((2, 3), (3, 2), ([0], [0, 1])), ((2, 3), (3, 2), ([2], [0]))], ids=str)
def test_tensordot_bad_axes_raise_at_the_call(adapter: OptionalAdapter, op: str,
                                              sa: tuple[int, ...], sb: tuple[int, ...],
                                              axes_arg: Any) -> None:
    # Contracted sizes that differ, more axes than dims, lists of unequal length, out of range.
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    with pytest.raises((ValueError, IndexError)):
        numpy_apply(op, a, b, axes=axes_arg)
    ta, tb = adapter.from_numpy(a), adapter.from_numpy(b)
    raised_at_the_call(adapter, lambda: adapter.apply(op, ta, tb, axes=axes_arg))


def _refused_on_0d(op: str, axis: Any) -> bool:
    try:
        numpy_apply(op, np.array(2.5, np.float32), axis=axis)
    except (ValueError, IndexError):
        return True
    return False


# A 0-d array has no axis 0. NumPy accepts axis=0 and -1 there for sum, max... anyway (a legacy
# quirk the Array API does not share, so the suite leaves it alone), but not axis=(0,), nor any
# axis for mean, var and std: those must raise.
ZERO_D_AXES = [(op, axis) for op in REDUCTIONS for axis in (0, -1, (0,))
               if not (op.startswith("arg") and isinstance(axis, tuple))
               and _refused_on_0d(op, axis)]


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("op", "axis"), [pytest.param(o, a, id=f"{o}-{a}")
                                          for o, a in ZERO_D_AXES])
def test_axes_of_a_0d_operand_raise_at_the_call(adapter: OptionalAdapter, op: str,
                                                axis: Any) -> None:
    t = adapter.from_numpy(np.array(2.5, np.float32))
    raised_at_the_call(adapter, lambda: adapter.apply(op, t, axis=axis))
