"""The linalg extension's primitives: factorizations, solves and determinants, one op each.

Part of the linalg extension. ``cholesky``, ``eigh``, ``qr``, ``svd``, ``solve``, ``inv``, ``det``
and ``slogdet`` are one op, ``linalg``, whose attribute picks the function
(:class:`~minilazy.core.attrs.Fn`); a function with several results records one node per
result, and XLA merges their shared work. :mod:`minilazy.linalg` composes the rest of the
extension from these and is the namespace users see (``ml.linalg``).

As XLA's (and unlike NumPy's, which raises ``LinAlgError``), a singular or non-positive-definite
input gives ``inf`` or NaN values instead of an error: values are data, unknown when recorded.
float16 is refused by the primitives, as by NumPy's linalg. Never imports jax.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from minilazy.api.creation import tensor, tensors
from minilazy.api.elementwise import astype, conj
from minilazy.api.shaping import broadcast_to, matrix_transpose, reshape
from minilazy.api.tensor import Tensor, TensorLike, record
from minilazy.core import dtypes
from minilazy.core.infer import broadcast_shapes, describe
from minilazy.core.ir import DeviceError, Op
from minilazy.ops.linalg import LINALG_DTYPES, Fn, Linalg


class EighResult(NamedTuple):
    """``eigh``'s results: eigenvalues in ascending order, eigenvectors as columns.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.eigh(ml.eye(2)).eigenvalues.tolist()
        [1.0, 1.0]
    """

    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """``qr``'s results: ``Q`` with orthonormal columns, ``R`` upper triangular.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.qr(ml.ones((3, 2))).R.shape
        (2, 2)
    """

    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    """``svd``'s results: ``U``, the singular values ``S`` (descending) and ``Vh``.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.svd(ml.eye(2)).S.tolist()
        [1.0, 1.0]
    """

    U: Tensor
    S: Tensor
    Vh: Tensor


class SlogdetResult(NamedTuple):
    """``slogdet``'s results: the determinant's ``sign`` and the log of its absolute value.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.slogdet(2 * ml.eye(2)).sign.item()
        1.0
    """

    sign: Tensor
    logabsdet: Tensor


def floating(name: str, x: TensorLike, least: int = 2, square: bool = False) -> Tensor:
    """``x`` as a tensor, checked: real or complex floating, ``least``-D, square if asked."""
    x = tensor(x)
    if x.dtype not in dtypes.INEXACT:
        raise TypeError(f"linalg.{name}: needs a floating-point tensor, got {describe(x._node)}")
    if x.ndim < least:
        raise ValueError(f"linalg.{name}: needs at least {least} dimensions, got "
                         f"{describe(x._node)}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.{name}: needs square matrices, got {describe(x._node)}")
    return x


def _primitive(name: str, fn: Fn, *xs: Tensor, full: bool = False) -> Tensor:
    """Record ``LINALG`` with function ``fn`` on checked operands."""
    if xs[0].dtype not in LINALG_DTYPES:  # NumPy's linalg refuses float16 too
        raise TypeError(f"linalg.{name}: {xs[0].dtype} is unsupported (as in NumPy's linalg); "
                        "cast to float32")
    return record(Op.LINALG, tuple(x._node for x in xs), Linalg(int(fn), full), xs[0].device)


def cholesky(x: TensorLike, /, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of Hermitian positive-definite matrices: ``L`` with ``L @ Lᴴ == x``.

    ``upper=True`` gives ``U = Lᴴ`` (``Uᴴ @ U == x``). Only the Hermitian part of ``x`` is
    read. Differentiable (for complex ``x``, in JAX's convention).

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.cholesky(ml.asarray([[4.0, 2.0], [2.0, 5.0]])).tolist()
        [[2.0, 0.0], [1.0, 2.0]]
    """
    lower = _primitive("cholesky", Fn.CHOLESKY, floating("cholesky", x, square=True))
    if upper:  # U = Lᴴ
        return matrix_transpose(conj(lower) if lower.dtype in dtypes.COMPLEX else lower)
    return lower


def det(x: TensorLike, /) -> Tensor:
    """The determinant of each square matrix. Differentiable (where ``x`` is invertible).

    Example:
        >>> import minilazy as ml
        >>> round(ml.linalg.det(ml.asarray([[1.0, 2.0], [3.0, 4.0]])).item(), 6)
        -2.0
    """
    return _primitive("det", Fn.DET, floating("det", x, square=True))


def slogdet(x: TensorLike, /) -> SlogdetResult:
    """The sign of each determinant and the natural log of its absolute value.

    A singular matrix gives sign 0 and ``-inf``; a complex one's sign is ``det / |det|``.
    Differentiable (a real matrix's sign is piecewise constant).

    Example:
        >>> import minilazy as ml
        >>> s = ml.linalg.slogdet(ml.asarray([[1.0, 2.0], [3.0, 4.0]]))
        >>> s.sign.item(), round(s.logabsdet.item(), 6)
        (-1.0, 0.693147)
    """
    x = floating("slogdet", x, square=True)
    return SlogdetResult(_primitive("slogdet", Fn.SLOGDET_SIGN, x),
                         _primitive("slogdet", Fn.SLOGDET_LOGABS, x))


def inv(x: TensorLike, /) -> Tensor:
    """The inverse of each square matrix (a singular one gives ``inf``/NaN). Differentiable.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.inv(ml.asarray([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.25]]
    """
    return _primitive("inv", Fn.INV, floating("inv", x, square=True))


def eigh(x: TensorLike, /) -> EighResult:
    """Eigenvalues (real, ascending) and eigenvectors (columns) of Hermitian matrices.

    Only the Hermitian (for real ``x``, symmetric) part of ``x`` is read. Each eigenvector's
    sign (phase) is the implementation's (XLA's); ``x @ v == v * w`` holds whatever it is.
    Differentiable where the eigenvalues are distinct.

    Example:
        >>> import minilazy as ml
        >>> w, v = ml.linalg.eigh(ml.asarray([[2.0, 1.0], [1.0, 2.0]]))
        >>> [round(e, 6) for e in w.tolist()]
        [1.0, 3.0]
    """
    x = floating("eigh", x, square=True)
    return EighResult(_primitive("eigh", Fn.EIGH_VALUES, x),
                      _primitive("eigh", Fn.EIGH_VECTORS, x))


def eigvalsh(x: TensorLike, /) -> Tensor:
    """The eigenvalues of Hermitian matrices, real and ascending. Differentiable.

    Example:
        >>> import minilazy as ml
        >>> [round(e, 6) for e in ml.linalg.eigvalsh(ml.asarray([[2.0, 1.0], [1.0, 2.0]])).tolist()]
        [1.0, 3.0]
    """
    return _primitive("eigvalsh", Fn.EIGH_VALUES, floating("eigvalsh", x, square=True))


def qr(x: TensorLike, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult:
    """The QR factorization ``x = Q @ R`` of each matrix (M, N), with K = min(M, N).

    ``mode="reduced"``: Q (M, K), R (K, N); ``"complete"``: Q (M, M), R (M, N). Signs are the
    implementation's (Householder, as LAPACK). Not differentiable yet.

    Example:
        >>> import minilazy as ml
        >>> q, r = ml.linalg.qr(ml.asarray([[3.0, 1.0], [4.0, 2.0]]))
        >>> [[round(v, 6) for v in row] for row in (q @ r).tolist()]
        [[3.0, 1.0], [4.0, 2.0]]
    """
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    x, full = floating("qr", x), mode == "complete"
    return QRResult(_primitive("qr", Fn.QR_Q, x, full=full),
                    _primitive("qr", Fn.QR_R, x, full=full))


def svd(x: TensorLike, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition ``x = U @ diag(S) @ Vh`` of each matrix (M, N).

    ``full_matrices=True``: U (M, M), Vh (N, N); else U (M, K), Vh (K, N), K = min(M, N). S is
    descending. The singular vectors' signs are the implementation's. ``S`` is differentiable
    (see :func:`svdvals`); ``U`` and ``Vh`` are not yet.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.svd(ml.asarray([[3.0, 0.0], [0.0, -4.0]])).S.tolist()
        [4.0, 3.0]
    """
    x, full = floating("svd", x), bool(full_matrices)
    return SVDResult(_primitive("svd", Fn.SVD_U, x, full=full),
                     _primitive("svd", Fn.SVD_S, x),
                     _primitive("svd", Fn.SVD_VT, x, full=full))


def svdvals(x: TensorLike, /) -> Tensor:
    """The singular values of each matrix, descending. Differentiable (distinct values).

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.svdvals(ml.asarray([[0.0, 2.0], [1.0, 0.0]])).tolist()
        [2.0, 1.0]
    """
    return _primitive("svdvals", Fn.SVD_S, floating("svdvals", x))


def solve(x1: TensorLike, x2: TensorLike, /) -> Tensor:
    """``X`` with ``x1 @ X == x2``, for square ``x1`` (..., M, M). Differentiable.

    ``x2`` is a stack of matrices (..., M, K) whose batch axes broadcast with ``x1``'s, or one
    vector (M,), when the result is (..., M), as the 2023.12 standard says.

    Example:
        >>> import minilazy as ml
        >>> ml.linalg.solve(ml.asarray([[2.0, 0.0], [0.0, 4.0]]), ml.asarray([2.0, 2.0])).tolist()
        [1.0, 0.5]
    """
    x1, x2 = tensors(x1, x2)
    a, b = floating("solve", x1, square=True), floating("solve", x2, least=1)
    if a.device != b.device:
        raise DeviceError(f"linalg.solve: operands are on different devices: {a.device} and "
                          f"{b.device}")
    dtype = dtypes.promote(a.dtype, b.dtype)
    a, b = astype(a, dtype, copy=False), astype(b, dtype, copy=False)
    n, vector = a.shape[-1], b.ndim == 1
    if vector:
        b = reshape(b, (b.shape[0], 1))
    if b.shape[-2] != n:
        raise ValueError(f"linalg.solve: {describe(x1._node)} cannot solve for "
                         f"{describe(x2._node)} ({n} != {b.shape[-2]})")
    batch = broadcast_shapes("linalg.solve", a.shape[:-2], b.shape[:-2])
    if a.shape[:-2] != batch:
        a = broadcast_to(a, (*batch, n, n))
    if b.shape[:-2] != batch:
        b = broadcast_to(b, (*batch, *b.shape[-2:]))
    out = _primitive("solve", Fn.SOLVE, a, b)
    return out[..., 0] if vector else out


