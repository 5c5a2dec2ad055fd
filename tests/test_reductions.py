"""Reductions and linear algebra: lazy result == eager NumPy.

Shapes and dtypes must equal NumPy's exactly, integer and boolean values too. Float sums, means,
variances, products, matmuls and tensordots may differ from NumPy's by the order in which terms
are combined (NumPy sums pairwise, XLA in whatever tree it likes), so they are compared with a
magnitude-aware bound computed from the inputs (see ``_sum_bound``), not a fixed tolerance.
Expected values always come from NumPy; where NumPy raises, minilazy must raise at the call.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import assert_matches, names_shape, numpy_or_error, quiet, raises_at_the_call, value
from strategies import DTYPES, SHAPES, arrays

# Every example compiles a new program by design: minilazy's warning about that is expected;
# so are overflow warnings where a value overflows its dtype, as NumPy warns on the same inputs.
pytestmark = [pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

FLOATS = [d for d in DTYPES if d.kind == "f"]
EXACT = [d for d in DTYPES if d.kind != "f"]
F64 = np.dtype(np.float64)
# The spec's `bounded` domain (spec/lazytensor.md, "Input domains"): finite float inputs of sums,
# means, variances, matmul and tensordot, at most 10 in magnitude in float16 and 1e6 in wider
# floats -- a partial sum that overflows would make the result depend on the summation order.
BOUND = {np.dtype(np.float16): 10.0, np.dtype(np.float32): 1e6, np.dtype(np.float64): 1e6}


# -- running both sides ------------------------------------------------------------------------

def lazy(x: np.ndarray, device, pending: bool = False) -> ml.Tensor:
    """``x`` on ``device``: a data leaf, or (``pending``) a recorded identity of one, so that
    the reduction is fused into one program with what computes its input."""
    t = ml.asarray(x, device=device)
    return ml.flip(ml.flip(t)) if pending else t



# -- strategies ------------------------------------------------------------------------------

def finite(dtype: np.dtype, bound: float | None = None) -> st.SearchStrategy[float]:
    b = BOUND[dtype] if bound is None else bound
    return st.floats(-b, b, allow_nan=False, allow_infinity=False, allow_subnormal=False,
                     width=dtype.itemsize * 8)


def summable(dtype: np.dtype, shape) -> st.SearchStrategy[np.ndarray]:
    """Arrays whose float sums cannot overflow; integers take every value (sums wrap)."""
    if dtype.kind == "f":
        return hnp.arrays(dtype, shape, elements=finite(dtype))
    return arrays(dtype, shape)


def unit(dtype: np.dtype, shape) -> st.SearchStrategy[np.ndarray]:
    """Factors whose products cannot overflow, whatever the order.

    Floats lie in [-1, 1] (the spec's `unit` domain): an overflowing partial product would make
    the result order-dependent (``(big * big) * 0`` is NaN, ``big * (big * 0)`` is 0). Integers
    are -1..2 (0..2 unsigned), used with the <= 9-element ``SMALL`` shapes so that their products
    stay finite once converted to float16 by ``prod(..., dtype=float16)``.
    """
    if dtype.kind == "b":
        return hnp.arrays(dtype, shape)
    if dtype.kind in "iu":
        return hnp.arrays(dtype, shape, elements=st.integers(0 if dtype.kind == "u" else -1, 2))
    return hnp.arrays(dtype, shape, elements=finite(dtype, 1.0))


SMALL = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)


@st.composite
def axes(draw, ndim: int, tuples: bool = True):
    """``None``, one axis (maybe negative) or a tuple of distinct axes, valid for ``ndim``."""
    if ndim == 0:  # NumPy's int-axis quirks on 0-d arrays are pinned down separately below
        return draw(st.sampled_from([None, ()] if tuples else [None]))
    one = st.integers(-ndim, ndim - 1)
    options = [st.none(), one]
    if tuples:
        options.append(st.lists(one, unique_by=lambda a: a % ndim, max_size=ndim).map(tuple))
    return draw(st.one_of(options))


def count(shape: tuple[int, ...], axis) -> int:
    """How many elements each result element reduces."""
    if axis is None:
        return math.prod(shape)
    return math.prod(shape[a] for a in ((axis,) if isinstance(axis, int) else axis))


# -- the magnitude-aware bound -----------------------------------------------------------------
#
# A float sum of n terms computed in *any* order (pairwise, sequential, any tree) is within
# (n - 1) * eps * sum(|x_i|) of the exact sum (Higham, "Accuracy and Stability of Numerical
# Algorithms", 4.2), and rounding the result to the output dtype adds eps * |sum| <= eps * sum|x|.
# NumPy's result and minilazy's are each that close to the exact value, so within twice that of
# each other: 2 * (n + 1) * eps * sum(|x|). eps is the output dtype's (a float16 result that NumPy
# accumulates in float32 is thus compared generously, never too strictly). XLA flushes subnormal
# partial results to zero, each flush losing less than the smallest normal: add n + 1 of those.
# The bound is computed in float64 from NumPy's inputs, elementwise over the result, so a row of
# small values is never compared with slack borrowed from a row of large ones.

def _eps(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).eps)


def _tiny(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).smallest_normal)


def _sum_bound(abs_total: np.ndarray, n: int, dtype: np.dtype) -> np.ndarray:
    return 2 * (n + 1) * _eps(dtype) * abs_total + (n + 1) * _tiny(dtype)


def assert_within(actual, expected, bound) -> None:
    """Shape, dtype, NaN and inf positions exactly as NumPy's; finite values within ``bound``."""
    assert_matches(actual, expected, "reduction")
    a = np.asarray(actual).astype(F64)
    e = np.asarray(expected).astype(F64)
    b = np.broadcast_to(np.asarray(bound, F64), e.shape)
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf: checked above
        bad = np.isfinite(e) & ~(np.abs(a - e) <= b)
    if bad.any():
        raise AssertionError(f"beyond the reduction bound at {np.argwhere(bad)[:5].tolist()}: "
                             f"got {a[bad][:5]}, want {e[bad][:5]}, bound {b[bad][:5]}")


def check_exact(name: str, x: np.ndarray, device, pending: bool = False, **kwargs) -> None:
    """``ml.<name>(x, **kwargs)`` is exactly ``np.<name>(x, **kwargs)``, or raises as NumPy does."""
    want, err = numpy_or_error(getattr(np, name), x, **kwargs)
    thunk = lambda: getattr(ml, name)(lazy(x, device, pending), **kwargs)
    if err:
        raises_at_the_call(thunk, err)
    else:
        assert_matches(value(thunk), want)


# -- sum, prod, max, min, any, all, argmax, argmin: exact cases --------------------------------

@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=20)
@given(data=st.data())
def test_integer_and_bool_reductions_are_exact(device, data):
    """Integer sums and products wrap modulo 2**64 in any order, so they are exact too.

    Zero-size max/min have no identity: NumPy raises, and so must minilazy, at the call.
    """
    name = data.draw(st.sampled_from(["sum", "prod", "max", "min", "any", "all"]))
    x = data.draw(arrays(data.draw(st.sampled_from(EXACT)), SHAPES))
    check_exact(name, x, device, data.draw(st.booleans()), axis=data.draw(axes(x.ndim)),
                keepdims=data.draw(st.booleans()))


@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=20)
@given(data=st.data())
def test_float_max_min_any_all_are_exact_with_nan_and_inf(device, data):
    """Every float value, NaN and +-inf included: these pick or test an input, no rounding."""
    name = data.draw(st.sampled_from(["max", "min", "any", "all"]))
    x = data.draw(arrays(data.draw(st.sampled_from(FLOATS)), SHAPES))
    check_exact(name, x, device, data.draw(st.booleans()), axis=data.draw(axes(x.ndim)),
                keepdims=data.draw(st.booleans()))


@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=20)
@given(data=st.data())
def test_argmax_argmin_first_occurrence_like_numpy(device, data):
    """Every dtype and value (NaN wins, ties go to the first index); int64 indices."""
    name = data.draw(st.sampled_from(["argmax", "argmin"]))
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), SHAPES))
    check_exact(name, x, device, data.draw(st.booleans()),
                axis=data.draw(axes(x.ndim, tuples=False)),
                keepdims=data.draw(st.booleans()))


@st.composite
def with_nans(draw, dtype: np.dtype) -> np.ndarray:
    """A non-empty finite float array with NaN in at least one place."""
    x = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
                        elements=finite(dtype)))
    mask = draw(hnp.arrays(np.bool_, x.shape))
    mask.flat[draw(st.integers(0, x.size - 1))] = True
    x[mask] = np.nan
    return x


@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=15)
@given(data=st.data())
def test_nan_propagates_through_max_min_argmax_argmin(device, data):
    name = data.draw(st.sampled_from(["max", "min", "argmax", "argmin"]))
    x = data.draw(with_nans(data.draw(st.sampled_from(FLOATS))))
    check_exact(name, x, device, axis=data.draw(axes(x.ndim, tuples=not name.startswith("arg"))),
                keepdims=data.draw(st.booleans()))


# -- float sum and prod ------------------------------------------------------------------------

@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=20)
@given(data=st.data())
def test_float_sum_within_the_reduction_bound(device, data):
    dtype = data.draw(st.sampled_from(FLOATS))
    x = data.draw(summable(dtype, SHAPES))
    axis, keepdims = data.draw(axes(x.ndim)), data.draw(st.booleans())
    pending = data.draw(st.booleans())
    got = value(lambda: ml.sum(lazy(x, device, pending), axis=axis, keepdims=keepdims))
    want = np.sum(x, axis=axis, keepdims=keepdims)
    abs_total = np.sum(np.abs(x.astype(F64)), axis=axis, keepdims=keepdims)
    assert_within(got, want, _sum_bound(abs_total, count(x.shape, axis), dtype))


@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=15)
@given(data=st.data())
def test_float_prod_within_a_relative_bound(device, data):
    """Each multiply rounds with relative error eps: each side is within (n - 1) * eps * |p| of
    the exact product, the two within 2 * (n + 1) * eps * prod(|x|) of each other. Factors in
    [-1, 1] only shrink a product, so a partial product flushed to zero (XLA) costs less than
    the smallest normal: that is the bound's absolute slack.
    """
    dtype = data.draw(st.sampled_from(FLOATS))
    x = data.draw(unit(dtype, SHAPES))
    axis, keepdims = data.draw(axes(x.ndim)), data.draw(st.booleans())
    got = value(lambda: ml.prod(lazy(x, device), axis=axis, keepdims=keepdims))
    want = np.prod(x, axis=axis, keepdims=keepdims)
    abs_prod = np.prod(np.abs(x.astype(F64)), axis=axis, keepdims=keepdims)
    assert_within(got, want, _sum_bound(abs_prod, count(x.shape, axis), dtype))


@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=20)
@given(data=st.data())
def test_sum_and_prod_with_a_dtype_argument(device, data):
    """``dtype=`` converts first and accumulates in it (integers wrap modulo 2**bits, as NumPy)."""
    name = data.draw(st.sampled_from(["sum", "prod"]))
    src, dst = data.draw(st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)).filter(
        lambda p: not (p[0].kind == "f" and p[1].kind in "biu")))  # float -> int: undefined
    x = data.draw(summable(src, SHAPES) if name == "sum" else unit(src, SMALL))
    axis = data.draw(axes(x.ndim))
    got = value(lambda: getattr(ml, name)(lazy(x, device), axis=axis, dtype=dst))
    want = quiet(getattr(np, name), x, axis=axis, dtype=dst)
    if dst.kind != "f":
        assert_matches(got, want)
        return
    xd = np.abs(quiet(x.astype, dst).astype(F64))  # what both sides accumulate
    total = np.sum(xd, axis=axis) if name == "sum" else np.prod(xd, axis=axis)
    assert_within(got, want, _sum_bound(total, count(x.shape, axis), dst))


# -- mean, var, std ----------------------------------------------------------------------------
#
# var = sum((x - m)**2) / (n - c). An error d in the mean m changes the sum of squares only by
# n * d**2 (the first-order term cancels), and d <= n * eps * mean|x| makes that negligible; the
# subtraction, squaring and summation then add at most (n + 3) * eps * sum((x - m)**2) <=
# (n + 3) * eps * sum(x**2). For two implementations, with the final division and rounding:
# |a - e| <= 2 * (n + 4) * eps * sum(x**2) / (n - c) (+ flushed subnormals). std = sqrt(var),
# and |sqrt(a) - sqrt(b)| <= sqrt(|a - b|), so std's bound is the square root of var's plus the
# final rounding of the square root.

def _mean_bound(x: np.ndarray, axis, keepdims: bool, dtype: np.dtype) -> np.ndarray:
    n = count(x.shape, axis)
    abs_total = np.sum(np.abs(x.astype(F64)), axis=axis, keepdims=keepdims)
    return _sum_bound(abs_total, n, dtype) / max(n, 1) + _tiny(dtype)


def _var_bound(x: np.ndarray, axis, keepdims: bool, correction: int, dtype: np.dtype
               ) -> np.ndarray:
    n = count(x.shape, axis)
    squares = np.sum(np.square(x.astype(F64)), axis=axis, keepdims=keepdims)
    return _sum_bound(squares, n + 3, dtype) / max(n - correction, 1) + _tiny(dtype)


@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=20)
@given(data=st.data())
def test_mean_var_std_within_their_bounds(device, data):
    """Every dtype: integers and bools give float64, float16 stays float16 (as NumPy).

    Empty reductions and ``n <= correction`` give NaN (or inf) on both sides.
    """
    name = data.draw(st.sampled_from(["mean", "var", "std"]))
    x = data.draw(summable(data.draw(st.sampled_from(DTYPES)), SHAPES))
    axis, keepdims = data.draw(axes(x.ndim)), data.draw(st.booleans())
    kwargs = {} if name == "mean" else {"correction": data.draw(st.sampled_from([0, 1]))}
    pending = data.draw(st.booleans())
    got = value(lambda: getattr(ml, name)(lazy(x, device, pending), axis=axis, keepdims=keepdims,
                                          **kwargs))
    want = quiet(getattr(np, name), x, axis=axis, keepdims=keepdims, **kwargs)
    out = want.dtype
    if name == "mean":
        bound = _mean_bound(x, axis, keepdims, out)
    else:
        bound = _var_bound(x, axis, keepdims, kwargs["correction"], out)
        if name == "std":
            bound = np.sqrt(bound) + _eps(out) * np.abs(want.astype(F64))
    assert_within(got, want, bound)


@pytest.mark.spec("LZ-NUM-010")
@settings(max_examples=15)
@given(data=st.data())
def test_nan_and_inf_propagate_through_float_reductions(device, data):
    """Values in [-1, 1] with NaN and +-inf sprinkled in: where results are NaN or +-inf is exact.

    (With finite values this small, the result is non-finite only through the specials, and
    which special comes out -- NaN, +inf or -inf -- does not depend on the order of operations.)
    """
    name = data.draw(st.sampled_from(["sum", "prod", "mean", "var", "std"]))
    dtype = data.draw(st.sampled_from(FLOATS))
    x = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                             elements=finite(dtype, 1.0)))
    special = data.draw(hnp.arrays(np.int8, x.shape, elements=st.sampled_from([0, 0, 1, 2, 3])))
    x[special == 1], x[special == 2], x[special == 3] = np.nan, np.inf, -np.inf
    axis = data.draw(axes(x.ndim))
    got = value(lambda: getattr(ml, name)(lazy(x, device), axis=axis))
    assert_matches(got, quiet(getattr(np, name), x, axis=axis), "reduction")


# -- matmul, tensordot -------------------------------------------------------------------------
#
# A dot product of length k is a sum of k products, each rounded once: the sum bound applied to
# the terms |a_i * b_i| (one more rounding each) gives 2 * (k + 2) * eps * (|A| @ |B|) elementwise,
# computed in float64 from the operands converted to the result dtype (that conversion is the
# same on both sides). Integer products wrap modulo 2**bits in any order: exact.

def factors(dtype: np.dtype, shape) -> st.SearchStrategy[np.ndarray]:
    """Operands in the `bounded` domain: with k <= 4 terms, even float16 sums stay finite (also
    float16 @ uint8, which NumPy computes in float16: 4 * 10 * 255 < 65504)."""
    return summable(dtype, shape)


def check_contraction(got, want, a, b, k: int, contract) -> None:
    if want.dtype.kind != "f":
        assert_matches(got, want)
        return
    out = want.dtype
    abs_a = np.abs(quiet(a.astype, out).astype(F64))
    abs_b = np.abs(quiet(b.astype, out).astype(F64))
    bound = 2 * (k + 2) * _eps(out) * contract(abs_a, abs_b) + (k + 2) * _tiny(out)
    assert_within(got, want, bound)


@pytest.mark.spec("LZ-NUM-011")
@settings(max_examples=20)
@given(data=st.data())
def test_matmul_matches_numpy(device, data):
    """1-D operands promoted, batch dims broadcast, mixed dtypes promoted, as ``np.matmul``."""
    shapes = data.draw(hnp.mutually_broadcastable_shapes(signature=np.matmul.signature,
                                                         max_dims=2, max_side=4))
    da, db = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    a = data.draw(factors(da, shapes.input_shapes[0]))
    b = data.draw(factors(db, shapes.input_shapes[1]))
    form = data.draw(st.sampled_from(["@", "matmul", "ndarray @ tensor"]))

    pending = data.draw(st.booleans())

    def run():
        la, lb = lazy(a, device, pending), lazy(b, device, pending)
        return la @ lb if form == "@" else ml.matmul(la, lb) if form == "matmul" else a @ lb

    check_contraction(value(run), np.matmul(a, b), a, b, a.shape[-1], np.matmul)


@st.composite
def tensordot_case(draw):
    """Two shapes sharing contracted dims, and ``axes`` (an int, or two lists of axes)."""
    k = draw(st.integers(0, 2))
    side = st.integers(0, 4)
    common = draw(st.lists(side, min_size=k, max_size=k))
    free_a = draw(st.lists(side, max_size=3 - k))
    free_b = draw(st.lists(side, max_size=3 - k))
    if draw(st.booleans()):
        return (*free_a, *common), (*common, *free_b), k
    # Named axes: the contracted dims anywhere, paired in any order, maybe negative.
    shape_a, shape_b, pos_a, pos_b = list(free_a), list(free_b), [], []
    for n in common:
        i = draw(st.integers(0, len(shape_a)))
        shape_a.insert(i, n)
        pos_a = [p + (p >= i) for p in pos_a] + [i]
        j = draw(st.integers(0, len(shape_b)))
        shape_b.insert(j, n)
        pos_b = [p + (p >= j) for p in pos_b] + [j]
    neg = draw(st.booleans())
    axes_a = [p - len(shape_a) if neg else p for p in pos_a]
    axes_b = [p - len(shape_b) if neg else p for p in pos_b]
    return tuple(shape_a), tuple(shape_b), (axes_a, axes_b)


@pytest.mark.spec("LZ-NUM-011")
@settings(max_examples=20)
@given(data=st.data())
def test_tensordot_matches_numpy(device, data):
    shape_a, shape_b, ax = data.draw(tensordot_case())
    da, db = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    a, b = data.draw(factors(da, shape_a)), data.draw(factors(db, shape_b))
    got = value(lambda: ml.tensordot(lazy(a, device), lazy(b, device), axes=ax))
    k = math.prod(shape_b[:ax] if isinstance(ax, int) else [shape_b[i] for i in ax[1]])
    check_contraction(got, np.tensordot(a, b, axes=ax), a, b, k,
                      lambda p, q: np.tensordot(p, q, axes=ax))


# -- errors at the call ------------------------------------------------------------------------

@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("name", "axis"), [
    pytest.param(n, a, id=f"{n}-{a}")
    for n in ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "mean", "var", "std")
    for a in (2, -3, (0, 0), (1, -1)) if not (n.startswith("arg") and isinstance(a, tuple))])
def test_bad_axes_raise_at_the_call_naming_the_function(name, axis, device):
    """Out of bounds (say which axis, of how many dimensions) or repeated (argmax and argmin
    take a single axis)."""
    x = np.zeros((2, 3), np.float32)
    with pytest.raises((ValueError, IndexError)):
        getattr(np, name)(x, axis=axis)
    msg = raises_at_the_call(lambda: getattr(ml, name)(lazy(x, device), axis=axis),
                             (ValueError, IndexError))
    assert name in msg, msg
    if isinstance(axis, int):
        assert str(axis) in msg and "dimension 2" in msg, msg


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((2, 0), 1), ((0, 3), 0)], ids=str)
def test_zero_size_reductions_without_identity_raise_at_the_call(name, shape, axis, device):
    x = np.zeros(shape, np.float32)
    with pytest.raises(ValueError):
        getattr(np, name)(x, axis=axis)
    msg = raises_at_the_call(lambda: getattr(ml, name)(lazy(x, device), axis=axis), ValueError)
    assert names_shape(msg, shape), msg


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3, 4), (5, 4, 2)),
                                        ((2, 3), ()), ((4,), (2, 3))], ids=str)
def test_matmul_shape_mismatch_raises_at_the_call_naming_the_shapes(sa, sb, device):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    with pytest.raises(ValueError):
        np.matmul(a, b)
    msg = raises_at_the_call(lambda: lazy(a, device) @ lazy(b, device), ValueError)
    assert names_shape(msg, sa) and names_shape(msg, sb), msg


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("sa", "sb", "axes"), [
    ((2, 3), (4, 5), 1), ((2, 3), (3, 4), 3), ((2, 3), (2, 3), ([0, 1], [1, 0])),
    ((2, 3), (3, 2), ([0], [0, 1])), ((2, 3), (3, 2), ([2], [0]))], ids=str)
def test_tensordot_bad_axes_raise_at_the_call(sa, sb, axes, device):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    with pytest.raises((ValueError, IndexError)):
        np.tensordot(a, b, axes=axes)
    msg = raises_at_the_call(lambda: ml.tensordot(lazy(a, device), lazy(b, device), axes=axes),
                             (ValueError, IndexError))
    assert "tensordot" in msg, msg


# -- NumPy's int-axis quirk on 0-d arrays ------------------------------------------------------
#
# NumPy accepts axis=0 and axis=-1 on a 0-d array for sum/prod/max/min/any/all/argmax/argmin
# (a legacy quirk), but not axis=(0,), nor any axis for mean/var/std. Either way, minilazy must
# agree with NumPy: the same value, or an error at the call -- never an error at the barrier.

def _zero_d_param(name: str, axis):
    return pytest.param(name, axis, id=f"{name}-{axis}")


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("name", "axis"), [
    _zero_d_param(n, a)
    for n in ("sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "mean", "var", "std")
    for a in (0, -1, (0,)) if not (n.startswith("arg") and isinstance(a, tuple))])
def test_zero_d_int_axis_like_numpy(name, axis, device):
    check_exact(name, np.array(2.5, np.float32), device, axis=axis)
