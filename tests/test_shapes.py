"""Shape functions: lazy result == eager NumPy, exactly (they move values, never round them).

reshape, permute_dims, .T/.mT/matrix_transpose, expand_dims, squeeze, broadcast_to, concat,
stack, flip and take, on every dtype (NaN and inf included), with the result's shape and dtype
(concat and stack promote mixed dtypes like NumPy 2) equal to NumPy's. Bad arguments raise at
the call, before anything runs, with the shapes in the message.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from helpers import check, names_shape, numpy_or_error, raises_at_the_call
from strategies import DTYPES, SHAPES, arrays

# Every example compiles a new program by design: minilazy's warning about that is expected;
# so are overflow warnings where a value overflows its dtype, as NumPy warns on the same inputs.
pytestmark = [pytest.mark.filterwarnings("ignore::minilazy.RecompileWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

INDEX_DTYPES = [np.dtype(n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32", "uint64")]


# -- running both sides (as in test_reductions) ------------------------------------------------

def lazy(x: np.ndarray, device) -> ml.Tensor:
    return ml.asarray(x, device=device)



def any_array(draw, shape=SHAPES) -> np.ndarray:
    return draw(arrays(draw(st.sampled_from(DTYPES)), shape))


def maybe_negative(draw, axis: int, ndim: int) -> int:
    return axis - ndim if draw(st.booleans()) else axis


# -- reshape -----------------------------------------------------------------------------------

def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def reshape_target(draw, shape: tuple[int, ...]):
    """A shape of the same size (its prime factors dealt out, with 1s), maybe one -1, maybe an
    int. Zero sizes get any shape with a 0, where a -1 is ambiguous and NumPy raises.
    """
    size = math.prod(shape)
    if size == 0:
        dims = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(lambda d: 0 in d))
    else:
        k = draw(st.integers(1 if size > 1 else 0, 4))
        dims = [1] * k
        for f in _prime_factors(size):
            dims[draw(st.integers(0, k - 1))] *= f
    if dims and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    if len(dims) == 1 and draw(st.booleans()):
        return dims[0]
    return tuple(dims)


@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=20)
@given(data=st.data())
def test_reshape_matches_numpy(device, data):
    x = any_array(data.draw)
    shape = data.draw(reshape_target(x.shape))
    check(lambda: np.reshape(x, shape), lambda: ml.reshape(lazy(x, device), shape))


# -- transposes --------------------------------------------------------------------------------

@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=20)
@given(data=st.data())
def test_permute_dims_and_transposes_match_numpy(device, data):
    x = any_array(data.draw)
    form = data.draw(st.sampled_from(["permute_dims", ".T", ".mT", "matrix_transpose"]))
    if form == "permute_dims":
        perm = tuple(maybe_negative(data.draw, a, x.ndim)
                     for a in data.draw(st.permutations(range(x.ndim))))
        check(lambda: np.permute_dims(x, perm), lambda: ml.permute_dims(lazy(x, device), perm))
    elif form == ".T":
        check(lambda: x.T, lambda: lazy(x, device).T)
    elif form == ".mT":  # NumPy: ValueError below 2-D; so must minilazy
        check(lambda: x.mT, lambda: lazy(x, device).mT)
    else:
        check(lambda: np.matrix_transpose(x), lambda: ml.matrix_transpose(lazy(x, device)))


# -- expand_dims, squeeze, broadcast_to --------------------------------------------------------

@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=15)
@given(data=st.data())
def test_expand_dims_matches_numpy(device, data):
    x = any_array(data.draw)
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim))
    check(lambda: np.expand_dims(x, axis), lambda: ml.expand_dims(lazy(x, device), axis=axis))


@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=15)
@given(data=st.data())
def test_squeeze_matches_numpy(device, data):
    """``axis`` None, or some of the length-1 axes (an int or a tuple, maybe negative)."""
    x = any_array(data.draw, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=2))
    ones = [a for a, n in enumerate(x.shape) if n == 1]
    picked = [maybe_negative(data.draw, a, x.ndim)
              for a in data.draw(st.lists(st.sampled_from(ones), unique=True)
                                 if ones else st.just([]))]
    axis = data.draw(st.sampled_from(
        [None, tuple(picked)] + ([picked[0]] if len(picked) == 1 else [])))
    check(lambda: np.squeeze(x, axis), lambda: ml.squeeze(lazy(x, device), axis=axis))


@st.composite
def broadcast_target(draw, shape: tuple[int, ...]):
    """A shape ``shape`` broadcasts to: new leading axes, and length-1 axes stretched."""
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    return (*lead, *(draw(st.integers(0, 3)) if n == 1 else n for n in shape))


@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=15)
@given(data=st.data())
def test_broadcast_to_matches_numpy(device, data):
    x = any_array(data.draw)
    shape = data.draw(broadcast_target(x.shape))
    check(lambda: np.broadcast_to(x, shape), lambda: ml.broadcast_to(lazy(x, device), shape))


# -- concat, stack -----------------------------------------------------------------------------

@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=20)
@given(data=st.data())
def test_concat_matches_numpy_with_mixed_dtypes(device, data):
    """1-3 tensors of any dtypes (promoted as NumPy 2), equal shapes off ``axis``.

    ``axis=None`` concatenates the flattened tensors, so any shapes go; 0-d ones are left to
    ``test_concat_axis_none_flattens_zero_d_tensors`` below.
    """
    n = data.draw(st.integers(1, 3))
    base = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    if data.draw(st.booleans()):
        axis = None
        shapes = [data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
                  for _ in range(n)]
    else:
        axis = data.draw(st.integers(-len(base), len(base) - 1))
        shapes = [base[:axis % len(base)] + (data.draw(st.integers(0, 3)),)
                  + base[axis % len(base) + 1:] for _ in range(n)]
    xs = [data.draw(arrays(data.draw(st.sampled_from(DTYPES)), s)) for s in shapes]
    check(lambda: np.concat(xs, axis=axis),
          lambda: ml.concat([lazy(x, device) for x in xs], axis=axis))


@pytest.mark.spec("LZ-NUM-012")
def test_concat_axis_none_flattens_zero_d_tensors(device):
    xs = [np.array(1.5, np.float32), np.array([2, 3], np.int8), np.array(4.0, np.float32)]
    check(lambda: np.concat(xs, axis=None),
          lambda: ml.concat([lazy(x, device) for x in xs], axis=None))


@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=20)
@given(data=st.data())
def test_stack_matches_numpy_with_mixed_dtypes(device, data):
    n = data.draw(st.integers(1, 3))
    shape = data.draw(SHAPES)
    xs = [data.draw(arrays(data.draw(st.sampled_from(DTYPES)), shape)) for _ in range(n)]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check(lambda: np.stack(xs, axis=axis),
          lambda: ml.stack([lazy(x, device) for x in xs], axis=axis))


# -- flip, take --------------------------------------------------------------------------------

@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=15)
@given(data=st.data())
def test_flip_matches_numpy(device, data):
    x = any_array(data.draw, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    one = st.integers(-x.ndim, x.ndim - 1)
    axis = data.draw(st.one_of(st.none(), one, st.lists(
        one, unique_by=lambda a: a % x.ndim, max_size=x.ndim).map(tuple)))
    check(lambda: np.flip(x, axis=axis), lambda: ml.flip(lazy(x, device), axis=axis))


@st.composite
def in_range_indices(draw, n: int, max_dims: int = 2) -> np.ndarray:
    """An integer index array (any integer dtype) with values in [-n, n), negatives allowed
    where the dtype has them; empty when n == 0 (no index is in range then).
    """
    dtype = draw(st.sampled_from(INDEX_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=4)
                 .filter(lambda s: n or 0 in s))
    low = -n if dtype.kind == "i" else 0
    return draw(hnp.arrays(dtype, shape, elements=st.integers(low, max(n - 1, 0))))


@pytest.mark.spec("LZ-NUM-012")
@settings(max_examples=20)
@given(data=st.data())
def test_take_matches_numpy(device, data):
    """In-range indices (out-of-range ones are clamped, implementation-defined) as a tensor, a
    NumPy array or a list; 0-d to 2-d (np.take's output shape); ``axis=None`` flattens first.
    """
    x = any_array(data.draw, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    n = x.size if axis is None else x.shape[axis]
    idx = data.draw(in_range_indices(n))
    form = data.draw(st.sampled_from(["tensor", "ndarray"] + (["list"] if idx.size else [])))

    def run():
        i = lazy(idx, device) if form == "tensor" else idx if form == "ndarray" else idx.tolist()
        return ml.take(lazy(x, device), i, axis=axis)

    check(lambda: np.take(x, idx, axis=axis), run)


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


@pytest.mark.spec("LZ-ERR-001")
@pytest.mark.parametrize(("np_fn", "ml_fn", "shapes"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_shape_arguments_raise_at_the_call(np_fn, ml_fn, shapes, device):
    """NumPy rejects each of these; minilazy must too, with the same kind of exception, before
    anything runs, and with the shapes involved in the message."""
    _, err = numpy_or_error(np_fn)
    assert err, "NumPy accepted it"
    msg = raises_at_the_call(lambda: ml_fn(device), err)
    for shape in shapes:
        assert names_shape(msg, shape), f"{shape} not in {msg!r}"
