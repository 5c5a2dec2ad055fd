"""Shape functions, indexing, and creation functions: exactly NumPy's results."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.oracle.strategies import WIDE, allowed, arrays, dtypes_for
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import fresh

Array = np.ndarray[Any, Any]
SHAPE_OPS = sorted(n for n, s in ops().items() if s.kind == "shape")
SMALL = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)


def _tensors(adapter: OptionalAdapter, v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return adapter.from_numpy(v)
    if isinstance(v, list):
        return [_tensors(adapter, x) for x in v]
    return v


def check(adapter: OptionalAdapter, op: str, args: list[Any], kwargs: dict[str, Any]) -> None:
    """``op`` on the adapter gives exactly NumPy's result (or raises where NumPy raises)."""
    fresh(adapter)
    try:
        want = numpy_apply(op, *args, **kwargs)
    except (TypeError, ValueError, IndexError) as e:
        with pytest.raises((type(e), TypeError, ValueError, IndexError)):
            adapter.apply(op, *_tensors(adapter, args), **kwargs)
        return
    got = adapter.to_numpy(adapter.apply(op, *_tensors(adapter, args), **kwargs))
    assert_close(got, want, ops()[op].tolerance, what=op)


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def reshape_target(draw: Any, shape: tuple[int, ...]) -> Any:
    """A shape of the same size (its prime factors dealt out, with 1s).

    Maybe one -1, maybe an int. Zero sizes get any shape with a 0 and no -1 (there a -1 is
    ambiguous: NumPy raises, and the standard leaves it unspecified).
    """
    size = math.prod(shape)
    if size == 0:
        return tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)
                          .filter(lambda d: 0 in d)))
    k = draw(st.integers(1 if size > 1 else 0, 4))
    dims = [1] * k
    for f in _prime_factors(size):
        dims[draw(st.integers(0, k - 1))] *= f
    if dims and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    if len(dims) == 1 and draw(st.booleans()):
        return dims[0]
    return tuple(dims)


def _maybe_negative(draw: Any, axis: int, ndim: int) -> int:
    return axis - ndim if draw(st.booleans()) else axis


def _shape_args(data: st.DataObject, op: str, x: Array,
                dtypes: list[np.dtype[Any]]) -> tuple[list[Any], dict[str, Any]]:
    shape, ndim, draw = x.shape, x.ndim, data.draw
    if op == "reshape":
        target = draw(st.sampled_from([(-1,), shape[::-1], (*shape, 1), (1, *shape), (x.size,)])
                      | reshape_target(shape), label="shape")
        return [x, target], {}
    if op == "permute_dims":  # a permutation of (0, ..., N-1): negative axes are NumPy's extra
        return [x, tuple(draw(st.permutations(range(ndim))))], {}
    if op == "expand_dims":
        return [x], {"axis": draw(st.integers(-ndim - 1, ndim), label="axis")}
    if op == "squeeze":
        ones = [i for i, n in enumerate(shape) if n == 1]
        picked = [_maybe_negative(draw, a, ndim)
                  for a in (draw(st.lists(st.sampled_from(ones), unique=True)) if ones else [])]
        return [x], {"axis": draw(st.sampled_from(  # the standard has no axis=None
            [tuple(picked)] + ([picked[0]] if len(picked) == 1 else [])), label="axis")}
    if op == "broadcast_to":
        grown = tuple(draw(st.integers(0, 3)) if n == 1 else n for n in shape)
        return [x, (*draw(st.lists(st.integers(0, 3), max_size=2)), *grown)], {}
    if op == "flip":
        one = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
        return [x], {"axis": draw(st.one_of(st.none(), one, st.lists(
            one, unique_by=lambda a: a % ndim, max_size=ndim).map(tuple)), label="axis")}
    if op == "matrix_transpose":
        return [x], {}
    # concat and stack: 1-3 tensors. Mixed dtypes in concat only, from a few that every declared
    # dtype policy expresses (promotion of every pair is LZ-NUM-002's, in the elementwise tests).
    count = draw(st.integers(1, 3), label="count")
    mix = [d for d in (x.dtype, np.dtype("float32"), np.dtype("int16")) if d in dtypes]
    others = [draw(st.sampled_from(mix if op == "concat" else [x.dtype]))
              for _ in range(count - 1)]
    if op == "stack":
        return [[x, *(draw(arrays(d, shape)) for d in others)]], {
            "axis": draw(st.integers(-ndim - 1, ndim), label="axis")}
    axis = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)) if ndim else st.none())
    parts = [x]
    for d in others:
        other: list[int] = list(draw(SMALL)) if axis is None else list(shape)  # None: flattened
        if axis is not None:
            other[axis] = draw(st.integers(0, 3))
        parts.append(draw(arrays(d, tuple(other))))
    return [parts], {"axis": axis}


@pytest.mark.spec("LZ-NUM-012")
@pytest.mark.parametrize("op", SHAPE_OPS)
@given(data=st.data())
def test_shape_functions_match_numpy(adapter: OptionalAdapter, op: str,
                                     data: st.DataObject) -> None:
    min_dims = 2 if op == "matrix_transpose" else 0
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes_for(adapter)), label="dtype"),
                         hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0,
                                          max_side=3)), label="x")
    args, kwargs = _shape_args(data, op, x, dtypes_for(adapter))
    parts = args[0] if isinstance(args[0], list) else [x]
    assume(allowed(adapter, op, *(p.dtype for p in parts)))  # the adapter's dtype policy
    check(adapter, op, args, kwargs)


# Corners that random shapes reach rarely, checked on every run.
EDGE_CASES: dict[str, tuple[str, list[Any], dict[str, Any]]] = {
    "concat 0-d flattened": ("concat", [[np.array(1.0), np.array([2.0, 3.0])]], {"axis": None}),
    "concat 0-d mixed dtypes": ("concat", [[np.array(1.5, np.float32), np.array([2, 3], np.int8),
                                            np.array(4.0, np.float32)]], {"axis": None}),
    "concat one 0-d": ("concat", [[np.array(True)]], {"axis": None}),
    "concat empty": ("concat", [[np.zeros((0, 2), np.int8), np.ones((1, 2), np.int16)]], {}),
    "stack 0-d": ("stack", [[np.array(1), np.array(2)]], {"axis": -1}),
    "reshape empty": ("reshape", [np.zeros((0, 3)), (3, -1)], {}),
    "squeeze all": ("squeeze", [np.zeros((1, 1), np.uint8)], {"axis": (0, 1)}),
    "flip 0-d": ("flip", [np.array(5)], {}),
    "flip one axis": ("flip", [np.arange(6).reshape(2, 3)], {"axis": -1}),
    "squeeze one of two": ("squeeze", [np.zeros((1, 2, 1), np.int8)], {"axis": -1}),
    "broadcast 0-d to empty": ("broadcast_to", [np.array(5.0), (2, 0)], {}),
    "permute 0-d": ("permute_dims", [np.array(5), ()], {}),
    "expand 0-d": ("expand_dims", [np.array(5)], {"axis": -1}),
    "transpose a batch": ("matrix_transpose", [np.arange(6).reshape(1, 2, 3)], {}),
    "transpose 1-d": ("matrix_transpose", [np.arange(3)], {}),  # NumPy raises: so must it
    "transpose 0-d": ("matrix_transpose", [np.array(3.0)], {}),
}


@pytest.mark.spec("LZ-NUM-012")
@pytest.mark.parametrize(("op", "case"), [(op, name) for name, (op, _, _) in EDGE_CASES.items()],
                         ids=list(EDGE_CASES))
def test_shape_functions_in_corners(adapter: OptionalAdapter, op: str, case: str) -> None:
    _, args, kwargs = EDGE_CASES[case]
    check(adapter, op, args, kwargs)


@st.composite
def index_keys(draw: Any, shape: tuple[int, ...]) -> Any:
    """Basic indices (ints, slices of any step, None, ...) or integer index arrays, in range."""
    if draw(st.booleans()) or not shape or 0 in shape:
        return draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    return draw(hnp.integer_array_indices(shape, result_shape=SMALL.filter(
        lambda s: len(s) <= 2)))


def _key(adapter: OptionalAdapter, key: Any) -> Any:
    """The key with index arrays as the adapter's tensors."""
    if isinstance(key, tuple):
        return tuple(adapter.from_numpy(k) if isinstance(k, np.ndarray) else k for k in key)
    return adapter.from_numpy(key) if isinstance(key, np.ndarray) else key


@pytest.mark.spec("LZ-NUM-013")
@pytest.mark.parametrize("op", ["getitem"])
@given(data=st.data())
def test_indexing_matches_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    fresh(adapter)
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes_for(adapter))), SMALL), label="x")
    key = data.draw(index_keys(x.shape), label="key")
    got = adapter.to_numpy(adapter.apply(op, adapter.from_numpy(x), _key(adapter, key)))
    assert_close(got, numpy_apply(op, x, key))


@st.composite
def take_indices(draw: Any, n: int, dtypes: list[np.dtype[Any]], max_dims: int = 2) -> Array:
    """An index array of one of ``dtypes`` with values in [-n, n).

    Negatives where the dtype has them; of a shape with a zero when n == 0 (no index is in range
    then).
    """
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=4)
                 .filter(lambda s: n or 0 in s))
    low = -n if dtype.kind == "i" else 0
    high = min(max(n - 1, 0), int(np.iinfo(dtype).max))
    low = max(low, int(np.iinfo(dtype).min))
    return np.asarray(draw(hnp.arrays(dtype, shape, elements=st.integers(low, high))))


@pytest.mark.spec("LZ-NUM-013")
@pytest.mark.parametrize("op", ["take"])
@given(data=st.data())
def test_take_matches_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    """In-range indices (an out-of-range one is LZ-NUM-005's) of any integer dtype.

    0-d to 2-d (np.take's output shape); ``axis=None`` flattens first; zero-size axes take nothing.
    """
    fresh(adapter)
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes_for(adapter))), hnp.array_shapes(
        min_dims=1, max_dims=3, min_side=0, max_side=4)), label="x")
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)), label="axis")
    idx = data.draw(take_indices(x.size if axis is None else x.shape[axis],
                                 [d for d in dtypes_for(adapter) if d.kind in "iu"]),
                    label="indices")
    got = adapter.to_numpy(adapter.apply(op, adapter.from_numpy(x), adapter.from_numpy(idx),
                                         axis=axis))
    assert_close(got, numpy_apply(op, x, idx, axis=axis))


def _unique(key: Any) -> bool:
    if not isinstance(key, tuple) or not key or not isinstance(key[0], np.ndarray):
        return True
    points = np.stack(np.broadcast_arrays(*key)).reshape(len(key), -1).T
    return len({tuple(p) for p in points}) == len(points)


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.parametrize("op", ["setitem"])
@given(data=st.data())
def test_setitem_matches_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    fresh(adapter)
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes_for(adapter))), SMALL), label="x")
    key = data.draw(index_keys(x.shape).filter(_unique), label="key")
    target = x[key].shape
    # A value shape that broadcasts to the target: some sizes 1, some leading axes dropped.
    dims = [data.draw(st.sampled_from([n, 1])) for n in target]
    value = data.draw(arrays(x.dtype, tuple(dims[data.draw(st.integers(0, len(dims))):])),
                      label="value")
    t = adapter.from_numpy(x)
    adapter.apply(op, t, _key(adapter, key), adapter.from_numpy(value))
    assert_close(adapter.to_numpy(t), numpy_apply(op, x, key, value))


@pytest.mark.spec("LZ-NUM-014", "LZ-REC-004")
@pytest.mark.ops("setitem")
@pytest.mark.parametrize("value", [2.5, -3, True], ids=["float", "int", "bool"])
def test_setitem_of_a_python_number(adapter: OptionalAdapter, value: Any) -> None:
    for dtype in [d for d in dtypes_for(adapter) if d.kind in "fi"][:2]:
        fresh(adapter)  # values stand alone: a cache hit's correctness is LZ-CACHE-003's
        x = np.arange(6).reshape(2, 3).astype(dtype)
        t = adapter.from_numpy(x)
        returned = adapter.apply("setitem", t, (slice(None), 1), value)
        want = numpy_apply("setitem", x, (slice(None), 1), value)
        assert_close(adapter.to_numpy(t), want, what=f"{dtype}: x[:, 1] = {value!r}")
        assert_close(adapter.to_numpy(returned), want)


# Ops with a Python in-place operator (x += y...), exact on their whole domain.
INPLACE = sorted(n for n in ("add", "subtract", "multiply", "floor_divide", "remainder",
                             "bitwise_and", "bitwise_or", "bitwise_xor")
                 if ops()[n].tolerance == "exact" and not ops()[n].domain)


@pytest.mark.spec("LZ-NUM-014")
@pytest.mark.parametrize("op", INPLACE)
@given(data=st.data())
def test_in_place_arithmetic_matches_numpy(adapter: OptionalAdapter, op: str,
                                           data: st.DataObject) -> None:
    fresh(adapter)
    dtypes = dtypes_for(adapter)
    x = data.draw(arrays(data.draw(st.sampled_from(dtypes)), (2, 3)), label="x")
    # A tensor: with a Python scalar, the result's dtype is LZ-NUM-003's business.
    other = data.draw(arrays(data.draw(st.sampled_from(dtypes)), (3,)), label="other")
    try:
        want = np.array(x)
        with np.errstate(all="ignore"):
            ops()[op].numpy_callable()(want, other, out=want)
    except TypeError:  # NumPy's same_kind casting refuses the result's dtype
        with pytest.raises(TypeError):
            adapter.inplace(op, adapter.from_numpy(x), _key(adapter, other))
        return
    t = adapter.from_numpy(x)
    adapter.inplace(op, t, _key(adapter, other))
    assert_close(adapter.to_numpy(t), want)


CREATION = sorted(n for n, s in ops().items() if s.kind == "creation")


@pytest.mark.spec("LZ-NUM-015")
@pytest.mark.parametrize("op", CREATION)
@given(data=st.data())
def test_creation_matches_numpy(adapter: OptionalAdapter, op: str, data: st.DataObject) -> None:
    fresh(adapter)
    draw = data.draw
    dtypes = dtypes_for(adapter)
    dtype = draw(st.one_of(st.none(), st.sampled_from(dtypes)), label="dtype")
    kwargs: dict[str, Any] = {} if dtype is None else {"dtype": dtype}
    shape = draw(SMALL, label="shape")
    like = draw(arrays(draw(st.sampled_from(dtypes)), shape)) if op.endswith("_like") else None
    # A fill value of the result's kind (a float cast to an integer dtype is C's business).
    target = dtype or (like.dtype if like is not None else None)
    kind = "f" if target is None else target.kind
    fill = draw({"b": st.booleans(), "i": st.integers(-3, 300), "u": st.integers(-3, 300)}.get(
        kind, st.one_of(st.booleans(), st.integers(-3, 300), st.floats(-10, 10))), label="fill")
    args: list[Any]
    if like is not None:
        args = [like] + ([fill] if op == "full_like" else [])
    elif op == "asarray":
        args = [draw(arrays(dtype or draw(st.sampled_from(dtypes)), shape)).tolist()]
    elif op == "full":
        args = [shape, fill]
    elif op == "arange":
        ints = st.integers(-5, 5)
        start, stop = draw(ints), draw(ints)
        step = draw(st.sampled_from([1, 2, -1, 3]) if draw(st.booleans()) else
                    st.sampled_from([0.5, -0.25, 1.5]))
        args = [start, stop, step]
    elif op == "eye":
        args = [draw(st.integers(0, 4)), draw(st.one_of(st.none(), st.integers(0, 4)))]
        kwargs["k"] = draw(st.integers(-2, 2))
    elif op == "linspace":
        args = [draw(st.floats(-10, 10)), draw(st.floats(-10, 10)), draw(st.integers(0, 6))]
        kwargs["endpoint"] = draw(st.booleans())
    else:
        args = [shape]
    if dtype is not None and dtype.kind in "iub" and op in ("arange", "linspace"):
        return  # truncating floats to integers here is platform-dependent in NumPy itself
    try:
        want = numpy_apply(op, *args, **kwargs)
    except (TypeError, ValueError, OverflowError) as e:
        with pytest.raises((type(e), TypeError, ValueError, OverflowError)):
            adapter.apply(op, *_tensors(adapter, args), **kwargs)
        return
    if want.dtype in WIDE and "float64" not in adapter.capabilities:
        return  # NumPy's default dtype here is 64-bit, which the adapter does not have
    got = adapter.to_numpy(adapter.apply(op, *_tensors(adapter, args), **kwargs))
    assert_close(got, want, ops()[op].tolerance, what=f"{op}{tuple(args)} {kwargs}")
