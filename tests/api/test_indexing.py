"""Indexing, engine side: host keys and values, len/iteration, and minilazy's messages.

The rule-tagged behaviour (LZ-NUM-013 getitem, LZ-NUM-014 setitem and in-place arithmetic,
LZ-ERR-001 bad indices) is checked once, by the conformance suite (``suite/test_indexing.py``,
``suite/test_shapes.py``, ``suite/test_errors.py``), on minilazy by default, with its keys'
index arrays as tensors or lists. Here: what the adapter protocol does not pass -- index arrays
as NumPy arrays, NumPy integer scalars as ints, values and operands as NumPy arrays -- and the
Tensor's ``len``/iteration, and minilazy's own error messages.
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
from minilazy.conformance.oracle.keys import mixed_index, numpy_key, realise, unique_array_index
from minilazy.conformance.suite.test_in_place import IN_PLACE
from minilazy.conformance.suite.test_indexing import fits_into
from strategies import DTYPES, SHAPES, arrays

# Every example compiles a new program by design: minilazy's warning about that is expected;
# so are overflow warnings where a value overflows its dtype, as NumPy warns on the same inputs.
pytestmark = [pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

INDEX_DTYPES = [d for d in DTYPES if d.kind in "iu"]  # the oracle's dtypes NumPy indexes with
HOST_INTS = (int, np.int64, np.intp, np.int8)  # how an int of a key may come
F64, F16 = np.dtype(np.float64), np.dtype(np.float16)


def lazy(x, device) -> ml.Tensor:
    return ml.asarray(x, device=device)


def any_array(draw, shape=SHAPES) -> np.ndarray:
    return draw(arrays(draw(st.sampled_from(DTYPES)), shape))


def host_key(items, device):
    """The key minilazy gets: index arrays as drawn (tensors on ``device``, NumPy, lists)."""
    return realise(items, lambda a: lazy(a, device))


@settings(max_examples=15)
@given(data=st.data())
def test_host_index_arrays_and_numpy_ints_in_keys(device, data):
    """``x[key]`` and ``x[key] = v`` with index arrays as NumPy arrays (host data, never a
    tensor: the suite passes tensors and lists) and ints as NumPy integer scalars; ``v`` and
    in-place operands as NumPy arrays too. Values as NumPy's."""
    x = any_array(data.draw, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    forms = ("ndarray", "tensor", "list")
    what = data.draw(st.sampled_from(["getitem", "setitem", "inplace"]))
    if what == "getitem":
        items = data.draw(mixed_index(x.shape, INDEX_DTYPES, forms, HOST_INTS))
        check(lambda: x[numpy_key(items)], lambda: lazy(x, device)[host_key(items, device)])
        return
    if what == "inplace":
        fn = IN_PLACE[data.draw(st.sampled_from(["add", "multiply", "bitwise_xor"]))]
        y = data.draw(arrays(x.dtype, hnp.broadcastable_shapes(x.shape, min_side=0, max_side=4)))
        check(lambda: fn(x.copy(), y), lambda: fn(lazy(x, device), y))
        return
    items = data.draw(unique_array_index(x.shape, INDEX_DTYPES, forms, HOST_INTS))
    one_element = len(items) == x.ndim and all(i[0] == "int" for i in items)
    v = data.draw(arrays(x.dtype, () if one_element else fits_into(data.draw,
                                                                  x[numpy_key(items)].shape)))

    def expected():
        out = x.copy()
        out[numpy_key(items)] = v
        return out

    def run():
        t = lazy(x, device)
        t[host_key(items, device)] = v
        return t

    check(expected, run)


def test_setitem_of_a_float64_host_array_into_float16_rounds_once(device):
    """A host float64 value is converted to float16 in one rounding (not via float32): the
    host path of ``t[key] = v`` (the suite checks a float64 tensor)."""
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


@settings(max_examples=5)
@given(data=st.data())
def test_len_and_iteration_go_over_the_first_axis(device, data):
    """``len(t)`` and ``list(t)`` as NumPy's: one ``t[i]`` per row (0-d tensors: TypeError).
    Tensor methods, which the suite's protocol does not reach."""
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


@settings(max_examples=10)
@given(data=st.data())
def test_int_indices_are_parameters_one_program_serves_every_value(device, data):
    """``x[i]``, ``x[i, j]`` and ``x[i] = v`` for changing Python ints (negative too, and NumPy
    ints) compile once: an int is a parameter of the program, not part of its key."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    t = lazy(x, device)
    ints = data.draw(st.integers(1, len(shape)))  # how many leading axes an int picks

    def key():
        return tuple(data.draw(st.sampled_from(HOST_INTS))(data.draw(st.integers(-n, n - 1)))
                     for n in shape[:ints])

    keys = [key() for _ in range(4)]
    np.testing.assert_array_equal(t[keys[0]].numpy(), x[keys[0]])
    y = lazy(np.zeros(shape, np.float32), device)  # data: each write, one program alike
    y[keys[0]] = 1.0
    y.numpy()
    compiles = ml.metrics().compiles
    for k in keys[1:]:
        np.testing.assert_array_equal(t[k].numpy(), x[k])
        y[k] = 1.0
        y.numpy()
    assert ml.metrics().compiles == compiles
    want = np.zeros(shape, np.float32)
    for k in keys:
        want[k] = 1.0
    np.testing.assert_array_equal(y.numpy(), want)


@settings(max_examples=10)
@given(data=st.data())
def test_moving_windows_are_parameters_one_program_serves_every_start(device, data):
    """``x[i:i+k]`` (with other axes indexed too), ``x[i:i+k] = v``, ``+=`` and the gradient
    through the window, for changing starts ``i`` and a fixed ``k``, compile once each and equal
    NumPy's: the start is a parameter of the program, as an int index is."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5))
    axis = data.draw(st.integers(0, len(shape) - 1))
    size = data.draw(st.integers(1, shape[axis] - 1))
    whole = (slice(None),) * axis  # the axes before the window: whole, an int, new, `...`
    lead = data.draw(st.sampled_from([whole, (None, *whole), (0, *whole[1:]) if axis else whole,
                                      (Ellipsis,) if axis == len(shape) - 1 else whole]))
    rows = ([0, 1],) if axis + 1 < len(shape) and data.draw(st.booleans()) else ()
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    t = lazy(x, device)
    starts = data.draw(st.lists(st.integers(0, shape[axis] - size), min_size=3, max_size=4))

    def key(i):
        return (*lead, slice(i, i + size), *rows)

    y = lazy(np.zeros(shape, np.float32), device)

    def run(i):
        np.testing.assert_array_equal(t[key(i)].numpy(), x[key(i)])
        y[key(i)] += 1.0
        y.numpy()
        g = ml.grad(lambda a: ml.sum(ml.sin(a[key(i)])))(t)
        want = np.zeros(shape, np.float32)
        np.add.at(want, key(i), np.cos(x[key(i)]))
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-6)

    run(starts[0])
    compiles = ml.metrics().compiles
    for i in starts[1:]:
        run(i)
    assert ml.metrics().compiles == compiles
    want = np.zeros(shape, np.float32)
    for i in starts:
        want[key(i)] += 1.0
    np.testing.assert_array_equal(y.numpy(), want)


# -- errors at the call ------------------------------------------------------------------------

def test_a_key_structure_seen_before_still_checks_its_ints_as_numpy(device):
    # Keys of ints, slices, None and ... are worked out once per structure (a lean path); the
    # ints of a later key of that structure are still checked, with NumPy's words.
    x = lazy(np.arange(24.0).reshape(2, 3, 4), device)
    for key in [(0, ..., 1), (None, 1, slice(0, 2), -1)]:
        np.testing.assert_array_equal(x[key].numpy(), np.arange(24.0).reshape(2, 3, 4)[key])
    for key in [(0, ..., -5), (2, ..., 0), (-3, ..., 3), (None, 2, slice(0, 2), 0),
                (None, 0, slice(0, 2), 4)]:
        with pytest.raises(IndexError) as got:
            x[key]
        with pytest.raises(IndexError) as want:
            np.empty((2, 3, 4))[key]
        assert str(got.value) == str(want.value)


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


@pytest.mark.parametrize(("fns", "words", "shapes"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_indices_and_misfit_values_raise_numpys_exception(fns, words, shapes, device):
    """minilazy's own errors (LZ-ERR-001 itself is the suite's): NumPy's exception class,
    before anything runs (no barrier either), naming the offending index and its axis, or the
    shapes as minilazy writes them."""
    np_fn, ml_fn = fns
    _, err = numpy_or_error(np_fn)
    assert err, "NumPy accepted it"
    msg = raises_at_the_call(lambda: ml_fn(device), err)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    for shape in shapes:
        assert names_shape(msg, shape), f"{shape} not in {msg!r}"
