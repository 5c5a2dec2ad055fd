"""The linalg family: ``Op.LINALG`` (one node per result of a factorization), ``tensordot``.

Like the FFT family (``ops/fft.py``, the worked example). :class:`~minilazy.core.attrs.Fn` names
the closed set of primitives behind the op; :func:`rule` is their shape and dtype rule and
:func:`evaluate` computes them with the namespace it is given: ``jax.numpy`` in the lowering,
NumPy in the reference interpreter, which share these functions' signatures
(``linalg.qr(mode=)``, ``linalg.svd(full_matrices=)``), so one table serves both. The VJPs are
``minilazy/linalg/vjp.py``'s. Never imports jax.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from minilazy.core import dtypes, infer, ir, lowering
from minilazy.core.attrs import Attrs, mismatch
from minilazy.core.dtypes import DType, typed
from minilazy.core.ir import Node, Op, Shape, ShapeError
from minilazy.introspect import printers, pycode, reference


class Fn(enum.IntEnum):
    """A function of the linalg extension that is a primitive (``Linalg.fn``).

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


class Linalg(NamedTuple):
    """``LINALG``: which function (an :class:`Fn`), and if its factors are ``full``.

    Example:
        >>> Linalg(0, False).full
        False
    """

    fn: int  # eigh, qr, svd and slogdet record one node per result
    full: bool  # qr's mode="complete", svd's full_matrices


class Contract(NamedTuple):
    """``TENSORDOT``: the axes of each operand that are summed over, pairwise.

    Example:
        >>> Contract((1,), (0,)).b
        (0,)
    """

    a: tuple[int, ...]
    b: tuple[int, ...]


# The dtypes the primitives compute in: NumPy's linalg has no float16 (nor has LAPACK).
LINALG_DTYPES: Final = frozenset({dtypes.float32, dtypes.float64}) | dtypes.COMPLEX
# The results that are real whatever the input: eigenvalues, singular values, log |det|.
REAL_RESULTS: Final = frozenset({Fn.EIGH_VALUES, Fn.SVD_S, Fn.SLOGDET_LOGABS})


def _shown(x: Node) -> str:
    return typed(x.dtype, x.shape)


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


def rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """The result shape and dtype of ``LINALG`` (its operands as the public functions check).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> a = data_leaf(None, (5, 3, 2), dtypes.float32)
        >>> rule(Op.LINALG, (a,), Linalg(Fn.QR_Q, False))
        ((5, 3, 2), dtype('float32'))
        >>> rule(Op.LINALG, (a,), Linalg(Fn.INV, False))
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
    """The value of a ``LINALG`` node computed with namespace ``xp``.

    Example:
        >>> import numpy as np
        >>> from minilazy.core.ir import data_leaf
        >>> a = data_leaf(None, (2, 2), dtypes.float64)
        >>> evaluate(np, [np.eye(2) * 2], Node(Op.LINALG, (a,), Linalg(Fn.DET, False), (),
        ...                                   dtypes.float64))
        np.float64(4.0)
    """
    match n.attrs:
        case Linalg(fn, full):
            return EVALUATE[Fn(fn)](xp, xs, full)
    raise mismatch(n.op, n.attrs)


# The primitives whose public function records just that one node.
_ONE_NODE: Final = {Fn.CHOLESKY: "cholesky", Fn.INV: "inv", Fn.DET: "det",
                    Fn.EIGH_VALUES: "eigvalsh", Fn.SVD_S: "svdvals"}


def python(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line of minilazy code that records ``n`` again.

    One result of ``eigh``, ``qr``, ``svd`` or ``slogdet`` (and ``solve``, whose 1-D case records
    more) is replayed, as it has no public function of its own.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> a = data_leaf(None, (2, 2), dtypes.float64)
        >>> python("v1", Node(Op.LINALG, (a,), Linalg(Fn.INV, False), (2, 2), dtypes.float64),
        ...        ["v0"])
        ['v1 = ml.linalg.inv(v0)']
    """
    match n.attrs:
        case Linalg(fn, _) if Fn(fn) in _ONE_NODE:
            return [f"{result} = ml.linalg.{_ONE_NODE[Fn(fn)]}({args[0]})"]
    return pycode.replayed(result, n, args)


def text(a: Linalg) -> str:
    """How the IR text shows a linalg node's attributes.

    Example:
        >>> text(Linalg(Fn.QR_Q, True))
        'fn=qr_q full'
    """
    return f"fn={Fn(a.fn).name.lower()}" + (" full" if a.full else "")


def tensordot(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``TENSORDOT``'s shape and dtype: the free axes of each operand, the dtypes promoted.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> a, b = data_leaf(None, (2, 3), dtypes.int8), data_leaf(None, (3, 4), dtypes.float32)
        >>> tensordot(Op.TENSORDOT, (a, b), Contract((1,), (0,)))
        ((2, 4), dtype('float32'))
    """
    match attrs:
        case Contract(axes_a, axes_b):
            a, b = xs
            if [a.shape[i] for i in axes_a] != [b.shape[i] for i in axes_b]:
                raise ShapeError(f"tensordot: contracted axes {axes_a} of {_shown(a)} and "
                                 f"{axes_b} of {_shown(b)} differ in size")
            shape = tuple(n for i, n in enumerate(a.shape) if i not in axes_a) + \
                tuple(n for i, n in enumerate(b.shape) if i not in axes_b)
            dtype = dtypes.promote(a.dtype, b.dtype)
            return dtypes.sized("tensordot", shape, dtype), dtype
    raise mismatch(op, attrs)


def contracted(xp: Any, xs: Sequence[Any], n: Node) -> Any:
    """The value of a ``TENSORDOT`` node with namespace ``xp`` (NumPy, or ``jax.numpy``).

    The lowering casts with its mended ``astype`` and asks for exact f32 products (no TF32).

    Example:
        >>> import numpy as np
        >>> from minilazy.core.ir import data_leaf
        >>> a = data_leaf(None, (2,), dtypes.float64)
        >>> n = Node(Op.TENSORDOT, (a, a), Contract((0,), (0,)), (), dtypes.float64)
        >>> contracted(np, [np.ones(2), np.ones(2)], n)
        array(2.)
    """
    match n.attrs:
        case Contract(axes_a, axes_b):
            if xp is np:
                na, nb = (np.asarray(x).astype(n.dtype) for x in xs)
                with np.errstate(all="ignore"):
                    return np.asarray(np.tensordot(na, nb, (axes_a, axes_b)))
            a, b = (lowering.astype(x, n.dtype) for x in xs)
            return xp.tensordot(a, b, axes=(list(axes_a), list(axes_b)),
                                precision=lowering.HIGHEST)
    raise mismatch(n.op, n.attrs)


def tensordot_python(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line of minilazy code that records a ``TENSORDOT`` node again.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> a = data_leaf(None, (2,), dtypes.float64)
        >>> n = Node(Op.TENSORDOT, (a, a), Contract((0,), (0,)), (), dtypes.float64)
        >>> tensordot_python("v2", n, ["v0", "v1"])
        ['v2 = ml.tensordot(v0, v1, axes=((0,), (0,)))']
    """
    match n.attrs:
        case Contract(a, b):
            return [f"{result} = ml.tensordot({args[0]}, {args[1]}, axes=({a!r}, {b!r}))"]
    raise mismatch(n.op, n.attrs)


ir.FAMILY.update({Op.LINALG: (Linalg,), Op.TENSORDOT: (Contract,)})
printers.TEXT[Linalg] = text
printers.TEXT[Contract] = lambda a: f"axes={list(a.a)},{list(a.b)}"
infer.INFER[Op.TENSORDOT] = tensordot
lowering.LOWER[Op.TENSORDOT] = lowering.with_namespace(contracted)
reference.REFERENCE[Op.TENSORDOT] = reference.with_namespace(contracted)
pycode.PYTHON[Op.TENSORDOT] = tensordot_python
infer.INFER[Op.LINALG] = rule
lowering.LOWER[Op.LINALG] = lowering.with_namespace(evaluate)
reference.REFERENCE[Op.LINALG] = reference.with_namespace(evaluate)
pycode.PYTHON[Op.LINALG] = python
