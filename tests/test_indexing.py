"""Indexing: ``x[key]``, ``x[key] = v`` and in-place arithmetic == eager NumPy, exactly.

Keys are basic (ints, slices with any start/stop/step including negative and out-of-range
bounds, ``None``, ``...``) and integer arrays (as tensors, NumPy arrays or lists, of any integer
dtype, alone or mixed with basic items -- NumPy's rules decide where the array axes go). Index
*values* are kept in range (negatives included): out-of-range ones are clamped by minilazy
(implementation-defined, LZ-NUM-005). ``x[idx] = v`` never repeats an index (which write wins is
implementation-defined). Out-of-range *static* indices and misfit values raise at the call.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import assert_matches, check, names_shape, numpy_or_error, raises_at_the_call, value
from minilazy.conformance.registry import ops
from strategies import DTYPES, SHAPES, arrays

# Every example compiles a new program by design: minilazy's warning about that is expected;
# so are overflow warnings where a value overflows its dtype, as NumPy warns on the same inputs.
pytestmark = [pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

INDEX_DTYPES = [np.dtype(n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32", "uint64")]
F64, F16 = np.dtype(np.float64), np.dtype(np.float16)


# -- running both sides (as in test_reductions) ------------------------------------------------

def lazy(x, device) -> ml.Tensor:
    return ml.asarray(x, device=device)



def any_array(draw, shape=SHAPES) -> np.ndarray:
    return draw(arrays(draw(st.sampled_from(DTYPES)), shape))


# -- index strategies --------------------------------------------------------------------------
#
# An index is drawn as a list of items, one of: ("int", i), ("slice", s), ("array", ndarray),
# ("none",), ("ellipsis",). ``realise`` turns it into the key each side gets: NumPy always gets
# NumPy objects (a list stays a list), minilazy gets tensors, arrays or lists as drawn.

def int_item(draw, n: int):
    """An in-range int, maybe negative, as a Python int or a NumPy integer scalar."""
    i = draw(st.integers(-n, n - 1))
    kind = draw(st.sampled_from([int, np.int64, np.intp, np.int8 if -128 <= i < 128 else int]))
    return ("int", kind(i))


def slice_item(draw, n: int):
    """Any slice: bounds in or past either end, any nonzero step (or None)."""
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    return ("slice", slice(draw(bound), draw(bound), draw(step)))


def index_array(draw, values: np.ndarray):
    """``values`` (in range) as an index array of a random integer dtype it fits, and a form."""
    fits = [d for d in INDEX_DTYPES if values.size == 0 or
            (np.iinfo(d).min <= values.min() and values.max() <= np.iinfo(d).max)]
    arr = values.astype(draw(st.sampled_from(fits)))
    # A list of an empty array is `[]`, which NumPy types float64 (then rejects as an index):
    # lists only when non-empty (see test_empty_list_index_selects_nothing).
    forms = ["tensor", "ndarray"] + (["list"] if arr.ndim and arr.size else [])
    return ("array", arr, draw(st.sampled_from(forms)))


def in_range(draw, n: int, shape: tuple[int, ...]) -> np.ndarray:
    """Index values for an axis of length ``n`` > 0: in range, negatives included."""
    return draw(hnp.arrays(np.int64, shape, elements=st.integers(-n, n - 1)))


@st.composite
def mixed_index(draw, shape: tuple[int, ...]):
    """Basic items and integer arrays (broadcast together), adjacent or separated, with
    ``None``s and maybe one ``...``: items for axes [0, p), then maybe ``...`` standing for axes
    [p, q), then items for axes [q, ndim) (without ``...``, axes past p are implicit)."""
    ndim = len(shape)
    p = draw(st.integers(0, ndim))
    ellipsis = draw(st.booleans())
    q = draw(st.integers(p, ndim)) if ellipsis else ndim
    if ellipsis and q == p and p < ndim:
        # An Ellipsis standing for no axis, with array indices on both sides, is mishandled:
        # test_ellipsis_of_no_axes_still_separates_array_indices. Put it last instead.
        p, q = ndim, ndim
    axes = [*range(p), *range(q, ndim)]
    kinds = {a: draw(st.sampled_from(["int", "slice", "array"])) if shape[a] else "slice"
             for a in axes}
    n_arrays = list(kinds.values()).count("array")
    bshapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=max(n_arrays, 1), max_dims=2,
                                                     max_side=3)).input_shapes
    items, k = [], 0
    for a in axes:
        if kinds[a] == "int":
            items.append(int_item(draw, shape[a]))
        elif kinds[a] == "slice":
            items.append(slice_item(draw, shape[a]))
        else:
            items.append(index_array(draw, in_range(draw, shape[a], bshapes[k])))
            k += 1
    if ellipsis:
        items.insert(p, ("ellipsis",))
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), ("none",))
    return items


def realise(items, device, for_numpy: bool):
    """The key for NumPy (``for_numpy``) or for minilazy: a tuple, or its single item."""
    out = []
    for item in items:
        kind = item[0]
        if kind in ("int", "slice"):
            out.append(item[1])
        elif kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        else:
            _, arr, form = item
            if form == "list":
                out.append(arr.tolist())
            elif form == "tensor" and not for_numpy:
                out.append(lazy(arr, device))
            else:
                out.append(arr)
    # A lone item is passed bare, except a list (x[[1, 2]] and x[([1, 2],)] are the same to
    # NumPy, and a bare nested list is what people write).
    return out[0] if len(out) == 1 and not isinstance(out[0], list) else tuple(out)


def basic(draw, shape: tuple[int, ...]):
    """Basic indexing only: ints, slices, ``None`` and ``...`` (Hypothesis' own generator)."""
    key = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    key = key if isinstance(key, tuple) else (key,)
    items = []
    for k in key:
        items.append(("none",) if k is None else ("ellipsis",) if k is Ellipsis else
                     ("slice", k) if isinstance(k, slice) else ("int", k))
    return items


# -- getitem -----------------------------------------------------------------------------------

@pytest.mark.spec("LZ-NUM-013")
@settings(max_examples=20)
@given(data=st.data())
def test_basic_indexing_matches_numpy(device, data):
    x = any_array(data.draw)
    items = basic(data.draw, x.shape)
    check(lambda: x[realise(items, device, True)],
          lambda: lazy(x, device)[realise(items, device, False)])


@pytest.mark.spec("LZ-NUM-013")
@settings(max_examples=20)
@given(data=st.data())
def test_integer_array_indexing_mixed_with_basic_matches_numpy(device, data):
    x = any_array(data.draw, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    items = data.draw(mixed_index(x.shape))
    check(lambda: x[realise(items, device, True)],
          lambda: lazy(x, device)[realise(items, device, False)])


@pytest.mark.spec("LZ-NUM-013")
@settings(max_examples=10)
@given(data=st.data())
def test_indexing_a_pending_tensor_and_chained_indexing(device, data):
    """Indexing composes: an index of a recorded result, and an index of an index."""
    x = any_array(data.draw, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    first = data.draw(mixed_index(x.shape))
    y = x[realise(first, device, True)]
    second = basic(data.draw, y.shape)

    def run():
        t = ml.flip(lazy(x, device), axis=0)  # pending: never materialised before indexing
        return ml.flip(t, axis=0)[realise(first, device, False)][realise(second, device, False)]

    check(lambda: y[realise(second, device, True)], run)


@pytest.mark.spec("LZ-NUM-013")
@settings(max_examples=5)
@given(data=st.data())
def test_len_and_iteration_go_over_the_first_axis(device, data):
    """``len(t)`` and ``list(t)`` as NumPy's: one ``t[i]`` per row (0-d tensors: TypeError)."""
    x = any_array(data.draw, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    t = lazy(x, device)
    if x.ndim == 0:
        with pytest.raises(TypeError):
            len(x)
        raises_at_the_call(lambda: len(t), TypeError)
        raises_at_the_call(lambda: list(t), TypeError)
        return
    assert len(t) == len(x)
    rows = list(t)
    assert len(rows) == len(x)
    for row, want in zip(rows, x):
        assert_matches(value(lambda r=row: r), want)


@pytest.mark.spec("LZ-NUM-013")
@pytest.mark.parametrize("key", [(slice(None), [0, 2], Ellipsis, 0),
                                 (slice(None), [0, 2], Ellipsis, [1, 3])], ids=str)
def test_ellipsis_of_no_axes_still_separates_array_indices(key, device):
    x = np.arange(60).reshape(5, 3, 4)
    check(lambda: x[key], lambda: lazy(x, device)[key])


@pytest.mark.spec("LZ-NUM-013")
def test_empty_list_index_selects_nothing(device):
    x = np.arange(12).reshape(3, 4)
    check(lambda: x[[]], lambda: lazy(x, device)[[]])


# -- setitem -----------------------------------------------------------------------------------

@st.composite
def unique_array_index(draw, shape: tuple[int, ...]):
    """Integer arrays on some axes (adjacent or not) selecting distinct positions -- no index
    repeats -- with ints and slices (any step) on the other axes, maybe ``...`` and ``None``."""
    ndim = len(shape)
    array_axes = sorted(draw(st.lists(st.sampled_from(range(ndim)), min_size=1, max_size=ndim,
                                      unique=True)))
    sizes = [shape[a] for a in array_axes]
    total = math.prod(sizes)
    flat = draw(st.lists(st.integers(0, max(total - 1, 0)), max_size=min(total, 5),
                         unique=True))
    coords = np.unravel_index(np.array(flat, np.int64), sizes)
    if draw(st.booleans()) and len(flat) in (4, 6):  # a 2-D arrangement of the same positions
        coords = tuple(c.reshape(2, -1) for c in coords)
    items = []
    for a in range(ndim):
        if a in array_axes:
            c = coords[array_axes.index(a)]
            negate = draw(hnp.arrays(np.bool_, c.shape))
            items.append(index_array(draw, np.where(negate, c - shape[a], c)))
        elif shape[a] and draw(st.booleans()):
            items.append(int_item(draw, shape[a]))
        else:
            items.append(slice_item(draw, shape[a]))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), ("none",))
    return items


def fits_into(draw, target: tuple[int, ...]) -> tuple[int, ...]:
    """A value shape NumPy assigns into ``target``: a suffix of it, some dims 1, maybe extra
    leading 1s (which NumPy drops)."""
    keep = draw(st.integers(0, len(target)))
    suffix = [1 if draw(st.booleans()) else n for n in target[len(target) - keep:]]
    return (1,) * draw(st.integers(0, 2)) + tuple(suffix)


def assignable(draw, dtype: np.dtype):
    """A value dtype NumPy assigns to ``dtype`` in kind (float64 -> float16 aside, see below)."""
    return draw(st.sampled_from([d for d in DTYPES if np.can_cast(d, dtype, "same_kind")
                                 and not (d == F64 and dtype == F16)]))


def python_scalar(draw, dtype: np.dtype):
    """A Python bool, int or float for an array of ``dtype``: ints sometimes out of range
    (NumPy 2 raises OverflowError), floats into integer arrays within range (C leaves the
    conversion of others undefined)."""
    kind = draw(st.sampled_from([bool, int, float]))
    if kind is bool:
        return draw(st.booleans())
    if kind is int:
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return draw(st.integers(int(info.min) - 2, int(info.max) + 2))
        return draw(st.integers(-(2**40), 2**40))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return draw(st.floats(max(float(info.min), -1e6), min(float(info.max), 1e6)))
    return draw(st.floats(allow_subnormal=False))


@pytest.mark.spec("LZ-NUM-014")
@settings(max_examples=20)
@given(data=st.data())
def test_setitem_matches_numpy(device, data):
    """``x[key] = v``: basic keys or integer arrays without repeats; ``v`` a Python scalar, or a
    NumPy array or tensor that broadcasts into ``x[key]`` (cast to ``x``'s dtype as NumPy)."""
    x = any_array(data.draw)
    items = (data.draw(unique_array_index(x.shape)) if x.ndim and data.draw(st.booleans())
             else basic(data.draw, x.shape))
    target = x[realise(items, device, True)].shape
    form = data.draw(st.sampled_from(["scalar", "ndarray", "tensor"]))
    if form == "scalar":
        v = python_scalar(data.draw, x.dtype)
    else:
        # An all-int key takes NumPy's single-element path, which rejects any value with ndim > 0
        # (see test_setitem_of_one_element_rejects_arrays_with_dimensions).
        one_element = len(items) == x.ndim and all(i[0] == "int" for i in items)
        shape = () if one_element else fits_into(data.draw, target)
        v = data.draw(arrays(assignable(data.draw, x.dtype), shape))

    def expected():
        out = x.copy()
        out[realise(items, device, True)] = v
        return out

    def run():
        t = lazy(x, device)
        t[realise(items, device, False)] = lazy(v, device) if form == "tensor" else v
        return t

    check(expected, run)


@pytest.mark.spec("LZ-NUM-014")
def test_setitem_of_float64_into_float16_rounds_once(device):
    v = np.array([1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 2.0], np.float64)

    def expected():
        out = np.zeros(3, np.float16)
        out[:] = v
        return out

    def run():
        t = ml.zeros((3,), dtype=ml.float16, device=device)
        t[:] = v
        return t

    check(expected, run)


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.parametrize("key", [(0, 1), (-1, 0), ()], ids=str)
def test_setitem_of_one_element_rejects_arrays_with_dimensions(key, device):
    shape = () if key == () else (2, 3)
    v = np.array([5], np.int8)
    check(lambda: _assign(np.zeros(shape, np.int8), key, v),
          lambda: _assign(ml.zeros(shape, dtype=ml.int8, device=device), key, v))


def _assign(x, key, v):
    x[key] = v
    return x


@pytest.mark.spec("LZ-NUM-014")
@settings(max_examples=10)
@given(data=st.data())
def test_setitem_leaves_earlier_results_alone(device, data):
    """Results computed from ``x`` before ``x[key] = v`` keep their values (as NumPy copies do),
    while the tensor itself -- under every name bound to it -- sees the write."""
    x = data.draw(arrays(np.dtype(np.int32), hnp.array_shapes(min_dims=1, max_dims=3,
                                                              min_side=1, max_side=4)))
    items = basic(data.draw, x.shape)
    key_np, copy_np = realise(items, device, True), x + 1
    want = x.copy()
    want[key_np] = 7

    t = lazy(x, device)
    alias, earlier = t, t + 1
    t[realise(items, device, False)] = 7
    assert alias is t
    assert_matches(value(lambda: alias), want)
    assert_matches(value(lambda: earlier), copy_np)


# -- in-place arithmetic -----------------------------------------------------------------------

IN_PLACE = {"+=": (operator.iadd, "add"), "-=": (operator.isub, "subtract"),
            "*=": (operator.imul, "multiply"), "/=": (operator.itruediv, "divide"),
            "//=": (operator.ifloordiv, "floor_divide"), "%=": (operator.imod, "remainder"),
            "**=": (operator.ipow, "pow"), "&=": (operator.iand, "bitwise_and"),
            "|=": (operator.ior, "bitwise_or"), "^=": (operator.ixor, "bitwise_xor"),
            "<<=": (operator.ilshift, "bitwise_left_shift"),
            ">>=": (operator.irshift, "bitwise_right_shift")}


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.parametrize("symbol", list(IN_PLACE))
@settings(max_examples=12)
@given(data=st.data())
def test_in_place_arithmetic_matches_numpy(symbol, device, data):
    """``x op= y`` is ``x = (x op y)`` cast back to ``x``'s dtype with same-kind casting, as
    NumPy: int8 += int16 wraps, int8 /= 2 and int8 += 1.5 are TypeErrors, and a result that does
    not fit ``x``'s shape is a ValueError -- all at the call. ``y``: a Python scalar (weak), a
    NumPy array or a tensor, of any dtype, of a shape that may or may not broadcast into x."""
    fn, name = IN_PLACE[symbol]
    spec = ops()[name]
    dx, dy = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    x = data.draw(arrays(dx, SHAPES, spec.domain, 0))
    form = data.draw(st.sampled_from(["scalar", "ndarray", "tensor"]))
    if form == "scalar":
        y = data.draw(st.sampled_from([bool, int, float]).flatmap(lambda k: (
            st.booleans() if k is bool else
            st.integers(0, 6) if k is int and spec.domain else
            st.integers(-300, 300) if k is int else
            st.floats(-1e3, 1e3, allow_subnormal=False) if spec.domain  # LZ-NUM-004
            else st.floats(allow_subnormal=False))))
    else:
        shape = data.draw(st.one_of(st.just(x.shape), hnp.broadcastable_shapes(
            x.shape, min_side=0, max_side=4)))
        y = data.draw(arrays(dy, shape, spec.domain, 1))

    def run():
        t = lazy(x, device)
        return fn(t, lazy(y, device) if form == "tensor" else y)

    want, err = numpy_or_error(lambda: fn(x.copy(), y))
    if err is None:
        assert_matches(value(run), want, spec.tolerance)
        return
    try:
        fits = np.broadcast_shapes(x.shape, np.shape(y)) == x.shape
    except ValueError:
        fits = False
    if not fits:  # a bad shape *and* a bad cast: which one is reported first is free
        err = (*err, ValueError)
    raises_at_the_call(run, err)


@pytest.mark.spec("LZ-NUM-014")
@settings(max_examples=10)
@given(data=st.data())
def test_in_place_matmul_matches_numpy(device, data):
    """``x @= w`` with a square ``w`` (the result has ``x``'s shape); small integers, so the
    products are exact in every dtype and the comparison can be exact."""
    dtype = data.draw(st.sampled_from([d for d in DTYPES if d.kind in "iuf"]))
    x = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                             elements=st.integers(0, 3)))
    w = data.draw(hnp.arrays(dtype, (x.shape[-1],) * 2, elements=st.integers(0, 3)))

    def expected():
        out = x.copy()
        out @= w
        return out

    def run():
        t = lazy(x, device)
        t @= lazy(w, device)
        return t

    check(expected, run)


# -- errors at the call ------------------------------------------------------------------------

def _x(shape=(3, 4)) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=np.float32).reshape(shape)


def _set(key, v, shape=(3, 4)):
    def np_fn():
        out = _x(shape)
        out[key] = v
        return out

    def ml_fn(device):
        t = lazy(_x(shape), device)
        t[key] = v
        return t

    return np_fn, ml_fn


def _get(key, shape=(3, 4)):
    return (lambda: _x(shape)[key]), (lambda d: lazy(_x(shape), d)[key])


def _iop(fn, x, y):
    return (lambda: fn(x.copy(), y)), (lambda d: fn(lazy(x, d), y))


# (name, (NumPy, minilazy), strings the message must show, shapes the message must show)
BAD = [
    ("get-int-out-of-range", _get(3), ["3", "0"], []),
    ("get-negative-out-of-range", _get(-4), ["-4"], []),
    ("get-second-axis", _get((slice(None), 4)), ["4", "1"], []),
    ("get-too-many", _get((0, 0, 0)), ["2", "3"], []),
    ("get-two-ellipses", _get((Ellipsis, 0, Ellipsis)), ["..."], []),
    ("get-float", _get(1.5), [], []),
    ("get-float-array", _get(np.array([0.0, 1.0])), ["float"], []),
    ("get-0d-index", _get(0, ()), [], []),
    ("set-int-out-of-range", _set(5, 1.0), ["5", "0"], []),
    ("set-value-too-long", _set(0, np.ones(5, np.float32)), [], [(5,), (4,)]),
    ("set-value-wrong-shape", _set(slice(None), np.ones((4, 3), np.float32)), [],
     [(4, 3), (3, 4)]),
    ("set-array-index-value", _set(([0, 1],), np.ones((3, 4), np.float32)), [],
     [(3, 4), (2, 4)]),
    ("set-int-overflow", (lambda: np.zeros(3, np.uint8).__setitem__(0, 256),
                          lambda d: ml.zeros((3,), dtype=ml.uint8, device=d).__setitem__(0, 256)),
     ["256"], []),
    ("iadd-shape", _iop(operator.iadd, np.ones(3, np.float32), np.ones((2, 3), np.float32)), [],
     [(3,), (2, 3)]),
    ("iadd-no-broadcast", _iop(operator.iadd, np.ones((2, 3)), np.ones((3, 2))), [],
     [(2, 3), (3, 2)]),
    ("itruediv-int", _iop(operator.itruediv, np.ones(3, np.int8), 2), ["int8"], []),
    ("iadd-float-into-int", _iop(operator.iadd, np.ones(3, np.int8), np.ones(3)), ["int8"], []),
    ("iadd-int-overflow", _iop(operator.iadd, np.ones(3, np.int8), 300), ["300"], []),
    ("imatmul-shape", _iop(operator.imatmul, np.ones((2, 3)), np.ones((3, 2))), [], [(2, 3)]),
]


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("fns", "words", "shapes"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_indices_and_misfit_values_raise_at_the_call(fns, words, shapes, device):
    """NumPy rejects each of these; minilazy must too, with the same kind of exception, before
    anything runs, naming the offending index (and axis) or the shapes."""
    np_fn, ml_fn = fns
    _, err = numpy_or_error(np_fn)
    assert err, "NumPy accepted it"
    msg = raises_at_the_call(lambda: ml_fn(device), err)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    for shape in shapes:
        assert names_shape(msg, shape), f"{shape} not in {msg!r}"
