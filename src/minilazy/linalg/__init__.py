"""The Array API's ``linalg`` extension (2023.12), for real and complex dtypes: ``ml.linalg``.

The factorizations, solves and determinants are recorded ops
(:mod:`minilazy.linalg.factorizations`); the rest is composed from recorded ops: norms from
reductions and ``svdvals``, ``pinv`` and ``matrix_rank`` from the SVD, ``matrix_power`` by repeated
squaring, ``diagonal`` and ``trace`` by a strided slice. Every function takes stacks of matrices
(leading batch axes). Never imports jax.
"""

from __future__ import annotations

import math
import operator
from typing import Literal

from minilazy.api.axes import normalize_axes, normalize_axis
from minilazy.api.composites import vecdot
from minilazy.api.creation import device_of, eye, tensor, tensors, zeros
from minilazy.api.elementwise import abs as absolute
from minilazy.api.elementwise import astype, conj, maximum, sqrt, where
from minilazy.api.info import finfo
from minilazy.api.products import matmul, tensordot
from minilazy.api.reductions import max as reduce_max
from minilazy.api.reductions import min as reduce_min
from minilazy.api.reductions import sum as reduce_sum
from minilazy.api.shaping import broadcast_to, matrix_transpose, reshape, stack
from minilazy.api.tensor import Tensor, TensorLike
from minilazy.core import dtypes
from minilazy.core.infer import broadcast_shapes, describe
from minilazy.linalg.factorizations import (
    EighResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    det,
    eigh,
    eigvalsh,
    floating,
    inv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)

__all__ = [
    "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cross", "det",
    "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd",
    "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]


def diagonal(x: TensorLike, /, *, offset: int = 0) -> Tensor:
    """The ``offset``-th diagonal of each matrix (above the main one if positive).

    Recorded as a strided slice of the flattened matrices.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.diagonal(ml.reshape(ml.arange(6), (2, 3)), offset=1).tolist()
        [1, 5]
    """
    x = tensor(x)
    if x.ndim < 2:
        raise ValueError(f"linalg.diagonal: needs a tensor of at least 2 dimensions, got {x!r}")
    k = operator.index(offset)
    *batch, m, n = x.shape
    length = max(0, min(m - max(-k, 0), n - max(k, 0)))
    start = k if k >= 0 else -k * n  # element (i, i + k) is at i * (n + 1) + k when flattened
    flat = reshape(x, (*batch, m * n))
    return flat[..., start:start + (length - 1) * (n + 1) + 1:n + 1] if length else \
        flat[..., :0]


def trace(x: TensorLike, /, *, offset: int = 0, dtype: dtypes.DTypeLike | None = None) -> Tensor:
    """The sum of each matrix's ``offset``-th diagonal; integers widen as :func:`~minilazy.sum`.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.trace(ml.reshape(ml.arange(9), (3, 3))).item()
        12
    """
    return reduce_sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def matrix_power(x: TensorLike, n: int, /) -> Tensor:
    """``x`` multiplied by itself ``n`` times (by repeated squaring); ``inv(x)`` powers if negative.

    ``n == 0`` gives identity matrices of ``x``'s dtype.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.matrix_power(ml.asarray([[1, 1], [0, 1]]), 5).tolist()
        [[1, 5], [0, 1]]
    """
    x = tensor(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.matrix_power: needs a stack of square matrices, got {x!r}")
    power = operator.index(n)
    if power == 0:
        return broadcast_to(eye(x.shape[-1], dtype=x.dtype, device=x.device), x.shape)
    base = inv(x) if power < 0 else x
    power, out = abs(power), None
    while power:
        if power & 1:
            out = base if out is None else out @ base
        power >>= 1
        if power:
            base = base @ base
    assert out is not None
    return out


def matrix_rank(x: TensorLike, /, *, rtol: TensorLike | None = None) -> Tensor:
    """The number of singular values above ``rtol`` times the largest, per matrix (int64).

    ``rtol`` defaults to ``max(M, N) * eps`` of ``x``'s dtype (NumPy's); a tensor ``rtol``
    broadcasts against the batch axes.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.matrix_rank(ml.asarray([[1.0, 2.0], [2.0, 4.0]])).item()
        1
    """
    x = tensor(x, device_of(x, rtol))
    s = svdvals(x)
    if not s.shape[-1]:  # empty matrices have rank 0
        return zeros(s.shape[:-1], dtype=dtypes.int64, device=x.device)
    largest = reduce_max(s, axis=-1, keepdims=True)
    if rtol is None:
        rtol = max(x.shape[-2:]) * float(finfo(x.dtype).eps)
    tol = largest * (rtol if isinstance(rtol, (int, float)) else tensor(rtol, x.device)[..., None])
    return reduce_sum(astype(s > tol, dtypes.int64), axis=-1)


def _adjoint(x: Tensor) -> Tensor:
    """The conjugate transpose (the transpose, for real matrices)."""
    return matrix_transpose(conj(x) if x.dtype in dtypes.COMPLEX else x)


def pinv(x: TensorLike, /, *, rtol: TensorLike | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix, from its reduced SVD.

    Singular values at most ``rtol`` times the largest count as zero; ``rtol`` defaults to
    ``max(M, N) * eps``. Not differentiable yet (it needs the singular vectors).

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.pinv(ml.asarray([[2.0, 0.0], [0.0, 0.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.0]]
    """
    x = tensor(x, device_of(x, rtol))
    u, s, vh = svd(x, full_matrices=False)
    if rtol is None:
        rtol = max(x.shape[-2:]) * float(finfo(x.dtype).eps)
    largest = reduce_max(s, axis=-1, keepdims=True) if s.shape[-1] else s  # (empty: no max)
    cutoff = largest * (rtol if isinstance(rtol, (int, float)) else
                        tensor(rtol, x.device)[..., None])
    kept = s > cutoff
    s_inv = where(kept, 1.0 / where(kept, s, 1.0), 0.0)
    return _adjoint(vh) @ (s_inv[..., None] * _adjoint(u))  # V S⁺ Uᴴ


def _largest(a: Tensor, axis: int | tuple[int, ...], keepdims: bool = False) -> Tensor:
    """NumPy's ``max(a, axis, initial=0)`` of magnitudes: 0 over no element (an empty norm)."""
    if any(a.shape[i] == 0 for i in normalize_axes("linalg.norm", axis, a.ndim)):
        return reduce_sum(a, axis=axis, keepdims=keepdims)  # zeros of the reduced shape
    return reduce_max(a, axis=axis, keepdims=keepdims)


def vector_norm(x: TensorLike, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: bool = False, ord: float | None = 2) -> Tensor:
    """The ``ord``-norm of the vectors along ``axis`` (all axes if None).

    The norm is ``sum(|x|**ord)**(1/ord)``, with the square root of a sum of squares for 2.
    Complex ``x`` gives a real norm, of its elements' moduli.

    ``ord`` may be any number (None is 2, as NumPy's): ``inf`` and ``-inf`` give the largest
    and smallest ``|x|``, 0 the count of non-zeros (as a float). The norms of no element are 0,
    as NumPy's (``-inf`` and negative orders excepted). Composed from reductions;
    differentiable.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.vector_norm(ml.asarray([3.0, -4.0])).item()
        5.0
    """
    x = floating("vector_norm", x, least=0)
    x = absolute(x) if x.dtype in dtypes.COMPLEX else x  # a complex norm is its moduli's norm
    axes = normalize_axes("linalg.vector_norm", axis, x.ndim)
    a = absolute(x)
    ord = 2 if ord is None else ord
    if ord == math.inf:  # (JAX's initial 0: a zero vector's gradient is split with it)
        return maximum(_largest(a, axes, keepdims), 0.0)
    if ord == -math.inf:
        return reduce_min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        return reduce_sum(astype(x != 0, x.dtype), axis=axes, keepdims=keepdims)
    if ord == 1:
        return reduce_sum(a, axis=axes, keepdims=keepdims)
    if ord == 2:
        return sqrt(reduce_sum(x * x, axis=axes, keepdims=keepdims))
    return reduce_sum(a ** float(ord), axis=axes, keepdims=keepdims) ** (1.0 / float(ord))


def matrix_norm(x: TensorLike, /, *, keepdims: bool = False,
                ord: float | Literal["fro", "nuc"] | None = "fro") -> Tensor:
    """A norm of each matrix (its last two axes), picked by ``ord``.

    ``"fro"``: Frobenius; ``"nuc"``: the sum of the singular values; 1, -1: the largest,
    smallest column sum of ``|x|``; ``inf``, ``-inf``: the same of row sums; 2, -2: the
    largest, smallest singular value.

    ``keepdims`` keeps the two matrix axes as 1s. A matrix with no element has norm 0 (as
    NumPy's; the smallest sums and singular values, of none, raise). Differentiable (through
    ``svdvals`` for ``"nuc"`` and ±2). Complex ``x`` gives a real norm, except for ``"nuc"``
    and ±2 (no complex SVD yet: ``TypeError``).

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.matrix_norm(ml.asarray([[1.0, -2.0], [3.0, 4.0]]), ord=1).item()
        6.0
    """
    x = floating("matrix_norm", x)
    if x.dtype in dtypes.COMPLEX and ord not in ("nuc", 2, -2):  # those need a complex SVD
        x = absolute(x)  # the other norms are their moduli's norms
    if ord == "fro" or ord is None:
        out = sqrt(reduce_sum(x * x, axis=(-2, -1)))
    elif ord == "nuc":
        out = reduce_sum(svdvals(x), axis=-1)
    elif ord in (2, -2):
        out = (_largest if ord == 2 else reduce_min)(svdvals(x), axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        sums = reduce_sum(absolute(x), axis=-2 if ord in (1, -1) else -1)
        out = (_largest if ord in (1, math.inf) else reduce_min)(sums, axis=-1)
    else:
        raise ValueError(f"linalg.matrix_norm: invalid norm order {ord!r} for matrices")
    return reshape(out, (*out.shape, 1, 1)) if keepdims else out


def outer(x1: TensorLike, x2: TensorLike, /) -> Tensor:
    """The outer product of two vectors: ``x1[:, None] * x2[None, :]``, dtypes promoted.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.outer(ml.asarray([1, 2]), ml.asarray([3, 4, 5])).tolist()
        [[3, 4, 5], [6, 8, 10]]
    """
    x1, x2 = tensors(x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer: needs two 1-D tensors, got {x1!r} and {x2!r}")
    return reshape(x1, (x1.shape[0], 1)) * reshape(x2, (1, x2.shape[0]))


def cross(x1: TensorLike, x2: TensorLike, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``axis``; the other axes broadcast.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.cross(ml.asarray([1, 0, 0]), ml.asarray([0, 1, 0])).tolist()
        [0, 0, 1]
    """
    x1, x2 = tensors(x1, x2)
    shape = broadcast_shapes("linalg.cross", tuple(x1.shape), tuple(x2.shape))
    a = normalize_axis("linalg.cross", axis, len(shape))
    if x1.shape[a - len(shape)] != 3 or x2.shape[a - len(shape)] != 3:
        raise ValueError(f"linalg.cross: axis {axis} must have size 3 in both operands, got "
                         f"{describe(x1._node)} and {describe(x2._node)}")
    u = broadcast_to(x1, shape) if x1.shape != shape else x1
    v = broadcast_to(x2, shape) if x2.shape != shape else x2

    def at(t: Tensor, i: int) -> Tensor:
        return t[(slice(None),) * a + (i,)]

    parts = [at(u, (i + 1) % 3) * at(v, (i + 2) % 3) - at(u, (i + 2) % 3) * at(v, (i + 1) % 3)
             for i in range(3)]
    return stack(parts, axis=a)
