"""``einsum``: NumPy's index notation, recorded as one contraction per pair of operands.

Beside ``ml.linalg``, as ``ml.einsum`` (NumPy's name; the Array API has no einsum). A subscript
string such as ``"bij,bjk->bik"`` is read once, then each operand in turn is contracted with the
result so far: the letters both share and still need are *batch* axes, those both share and
need no more are *contracted*, the rest are *free*. Each side is permuted and reshaped to
``(batch..., free, contracted)`` so that the pair becomes a single ``matmul`` (one XLA
``dot_general``; the permutes and reshapes are layout, which XLA folds into it). A letter twice
in one operand takes a diagonal; a letter in one operand only, and not in the output, is summed
first. Never imports jax.
"""

from __future__ import annotations

import math

from minilazy.api.creation import tensors
from minilazy.api.elementwise import astype
from minilazy.api.products import matmul
from minilazy.api.reductions import sum as reduce_sum
from minilazy.api.shaping import permute_dims, reshape
from minilazy.api.tensor import Tensor, TensorLike
from minilazy.core import dtypes
from minilazy.linalg import diagonal

# The letters "..." stands for, right-aligned: characters no subscript string can contain.
_ELLIPSIS = "".join(chr(0x3B1 + i) for i in range(24))  # Greek small letters


def _parse(subscripts: str, ndims: list[int]) -> tuple[list[str], str]:
    """The operands' terms and the output term, with "..." spelled out as letters."""
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operands, got {len(ndims)}")
    letters = set(text) - set(",->.")
    if any(not (c.isascii() and c.isalpha()) for c in letters):
        raise ValueError(f"einsum: subscripts are letters a-z and A-Z, got {subscripts!r}")
    named = [len(t) - 3 * ("..." in t) for t in terms]
    for i, (term, n, ndim) in enumerate(zip(terms, named, ndims)):
        if term.count("...") > 1 or term.replace("...", "").count(".") or (
                n > ndim if "..." in term else n != ndim):
            raise ValueError(f"einsum: operand {i} has {ndim} axes, subscripts {term!r} name "
                             f"{n}" + (" and an ellipsis" if "..." in term else ""))
    widest = max((ndim - n for t, n, ndim in zip(terms, named, ndims) if "..." in t), default=0)
    terms = [t.replace("...", _ELLIPSIS[widest - (ndim - n):widest])  # right-aligned
             for t, n, ndim in zip(terms, named, ndims)]
    if not arrow:  # NumPy's implicit output: the letters used once, in alphabetical order
        once = sorted(c for c in letters if inputs.count(c) == 1)
        output = _ELLIPSIS[:widest] + "".join(once)
    else:
        if output.count("...") > 1 or output.replace("...", "").count("."):
            raise ValueError(f"einsum: the output {output!r} has a stray '.'")
        output = output.replace("...", _ELLIPSIS[:widest])
        if len(set(output)) != len(output) or not set(output) <= set("".join(terms)):
            raise ValueError(f"einsum: every output letter must appear once, and in an operand: "
                             f"{subscripts!r}")
    return terms, output


def _diagonals(x: Tensor, term: str) -> tuple[Tensor, str]:
    """``x`` with each repeated letter's axes replaced by their diagonal, as the last axis."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i, j = term.index(c), term.index(c, term.index(c) + 1)
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"einsum: letter {c!r} names axes of sizes {x.shape[i]} and "
                             f"{x.shape[j]}")
        rest = [k for k in range(x.ndim) if k not in (i, j)]
        x = diagonal(permute_dims(x, (*rest, i, j)))
        term = "".join(term[k] for k in rest) + c
    return x, term


def _sum_out(x: Tensor, term: str, keep: set[str]) -> tuple[Tensor, str]:
    gone = tuple(i for i, c in enumerate(term) if c not in keep)
    if not gone:
        return x, term
    return reduce_sum(x, axis=gone), "".join(c for c in term if c in keep)


def _arrange(x: Tensor, term: str, order: str) -> Tensor:
    return permute_dims(x, tuple(term.index(c) for c in order)) if term != order else x


def _contract(a: Tensor, ta: str, b: Tensor, tb: str, need: set[str]) -> tuple[Tensor, str]:
    """``a`` and ``b`` contracted over the letters they share and ``need`` has not."""
    batch = "".join(c for c in ta if c in tb and c in need)
    summed = "".join(c for c in ta if c in tb and c not in need)
    free_a = "".join(c for c in ta if c not in tb)
    free_b = "".join(c for c in tb if c not in ta)
    size = {c: n for t, x in ((ta, a), (tb, b)) for c, n in zip(t, x.shape)}
    for c in summed:
        if a.shape[ta.index(c)] != b.shape[tb.index(c)]:
            raise ValueError(f"einsum: letter {c!r} names axes of sizes {a.shape[ta.index(c)]} "
                             f"and {b.shape[tb.index(c)]}")
    lead_a = tuple(a.shape[ta.index(c)] for c in batch)
    lead_b = tuple(b.shape[tb.index(c)] for c in batch)
    k = math.prod(size[c] for c in summed)
    fa, fb = (math.prod(size[c] for c in f) for f in (free_a, free_b))
    left = reshape(_arrange(a, ta, batch + free_a + summed), (*lead_a, fa, k))
    right = reshape(_arrange(b, tb, batch + summed + free_b), (*lead_b, k, fb))
    out = matmul(left, right)  # batch axes broadcast as matmul's do (a length 1 stretches)
    lead = out.shape[:len(batch)]
    return reshape(out, (*lead, *(size[c] for c in free_a + free_b))), batch + free_a + free_b


def einsum(subscripts: str, /, *operands: TensorLike) -> Tensor:
    """Einstein summation, as NumPy's ``einsum``: ``"ij,jk->ik"`` is a matrix product.

    Supports NumPy's notation: explicit (``->``) and implicit outputs, ``...`` for leading
    axes (broadcast), a letter repeated in one operand (a diagonal: ``"ii->i"``), sums
    (``"ij->"``) and any number of operands, contracted left to right. The result's dtype is
    the operands' promoted dtype, as NumPy's (integers are not widened as ``sum`` widens them).

    Raises:
        ValueError: the subscripts do not match the operands (count, axes, sizes, letters).

    Example:
        >>> import minilazy as ml
        >>> a, b = ml.asarray([[1.0, 2.0], [3.0, 4.0]]), ml.asarray([[1.0], [1.0]])
        >>> ml.einsum("ij,jk->ik", a, b).tolist(), ml.einsum("ii", a).item()
        ([[3.0], [7.0]], 5.0)
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: the first argument is the subscripts string, got "
                        f"{type(subscripts).__name__}")
    if not operands:
        raise ValueError("einsum: no operands")
    xs = list(tensors(*operands))  # host data on the device of the tensors among them
    kind = dtypes.promote(*[x.dtype for x in xs])
    terms, output = _parse(subscripts, [x.ndim for x in xs])
    pairs = [_diagonals(x, t) for x, t in zip(xs, terms)]
    x, term = pairs[0]
    for i in range(1, len(pairs)):
        after = set(output).union(*(t for _, t in pairs[i + 1:]))  # what later steps read
        x, term = _sum_out(x, term, after | set(pairs[i][1]))
        y, ty = _sum_out(*pairs[i], after | set(term))
        x, term = _contract(x, term, y, ty, after)
    x, term = _sum_out(x, term, set(output))
    out = _arrange(x, term, output)
    return out if out.dtype == kind else astype(out, kind)
