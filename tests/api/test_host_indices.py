"""Indices and axes known on the host, checked at the call as NumPy checks them (issue 28).

Slice parts of any size (NumPy clamps starts and stops, and takes any step), index values known
on the host (ints, lists, NumPy arrays: ``IndexError`` at the call, as ``x[5]``), 0-d boolean
indices (``x[True]``: a new axis of length 1, ``x[False]``: of length 0), size-0 masks, and the
``axis`` of every function that takes one: expected values and error types from NumPy. Two
deliberate departures, both stricter: a bool is no axis (``TypeError``: NumPy's C functions
refuse it, a few Python-level ones take it as 0 or 1), and an int axis too big for C is out of
bounds (``AxisError``, where NumPy's conversion raises ``OverflowError``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import check, raises_at_the_call, value

pytestmark = [pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning")]

# Slice parts and shifts around the edges of int64 and beyond: Python ints, unbounded.
HUGE = [2**63 - 1, 2**63, 2**64, 2**100, -(2**63) + 1, -(2**63), -(2**63) - 1, -(2**100)]
PART = st.one_of(st.none(), st.integers(-7, 7), st.sampled_from(HUGE))
STEP = st.one_of(st.none(), st.integers(-4, 4).filter(bool), st.sampled_from(HUGE))
SHAPE = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)


def lazy(x: np.ndarray, device) -> ml.Tensor:
    return ml.asarray(x, device=device)


def numbers(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)


@settings(max_examples=40)
@given(shape=SHAPE, data=st.data())
def test_slices_with_parts_of_any_size_match_numpy(device, shape, data):
    """``x[::2**63 - 1]`` is ``[x[0]]``; huge starts and stops clamp; a later op works too."""
    x = numbers(shape)
    key = tuple(slice(data.draw(PART), data.draw(PART), data.draw(STEP))
                for _ in range(data.draw(st.integers(1, len(shape)))))
    check(lambda: x[key] * 2 + 1, lambda: lazy(x, device)[key] * 2 + 1)


@settings(max_examples=30)
@given(shape=SHAPE, data=st.data())
def test_setitem_through_slices_with_parts_of_any_size_matches_numpy(device, shape, data):
    x = numbers(shape)
    key = tuple(slice(data.draw(PART), data.draw(PART), data.draw(STEP))
                for _ in range(data.draw(st.integers(1, len(shape)))))
    v = -1 - numbers(x[key].shape) if data.draw(st.booleans()) else -7

    def expected() -> np.ndarray:
        out = x.copy()
        out[key] = v
        return out

    def run() -> ml.Tensor:
        t = lazy(x, device)
        t[key] = v
        return t

    check(expected, run)


def test_a_slice_step_of_zero_is_numpys_value_error():
    raises_at_the_call(lambda: ml.arange(5)[::0], ValueError)


@settings(max_examples=30)
@given(data=st.data())
def test_roll_by_any_shift_matches_numpy(device, data):
    x = numbers(data.draw(SHAPE))
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    shift = data.draw(st.one_of(st.integers(-12, 12), st.sampled_from(HUGE),
                                st.integers(-(2**100), 2**100)))
    check(lambda: np.roll(x, shift, axis=axis), lambda: ml.roll(lazy(x, device), shift, axis=axis))


# -- index values known on the host -----------------------------------------------------------

def _index_call(name: str, x: np.ndarray, idx, axis: int):
    """(NumPy's call, minilazy's call on a tensor) of ``name`` with indices ``idx`` on ``axis``."""
    head = (slice(None),) * axis
    if name == "take":  # np.take is x[:, ..., idx] (its docs), which checks idx on empty x too
        return lambda: x[(*head, idx)], lambda t: ml.take(t, idx, axis=axis)
    if name == "take_along_axis":
        along = np.reshape(idx, (1,) * axis + (-1,) + (1,) * (x.ndim - axis - 1))
        return (lambda: np.take_along_axis(x, along, axis=axis),
                lambda t: ml.take_along_axis(t, along, axis=axis))
    if name == "getitem":
        return lambda: x[(*head, idx)], lambda t: t[(*head, idx)]

    def numpy_set() -> np.ndarray:
        out = x.copy()
        out[(*head, idx)] = -1
        return out

    def ours(t: ml.Tensor) -> ml.Tensor:
        t[(*head, idx)] = -1
        return t

    return numpy_set, ours


@settings(max_examples=60)
@given(data=st.data())
@pytest.mark.parametrize("name", ["take", "take_along_axis", "getitem", "setitem"])
def test_host_indices_out_of_range_raise_index_error_at_the_call(device, name, data):
    """An int, a list or a NumPy array of indices: known at the call, so checked there, as
    NumPy checks them (``take`` used to clamp them silently). Values in range: NumPy's."""
    x = numbers(data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)))
    axis = data.draw(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    values = st.integers(-n - 3, n + 2)
    form = data.draw(st.sampled_from(["int", "list", "int64", "int8", "uint8"]))
    if form == "int" and name != "take_along_axis":
        idx = data.draw(values)
    else:
        drawn = data.draw(st.lists(values, min_size=1, max_size=4))
        if form == "uint8":
            drawn = [abs(v) for v in drawn]
        idx = drawn if form in ("int", "list") else np.array(drawn, form)
    ours = _index_call(name, x, idx, axis)
    check(ours[0], lambda: ours[1](lazy(x, device)))


@pytest.mark.parametrize("call", [
    lambda t: ml.take(t, 7), lambda t: ml.take(t, [0, -8], axis=0),
    lambda t: ml.take(t, np.array([9])), lambda t: ml.take_along_axis(t, np.array([7]), axis=0),
    lambda t: t[np.array([7])], lambda t: t.__setitem__([0, 7], 1),
    lambda t: ml.searchsorted(t, ml.asarray([2]), sorter=[0, 1, 2, 3, 4, 5, 6, 7]),
])
def test_the_index_error_names_the_index_and_the_axis_size(call):
    t = ml.arange(7)
    msg = raises_at_the_call(lambda: call(t), IndexError)
    assert "out of bounds for axis 0 with size 7" in msg and "index " in msg, msg


def test_index_tensors_are_data_clamped_when_read_dropped_when_written(device):
    """Device-side indices cannot be checked when recorded (LZ-NUM-005): reading clamps an
    out-of-range one into range, writing drops it (XLA's gather and scatter); negative ones
    in range count from the end, as in NumPy."""
    x = numbers((5,))
    idx = np.array([7, -1, -9, 2])
    t = lazy(x, device)
    assert value(lambda: ml.take(t, lazy(idx, device))).tolist() == x[np.clip(idx, -5, 4)].tolist()
    assert value(lambda: t[lazy(idx, device)]).tolist() == x[np.clip(idx, -5, 4)].tolist()
    kept = (idx >= -5) & (idx < 5)
    want = x.copy()
    want[idx[kept]] = -1
    t[lazy(idx, device)] = -1
    assert t.tolist() == want.tolist()


def test_searchsorted_sorter_in_range_matches_numpy(device):
    a = np.array([5.0, 1.0, 3.0])
    check(lambda: np.searchsorted(a, [2.0, 4.0], sorter=[1, 2, 0]),
          lambda: ml.searchsorted(lazy(a, device), lazy(np.array([2.0, 4.0]), device),
                                  sorter=[1, 2, 0]))


# -- 0-d boolean indices and size-0 masks -----------------------------------------------------

BOOL0_FORMS = ["bool", "numpy bool", "0-d array", "0-d tensor"]


@st.composite
def keys_with_scalar_bools(draw, shape):
    """A key of ints, slices, ``None``, maybe ``...``, one-element index lists, and at least one
    0-d boolean, as (kind, payload) pairs. (One-element lists broadcast with a False's ``[]``.)"""
    items: list[tuple] = []
    for n in shape[:draw(st.integers(0, len(shape)))]:
        kind = draw(st.sampled_from(["int", "slice", "list"] if n else ["slice"]))
        items.append((kind, draw(st.integers(-n, n - 1)) if kind == "int" else
                      [draw(st.integers(-n, n - 1))] if kind == "list" else
                      slice(draw(st.none() | st.integers(-n, n)), None,
                            draw(st.sampled_from([None, 1, -1, 2])))))
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), ("none", None))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), ("ellipsis", Ellipsis))
    for _ in range(draw(st.integers(1, 2))):
        items.insert(draw(st.integers(0, len(items))),
                     (draw(st.sampled_from(BOOL0_FORMS)), draw(st.booleans())))
    return items


def _key(items, device, numpy: bool):
    out = []
    for kind, v in items:
        if kind in BOOL0_FORMS:
            v = (v if kind == "bool" else np.bool_(v) if kind == "numpy bool" or numpy else
                 np.asarray(v) if kind == "0-d array" else ml.asarray(v, device=device))
        out.append(v)
    return tuple(out) if len(out) != 1 else out[0]


@settings(max_examples=60)
@given(data=st.data())
def test_scalar_boolean_indices_add_an_axis_as_numpy(device, data):
    """``x[True]`` is ``x[None]``, ``x[False]`` an empty one: NumPy's shape ``(1, ...)`` /
    ``(0, ...)``, with ints and index arrays broadcast against the boolean's ``[0]`` / ``[]``."""
    x = numbers(data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)))
    items = data.draw(keys_with_scalar_bools(x.shape))
    check(lambda: x[_key(items, device, True)],
          lambda: lazy(x, device)[_key(items, device, False)])


@settings(max_examples=40)
@given(data=st.data())
def test_setitem_through_scalar_boolean_indices_matches_numpy(device, data):
    x = numbers(data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)))
    items = data.draw(keys_with_scalar_bools(x.shape))

    def expected() -> np.ndarray:
        out = x.copy()
        out[_key(items, device, True)] = -1
        return out

    def run() -> ml.Tensor:
        t = lazy(x, device)
        t[_key(items, device, False)] = -1
        return t

    check(expected, run)


def test_a_scalar_boolean_next_to_a_mask_broadcasts_as_numpy(device):
    x, mask = numbers((2, 3, 4)), np.ones((2, 3), bool)
    check(lambda: x[mask, True], lambda: lazy(x, device)[mask, True])
    check(lambda: x[True, mask], lambda: lazy(x, device)[lazy(np.array(True), device), mask])


def test_a_scalar_boolean_tensor_is_one_counted_host_fallback():
    t = ml.arange(3)
    ml.reset_metrics()
    assert t[ml.asarray(True) & ml.asarray(True)].shape == (1, 3)
    assert ml.metrics().fallback_ops["getitem"] == 1
    assert t[True].shape == (1, 3) and ml.metrics().fallbacks == 1  # a host bool: none


@pytest.mark.parametrize(("shape", "mask_shape"), [
    ((0, 3), (0,)), ((2, 0), (2, 0)), ((2, 0), (2,)), ((0,), (0,)), ((3, 0, 2), (3, 0)),
    ((2, 3), (2, 3)), ((0, 0), (0, 0)),
])
@pytest.mark.parametrize("form", ["ndarray", "tensor", "list"])
def test_masks_with_size_zero_axes_match_numpy(device, shape, mask_shape, form):
    x = numbers(shape)
    mask = (numbers(mask_shape) % 2 == 0) if mask_shape != shape else np.zeros(shape, bool)
    key = lazy(mask, device) if form == "tensor" else mask
    if form == "list":  # NumPy's too: [[], []] is no mask but an empty index array
        mask = key = mask.tolist()
    check(lambda: x[mask], lambda: lazy(x, device)[key])

    def expected() -> np.ndarray:
        out = x.copy()
        out[mask] = -1
        return out

    def run() -> ml.Tensor:
        t = lazy(x, device)
        t[key] = -1
        return t

    check(expected, run)


# -- axis arguments ---------------------------------------------------------------------------

M = np.arange(9.0).reshape(3, 3)
# name: (NumPy's call, minilazy's) of x and axis; x is M (or a (1, 3) one for squeeze)
AXIS_FUNCTIONS = {
    "sort": (lambda x, a: np.sort(x, axis=a), lambda t, a: ml.sort(t, axis=a)),
    "argsort": (lambda x, a: np.argsort(x, axis=a), lambda t, a: ml.argsort(t, axis=a)),
    "cumulative_sum": (lambda x, a: np.cumsum(x, axis=a),
                       lambda t, a: ml.cumulative_sum(t, axis=a)),
    "take": (lambda x, a: np.take(x, [0], axis=a), lambda t, a: ml.take(t, [0], axis=a)),
    "take_along_axis": (lambda x, a: np.take_along_axis(x, np.zeros((1, 1), np.intp), axis=a),
                        lambda t, a: ml.take_along_axis(t, np.zeros((1, 1), np.intp), axis=a)),
    "concat": (lambda x, a: np.concatenate([x, x], axis=a),
               lambda t, a: ml.concat([t, t], axis=a)),
    "stack": (lambda x, a: np.stack([x, x], axis=a), lambda t, a: ml.stack([t, t], axis=a)),
    "unstack": (lambda x, a: np.stack(np.unstack(x, axis=a)),
                lambda t, a: ml.stack(ml.unstack(t, axis=a))),
    "expand_dims": (lambda x, a: np.expand_dims(x, a), lambda t, a: ml.expand_dims(t, axis=a)),
    "squeeze": (lambda x, a: np.squeeze(x[:1], axis=a), lambda t, a: ml.squeeze(t[:1], axis=a)),
    "flip": (lambda x, a: np.flip(x, axis=a), lambda t, a: ml.flip(t, axis=a)),
    "roll": (lambda x, a: np.roll(x, 1, axis=a), lambda t, a: ml.roll(t, 1, axis=a)),
    "repeat": (lambda x, a: np.repeat(x, 2, axis=a), lambda t, a: ml.repeat(t, 2, axis=a)),
    "moveaxis": (lambda x, a: np.moveaxis(x, a, 0), lambda t, a: ml.moveaxis(t, a, 0)),
    "argmax": (lambda x, a: np.argmax(x, axis=a), lambda t, a: ml.argmax(t, axis=a)),
    "argmin": (lambda x, a: np.argmin(x, axis=a), lambda t, a: ml.argmin(t, axis=a)),
    "diff": (lambda x, a: np.diff(x, axis=a), lambda t, a: ml.diff(t, axis=a)),
    "vecdot": (lambda x, a: np.vecdot(x, x, axis=a), lambda t, a: ml.vecdot(t, t, axis=a)),
    "linalg.cross": (lambda x, a: np.cross(x, x, axis=a),
                     lambda t, a: ml.linalg.cross(t, t, axis=a)),
    "nn.softmax": (lambda x, a: _softmax(x, a), lambda t, a: ml.nn.softmax(t, axis=a)),
}


def _softmax(x: np.ndarray, axis) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

# One int axis, as the standard says (NumPy's unstack is a moveaxis: a tuple of one slips by;
# a softmax over several axes is none in torch or the standard)
ONE_AXIS = {"unstack", "nn.softmax"}
AXES = [0, -1, 1, 2, -3, np.int64(1), np.int32(-2), (0, 1), (0,), (1, 1), 1.0, np.float64(0),
        "0", True, False, np.True_, 2**63, -(2**63) - 1, 2**100]


@pytest.mark.parametrize("axis", AXES, ids=repr)
@pytest.mark.parametrize("name", list(AXIS_FUNCTIONS))
def test_axis_arguments_give_numpys_result_or_error_type(name, axis):
    """A tuple where one axis is taken, a float, a string: ``TypeError`` at the call (``sort``
    used to fail inside with "too many values to unpack"); out of range: ``AxisError``."""
    theirs, ours = AXIS_FUNCTIONS[name]
    t = ml.asarray(M)
    if isinstance(axis, (bool, np.bool_)):
        raises_at_the_call(lambda: ours(t, axis), TypeError)
    elif isinstance(axis, int) and not -(2**63) <= axis < 2**63:
        raises_at_the_call(lambda: ours(t, axis), np.exceptions.AxisError)
    elif name in ONE_AXIS and not isinstance(axis, (int, np.integer)):
        raises_at_the_call(lambda: ours(t, axis), TypeError)
    else:
        check(lambda: theirs(M, axis), lambda: ours(t, axis), tol="ulp")


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sorting_a_0d_tensor_follows_numpy(name, axis):
    """``np.argsort`` of a 0-d array is ``[0]`` (it sorts it as shape ``(1,)``, and so does
    array-api-strict); ``np.sort`` of one raises ``AxisError``."""
    x = np.asarray(1.5)
    check(lambda: getattr(np, name)(x, axis=axis),
          lambda: getattr(ml, name)(ml.asarray(x), axis=axis))
