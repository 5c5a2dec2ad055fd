"""``ml.einsum`` against ``np.einsum``: drawn subscripts, operands and outputs; NumPy's errors.

Subscripts are drawn as NumPy reads them: 1 to 3 operands over a handful of letters (a letter
may repeat in one operand: a diagonal), explicit or implicit outputs, an ellipsis on some
operands with broadcast leading axes. Values, shapes and dtypes are NumPy's; a pair of operands
records one ``matmul`` (the contraction), checked in the graph.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minilazy as ml
from helpers import raises_at_the_call

LETTERS = "abcdE"


@st.composite
def problems(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    size = {c: draw(st.integers(1, 3)) for c in LETTERS}
    count = draw(st.integers(1, 3))
    terms = [draw(st.lists(st.sampled_from(LETTERS), max_size=3)) for _ in range(count)]
    ellipsis = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    lead = draw(st.lists(st.integers(1, 3), max_size=2))
    arrays, texts = [], []
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int32]))
    for term, dots in zip(terms, ellipsis):
        mine = lead[draw(st.integers(0, len(lead))):] if dots else []
        mine = [n if draw(st.booleans()) else 1 for n in mine]  # broadcast: some axes length 1
        shape = (*mine, *(size[c] for c in term))
        arrays.append(np.asarray(draw(st.lists(st.integers(-3, 3), min_size=int(np.prod(shape)),
                                               max_size=int(np.prod(shape))))).astype(dtype)
                      .reshape(shape))
        texts.append(("..." if dots else "") + "".join(term))
    text = ",".join(texts)
    if draw(st.booleans()):  # explicit output: some of the letters, each once, in any order
        used = sorted(set("".join(texts)) - {"."})
        out = draw(st.permutations(used))[:draw(st.integers(0, len(used)))]
        dots = "..." if any(ellipsis) and draw(st.booleans()) else ""
        if any(ellipsis) and not dots:
            dots = "..."  # NumPy needs the ellipsis in an explicit output where inputs have it
        text += "->" + dots + "".join(out)
    return text, arrays


@settings(max_examples=60, deadline=None)
@given(problem=problems())
def test_einsum_is_numpys(problem):
    text, arrays = problem
    want = np.einsum(text, *arrays)
    got = ml.einsum(text, *[ml.asarray(a) for a in arrays]).numpy()
    assert (got.shape, got.dtype) == (want.shape, want.dtype), text
    np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=text)


def test_a_pair_is_one_contraction():
    a, b = ml.ones((4, 2, 3)), ml.ones((4, 3, 5))
    g = ml.graph(ml.einsum("bij,bjk->bik", a, b))
    assert sum(n.op is ml.Op.MATMUL for n in g.cut.order) == 1
    assert not any(n.op in (ml.Op.MUL, ml.Op.SUM) for n in g.cut.order)  # no broadcast-multiply-sum


@pytest.mark.parametrize(("text", "shapes", "error"), [
    ("ij,jk->ik", [(2, 3), (4, 5)], ValueError),  # j: 3 against 4
    ("ij->ik", [(2, 3)], ValueError),  # k names no input axis
    ("ij->ii", [(2, 3)], ValueError),  # an output letter twice
    ("ijk", [(2, 3)], ValueError),  # three letters for two axes
    ("ij,jk", [(2, 3)], ValueError),  # two terms, one operand
    ("i1", [(2, 3)], ValueError),  # not a letter
    ("ii", [(2, 3)], ValueError),  # a diagonal of unequal axes
])
def test_bad_subscripts_raise_numpys_error_at_the_call(text, shapes, error):
    arrays = [np.ones(s) for s in shapes]
    with pytest.raises(error):
        np.einsum(text, *arrays)
    raises_at_the_call(lambda: ml.einsum(text, *[ml.asarray(a) for a in arrays]), error)


def test_einsum_has_a_gradient():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    ga, gb = ml.grad(lambda x, y: ml.sum(ml.einsum("ij,jk->ik", x, y)), argnums=(0, 1))(
        ml.asarray(a), ml.asarray(b))
    np.testing.assert_allclose(ga.numpy(), np.ones((2, 4)) @ b.T)
    np.testing.assert_allclose(gb.numpy(), a.T @ np.ones((2, 4)))
