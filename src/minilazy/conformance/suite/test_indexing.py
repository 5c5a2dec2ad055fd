"""Indexing keys of every kind, ``x[key] = v`` and ``x op= y``: exactly NumPy's results.

Keys mix basic items (ints, slices with any bounds and step, ``None``, ``...``) with integer
index arrays (of any integer dtype, as tensors or as lists), wherever NumPy allows them. Index
*values* stay in range, negatives included: what an out-of-range value in a tensor selects is
implementation-defined (LZ-NUM-005). ``x[key] = v`` never repeats an index (which write wins
is implementation-defined). Where NumPy raises, the implementation must raise NumPy's exception
type, at the call.

The strategies take the forms an index array or an int may take, so that a library's own tests
can draw host forms too (NumPy arrays, NumPy integer scalars) that the protocol does not pass.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.oracle.strategies import DTYPES, allowed, arrays, dtypes_for, shapes
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import counting, fresh

Array = np.ndarray[Any, Any]
Item = tuple[Any, ...]
# Index arrays come in every integer dtype NumPy indexes with.
INDEX_DTYPES = [d for d in DTYPES if d.kind in "iu"]
F64, F16 = np.dtype("float64"), np.dtype("float16")
NUMPY_ERRORS = (ValueError, IndexError, TypeError, OverflowError)
# x op= y for every op with a Python in-place operator (matmul has a test of its own).
IN_PLACE: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.iadd, "subtract": operator.isub, "multiply": operator.imul,
    "divide": operator.itruediv, "floor_divide": operator.ifloordiv,
    "remainder": operator.imod, "pow": operator.ipow, "bitwise_and": operator.iand,
    "bitwise_or": operator.ior, "bitwise_xor": operator.ixor,
    "bitwise_left_shift": operator.ilshift, "bitwise_right_shift": operator.irshift,
}


def index_dtypes(adapter: OptionalAdapter) -> list[np.dtype[Any]]:
    """The integer dtypes the adapter has: those its index arrays are drawn in."""
    return [d for d in dtypes_for(adapter) if d.kind in "iu"]


# -- keys ---------------------------------------------------------------------------------------
#
# A key is drawn as a list of items: ("int", i), ("slice", s), ("array", values, form),
# ("none",), ("ellipsis",). `numpy_key` and `adapter_key` turn it into each side's key.

def int_item(draw: Any, n: int, kinds: Sequence[type] = (int,)) -> Item:
    """An in-range int of axis length ``n`` > 0, maybe negative, as one of ``kinds``."""
    i = draw(st.integers(-n, n - 1))
    kind = draw(st.sampled_from([k for k in kinds if k is int or np.can_cast(
        np.min_scalar_type(i), k)] or [int]))
    return ("int", kind(i))


def slice_item(draw: Any, n: int) -> Item:
    """Any slice: bounds in or past either end, any nonzero step (or None)."""
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    return ("slice", slice(draw(bound), draw(bound), draw(step)))


def index_array(draw: Any, values: Array, dtypes: Sequence[np.dtype[Any]],
                forms: Sequence[str]) -> Item:
    """``values`` as an index array of an integer dtype they fit, in one of ``forms``."""
    fits = [d for d in dtypes if values.size == 0 or
            (np.iinfo(d).min <= values.min() and values.max() <= np.iinfo(d).max)]
    assume(fits)  # negative values and only unsigned dtypes
    arr = values.astype(draw(st.sampled_from(fits)))
    # A list of an empty array is `[]`, which NumPy types float64 (and then rejects as an
    # index): lists only when non-empty (test_an_empty_index_list_selects_nothing).
    usable = [f for f in forms if f != "list" or (arr.ndim and arr.size)] or ["tensor"]
    return ("array", arr, draw(st.sampled_from(usable)))


def in_range(draw: Any, n: int, shape: tuple[int, ...]) -> Array:
    """Index values for an axis of length ``n`` > 0: in range, negatives included."""
    return np.asarray(draw(hnp.arrays(np.int64, shape, elements=st.integers(-n, n - 1))))


@st.composite
def mixed_index(draw: Any, shape: tuple[int, ...], dtypes: Sequence[np.dtype[Any]],
                forms: Sequence[str] = ("tensor", "list"),
                ints: Sequence[type] = (int,)) -> list[Item]:
    """Basic items and integer arrays (broadcast together), adjacent or separated.

    With ``None``s and maybe one ``...``: items for axes [0, p), then maybe ``...`` standing for
    axes [p, q), then items for axes [q, ndim) (without ``...``, axes past p are implicit).
    """
    ndim = len(shape)
    p = draw(st.integers(0, ndim))
    ellipsis = draw(st.booleans())
    q = draw(st.integers(p, ndim)) if ellipsis else ndim
    if ellipsis and q == p and p < ndim:
        # An Ellipsis standing for no axis between array indices has a test of its own
        # (test_an_ellipsis_of_no_axes_still_separates_array_indices): put it last here.
        p, q = ndim, ndim
    axes = [*range(p), *range(q, ndim)]
    kinds = {a: draw(st.sampled_from(["int", "slice", "array"])) if shape[a] else "slice"
             for a in axes}
    n_arrays = list(kinds.values()).count("array")
    bshapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=max(n_arrays, 1), max_dims=2,
                                                     max_side=3)).input_shapes
    items: list[Item] = []
    k = 0
    for a in axes:
        if kinds[a] == "int":
            items.append(int_item(draw, shape[a], ints))
        elif kinds[a] == "slice":
            items.append(slice_item(draw, shape[a]))
        else:
            items.append(index_array(draw, in_range(draw, shape[a], bshapes[k]), dtypes, forms))
            k += 1
    if ellipsis:
        items.insert(p, ("ellipsis",))
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), ("none",))
    return items


@st.composite
def basic_index(draw: Any, shape: tuple[int, ...]) -> list[Item]:
    """Basic indexing only: ints, slices, ``None`` and ``...`` (Hypothesis' own generator)."""
    key = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return [("none",) if k is None else ("ellipsis",) if k is Ellipsis else
            ("slice", k) if isinstance(k, slice) else ("int", k)
            for k in (key if isinstance(key, tuple) else (key,))]


@st.composite
def unique_array_index(draw: Any, shape: tuple[int, ...], dtypes: Sequence[np.dtype[Any]],
                       forms: Sequence[str] = ("tensor", "list"),
                       ints: Sequence[type] = (int,)) -> list[Item]:
    """Integer arrays on some axes selecting distinct positions: no index repeats.

    Arrays on adjacent axes or not, ints and slices (any step) on the other axes, and maybe a
    ``None``.
    """
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
    items: list[Item] = []
    for a in range(ndim):
        if a in array_axes:
            c = coords[array_axes.index(a)]
            negate = draw(hnp.arrays(np.bool_, c.shape))
            items.append(index_array(draw, np.where(negate, c - shape[a], c), dtypes, forms))
        elif shape[a] and draw(st.booleans()):
            items.append(int_item(draw, shape[a], ints))
        else:
            items.append(slice_item(draw, shape[a]))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), ("none",))
    return items


def realise(items: Sequence[Item], tensor: Callable[[Array], Any] | None) -> Any:
    """The key: NumPy's where ``tensor`` is None, else with index arrays made by ``tensor``.

    A lone item is passed bare, except a list (``x[[1, 2]]`` and ``x[([1, 2],)]`` are the same
    to NumPy, and a bare nested list is what people write).
    """
    out: list[Any] = []
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
            out.append(arr.tolist() if form == "list" else
                       tensor(arr) if form == "tensor" and tensor is not None else arr)
    return out[0] if len(out) == 1 and not isinstance(out[0], list) else tuple(out)


def numpy_key(items: Sequence[Item]) -> Any:
    """The key NumPy gets."""
    return realise(items, None)


def adapter_key(adapter: OptionalAdapter, items: Sequence[Item]) -> Any:
    """The key the adapter gets: index arrays as its tensors, lists as lists."""
    return realise(items, adapter.from_numpy)


# -- running both sides -------------------------------------------------------------------------

def numpy_outcome(call: Callable[[], Any]) -> tuple[Array | None, tuple[type, ...]]:
    """NumPy's result and no error, or no result and the exception types it raised.

    (AxisError is both a ValueError and an IndexError: either is NumPy's type then.)
    """
    with np.errstate(all="ignore"):
        try:
            return np.asarray(call()), ()
        except NUMPY_ERRORS as e:
            return None, tuple(k for k in NUMPY_ERRORS if isinstance(e, k))


def raises_at_the_call(adapter: OptionalAdapter, call: Callable[[], Any],
                       errors: tuple[type, ...]) -> None:
    """``call()`` raises one of ``errors``, having run nothing where the adapter counts runs."""
    if satisfies(capabilities_of(adapter), "executions|compiles"):
        with counting(adapter) as d, pytest.raises(errors):
            call()
        assert d.ran_nothing(), "the error came from running, not from the call"
    else:
        with pytest.raises(errors):
            call()


def matches(adapter: OptionalAdapter, want: Callable[[], Any], run: Callable[[], Any],
            tolerance: str = "exact") -> None:
    """``run()`` gives NumPy's ``want()`` (within ``tolerance``), or raises where NumPy does."""
    fresh(adapter)
    expected, errors = numpy_outcome(want)
    if errors:
        raises_at_the_call(adapter, run, errors)
        return
    assert_close(adapter.to_numpy(run()), expected, tolerance)


def _x(adapter: OptionalAdapter, draw: Any, shape: Any = None) -> Array:
    dtype = draw(st.sampled_from(dtypes_for(adapter)), label="dtype")
    return np.asarray(draw(arrays(dtype, shapes() if shape is None else shape), label="x"))


# -- getitem ------------------------------------------------------------------------------------

@pytest.mark.spec("LZ-NUM-013")
@pytest.mark.ops("getitem")
@given(data=st.data())
def test_integer_arrays_mixed_with_basic_indices_match_numpy(adapter: OptionalAdapter,
                                                             data: st.DataObject) -> None:
    x = _x(adapter, data.draw, shapes(min_dims=1))
    items = data.draw(mixed_index(x.shape, index_dtypes(adapter)), label="key")
    matches(adapter, lambda: x[numpy_key(items)],
            lambda: adapter.apply("getitem", adapter.from_numpy(x), adapter_key(adapter, items)))


@pytest.mark.spec("LZ-NUM-013")
@pytest.mark.ops("getitem", "flip")
@given(data=st.data())
def test_indexing_a_pending_result_and_chained_indexing(adapter: OptionalAdapter,
                                                        data: st.DataObject) -> None:
    """Indexing composes: an index of a recorded result, and an index of an index."""
    x = _x(adapter, data.draw, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    first = data.draw(mixed_index(x.shape, index_dtypes(adapter)), label="first key")
    y = x[numpy_key(first)]
    second = data.draw(basic_index(y.shape), label="second key")

    def run() -> Any:
        t = adapter.apply("flip", adapter.from_numpy(x), axis=0)  # recorded, never observed
        t = adapter.apply("getitem", adapter.apply("flip", t, axis=0), adapter_key(adapter, first))
        return adapter.apply("getitem", t, adapter_key(adapter, second))

    matches(adapter, lambda: y[numpy_key(second)], run)


@pytest.mark.spec("LZ-NUM-013")
@pytest.mark.ops("getitem")
@pytest.mark.parametrize("key", [(slice(None), [0, 2], Ellipsis, 0),
                                 (slice(None), [0, 2], Ellipsis, [1, 3])], ids=str)
def test_an_ellipsis_of_no_axes_still_separates_array_indices(adapter: OptionalAdapter,
                                                              key: Any) -> None:
    x = np.arange(60, dtype=np.int32).reshape(5, 3, 4)
    matches(adapter, lambda: x[key], lambda: adapter.apply("getitem", adapter.from_numpy(x), key))


@pytest.mark.spec("LZ-NUM-013")
@pytest.mark.ops("getitem")
@pytest.mark.parametrize("key", [(slice(None), [0, 2], [1, 3]),
                                 (slice(None), slice(1, 3), [0, 1], [[2], [3]])], ids=str)
def test_adjacent_index_arrays_keep_their_place(adapter: OptionalAdapter, key: Any) -> None:
    """Index arrays next to each other put their axes where they stand (NumPy's rule).

    Not first, as separated ones do.
    """
    x = np.arange(120, dtype=np.int32).reshape(2, 3, 4, 5)
    matches(adapter, lambda: x[key], lambda: adapter.apply("getitem", adapter.from_numpy(x), key))


@pytest.mark.spec("LZ-NUM-013")
@pytest.mark.ops("getitem")
def test_an_empty_index_list_selects_nothing(adapter: OptionalAdapter) -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    matches(adapter, lambda: x[[]], lambda: adapter.apply("getitem", adapter.from_numpy(x), []))


@pytest.mark.spec("LZ-NUM-013", "LZ-NUM-014")
@pytest.mark.ops("getitem", "setitem")
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16"])
def test_a_narrow_index_type_reaches_a_long_axis(adapter: OptionalAdapter, dtype: str) -> None:
    """An index array of a narrow type on an axis longer than its type's range.

    NumPy reads the element (a negative one from the end). An engine that makes the axis length
    a constant of the index's type overflows (minilazy's did, at the barrier).
    """
    index_type = np.dtype(dtype)
    if index_type not in index_dtypes(adapter) or np.dtype(np.int32) not in dtypes_for(adapter):
        pytest.skip(f"{adapter.name} does not declare {dtype} and int32")
    info = np.iinfo(index_type)
    x = np.arange(int(info.max) + 3, dtype=np.int32)
    i = np.array([info.max, 5, *([info.min, -1] if info.min else [])], index_type)
    matches(adapter, lambda: x[i], lambda: adapter.apply(
        "getitem", adapter.from_numpy(x), adapter.from_numpy(i)))
    matches(adapter, lambda: numpy_apply("setitem", x, i, np.int32(-7)), lambda: adapter.apply(
        "setitem", adapter.from_numpy(x), adapter.from_numpy(i), -7))


# -- setitem ------------------------------------------------------------------------------------

def fits_into(draw: Any, target: tuple[int, ...], leading: int | None = None) -> tuple[int, ...]:
    """A value shape NumPy assigns into ``target``.

    A suffix of it, some dims 1, and extra leading 1s (which NumPy drops): ``leading`` of them,
    or 0 to 2.
    """
    keep = draw(st.integers(0, len(target)))
    suffix = [1 if draw(st.booleans()) else n for n in target[len(target) - keep:]]
    return (1,) * (int(draw(st.integers(0, 2))) if leading is None else leading) + tuple(suffix)


def python_scalar(draw: Any, dtype: np.dtype[Any]) -> bool | int | float:
    """A Python bool, int or float for an array of ``dtype``.

    Ints sometimes out of range (NumPy 2 raises OverflowError), floats into integer arrays within
    range (C leaves the conversion of others undefined).
    """
    kind = draw(st.sampled_from([bool, int, float]))
    if kind is bool:
        return bool(draw(st.booleans()))
    if kind is int:
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return int(draw(st.integers(int(info.min) - 2, int(info.max) + 2)))
        return int(draw(st.integers(-(2**40), 2**40)))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return float(draw(st.floats(max(float(info.min), -1e6), min(float(info.max), 1e6))))
    return float(draw(st.floats(allow_subnormal=False)))


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.ops("setitem")
@given(data=st.data())
def test_setitem_of_any_key_and_value_matches_numpy(adapter: OptionalAdapter,
                                                    data: st.DataObject) -> None:
    """``x[key] = v`` with any key and value.

    Basic keys or integer arrays without repeats; ``v`` a Python scalar, or a tensor of any dtype
    NumPy assigns in kind, of a shape that broadcasts into ``x[key]``.
    """
    x = _x(adapter, data.draw)
    items = data.draw(unique_array_index(x.shape, index_dtypes(adapter))
                      if x.ndim and data.draw(st.booleans()) else basic_index(x.shape),
                      label="key")
    target = x[numpy_key(items)].shape
    value: Any
    if data.draw(st.booleans(), label="a Python scalar"):
        value = python_scalar(data.draw, x.dtype)
        operand = value
    else:
        # float64 -> float16 is test_setitem_of_float64_into_float16_rounds_once's.
        kinds = [d for d in dtypes_for(adapter) if np.can_cast(d, x.dtype, "same_kind")
                 and not (d == F64 and x.dtype == F16)]
        # An all-int key takes NumPy's single-element path, which refuses a value with
        # dimensions (test_setitem_of_one_element_refuses_values_with_dimensions).
        one_element = len(items) == x.ndim and all(i[0] == "int" for i in items)
        shape = () if one_element else fits_into(data.draw, target)
        value = data.draw(arrays(data.draw(st.sampled_from(kinds)), shape), label="value")
        operand = None

    def run() -> Any:
        t = adapter.from_numpy(x)
        v = adapter.from_numpy(value) if operand is None else operand
        return adapter.apply("setitem", t, adapter_key(adapter, items), v)

    matches(adapter, lambda: numpy_apply("setitem", x, numpy_key(items), value), run)


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.ops("setitem")
@pytest.mark.parametrize("leading", [1, 2, 3])
@given(data=st.data())
def test_setitem_of_a_value_with_extra_leading_ones_matches_numpy(
        adapter: OptionalAdapter, leading: int, data: st.DataObject) -> None:
    """``x[key] = v``, ``v`` with ``leading`` extra length-1 axes in front (NumPy drops them).

    At every profile: drawn by chance among other values, two of them came at 200 examples.
    """
    x = _x(adapter, data.draw, shapes(min_dims=1))
    items = data.draw(unique_array_index(x.shape, index_dtypes(adapter))
                      if data.draw(st.booleans()) else basic_index(x.shape), label="key")
    assume(not (len(items) == x.ndim and all(i[0] == "int" for i in items)))  # one element
    shape = fits_into(data.draw, x[numpy_key(items)].shape, leading)
    value = data.draw(arrays(x.dtype, shape), label="value")
    matches(adapter, lambda: numpy_apply("setitem", x, numpy_key(items), value),
            lambda: adapter.apply("setitem", adapter.from_numpy(x), adapter_key(adapter, items),
                                  adapter.from_numpy(value)))


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.ops("setitem", "zeros")
def test_setitem_of_float64_into_float16_rounds_once(adapter: OptionalAdapter) -> None:
    if not {F64, F16} <= set(dtypes_for(adapter)):
        pytest.skip(f"{adapter.name} lacks float64 or float16")
    v = np.array([1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 2.0], np.float64)

    def run() -> Any:
        t = adapter.apply("zeros", (3,), dtype=F16)
        return adapter.apply("setitem", t, (slice(None),), adapter.from_numpy(v))

    matches(adapter, lambda: numpy_apply("setitem", np.zeros(3, F16), (slice(None),), v), run)


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.ops("setitem")
@pytest.mark.parametrize("key", [(0, 1), (-1, 0), ()], ids=str)
def test_setitem_of_one_element_refuses_values_with_dimensions(adapter: OptionalAdapter,
                                                               key: Any) -> None:
    x = np.zeros(() if key == () else (2, 3), np.int8)
    v = np.array([5], np.int8)
    matches(adapter, lambda: numpy_apply("setitem", x, key, v),
            lambda: adapter.apply("setitem", adapter.from_numpy(x), key, adapter.from_numpy(v)))


@pytest.mark.spec("LZ-NUM-014", "LZ-REC-004")
@pytest.mark.ops("setitem", "add")
@given(data=st.data())
def test_setitem_leaves_earlier_results_alone(adapter: OptionalAdapter,
                                              data: st.DataObject) -> None:
    """Results computed from ``x`` before ``x[key] = v`` keep their values.

    As NumPy copies do, while the tensor itself -- the handle returned and the one held -- sees the
    write.
    """
    fresh(adapter)
    x = np.asarray(data.draw(arrays(np.dtype(np.int32), hnp.array_shapes(
        min_dims=1, max_dims=3, max_side=4)), label="x"))
    items = data.draw(basic_index(x.shape), label="key")
    t = adapter.from_numpy(x)
    earlier = adapter.apply("add", t, adapter.from_numpy(np.ones((), np.int32)))
    returned = adapter.apply("setitem", t, adapter_key(adapter, items), 7)
    assert returned is t, "setitem returned a new tensor: the handle held is not updated"
    assert_close(adapter.to_numpy(t), numpy_apply("setitem", x, numpy_key(items), 7))
    assert_close(adapter.to_numpy(earlier), x + np.int32(1))


# -- in-place arithmetic ------------------------------------------------------------------------

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
