"""Indexing keys of every kind and ``x[key] = v``: exactly NumPy's results.

Keys mix basic items (ints, slices with any bounds and step, ``None``, ``...``) with integer
index arrays (of any integer dtype, as tensors or as lists), wherever NumPy allows them. Index
*values* stay in range, negatives included: what an out-of-range value in a tensor selects is
implementation-defined (LZ-NUM-005). ``x[key] = v`` never repeats an index (which write wins
is implementation-defined). Where NumPy raises, the implementation must raise NumPy's exception
type, at the call.

The keys are drawn by ``oracle/keys.py``, whose strategies take the forms an index array or an
int may take, so that a library's own tests can draw host forms too (NumPy arrays, NumPy integer
scalars) that the protocol does not pass. ``x op= y`` is ``test_in_place.py``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.oracle.keys import (
    adapter_key,
    basic_index,
    index_dtypes,
    mixed_index,
    numpy_key,
    unique_array_index,
)
from minilazy.conformance.oracle.strategies import arrays, dtypes_for, shapes
from minilazy.conformance.suite.util import fresh, matches

Array = np.ndarray[Any, Any]
Item = tuple[Any, ...]
F64, F16 = np.dtype("float64"), np.dtype("float16")


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
