"""Reductions: sum, prod, max, min, argmax, argmin, any, all, cumulative_sum, mean, var, std.

In the Array API namespace (``minilazy.api``). ``sum``/``prod``/``max``/``min``/``argmax``/
``argmin``/``any``/``all`` are one op each; ``mean``, ``var`` and ``std`` are recorded as the
same sums and divisions NumPy performs (accumulating float16 in float32, integers in float64),
so their gradients come for free. Never imports jax.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from minilazy.api.axes import normalize_axes, normalize_axis
from minilazy.api.creation import full, tensor
from minilazy.api.elementwise import astype
from minilazy.api.keywords import keywords
from minilazy.api.tensor import Tensor, TensorLike, binary, record
from minilazy.core import dtypes
from minilazy.core.attrs import NONE, Reduce, ToShape
from minilazy.core.dtypes import DType, DTypeLike
from minilazy.core.infer import describe
from minilazy.core.ir import Op
from minilazy.ops.reductions import Scan
from minilazy.ops.shaping import Axis

Axes = int | Sequence[int] | None


# The reductions for which NumPy accepts axis=0 or -1 on a 0-d array (mean/var/std do not).
_QUIRK = frozenset({"sum", "prod", "max", "min", "argmax", "argmin", "any", "all"})


def _axes(name: str, x: Tensor, axis: Axes) -> tuple[int, ...]:
    if x.ndim == 0 and isinstance(axis, int) and axis in (0, -1) and name in _QUIRK:
        return ()  # NumPy lets an int axis 0 or -1 name a 0-d array's (absent) axis
    return normalize_axes(name, axis, x.ndim)


def _reduce(op: Op, x: Tensor, axis: Axes, keepdims: bool, name: str = "") -> Tensor:
    axes = _axes(name or op.value, x, axis)
    return record(op, (x._node,), Reduce(axes, bool(keepdims)), x.device)


@keywords
def sum(x: TensorLike, /, *, axis: Axes = None, dtype: DTypeLike | None = None,
        keepdims: bool = False) -> Tensor:
    """Sum over ``axis`` (all axes when None). Integers accumulate in int64/uint64, as NumPy.

    Example:
        >>> import minilazy as ml
        >>> ml.sum(ml.asarray([[1, 2], [3, 4]]), axis=0).tolist()
        [4, 6]
    """
    x = tensor(x)
    if dtype is None:
        return _reduce(Op.SUM, x, axis, keepdims)
    d = dtypes.canonical(dtype)
    return astype(_reduce(Op.SUM, astype(x, d), axis, keepdims), d, copy=False)


@keywords
def prod(x: TensorLike, /, *, axis: Axes = None, dtype: DTypeLike | None = None,
         keepdims: bool = False) -> Tensor:
    """Product over ``axis``.

    Example:
        >>> import minilazy as ml
        >>> ml.prod(ml.asarray([1.0, 2.0, 3.0])).item()
        6.0
    """
    x = tensor(x)
    if dtype is None:
        return _reduce(Op.PROD, x, axis, keepdims)
    d = dtypes.canonical(dtype)
    return astype(_reduce(Op.PROD, astype(x, d), axis, keepdims), d, copy=False)


@keywords
def max(x: TensorLike, /, *, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis`` (NaN propagates). Zero-size reductions raise at the call.

    Example:
        >>> import minilazy as ml
        >>> ml.max(ml.asarray([1, 5, 2])).item()
        5
    """
    x = tensor(x)
    return _reduce(Op.MAX, x, axis, keepdims)


@keywords
def min(x: TensorLike, /, *, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis`` (NaN propagates).

    Example:
        >>> import minilazy as ml
        >>> ml.min(ml.asarray([[1, 5], [0, 2]]), axis=1).tolist()
        [1, 0]
    """
    x = tensor(x)
    return _reduce(Op.MIN, x, axis, keepdims)


@keywords
def argmax(x: TensorLike, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Index of the first maximum along ``axis`` (of the flattened tensor when None).

    Example:
        >>> import minilazy as ml
        >>> ml.argmax(ml.asarray([1, 5, 2])).item()
        1
    """
    x = tensor(x)
    if axis is not None:  # one axis, as NumPy (a 0-d x takes 0 or -1, as in NumPy)
        normalize_axis("argmax", axis, x.ndim or 1)
    return _reduce(Op.ARGMAX, x, axis, keepdims)


@keywords
def argmin(x: TensorLike, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Index of the first minimum along ``axis`` (of the flattened tensor when None).

    Example:
        >>> import minilazy as ml
        >>> ml.argmin(ml.asarray([[3, 1], [0, 2]]), axis=1).tolist()
        [1, 0]
    """
    x = tensor(x)
    if axis is not None:
        normalize_axis("argmin", axis, x.ndim or 1)
    return _reduce(Op.ARGMIN, x, axis, keepdims)


@keywords
def any(x: TensorLike, /, *, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """True where any element along ``axis`` is nonzero.

    Example:
        >>> import minilazy as ml
        >>> ml.any(ml.asarray([0, 0, 3])).item()
        True
    """
    x = tensor(x)
    return _reduce(Op.ANY, x, axis, keepdims)


@keywords
def all(x: TensorLike, /, *, axis: Axes = None, keepdims: bool = False) -> Tensor:
    """True where every element along ``axis`` is nonzero.

    Example:
        >>> import minilazy as ml
        >>> ml.all(ml.asarray([1, 0, 3])).item()
        False
    """
    x = tensor(x)
    return _reduce(Op.ALL, x, axis, keepdims)


@keywords
def cumulative_sum(x: TensorLike, /, *, axis: int | None = None, dtype: DTypeLike | None = None,
                   include_initial: bool = False) -> Tensor:
    """Running sums along ``axis``: element ``i`` is the sum of elements ``0..i`` (one op).

    As NumPy 2's ``np.cumulative_sum``: ``axis`` may be left out only when ``x`` has at most one
    dimension; integers accumulate in int64/uint64 as :func:`sum` does (``dtype`` overrides);
    ``include_initial`` starts with the empty sum, 0, so the axis grows by one.

    Example:
        >>> import minilazy as ml
        >>> ml.cumulative_sum(ml.asarray([1, 2, 3]), include_initial=True).tolist()
        [0, 1, 3, 6]
    """
    x = tensor(x)
    if x.ndim == 0:  # NumPy scans a 0-d array as one element
        x = record(Op.RESHAPE, (x._node,), ToShape((1,)), x.device)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"cumulative_sum: axis is required for {describe(x._node)}, which "
                             "has more than one dimension")
        axis = 0
    a = normalize_axis("cumulative_sum", axis, x.ndim)
    d = None if dtype is None else dtypes.canonical(dtype)
    scanned = record(Op.CUMSUM, (x._node if d is None else astype(x, d)._node,), Scan(a, False),
                     x.device)
    out = scanned if d is None else astype(scanned, d, copy=False)
    if not include_initial:
        return out
    zero = full((*x.shape[:a], 1, *x.shape[a + 1:]), 0, dtype=out.dtype, device=x.device)
    return record(Op.CONCAT, (zero._node, out._node), Axis(a), x.device)


def _mean_dtypes(x: Tensor) -> tuple[DType, DType]:
    """(accumulator, result) dtypes of NumPy's mean: f16 sums in f32; integers give float64."""
    if x.dtype in dtypes.INEXACT:
        return (dtypes.float32 if x.dtype == dtypes.float16 else x.dtype), x.dtype
    return dtypes.float64, dtypes.float64


def _count(name: str, x: Tensor, axis: Axes) -> int:
    return math.prod(x.shape[a] for a in _axes(name, x, axis))


def _quotient(total: Tensor, n: float, d: DType) -> Tensor:
    """NumPy's ``true_divide(total, n, casting="unsafe")`` into ``d``: an integer truncates.

    The quotient is taken in float64 (complex128 for complex ``d``), as NumPy's is.
    """
    wide = dtypes.complex128 if d in dtypes.COMPLEX else dtypes.float64
    return astype(binary(Op.DIV, astype(total, wide, copy=False), n), d, copy=False)


def _in_dtype(x: Tensor, axis: Axes, d: DType, correction: float | None, keepdims: bool,
              name: str) -> Tensor:
    """NumPy's ``mean`` (``correction`` None) or ``var`` with ``dtype=d``: every sum in ``d``."""
    n = _count(name, x, axis)
    m = _quotient(sum(x, axis=axis, dtype=d, keepdims=correction is not None or keepdims), n, d)
    if correction is None:
        return m
    c = binary(Op.SUB, x, m)  # in x's and d's common dtype (bool - bool: NumPy's TypeError)
    sq = binary(Op.MUL, c, record(Op.CONJ, (c._node,), NONE, c.device))
    sq = record(Op.REAL, (sq._node,), NONE, c.device) if sq.dtype in dtypes.COMPLEX else sq
    return _quotient(sum(sq, axis=axis, dtype=d, keepdims=keepdims),
                     n - correction if n > correction else 0.0, d)


@keywords
def mean(x: TensorLike, /, *, axis: Axes = None, keepdims: bool = False,
         dtype: DTypeLike | None = None) -> Tensor:
    """Arithmetic mean over ``axis`` (integers give float64, as NumPy).

    ``dtype`` (NumPy's, beyond the standard) sums in ``dtype`` and gives the quotient in it,
    as NumPy does: an integer ``dtype`` truncates (``mean([1, 2], dtype=int64)`` is 1).

    Example:
        >>> import minilazy as ml
        >>> ml.mean(ml.asarray([1, 2, 3, 4])).item()
        2.5
        >>> ml.mean(ml.asarray([1, 2, 4]), dtype=ml.int64).item()
        2
    """
    x = tensor(x)
    if dtype is not None:
        return _in_dtype(x, axis, dtypes.canonical(dtype), None, keepdims, "mean")
    acc, out = _mean_dtypes(x)
    total = _reduce(Op.SUM, astype(x, acc, copy=False), axis, keepdims, "mean")
    return astype(binary(Op.DIV, total, _count("mean", x, axis)), out, copy=False)


def _var(x: Tensor, axis: Axes, correction: float, keepdims: bool, name: str,
         dtype: DTypeLike | None = None) -> Tensor:
    if x.dtype in dtypes.COMPLEX:  # the standard's var and std take real dtypes only
        raise TypeError(f"{name}: not defined for complex dtypes, got {describe(x._node)}; "
                        "NumPy's variance of it is var(real(x)) + var(imag(x))")
    if dtype is not None:
        return _in_dtype(x, axis, dtypes.canonical(dtype), correction, keepdims, name)
    acc, out = _mean_dtypes(x)
    xa = astype(x, acc, copy=False)
    n = _count(name, x, axis)
    centred = binary(Op.SUB, xa, binary(Op.DIV, _reduce(Op.SUM, xa, axis, True, name), n))
    total = _reduce(Op.SUM, binary(Op.MUL, centred, centred), axis, keepdims, name)
    return astype(binary(Op.DIV, total, float(n - correction) if n > correction else 0.0), out,
                  copy=False)


@keywords
def var(x: TensorLike, /, *, axis: Axes = None, correction: int | float = 0,
        keepdims: bool = False, dtype: DTypeLike | None = None) -> Tensor:
    """Variance over ``axis``: ``sum((x - mean)**2) / (n - correction)``, as NumPy computes it.

    ``dtype`` (NumPy's, beyond the standard): the mean and both sums in ``dtype``, each
    quotient converted to it, as NumPy does (an integer ``dtype`` truncates both).

    Example:
        >>> import minilazy as ml
        >>> ml.var(ml.asarray([1.0, 2.0, 3.0, 4.0])).item()
        1.25
    """
    x = tensor(x)
    return _var(x, axis, correction, keepdims, "var", dtype)


@keywords
def std(x: TensorLike, /, *, axis: Axes = None, correction: int | float = 0,
        keepdims: bool = False, dtype: DTypeLike | None = None) -> Tensor:
    """Standard deviation over ``axis``: ``sqrt(var(x))`` (``dtype``: as in :func:`var`).

    An integer or boolean ``dtype`` truncates the root of a single variance, and raises
    ``TypeError`` for several, as NumPy does (its square root cannot write into them).

    Example:
        >>> import minilazy as ml
        >>> ml.std(ml.asarray([1.0, 3.0])).item()
        1.0
    """
    x = tensor(x)
    v = _var(x, axis, correction, keepdims, "std", dtype)
    if v.dtype in dtypes.INEXACT:
        return record(Op.SQRT, (v._node,), NONE, v.device)
    if v.ndim:
        raise TypeError(f"std: NumPy cannot write the square roots into dtype {v.dtype} (it "
                        f"can for one value); take std(x).astype({v.dtype}) instead")
    return astype(record(Op.SQRT, (astype(v, dtypes.float64)._node,), NONE, v.device), v.dtype)
