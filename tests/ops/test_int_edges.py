"""Integer results that overflow, and signs at the edges, match NumPy 2 bit for bit.

Powers wrap modulo 2**bits however large the exponent; shifts by counts at or past the width (or
negative) give NumPy's 0 or -1; integer division and remainder by zero give 0 and ``MIN // -1``
gives ``MIN``; small integers sum and multiply in NumPy's (and the standard's) accumulator dtype;
``sign(-0.0)`` is ``+0.0`` and a zero remainder takes the divisor's sign. Expected values come
from NumPy with its warnings silenced; a negative exponent on the device, where NumPy would
raise, gives the true power truncated toward zero (see ``ops.integers.truncated``), checked
against Python's exact fractions.
"""

from __future__ import annotations

import functools
import math
import operator
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.introspect import reference

xp = pytest.importorskip("array_api_strict")

SIGNED = [np.int8, np.int16, np.int32, np.int64]
INTS = [*SIGNED, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
N = 8  # one shape throughout, so examples of one dtype pair share a compiled program


def numpy(fn: Any, *args: Any) -> np.ndarray:
    """NumPy's result, its overflow and division warnings silenced."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(fn(*args))


def check(*pairs: tuple[ml.Tensor, Any]) -> None:
    """Each tensor equals its expected value (:func:`same`); all are computed in one barrier."""
    ml.sync(*(t for t, _ in pairs))
    for t, want in pairs:
        same(t, want)


def same(got: Any, want: Any) -> None:
    """Equal dtype, shape and values (bar flushed subnormals), NaN where NaN, signed zeros."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    if want.dtype.kind == "f":  # a subnormal NumPy result may be flushed to zero (LZ-NUM-004)
        flushed = (got == 0) & (want != 0) & (np.abs(want) < np.finfo(want.dtype).tiny)
        want = np.where(flushed, np.copysign(np.zeros_like(want), want), want)
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), f"\n{got}\n!=\n{want}"
    if want.dtype.kind == "f":
        zeros = want == 0
        assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])), f"{got} {want}"


def edges(d: Any) -> list[int]:
    i = np.iinfo(d)
    return sorted({i.min, i.min + 1, -1, 0, 1, 2, 3, i.max // 2, i.max - 1, i.max} - (
        {-1} if i.min == 0 else set()))


@st.composite
def ints(draw: st.DrawFn, dtype: Any, lo: int | None = None) -> np.ndarray:
    """``N`` values of ``dtype``: its edges (min, max, -1, 0...) mixed with any others."""
    i = np.iinfo(dtype)
    lo = i.min if lo is None else lo
    value = st.sampled_from([e for e in edges(dtype) if e >= lo]) | st.integers(lo, i.max)
    return draw(hnp.arrays(dtype, N, elements=value))


@st.composite
def exponents(draw: st.DrawFn, dtype: Any) -> np.ndarray:
    """Non-negative exponents of ``dtype``: around every power of two up to its width, and big."""
    i = np.iinfo(dtype)
    near = [k for b in range(8) for k in (2**b - 1, 2**b, 2**b + 1) if k <= i.max]
    value = st.sampled_from([*near, 200, 255, i.max]).filter(lambda k: k <= i.max)
    return draw(hnp.arrays(dtype, N, elements=value | st.integers(0, i.max)))


@given(data=st.data(), base=st.sampled_from(INTS), power=st.sampled_from(INTS))
def test_integer_powers_wrap_as_numpy(data: st.DataObject, base: Any, power: Any) -> None:
    """``x ** e`` of every integer dtype pair equals NumPy's wrapped power (2 ** 64 is 0 in int64;
    5 ** 200 wraps), as ``**``, ``ml.pow``, ``**=`` and with a Python int on either side."""
    x, e = data.draw(ints(base)), data.draw(exponents(power))
    want = numpy(np.power, x, e)
    if want.dtype.kind == "f":  # uint64 with a signed int: NumPy goes to float64, no wrapping
        return
    pairs = [(ml.asarray(x) ** ml.asarray(e), want), (ml.pow(ml.asarray(x), ml.asarray(e)), want)]
    k = int(data.draw(st.sampled_from([0, 1, 2, 31, 32, 33, 63, 64, 65, 100, 127, 200])))
    if k <= np.iinfo(base).max:  # NEP 50: a Python int out of the dtype's range is refused
        t = ml.asarray(x)
        t **= k
        wanted = numpy(np.power, x, base(k))
        pairs += [(ml.asarray(x) ** k, wanted), (t, wanted)]
    b = int(data.draw(st.sampled_from([0, 1, 2, 3, 5, 7])))
    if b <= np.iinfo(power).max:
        pairs.append((b ** ml.asarray(e), numpy(np.power, power(b), e)))
    check(*pairs)


def test_the_reported_powers() -> None:
    """The cases of issue 28: 2 ** 64, 2 ** 100 and 5 ** 200 in int64."""
    check(*[(ml.asarray([b], dtype=ml.int64) ** k, numpy(np.power, np.array([b]), k))
            for b, k in [(2, 64), (2, 100), (5, 200)]])


def truncated_power(a: int, b: int) -> int:
    """``a ** b`` for a negative ``b``, exactly, then rounded toward zero (0 for ``a == 0``).

    Exponents below -130 are moved up to -130 or -131 (the same parity): ``|a| ** 130`` is
    already far past 1, and ``2 ** 2**63`` would never finish."""
    b = max(b, -130 - b % 2)
    return 0 if a == 0 else math.trunc(Fraction(a) ** b)


@given(data=st.data(), dtype=st.sampled_from(SIGNED))
def test_negative_exponents_on_the_device_truncate(data: st.DataObject, dtype: Any) -> None:
    """An exponent that is negative only on the device (NumPy would raise) gives the true power
    rounded toward zero: 1 for base 1, +-1 for base -1, else 0; the NumPy reference interpreter
    agrees. Known on the host, it raises NumPy's ``ValueError`` at the call."""
    lo = -130 if dtype is not np.int8 else np.iinfo(dtype).min
    x = data.draw(hnp.arrays(dtype, N, elements=st.sampled_from([-2, -1, 0, 1, 2, 3])))
    e = data.draw(hnp.arrays(dtype, N, elements=st.integers(lo, -1) | st.just(np.iinfo(dtype).min)))
    want = np.array([truncated_power(int(a), int(b)) for a, b in zip(x, e)], dtype)
    t = ml.asarray(x) ** ml.asarray(e)
    (ref,) = reference.run(t)
    same(ref, want)
    check((t, want))
    with pytest.raises(ValueError, match="negative integer powers"):
        ml.asarray(x) ** -1


def test_a_large_power_compiles_once_per_dtype() -> None:
    """The full-width power is one program: new exponents are parameters, not recompiles."""
    ml.clear_cache()  # another test in this process may have compiled it already
    ml.reset_metrics()
    x = ml.asarray([3, 5], dtype=ml.int64)
    for k in (10, 64, 1000):
        check((x ** k, numpy(np.power, np.array([3, 5]), k)))
    assert ml.metrics().compiles == 1


@given(data=st.data(), left=st.sampled_from(INTS), count=st.sampled_from(INTS))
def test_shifts_past_the_width_match_numpy(data: st.DataObject, left: Any, count: Any) -> None:
    """``<<`` and ``>>`` (and their functions) by counts at or past the width, and negative
    counts, give NumPy 2's 0, or -1 for a negative value shifted right."""
    x = data.draw(ints(left))
    i = np.iinfo(count)
    near = [k for b in range(8) for k in (2**b - 1, 2**b, 2**b + 1) if i.min <= k <= i.max]
    c = data.draw(hnp.arrays(count, N, elements=st.sampled_from([*near, i.min, i.max])
                             | st.integers(i.min, i.max)))
    tx, tc = ml.asarray(x), ml.asarray(c)
    if np.result_type(x, c).kind == "f":  # a signed int with uint64: no loop, in NumPy either
        with pytest.raises(TypeError, match="left_shift"):
            tx << tc
        return
    want_l, want_r = numpy(np.left_shift, x, c), numpy(np.right_shift, x, c)
    pairs = [(tx << tc, want_l), (tx >> tc, want_r), (ml.bitwise_left_shift(tx, tc), want_l),
             (ml.bitwise_right_shift(tx, tc), want_r)]
    k = int(data.draw(st.sampled_from([0, 1, 7, 8, 9, 31, 32, 63, 64, 65, 100, -1, -64])))
    if np.iinfo(left).min <= k <= np.iinfo(left).max:
        pairs += [(tx << k, numpy(np.left_shift, x, left(k))),
                  (tx >> k, numpy(np.right_shift, x, left(k)))]
    check(*pairs)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.__name__)
def test_integer_division_edges(dtype: Any) -> None:
    """Every pair of edge values (min, max, -1, 0...): ``//``, ``%``, ``floor_divide``,
    ``remainder`` (x // 0 and x % 0 are 0, MIN // -1 wraps to MIN), ``-``, ``abs`` of MIN, and
    ``+``, ``-``, ``*`` wrap."""
    a, b = np.meshgrid(np.array(edges(dtype), dtype), np.array(edges(dtype), dtype))
    ta, tb = ml.asarray(a), ml.asarray(b)
    pairs = [(got, numpy(fn, a, b)) for got, fn in [
        (ta // tb, np.floor_divide), (ta % tb, np.remainder), (ml.floor_divide(ta, tb),
         np.floor_divide), (ml.remainder(ta, tb), np.remainder), (ta + tb, np.add),
        (ta - tb, np.subtract), (ta * tb, np.multiply)]]
    pairs += [(-ta, numpy(np.negative, a)), (ml.abs(ta), numpy(np.abs, a)),
              (ml.sign(ta), numpy(np.sign, a))]
    for k in {0, -1, int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)}:
        if np.iinfo(dtype).min <= k:
            pairs += [(ta // k, numpy(np.floor_divide, a, dtype(k))),
                      (ta % k, numpy(np.remainder, a, dtype(k)))]
    check(*pairs)


@pytest.mark.parametrize("dtype", [np.bool_, *INTS], ids=lambda d: np.dtype(d).name)
def test_small_integers_accumulate_as_numpy_and_the_standard(dtype: Any) -> None:
    """``sum``, ``prod``, ``cumulative_sum`` of small integers accumulate in int64/uint64 (the
    dtype NumPy 2 and array-api-strict give) and wrap there; ``dtype=`` keeps the given one;
    ``mean`` of integers is float64."""
    x = np.array(edges(dtype) * 3 if dtype is not np.bool_ else [True, False] * 5, dtype)
    t = ml.asarray(x)
    pairs = [(ml.mean(t), numpy(np.mean, x))]
    for ours, theirs, strict in [(ml.sum, np.sum, xp.sum), (ml.prod, np.prod, xp.prod),
                                 (ml.cumulative_sum, np.cumulative_sum, xp.cumulative_sum)]:
        if dtype is not np.bool_:  # the standard sums numbers only
            assert str(ours(t).dtype) == str(strict(xp.asarray(x)).dtype).split(".")[-1]
        pairs += [(ours(t), numpy(theirs, x)),
                  (ours(t, dtype=dtype), numpy(functools.partial(theirs, dtype=dtype), x))]
    check(*pairs)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_sign_of_zero_is_positive_zero(dtype: Any) -> None:
    """``sign(-0.0)`` is ``+0.0``, as NumPy 2 and array-api-strict give (the standard: "the
    result is 0"); NaN stays NaN, infinities give +-1."""
    x = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, -2.5, 3.0], dtype)
    check((ml.sign(ml.asarray(x)), numpy(np.sign, x)))
    if dtype is not np.float16:  # (array-api-strict has no float16)
        same(np.from_dlpack(xp.sign(xp.asarray(x))), numpy(np.sign, x))


def specials(dtype: Any) -> np.ndarray:
    fi = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 7.25, fi.max,
                     -fi.max, float(fi.smallest_normal), 1e-3], dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_float_division_special_values(dtype: Any) -> None:
    """Every pair of special values: ``remainder``'s zero takes the divisor's sign and
    ``-1 % inf`` is ``inf`` (NumPy's ``npy_divmod``); ``floor_divide`` likewise; float16
    divides in float32, as NumPy's half loops do."""
    a, b = np.meshgrid(specials(dtype), specials(dtype))
    ta, tb = ml.asarray(a), ml.asarray(b)
    check((ml.remainder(ta, tb), numpy(np.remainder, a, b)), (ta % tb, numpy(np.remainder, a, b)),
          (ml.floor_divide(ta, tb), numpy(np.floor_divide, a, b)))


@given(data=st.data(), dtype=st.sampled_from(FLOATS))
def test_float_division_matches_numpy(data: st.DataObject, dtype: Any) -> None:
    """Finite operands of every float dtype: ``//`` and ``%`` bit for bit as NumPy."""
    fi = np.finfo(dtype)
    value = st.floats(-float(fi.max), float(fi.max), width=fi.bits, allow_subnormal=False)
    a = data.draw(hnp.arrays(dtype, N, elements=value))
    b = data.draw(hnp.arrays(dtype, N, elements=value.filter(lambda v: v != 0)))
    check((ml.asarray(a) // ml.asarray(b), numpy(np.floor_divide, a, b)),
          (ml.asarray(a) % ml.asarray(b), numpy(np.remainder, a, b)))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_signbit_and_copysign_read_the_sign_bit(dtype: Any) -> None:
    """``signbit`` is True for ``-0.0`` and ``-nan`` too, as NumPy and the standard say, and so
    ``copysign`` copies a NaN's sign; the reference interpreter agrees. ``maximum`` and
    ``minimum`` propagate NaN over every special value (their sign of a zero result when both
    operands are zeros is left open: NumPy's own differs between float16 and float32)."""
    x = np.concatenate([specials(dtype), -specials(dtype)])
    a, b = np.meshgrid(x, x)
    ta, tb = ml.asarray(a), ml.asarray(b)
    bit = ml.signbit(ml.asarray(x))
    (ref,) = reference.run(bit)
    same(ref, np.signbit(x))
    zeros = (a == 0) & (b == 0)
    tz = ml.asarray(zeros)
    check((bit, np.signbit(x)), (ml.copysign(ta, tb), numpy(np.copysign, a, b)),
          (ml.signbit(ml.copysign(ta, tb)), np.signbit(numpy(np.copysign, a, b))),
          (ml.where(tz, 1, ml.maximum(ta, tb)), np.where(zeros, 1, numpy(np.maximum, a, b))),
          (ml.where(tz, 1, ml.minimum(ta, tb)), np.where(zeros, 1, numpy(np.minimum, a, b))))


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                                operator.ne])
def test_int64_and_uint64_compare_with_the_ints_around_them_exactly(dtype: Any, op: Any) -> None:
    """A Python int next to a 64-bit tensor, however big: NumPy 2's exact answer (LZ-NUM-003).

    2**63 next to int64 is the case the oracle leaves out (an engine on JAX compares int64 with
    uint64 by hand there); 2**64 and -2**63-1 are past every integer type.
    """
    info = np.iinfo(dtype)
    x = np.array([info.min, -1 if info.min else 1, 0, info.max, info.max - 1], dtype)
    for big in (2**63, 2**63 - 1, 2**64, 2**64 - 1, -(2**63), -(2**63) - 1, 10**40, -(10**40)):
        for args in ((x, big), (big, x)):
            want = op(*args)
            got = op(*[ml.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{op.__name__}{args}")
