"""A program is reused only for the structure it was made for, compared by value, never by hash.

CPython's ``hash`` is not injective on what decides a program: ``hash(-1) == hash(-2)``, and ints
wrap modulo 2**61 - 1, so attributes (a convolution gradient's negative padding) and shapes (a
zero-size array with a huge axis) can give two structures the same digests and the same key. The
compile cache, the cut plans and the gradient tapes must tell them apart (LZ-CACHE-008).
Expected values come from NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import minilazy as ml
from minilazy.core.cut import cut, walk
from minilazy.core.dtypes import float32
from minilazy.core.ir import Node, Op, data_leaf
from minilazy.ops.conv import Conv
from minilazy.parts.plans import Plan

WRAP = 2**61 - 1  # CPython hashes ints modulo this prime: hash(3 + WRAP) == hash(3)


def _conv_input_gradient(x: np.ndarray, w: float, c: np.ndarray, pad: tuple[int, int]
                         ) -> np.ndarray:
    """d/dx of sum(conv1d(x, [w], padding=pad) * c): a 1-tap filter scales the padded input."""
    return w * c[pad[0]:pad[0] + x.size]


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=4))
@example([(1, 2), (2, 1)])  # the input gradient pads by (-1, -2), then by (-2, -1): one hash
@example([(3, 4), (4, 3)])
def test_conv_gradients_whose_paddings_hash_alike(pads: list[tuple[int, int]]) -> None:
    x = np.arange(1.0, 7.0)
    for pad in pads:
        c = np.linspace(-1.0, 2.0, x.size + sum(pad))
        g = ml.grad(lambda t, pad=pad, c=c: ml.sum(
            ml.conv(t, ml.asarray([[[1.5]]]), padding=[pad]) * ml.asarray(c[None, None])))(
            ml.asarray(x[None, None]))
        np.testing.assert_array_equal(np.asarray(g)[0, 0], _conv_input_gradient(x, 1.5, c, pad))


@pytest.mark.parametrize("first", [3, 3 + WRAP])
def test_zero_size_shapes_whose_hashes_collide(first: int) -> None:
    for n in (first, 3 + WRAP if first == 3 else 3):  # both orders: one structure, then the other
        t = ml.zeros((0, n), dtype=ml.int8) + 1
        assert np.asarray(t).shape == np.zeros((0, n), np.int8).shape == (0, n)


def test_gradient_tapes_of_shapes_whose_hashes_collide() -> None:
    # the backward pass is taped per forward structure: the second forward must not replay the
    # first one's tape (its gradient would have the first one's shape)
    for n in (3, 3 + WRAP, 3):
        g = ml.grad(lambda t: ml.sum(t * 2.0))(ml.zeros((0, n), dtype=ml.float16))
        assert g.shape == np.asarray(g).shape == (0, n)


# Values CPython hashes alike, and the programs that differ only there.
COLLIDING = st.sampled_from([(-1, -2), (-2, -1), (0, WRAP), (1, 1 + WRAP), (-1, -1 - WRAP),
                             (5, 5 + 2 * WRAP)])


def _conv(pad: int) -> Node:
    x, w = data_leaf(None, (1, 1, 8), float32), data_leaf(None, (1, 1, 1), float32)
    return Node(Op.CONV, (x, w), Conv((1,), ((pad, 0),), (1,), (1,), 1, 1), (1, 1, 8), float32)


def _reshaped(n: int) -> Node:
    x = data_leaf(None, (0, 4), float32)
    return Node(Op.RESHAPE, (x,), ml.core.attrs.ToShape((0, n)), (0, n), float32)


@given(COLLIDING, st.sampled_from([_conv, _reshaped]))
def test_plans_and_structures_compare_by_value(pair: tuple[int, int], make: object) -> None:
    assert callable(make)
    a, b = make(pair[0]), make(pair[1])
    assert a.digest == b.digest  # the premise: the hashes collide
    device = ml.default_device()
    ca, cb = walk([a], device), walk([b], device)
    assert ca.key == cb.key and ca.structure != cb.structure
    assert Plan(ca).follow([b], device) is None  # a plan never takes the other structure
    for _ in range(3):  # learned, planned, followed: cut always gives b's own structure
        cut([a], device)
        assert cut([b], device).structure == cb.structure


@pytest.mark.parametrize("special", [False, True])
def test_signed_zero_and_nan_scalars_keep_their_bits(special: bool) -> None:
    # -0.0 == 0.0 and hash alike: a baked-in 0 (special_scalars) must never stand for -0.0
    with ml.policy(special_scalars=special):
        for v in (0.0, -0.0, float("nan"), 0.0, -0.0):
            got = np.asarray(ml.full((2,), v, dtype=ml.float32) * 1.0)
            want = np.full((2,), v, np.float32) * np.float32(1.0)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
