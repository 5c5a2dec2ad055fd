"""The oracle's sorts and linear algebra: NumPy references and well-conditioned matrices.

Capability ``linalg`` (LZ-NUM-018): an adapter's ``sort`` and ``argsort`` are checked exactly
against :func:`sort` and :func:`argsort` (NumPy's stable sort; descending as the Array API's
array-api-strict sorts: ties keep their original order, NaNs first), and its ``linalg(name,
...)`` against NumPy's ``linalg`` on matrices far from singular (:func:`well_conditioned`), to
within :func:`matrix_bound`. Factors unique only up to signs (``eigh``'s eigenvectors, ``qr``,
``svd``) are checked by what defines them (:func:`factor_errors`). Nothing here imports
minilazy's engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]


def sort(x: Array, axis: int = -1, descending: bool = False) -> Array:
    """``x`` sorted along ``axis``: NaNs last, or, descending, first.

    Example:
        >>> sort(np.array([2.0, np.nan, 1.0]), descending=True).tolist()
        [nan, 2.0, 1.0]
    """
    if not descending:
        return np.sort(x, axis=axis, stable=True)
    # the reversed axis sorted stably, reversed back: tied values that differ (-0.0, 0.0) keep
    # their order, as the standard's stable sort asks and x[argsort(x, descending=True)] gives
    # (array-api-strict's sort flips the ascending one, which swaps them)
    return np.asarray(np.flip(np.sort(np.flip(x, axis=axis), axis=axis, stable=True), axis=axis))


def argsort(x: Array, axis: int = -1, descending: bool = False) -> Array:
    """The stable sorting indices of ``x`` along ``axis``; descending keeps ties in order.

    Example:
        >>> argsort(np.array([1, 2, 1, 2]), descending=True).tolist()
        [1, 3, 0, 2]
    """
    if not descending:
        return np.argsort(x, axis=axis, stable=True)
    last = x.shape[axis] - 1  # a stable sort of the reversed axis, reversed back
    flipped = np.flip(np.argsort(np.flip(x, axis=axis), axis=axis, stable=True), axis=axis)
    return np.asarray(last - flipped)


def well_conditioned(a: Array, kind: str) -> Array:
    """Matrices built from ``a`` (entries in [-1, 1]) far from singular.

    ``"spd"``: ``a aᵀ + n I`` (symmetric positive definite); ``"square"``: ``a + 2n I``
    (strictly diagonally dominant); ``"any"`` (M, N): ``a / 2max(M, N)`` plus 1 on its main
    diagonal, whose leading square block is strictly diagonally dominant by 1/2, so no
    singular value is below ``1 / 2sqrt(min(M, N))``.

    Example:
        >>> well_conditioned(np.zeros((2, 2)), "spd").tolist()
        [[2.0, 0.0], [0.0, 2.0]]
    """
    m, n = a.shape[-2:]
    if kind == "spd":
        return np.asarray(a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=a.dtype))
    if kind == "square":
        return np.asarray(a + 2 * n * np.eye(n, dtype=a.dtype))
    return np.asarray(a / (2 * max(m, n)) + np.eye(m, n, dtype=a.dtype))


def matrix_bound(expected: Array, n: int) -> Array | None:
    """The slack of a linalg result: ``64 n eps`` times the largest magnitude of its matrix.

    ``None`` for integer results (``matrix_rank``, ``argsort``), which must be exact.

    Backward-stable algorithms on matrices of condition number below ~10 (as
    :func:`well_conditioned` makes them) are that close, relative to the result's scale, even
    where one entry is much smaller than the others.

    Example:
        >>> float(matrix_bound(np.float32([[1.0, 1e-9]]), 1)[0, 0]) > 1e-9
        True
        >>> matrix_bound(np.int64([2]), 1) is None
        True
    """
    if expected.dtype.kind != "f":
        return None
    e = np.abs(np.asarray(expected, np.float64))
    scale = e if e.ndim < 2 else np.max(e, axis=(-2, -1), keepdims=True, initial=0.0)
    eps = float(np.finfo(expected.dtype).eps)
    return np.asarray(64 * max(n, 1) * eps * np.maximum(scale, 1.0))


def factor_errors(name: str, a: Array, factors: list[Array]) -> dict[str, float]:
    """How far ``factors`` are from factoring ``a`` (``eigh``, ``qr`` or ``svd``).

    The reconstruction's error relative to ``a``'s largest entry, the orthonormality of the
    orthogonal factors, and R's entries below the diagonal or the singular values' ascents.

    Example:
        >>> a = np.array([[2.0, 1.0], [1.0, 2.0]])
        >>> max(factor_errors("eigh", a, list(np.linalg.eigh(a))).values()) < 1e-12
        True
    """
    a64 = np.asarray(a, np.float64)
    f = [np.asarray(x, np.float64) for x in factors]
    scale = max(float(np.max(np.abs(a64), initial=0.0)), 1.0)

    def orthonormal(q: Array) -> float:
        k = q.shape[-1]
        return float(np.max(np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(k)), initial=0.0))

    if name == "eigh":
        w, v = f
        rebuilt, ortho = (v * w[..., None, :]) @ np.swapaxes(v, -1, -2), orthonormal(v)
        triangle = 0.0
    elif name == "qr":
        q, r = f
        rebuilt, ortho = q @ r, orthonormal(q)
        triangle = float(np.max(np.abs(np.tril(r, -1)), initial=0.0))
    else:
        u, s, vh = f
        k = s.shape[-1]
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
        ortho = max(orthonormal(u), orthonormal(np.swapaxes(vh, -1, -2)))
        triangle = float(np.max(np.diff(s, axis=-1), initial=0.0))  # > 0 where s ascends
    return {"reconstruction": float(np.max(np.abs(rebuilt - a64), initial=0.0)) / scale,
            "orthonormality": ortho, "triangle or order": triangle}
