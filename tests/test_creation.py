"""Creation functions: lazy result == eager NumPy in shape, dtype and value.

zeros, ones, empty (shape and dtype only), full, the ``_like`` forms, eye and asarray are exact;
arange and linspace compute ``start + i * step`` and may round differently from NumPy's own
recipe (``tolerance = "ulp"`` in ops.toml), so their float values are compared with a bound
proportional to the magnitudes involved (see ``_line_bound``). Every function puts its result on
the device it is asked for. Bad arguments raise at the call.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minilazy as ml
from helpers import assert_matches, check, names_shape, numpy_or_error, raises_at_the_call, value
from strategies import DTYPES, SHAPES, arrays

# Every example compiles a new program by design: minilazy's warning about that is expected;
# so are overflow warnings where a value overflows its dtype, as NumPy warns on the same inputs.
pytestmark = [pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

FLOATS = [d for d in DTYPES if d.kind == "f"]
INTS = [d for d in DTYPES if d.kind in "iu"]
F64 = np.dtype(np.float64)


# -- running both sides (as in test_reductions) ------------------------------------------------


def dtype_or_none(draw, choices=DTYPES):
    return draw(st.one_of(st.none(), st.sampled_from(choices)))


def shape_arg(draw):
    """A shape as a tuple, a list, or (1-D) a bare int, maybe NumPy ints."""
    shape = draw(SHAPES)
    form = draw(st.sampled_from(["tuple", "list", "int", "np"] if len(shape) == 1 else
                                ["tuple", "list", "np"]))
    if form == "int":
        return shape[0]
    if form == "np":
        return tuple(np.int64(n) for n in shape)
    return list(shape) if form == "list" else shape


def fill_for(draw, dtype: np.dtype | None):
    """A Python fill value for ``dtype`` (None: NumPy's default for the value's type).

    Ints may be just out of range (NumPy 2 raises OverflowError). Floats go into integer dtypes
    only finite and in range after truncation (the spec's `cast` domain: C leaves the rest
    undefined); into floats, any value.
    """
    kind = draw(st.sampled_from([bool, int, float]))
    if kind is bool:
        return draw(st.booleans())
    if kind is int:
        if dtype is not None and dtype.kind in "iu":
            info = np.iinfo(dtype)
            return draw(st.integers(int(info.min) - 2, int(info.max) + 2))
        return draw(st.integers(-(2**63), 2**63 - 1))  # [2**63, 2**64): see below
    if dtype is not None and dtype.kind in "iu":
        info = np.iinfo(dtype)
        return draw(st.floats(max(float(info.min), -1e6), min(float(info.max), 1e6)))
    return draw(st.floats(allow_subnormal=False))


# -- zeros, ones, empty, full and the _like forms ----------------------------------------------

@pytest.mark.spec("LZ-NUM-015")
@settings(max_examples=20)
@given(data=st.data())
def test_zeros_ones_full_match_numpy(device, data):
    """Shapes as tuples, lists, ints or NumPy ints; default dtypes (float64; full: the fill
    value's NumPy type) or any dtype; fill values converted as NumPy converts them."""
    name = data.draw(st.sampled_from(["zeros", "ones", "full"]))
    shape, dtype = shape_arg(data.draw), dtype_or_none(data.draw)
    if name == "full":
        fill = fill_for(data.draw, dtype)
        check(lambda: np.full(shape, fill, dtype=dtype),
              lambda: ml.full(shape, fill, dtype=dtype, device=device), device)
    else:
        check(lambda: getattr(np, name)(shape, dtype=dtype),
              lambda: getattr(ml, name)(shape, dtype=dtype, device=device), device)


@pytest.mark.spec("LZ-NUM-015")
@settings(max_examples=10)
@given(data=st.data())
def test_empty_has_numpys_shape_and_dtype(device, data):
    """``empty`` and ``empty_like``: only the shape and dtype are defined."""
    shape, dtype = shape_arg(data.draw), dtype_or_none(data.draw)
    got = value(lambda: ml.empty(shape, dtype=dtype, device=device), device)
    want = np.empty(shape, dtype=dtype)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), SHAPES))
    got = value(lambda: ml.empty_like(ml.asarray(x, device=device), dtype=dtype), device)
    want = np.empty_like(x, dtype=dtype)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)


@pytest.mark.spec("LZ-NUM-015")
@settings(max_examples=20)
@given(data=st.data())
def test_like_forms_match_numpy(device, data):
    """Shape, dtype (unless overridden) and device of the model tensor; its values unused."""
    name = data.draw(st.sampled_from(["zeros_like", "ones_like", "full_like"]))
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), SHAPES))
    dtype = dtype_or_none(data.draw)
    model = lambda: ml.asarray(x, device=device)
    if name == "full_like":
        fill = fill_for(data.draw, dtype or x.dtype)
        check(lambda: np.full_like(x, fill, dtype=dtype),
              lambda: ml.full_like(model(), fill, dtype=dtype), device)
    else:
        check(lambda: getattr(np, name)(x, dtype=dtype),
              lambda: getattr(ml, name)(model(), dtype=dtype), device)


@pytest.mark.spec("LZ-NUM-015")
def test_full_types_a_big_python_int_as_uint64(device):
    check(lambda: np.full((2,), 2**63), lambda: ml.full((2,), 2**63, device=device), device)


# -- eye ---------------------------------------------------------------------------------------

@pytest.mark.spec("LZ-NUM-015")
@settings(max_examples=15)
@given(data=st.data())
def test_eye_matches_numpy(device, data):
    n = data.draw(st.integers(0, 4))
    m = data.draw(st.one_of(st.none(), st.integers(0, 4)))
    k = data.draw(st.integers(-5, 5))
    dtype = dtype_or_none(data.draw)
    check(lambda: np.eye(n, m, k=k, dtype=dtype),
          lambda: ml.eye(n, m, k=k, dtype=dtype, device=device), device)


# -- arange, linspace --------------------------------------------------------------------------
#
# NumPy's arange fills start, start + step, then start + i * delta with delta = (start + step)
# - start computed in the result dtype; linspace computes i * ((stop - start) / div) + start in
# float64, then converts. minilazy computes start + i * step (XLA may fuse it into one FMA).
# Each recipe is within a few roundings of the exact line: delta is off by at most
# eps * (|start| + |step|), which i multiplies, and the products and sums round at most twice
# more, relative to |start| + |i * step|. The bound is the sum of those for both sides, in the
# result dtype's eps, per element -- an exact comparison would test NumPy's recipe, not the line.

def _line_bound(start: float, step: float, n: int, dtype: np.dtype) -> np.ndarray:
    eps = float(np.finfo(dtype).eps)
    i = np.arange(n, dtype=F64)
    return (eps * (i + 1) * (abs(start) + abs(step)) + 4 * eps * (abs(start) + i * abs(step))
            + float(np.finfo(dtype).smallest_normal))


def assert_line(got: np.ndarray, want: np.ndarray, start: float, step: float) -> None:
    """Exact shape and dtype; integers exact; floats within ``_line_bound``."""
    assert_matches(got, want, "reduction")  # shape, dtype, NaN/inf positions
    if want.dtype.kind != "f":
        assert_matches(got, want)
        return
    bound = _line_bound(start, step, want.size, want.dtype)
    err = np.abs(got.astype(F64) - want.astype(F64))
    bad = np.isfinite(want) & ~(err <= bound)
    assert not bad.any(), (f"off the line at {np.flatnonzero(bad)[:5]}: got {got[bad][:5]}, "
                           f"want {want[bad][:5]}, bound {bound[bad][:5]}")


@st.composite
def arange_args(draw):
    """Positional arguments -- (stop,), (start, stop) or (start, stop, step) -- and a dtype,
    for at most 20 values.

    Integer dtypes get integer arguments only (NumPy's arange of float arguments into an
    integer dtype follows its fill recipe, which the Array API leaves unspecified), and
    unsigned ones positive steps (see test_arange_counts_down_in_unsigned_dtypes).
    """
    dtype = dtype_or_none(draw, [*INTS, *FLOATS])
    count = draw(st.integers(-2, 20))  # about how many values; <= 0: none
    form = draw(st.integers(1, 3))
    if dtype is None and draw(st.booleans()) or dtype is not None and dtype.kind in "iu":
        lo = 0 if dtype is not None and dtype.kind == "u" else -100
        start = draw(st.integers(lo, 100)) if form > 1 else 0
        step = draw(st.integers(1 if lo == 0 else -30, 30).filter(bool)) if form == 3 else 1
        stop = start + count * step
        return (stop,) if form == 1 else (start, stop) if form == 2 else (start, stop, step), dtype
    if dtype is None:  # a float start: see test_arange_default_dtype_counts_stop
        form = max(form, 2)
    mag = draw(st.sampled_from([1.0, 100.0] if dtype == np.float16 else [1.0, 100.0, 1e4]))
    start = draw(st.floats(-mag, mag) | st.integers(-100, 100)) if form > 1 else 0
    start = float(start) if dtype is None else start
    step = (draw(st.floats(mag / 20, mag) | st.integers(1, 5)) * draw(st.sampled_from([1, -1]))
            if form == 3 else 1)
    stop = start + step * (count + draw(st.floats(0, 1)))
    return (stop,) if form == 1 else (start, stop) if form == 2 else (start, stop, step), dtype


@pytest.mark.spec("LZ-NUM-015")
@settings(max_examples=20)
@given(args=arange_args())
def test_arange_matches_numpy(device, args):
    """Length and dtype exactly as NumPy's (default dtypes from the arguments' types); integer
    values exact, float values on the line within ``_line_bound``."""
    a, dtype = args
    got, want = check(lambda: np.arange(*a, dtype=dtype),
                      lambda: ml.arange(*a, dtype=dtype, device=device), device, "reduction")
    if want is not None:
        assert_line(got, want, a[0] if len(a) > 1 else 0, a[2] if len(a) == 3 else 1)


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("args", [(5.0,), (2.5,), (0, 5.0), (1, 4.5, 1)], ids=str)
def test_arange_default_dtype_counts_stop(args, device):
    check(lambda: np.arange(*args), lambda: ml.arange(*args, device=device), device)


@pytest.mark.spec("LZ-NUM-015")
def test_arange_counts_down_in_unsigned_dtypes(device):
    check(lambda: np.arange(5, 0, -1, dtype=np.uint8),
          lambda: ml.arange(5, 0, -1, dtype=ml.uint8, device=device), device)


@pytest.mark.spec("LZ-ERR-001")
def test_arange_of_bool_dtype_like_numpy_or_raises_at_the_call(device):
    check(lambda: np.arange(0, 2, dtype=np.bool_),
          lambda: ml.arange(0, 2, dtype=ml.bool, device=device), device)


@pytest.mark.spec("LZ-NUM-015")
@settings(max_examples=20)
@given(data=st.data())
def test_linspace_matches_numpy(device, data):
    """Float dtypes (default float64); num 0..12; with or without the endpoint, which NumPy
    sets to exactly ``stop``."""
    start = data.draw(st.floats(-1e3, 1e3) | st.integers(-100, 100))
    stop = data.draw(st.floats(-1e3, 1e3) | st.integers(-100, 100))
    num, endpoint = data.draw(st.integers(0, 12)), data.draw(st.booleans())
    dtype = dtype_or_none(data.draw, FLOATS)
    got, want = check(lambda: np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype),
                      lambda: ml.linspace(start, stop, num, endpoint=endpoint, dtype=dtype,
                                          device=device), device, "reduction")
    div = (num - 1) if endpoint else num
    assert_line(got, want, start, (stop - start) / div if div > 0 else 0.0)
    if endpoint and num > 1 and want.dtype != np.float16:  # (float16: see test_indexing)
        assert got[-1] == want[-1], "the endpoint is exactly stop (converted to the dtype)"


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize(("start", "stop", "num"), [(-1, 0, 4), (-7, 3, 5)], ids=str)
def test_linspace_into_integers_floors_like_numpy(start, stop, num, device):
    check(lambda: np.linspace(start, stop, num, dtype=np.int64),
          lambda: ml.linspace(start, stop, num, dtype=ml.int64, device=device), device)


# -- asarray -----------------------------------------------------------------------------------

def nested(draw, shape):
    """Nested Python lists of bools, ints or floats (one kind, or mixed) of ``shape``."""
    kinds = draw(st.lists(st.sampled_from(["bool", "int", "float"]), min_size=1, max_size=3))
    leaf = st.one_of(*[st.booleans() if k == "bool" else st.integers(-1000, 1000) if k == "int"
                       else st.floats(-1e6, 1e6) for k in kinds])
    if not shape:
        return draw(leaf)
    return [nested(draw, shape[1:]) if len(shape) > 1 else draw(leaf) for _ in range(shape[0])]


@pytest.mark.spec("LZ-NUM-015")
@settings(max_examples=20)
@given(data=st.data())
def test_asarray_matches_numpy(device, data):
    """From Python scalars and nested lists (NumPy's type inference), NumPy arrays of any
    dtype, and tensors; with ``dtype`` converting as NumPy converts (within the `cast` domain:
    no float into an integer dtype)."""
    source = data.draw(st.sampled_from(["python", "ndarray", "tensor"]))
    if source == "python":
        obj = nested(data.draw, data.draw(SHAPES))
        dtype = dtype_or_none(data.draw, [d for d in DTYPES if d.kind in "bf"])
        check(lambda: np.asarray(obj, dtype=dtype),
              lambda: ml.asarray(obj, dtype=dtype, device=device), device)
        return
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), SHAPES))
    dtype = dtype_or_none(data.draw, [d for d in DTYPES if np.can_cast(x.dtype, d, "same_kind")
                                      and not (x.dtype == F64 and d == np.float16)])
    if source == "ndarray":
        check(lambda: np.asarray(x, dtype=dtype),
              lambda: ml.asarray(x, dtype=dtype, device=device), device)
    else:  # tensor -> tensor: a device-side conversion (float64 -> float16: see test_indexing)
        check(lambda: np.asarray(x, dtype=dtype),
              lambda: ml.asarray(ml.asarray(x, device=device), dtype=dtype), device)


@pytest.mark.spec("LZ-NUM-015")
def test_asarray_of_a_tensor_copies_only_when_asked(device):
    t = ml.asarray(np.arange(3.0), device=device)
    assert ml.asarray(t) is t
    assert ml.asarray(t, copy=True) is not t
    assert ml.asarray(t, copy=True).tolist() == [0.0, 1.0, 2.0]


# -- errors at the call ------------------------------------------------------------------------

BAD = [
    ("zeros-negative", lambda: np.zeros((2, -1)), lambda d: ml.zeros((2, -1), device=d),
     [(2, -1)]),
    ("ones-negative", lambda: np.ones(-3), lambda d: ml.ones(-3, device=d), []),
    ("full-negative", lambda: np.full((-1,), 1.0), lambda d: ml.full((-1,), 1.0, device=d),
     [(-1,)]),
    ("full-overflow", lambda: np.full(2, 300, dtype=np.int8),
     lambda d: ml.full(2, 300, dtype=ml.int8, device=d), []),
    ("eye-negative", lambda: np.eye(-1), lambda d: ml.eye(-1, device=d), []),
    ("eye-negative-cols", lambda: np.eye(2, -1), lambda d: ml.eye(2, -1, device=d), []),
    ("linspace-negative-num", lambda: np.linspace(0, 1, -1),
     lambda d: ml.linspace(0, 1, -1, device=d), []),
]


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("np_fn", "ml_fn", "shapes"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_creation_arguments_raise_at_the_call(np_fn, ml_fn, shapes, device):
    _, err = numpy_or_error(np_fn)
    assert err, "NumPy accepted it"
    msg = raises_at_the_call(lambda: ml_fn(device), err)
    for shape in shapes:
        assert names_shape(msg, shape), f"{shape} not in {msg!r}"


@pytest.mark.spec("LZ-ERR-001")
def test_arange_with_a_zero_step_raises_at_the_call(device):
    """NumPy raises ZeroDivisionError; a ValueError naming the step is as clear."""
    with pytest.raises(ZeroDivisionError):
        np.arange(0, 5, 0)
    msg = raises_at_the_call(lambda: ml.arange(0, 5, 0, device=device),
                             (ZeroDivisionError, ValueError))
    assert "step" in msg or "zero" in msg, msg
