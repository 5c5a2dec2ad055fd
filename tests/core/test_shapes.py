"""Shape functions, engine side: minilazy's own spellings and messages.

The rule-tagged behaviour (LZ-NUM-012, LZ-NUM-013 for take, LZ-ERR-001) is checked once, by the
conformance suite (``suite/test_shapes.py``, ``suite/test_errors.py``), on minilazy by default.
Here: the Tensor attributes ``.T`` and ``.mT`` (not in the adapter protocol), ``take`` with
indices given as host data (NumPy arrays, lists), and minilazy's error messages.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import check, names_shape, numpy_or_error, raises_at_the_call
from minilazy.conformance.suite.test_shapes import take_indices
from strategies import DTYPES, SHAPES, arrays

# Every example compiles a new program by design: minilazy's warning about that is expected;
# so are overflow warnings where a value overflows its dtype, as NumPy warns on the same inputs.
pytestmark = [pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

INDEX_DTYPES = [d for d in DTYPES if d.kind in "iu"]  # the oracle's dtypes NumPy indexes with


def lazy(x: np.ndarray, device) -> ml.Tensor:
    return ml.asarray(x, device=device)


def any_array(draw, shape=SHAPES) -> np.ndarray:
    return draw(arrays(draw(st.sampled_from(DTYPES)), shape))


@settings(max_examples=10)
@given(data=st.data())
def test_transpose_attributes_match_numpy(device, data):
    """``t.T`` and ``t.mT`` are NumPy's ``x.T`` and ``x.mT`` (ValueError below 2-D, at the
    call): Tensor attributes, which the suite's protocol does not reach."""
    x = any_array(data.draw)
    if data.draw(st.booleans()):
        check(lambda: x.T, lambda: lazy(x, device).T)
    else:
        check(lambda: x.mT, lambda: lazy(x, device).mT)


@given(data=st.data())
def test_numpys_extensions_of_the_standard_match_numpy(device, data):
    """What NumPy accepts beyond the Array API, minilazy does too, with NumPy's values and
    errors: negative ``permute_dims`` axes, ``squeeze(axis=None)``, a ``-1`` in a reshape of an
    empty array, and ``concat``/``stack`` of any mix of dtypes (the suite stays in the standard's
    domain, where other libraries are held to it)."""
    x = any_array(data.draw)
    t, ndim = lazy(x, device), x.ndim
    form = data.draw(st.sampled_from(["permute", "squeeze", "reshape", "concat", "stack"]))
    if form == "permute":
        perm = tuple(a - ndim * data.draw(st.booleans()) for a in data.draw(
            st.permutations(range(ndim))))
        check(lambda: np.permute_dims(x, perm), lambda: ml.permute_dims(t, perm))
    elif form == "squeeze":
        check(lambda: np.squeeze(x, axis=None), lambda: ml.squeeze(t, axis=None))
    elif form == "reshape":
        y = np.zeros((0, *x.shape), x.dtype)
        shape = data.draw(st.sampled_from([(-1,), (0, -1), (-1, 0), (*x.shape, -1, 0)]))
        check(lambda: np.reshape(y, shape), lambda: ml.reshape(lazy(y, device), shape))
    else:
        others = [data.draw(arrays(data.draw(st.sampled_from(DTYPES)), x.shape))
                  for _ in range(data.draw(st.integers(1, 2)))]
        fn = "stack" if form == "stack" else "concat"
        axis = 0 if fn == "stack" or ndim else None
        check(lambda: getattr(np, fn)([x, *others], axis=axis),
              lambda: getattr(ml, fn)([t, *(lazy(o, device) for o in others)], axis=axis))


@settings(max_examples=10)
@given(data=st.data())
def test_take_of_host_indices_matches_numpy(device, data):
    """``ml.take`` also takes its indices as a NumPy array or a list (host data, which the
    suite's protocol passes as tensors only), of any integer dtype and 0-d to 2-d."""
    x = any_array(data.draw, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    idx = data.draw(take_indices(x.size if axis is None else x.shape[axis], INDEX_DTYPES))
    form = data.draw(st.sampled_from(["ndarray"] + (["list"] if idx.size else [])))
    i = idx if form == "ndarray" else idx.tolist()
    check(lambda: np.take(x, idx, axis=axis), lambda: ml.take(lazy(x, device), i, axis=axis))


# -- errors at the call ------------------------------------------------------------------------

def _f32(shape) -> np.ndarray:
    return np.zeros(shape, np.float32)


# (name, NumPy, minilazy, shapes the message must show)
BAD = [
    ("reshape-size", lambda: np.reshape(_f32((2, 3)), (4,)),
     lambda d: ml.reshape(ml.zeros((2, 3), device=d), (4,)), [(2, 3), (4,)]),
    ("reshape-inferred", lambda: np.reshape(_f32((2, 3)), (4, -1)),
     lambda d: ml.reshape(ml.zeros((2, 3), device=d), (4, -1)), [(2, 3), (4, -1)]),
    ("reshape-two-unknowns", lambda: np.reshape(_f32((2, 3)), (-1, -1)),
     lambda d: ml.reshape(ml.zeros((2, 3), device=d), (-1, -1)), [(-1, -1)]),
    ("reshape-negative", lambda: np.reshape(_f32((2, 3)), (-2, -3)),
     lambda d: ml.reshape(ml.zeros((2, 3), device=d), (-2, -3)), [(-2, -3)]),
    ("permute-repeated", lambda: np.permute_dims(_f32((2, 3)), (0, 0)),
     lambda d: ml.permute_dims(ml.zeros((2, 3), device=d), (0, 0)), [(2, 3)]),
    ("permute-short", lambda: np.permute_dims(_f32((2, 3, 4)), (1, 0)),
     lambda d: ml.permute_dims(ml.zeros((2, 3, 4), device=d), (1, 0)), [(2, 3, 4)]),
    ("permute-out-of-range", lambda: np.permute_dims(_f32((2, 3)), (0, 2)),
     lambda d: ml.permute_dims(ml.zeros((2, 3), device=d), (0, 2)), [(2, 3)]),
    ("mT-of-1d", lambda: _f32((3,)).mT, lambda d: ml.zeros((3,), device=d).mT, [(3,)]),
    ("expand_dims-axis", lambda: np.expand_dims(_f32((2, 3)), 3),
     lambda d: ml.expand_dims(ml.zeros((2, 3), device=d), axis=3), []),
    ("squeeze-not-1", lambda: np.squeeze(_f32((2, 1)), 0),
     lambda d: ml.squeeze(ml.zeros((2, 1), device=d), axis=0), [(2, 1)]),
    ("squeeze-axis", lambda: np.squeeze(_f32((2, 1)), 2),
     lambda d: ml.squeeze(ml.zeros((2, 1), device=d), axis=2), []),
    ("broadcast_to", lambda: np.broadcast_to(_f32((2, 3)), (3, 3)),
     lambda d: ml.broadcast_to(ml.zeros((2, 3), device=d), (3, 3)), [(2, 3), (3, 3)]),
    ("broadcast_to-fewer-dims", lambda: np.broadcast_to(_f32((2, 3)), (3,)),
     lambda d: ml.broadcast_to(ml.zeros((2, 3), device=d), (3,)), [(2, 3), (3,)]),
    ("concat-off-axis", lambda: np.concat([_f32((2, 3)), _f32((2, 4))], axis=0),
     lambda d: ml.concat([ml.zeros((2, 3), device=d), ml.zeros((2, 4), device=d)], axis=0),
     [(2, 3), (2, 4)]),
    ("concat-ndim", lambda: np.concat([_f32((2, 3)), _f32((2,))], axis=0),
     lambda d: ml.concat([ml.zeros((2, 3), device=d), ml.zeros((2,), device=d)], axis=0),
     [(2, 3), (2,)]),
    ("concat-axis", lambda: np.concat([_f32((2, 3)), _f32((2, 3))], axis=2),
     lambda d: ml.concat([ml.zeros((2, 3), device=d), ml.zeros((2, 3), device=d)], axis=2), []),
    ("concat-0d", lambda: np.concat([_f32(()), _f32(())], axis=0),
     lambda d: ml.concat([ml.zeros((), device=d), ml.zeros((), device=d)], axis=0), []),
    ("stack-shapes", lambda: np.stack([_f32((2, 3)), _f32((3, 2))]),
     lambda d: ml.stack([ml.zeros((2, 3), device=d), ml.zeros((3, 2), device=d)]),
     [(2, 3), (3, 2)]),
    ("stack-axis", lambda: np.stack([_f32((2, 3)), _f32((2, 3))], axis=3),
     lambda d: ml.stack([ml.zeros((2, 3), device=d), ml.zeros((2, 3), device=d)], axis=3), []),
    ("flip-axis", lambda: np.flip(_f32((2, 3)), 2),
     lambda d: ml.flip(ml.zeros((2, 3), device=d), axis=2), []),
    ("flip-repeated", lambda: np.flip(_f32((2, 3)), (0, 0)),
     lambda d: ml.flip(ml.zeros((2, 3), device=d), axis=(0, 0)), []),
    ("take-axis", lambda: np.take(_f32((2, 3)), np.array([0]), axis=2),
     lambda d: ml.take(ml.zeros((2, 3), device=d), np.array([0]), axis=2), []),
    ("take-float-indices", lambda: np.take(_f32((2, 3)), np.array([0.5]), axis=0),
     lambda d: ml.take(ml.zeros((2, 3), device=d), np.array([0.5]), axis=0), []),
]


@pytest.mark.parametrize(("np_fn", "ml_fn", "shapes"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_shape_arguments_raise_numpys_exception_naming_the_shapes(np_fn, ml_fn, shapes,
                                                                      device):
    """minilazy's own errors for bad shape arguments (LZ-ERR-001 itself is the suite's): NumPy's
    exception class, before anything runs (no barrier either), with every shape involved -- the
    requested one included -- written as minilazy writes shapes."""
    _, err = numpy_or_error(np_fn)
    assert err, "NumPy accepted it"
    msg = raises_at_the_call(lambda: ml_fn(device), err)
    for shape in shapes:
        assert names_shape(msg, shape), f"{shape} not in {msg!r}"
