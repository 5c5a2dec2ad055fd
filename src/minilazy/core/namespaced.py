"""Sorts and the linalg extension's primitives: their shape rules and one evaluation table.

One of core's op rules, beside ``window_rules.py``. :class:`Fn` is the closed set of functions
behind ``Op.LINALG`` (one node per result of a factorization). :func:`sort_rule` and
:func:`linalg_rule` are their shape and dtype rules (``infer.INFER``). :func:`evaluate` computes
``SORT``, ``ARGSORT`` and ``LINALG`` (and ``FFT``, by ``fft_rules``) with an array namespace it
is given: ``jax.numpy`` in the lowering, NumPy in the reference interpreter. The two namespaces
share these functions' signatures (``linalg.qr(mode=)``, ``linalg.svd(full_matrices=)``,
``sort(stable=)``, ``fft.rfftn(s=, axes=, norm=)``), so one table serves both and the two
interpretations agree by construction. Never imports jax.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from minilazy.core import dtypes, fft_rules
from minilazy.core.attrs import Attrs, Fft, Linalg, Sort, mismatch
from minilazy.core.dtypes import DType, typed
from minilazy.core.ir import Node, Op, Shape, ShapeError


class Fn(enum.IntEnum):
    """A function of the linalg extension that is a primitive (``Op.LINALG``'s attribute).

    The others (``matrix_norm``, ``pinv``, ``trace``...) are composed from recorded ops.

    Example:
        >>> Fn.CHOLESKY.name.lower(), Fn(0) is Fn.CHOLESKY
        ('cholesky', True)
    """

    CHOLESKY = 0
    EIGH_VALUES = 1
    EIGH_VECTORS = 2
    QR_Q = 3
    QR_R = 4
    SVD_U = 5
    SVD_S = 6
    SVD_VT = 7
    SOLVE = 8
    INV = 9
    DET = 10
    SLOGDET_SIGN = 11
    SLOGDET_LOGABS = 12


def _shown(x: Node) -> str:
    return typed(x.dtype, x.shape)


# The dtypes the primitives compute in: NumPy's linalg has no float16 (nor has LAPACK).
LINALG_DTYPES: Final = frozenset({dtypes.float32, dtypes.float64}) | dtypes.COMPLEX
# The results that are real whatever the input: eigenvalues, singular values, log |det|.
REAL_RESULTS: Final = frozenset({Fn.EIGH_VALUES, Fn.SVD_S, Fn.SLOGDET_LOGABS})


def sort_rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``SORT`` keeps its operand's shape and dtype; ``ARGSORT`` gives default ints.

    Example:
        >>> from minilazy.core.ir import scalar_leaf
        >>> sort_rule(Op.ARGSORT, (scalar_leaf(1.0, dtypes.float32),), Sort(0, False))
        Traceback (most recent call last):
        ...
        numpy.exceptions.AxisError: argsort: axis 0 is out of bounds for f32[]
    """
    match attrs:
        case Sort(axis, _):
            (x,) = xs
            if x.dtype in dtypes.COMPLEX:  # the standard orders real numbers only
                raise TypeError(f"{op.value}: not defined for complex dtypes, got {_shown(x)}")
            if not 0 <= axis < len(x.shape):
                raise np.exceptions.AxisError(f"{op.value}: axis {axis} is out of bounds for "
                                              f"{_shown(x)}")
            dtype = x.dtype if op is Op.SORT else dtypes.DEFAULT_INT
            return dtypes.sized(op.value, x.shape, dtype), dtype
    raise mismatch(op, attrs)


def _matrices(fn: Fn, x: Node, square: bool) -> tuple[Shape, int, int]:
    """A stack of matrices' batch shape, rows and columns; ``ShapeError`` naming the shape."""
    name = fn.name.lower()
    if len(x.shape) < 2:
        raise ShapeError(f"linalg.{name}: needs a stack of matrices (at least 2-D), got "
                         f"{_shown(x)}")
    *batch, m, n = x.shape
    if square and m != n:
        raise ShapeError(f"linalg.{name}: needs square matrices, got {_shown(x)}")
    return tuple(batch), m, n


def linalg_rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """The result shape and dtype of ``LINALG`` (its operands as the public functions check).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> a = data_leaf(None, (5, 3, 2), dtypes.float32)
        >>> linalg_rule(Op.LINALG, (a,), Linalg(Fn.QR_Q, False))
        ((5, 3, 2), dtype('float32'))
        >>> linalg_rule(Op.LINALG, (a,), Linalg(Fn.INV, False))
        Traceback (most recent call last):
        ...
        minilazy.core.ir.ShapeError: linalg.inv: needs square matrices, got f32[5,3,2]
    """
    match attrs:
        case Linalg(code, full):
            fn, x = Fn(code), xs[0]
            if any(o.dtype not in LINALG_DTYPES or o.dtype != x.dtype for o in xs):
                shown = ", ".join(_shown(o) for o in xs)
                raise TypeError(f"linalg.{fn.name.lower()}: needs float32, float64, complex64 or "
                                f"complex128 operands of one dtype, got {shown}")
            batch, m, n = _matrices(fn, x, fn not in (Fn.QR_Q, Fn.QR_R, Fn.SVD_U, Fn.SVD_S,
                                                      Fn.SVD_VT))
            k = min(m, n)
            if fn is Fn.SOLVE:
                b = xs[1]
                if b.shape[:-1] != (*batch, m) or len(b.shape) != len(x.shape):
                    raise ShapeError(f"linalg.solve: {_shown(x)} cannot solve for {_shown(b)}")
                return b.shape, x.dtype
            shapes: Mapping[Fn, Shape] = {
                Fn.EIGH_VALUES: (m,), Fn.QR_Q: (m, m if full else k),
                Fn.QR_R: (m if full else k, n), Fn.SVD_U: (m, m if full else k), Fn.SVD_S: (k,),
                Fn.SVD_VT: (n if full else k, n), Fn.DET: (), Fn.SLOGDET_SIGN: (),
                Fn.SLOGDET_LOGABS: ()}
            dtype = dtypes.PART.get(x.dtype, x.dtype) if fn in REAL_RESULTS else x.dtype
            return dtypes.sized(f"linalg.{fn.name.lower()}", (*batch, *shapes.get(fn, (m, n))),
                                dtype), dtype  # a complete QR of an (n, 0) is (n, n)
    raise mismatch(op, attrs)


def _sort(xp: Any, x: Any, attrs: Sort, indices: bool) -> Any:
    axis, descending = attrs
    if not indices:  # values: descending sorts the reversed axis, reversed back, so that tied
        # values that differ (-0.0 and 0.0) keep their order, as x[argsort(x)] does
        if not descending:
            return xp.sort(x, axis=axis, stable=True)
        return xp.flip(xp.sort(xp.flip(x, axis=axis), axis=axis, stable=True), axis=axis)
    if not descending:
        return xp.argsort(x, axis=axis, stable=True)
    # Stable and descending: sort the reversed axis stably, reverse back, and map positions in
    # the reversed axis to the original ones; ties then keep their original order (as
    # array-api-strict does), and NaNs, last when ascending, come first.
    last = x.shape[axis] - 1
    return last - xp.flip(xp.argsort(xp.flip(x, axis=axis), axis=axis, stable=True), axis=axis)


_MODE: Final = {False: "reduced", True: "complete"}
# Each primitive as a function of (namespace, operand values, full): the same call in both.
EVALUATE: Final[Mapping[Fn, Callable[[Any, Sequence[Any], bool], Any]]] = {
    Fn.CHOLESKY: lambda xp, xs, full: xp.linalg.cholesky(xs[0]),
    Fn.EIGH_VALUES: lambda xp, xs, full: xp.linalg.eigh(xs[0])[0],
    Fn.EIGH_VECTORS: lambda xp, xs, full: xp.linalg.eigh(xs[0])[1],
    Fn.QR_Q: lambda xp, xs, full: xp.linalg.qr(xs[0], mode=_MODE[full])[0],
    Fn.QR_R: lambda xp, xs, full: xp.linalg.qr(xs[0], mode=_MODE[full])[1],
    Fn.SVD_U: lambda xp, xs, full: xp.linalg.svd(xs[0], full_matrices=full)[0],
    Fn.SVD_S: lambda xp, xs, full: xp.linalg.svd(xs[0], compute_uv=False),
    Fn.SVD_VT: lambda xp, xs, full: xp.linalg.svd(xs[0], full_matrices=full)[2],
    Fn.SOLVE: lambda xp, xs, full: xp.linalg.solve(xs[0], xs[1]),
    Fn.INV: lambda xp, xs, full: xp.linalg.inv(xs[0]),
    Fn.DET: lambda xp, xs, full: xp.linalg.det(xs[0]),
    Fn.SLOGDET_SIGN: lambda xp, xs, full: xp.linalg.slogdet(xs[0])[0],
    Fn.SLOGDET_LOGABS: lambda xp, xs, full: xp.linalg.slogdet(xs[0])[1],
}


def evaluate(xp: Any, xs: Sequence[Any], n: Node) -> Any:
    """The value of a ``SORT``, ``ARGSORT``, ``LINALG`` or ``FFT`` node computed with ``xp``.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (3,), dtypes.float64)
        >>> n = Node(Op.ARGSORT, (x,), Sort(0, True), (3,), dtypes.int64)
        >>> evaluate(np, [np.array([1.0, 3.0, 1.0])], n).tolist()
        [1, 0, 2]
    """
    match n.attrs:
        case Sort():
            return _sort(xp, xs[0], n.attrs, n.op is Op.ARGSORT)
        case Linalg(fn, full):
            return EVALUATE[Fn(fn)](xp, xs, full)
        case Fft():
            return fft_rules.evaluate(xp, xs[0], n.attrs)
    raise mismatch(n.op, n.attrs)
