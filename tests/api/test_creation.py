"""minilazy's own side of creation functions: argument forms, devices, ``empty``, copies, errors.

The values, shapes and dtypes of every creation function of the spec, and that bad arguments
raise at the call (rules LZ-NUM-015, LZ-ERR-001), are checked by the conformance suite
(``suite/test_creation.py`` and ``suite/test_shapes.py``). Here: what the suite's adapter
protocol cannot express -- shapes given as lists, bare ints or NumPy ints, results on the device
asked for (or the model's), ``empty``, ``asarray`` of NumPy arrays and of tensors without a copy,
and the exception types and wording of minilazy's messages.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minilazy as ml
from helpers import check, names_shape, numpy_or_error, raises_at_the_call, value
from strategies import DTYPES, SHAPES, arrays

# Every example compiles a new program by design: minilazy's warning about that is expected.
pytestmark = pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning")

F64 = np.dtype(np.float64)


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


@settings(max_examples=20)
@given(data=st.data())
def test_shapes_in_every_form_on_the_device_asked_for(device, data):
    """``zeros``, ``ones`` and ``full`` take shapes as tuples, lists, ints or NumPy ints (the
    adapter protocol passes tuples only), and put the result on ``device``."""
    name = data.draw(st.sampled_from(["zeros", "ones", "full"]))
    shape, dtype = shape_arg(data.draw), dtype_or_none(data.draw)
    fill = (7,) if name == "full" else ()  # fits every dtype (True, for bool)
    check(lambda: getattr(np, name)(shape, *fill, dtype=dtype),
          lambda: getattr(ml, name)(shape, *fill, dtype=dtype, device=device), device)


@settings(max_examples=10)
@given(data=st.data())
def test_empty_has_numpys_shape_and_dtype(device, data):
    """``empty`` and ``empty_like`` (not in the spec's registry): only the shape and dtype are
    defined."""
    shape, dtype = shape_arg(data.draw), dtype_or_none(data.draw)
    got = value(lambda: ml.empty(shape, dtype=dtype, device=device), device)
    want = np.empty(shape, dtype=dtype)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), SHAPES))
    got = value(lambda: ml.empty_like(ml.asarray(x, device=device), dtype=dtype), device)
    want = np.empty_like(x, dtype=dtype)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "full_like"])
def test_like_forms_are_made_on_the_models_device(name, device):
    """Shape, dtype and device of the model tensor: the device is not the default one's."""
    model = ml.asarray(np.arange(6, dtype=np.int16).reshape(2, 3), device=device)
    fill = (3,) if name == "full_like" else ()
    check(lambda: getattr(np, name)(np.zeros((2, 3), np.int16), *fill),
          lambda: getattr(ml, name)(model, *fill), device)


@settings(max_examples=20)
@given(data=st.data())
def test_asarray_of_numpy_arrays_converts_like_numpy(device, data):
    """``ml.asarray(ndarray, dtype=...)``, the conversion on the host (the suite's adapters pass
    NumPy arrays through ``from_numpy``): NumPy's conversion, within the `cast` domain."""
    x = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), SHAPES))
    dtype = dtype_or_none(data.draw, [d for d in DTYPES if np.can_cast(x.dtype, d, "same_kind")
                                      and not (x.dtype == F64 and d == np.float16)])
    check(lambda: np.asarray(x, dtype=dtype),
          lambda: ml.asarray(x, dtype=dtype, device=device), device)


def test_asarray_of_a_tensor_copies_only_when_asked(device):
    """The same ``Tensor`` object back, unless ``copy=True``."""
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


@pytest.mark.parametrize(("np_fn", "ml_fn", "shapes"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_creation_arguments_raise_numpys_error_naming_the_shape(np_fn, ml_fn, shapes,
                                                                    device):
    """minilazy raises NumPy's exception class, its message naming a negative shape; also for
    argument forms the protocol does not pass (a bare int shape)."""
    _, err = numpy_or_error(np_fn)
    assert err, "NumPy accepted it"
    msg = raises_at_the_call(lambda: ml_fn(device), err)
    for shape in shapes:
        assert names_shape(msg, shape), f"{shape} not in {msg!r}"


def test_arange_with_a_zero_step_names_the_step(device):
    """NumPy raises ZeroDivisionError; minilazy that, or a ValueError naming the step."""
    with pytest.raises(ZeroDivisionError):
        np.arange(0, 5, 0)
    msg = raises_at_the_call(lambda: ml.arange(0, 5, 0, device=device),
                             (ZeroDivisionError, ValueError))
    assert "step" in msg or "zero" in msg, msg
