"""Array API functions composed from recorded ops: dtype queries, careful math, dot products.

In the Array API namespace (``minilazy.api``). Nothing here adds an op to the engine: each
function records existing ops (``hypot`` is a scaled ``sqrt``, ``copysign`` a ``signbit`` and
a ``where``), so every table (lowering, autodiff, reference) already covers it. The dtype
functions (``can_cast``, ``isdtype``) record nothing. Never imports jax.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from minilazy.api.axes import normalize_axis
from minilazy.api.creation import asarray, device_of, full, tensor, tensors
from minilazy.api.elementwise import (
    abs,
    astype,
    conj,
    divide,
    exp,
    isinf,
    log1p,
    logical_or,
    maximum,
    minimum,
    negative,
    not_equal,
    signbit,
    sqrt,
    where,
)
from minilazy.api.keywords import keywords
from minilazy.api.reductions import sum as reduce_sum
from minilazy.api.scalars import result_type
from minilazy.api.shaping import broadcast_to, concat
from minilazy.api.tensor import Tensor, TensorLike
from minilazy.core import dtypes
from minilazy.core.dtypes import DType, DTypeLike
from minilazy.core.ir import Device

# The standard's constants (module attributes): plain Python values, weak in every op.
e: Final = math.e
pi: Final = math.pi
inf: Final = math.inf
nan: Final = math.nan
newaxis: Final = None

# The standard's dtype kinds (``isdtype``), as sets of minilazy dtypes.
KINDS: Final[dict[str, frozenset[DType]]] = {
    "bool": frozenset({dtypes.bool_}),
    "signed integer": dtypes.SIGNED,
    "unsigned integer": dtypes.UNSIGNED,
    "integral": dtypes.INTEGER,
    "real floating": dtypes.FLOATING,
    "complex floating": dtypes.COMPLEX,
    "numeric": dtypes.NUMERIC,
}


def can_cast(from_: DTypeLike | Tensor | np.ndarray[Any, Any], to: DTypeLike, /
             ) -> bool:
    """Whether ``from_`` (a dtype or an array's) promotes to ``to``, so a cast loses nothing.

    True when promoting the two gives ``to``, by minilazy's (NumPy 2's) promotion: across kinds
    too, so ``int32 -> float64`` is True, where the standard's table leaves it unspecified.

    Example:
        >>> import minilazy as ml
        >>> ml.can_cast(ml.int8, ml.int16), ml.can_cast(ml.float64, ml.float32)
        (True, False)
    """
    source = dtypes.canonical(from_.dtype if isinstance(from_, (Tensor, np.ndarray)) else from_)
    target = dtypes.canonical(to)
    return result_type(source, target) == target


def isdtype(dtype: DTypeLike, kind: DTypeLike | str | tuple[DTypeLike | str, ...]) -> bool:
    """Whether ``dtype`` is ``kind``: a dtype, a kind name (``"real floating"``...) or a tuple.

    Kind names are the standard's: ``bool``, ``signed integer``, ``unsigned integer``,
    ``integral``, ``real floating``, ``complex floating``, ``numeric`` (complex included).

    Example:
        >>> import minilazy as ml
        >>> ml.isdtype(ml.uint8, ("bool", "integral")), ml.isdtype(ml.float16, "numeric")
        (True, True)
    """
    d = dtypes.canonical(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str) and kind in KINDS:
        return d in KINDS[kind]
    try:
        return d == dtypes.canonical(kind)
    except TypeError:
        raise ValueError(f"isdtype: {kind!r} is neither a dtype nor one of the kinds "
                         f"{sorted(KINDS)}") from None


def _pair(name: str, x1: TensorLike, x2: TensorLike) -> tuple[Tensor, Tensor]:
    """``x1`` and ``x2`` as tensors of their common floating dtype (numbers stay parameters)."""
    device = device_of(x1, x2)
    # Host arrays become tensors; Python numbers stay weak for the promotion (NEP 50).
    a, b = (x if isinstance(x, (Tensor, bool, int, float)) else tensor(x, device)
            for x in (x1, x2))
    d = result_type(a, b)
    if d not in dtypes.FLOATING:
        raise TypeError(f"{name}: needs real floating-point operands, got dtype {d}")
    return _as(a, d, device), _as(b, d, device)


def _as(x: Tensor | bool | int | float, d: DType, device: Device | None) -> Tensor:
    if isinstance(x, Tensor):
        return x if x.dtype == d else astype(x, d)
    return full((), x, dtype=d, device=device)  # a 0-d broadcast of a scalar parameter


def hypot(x1: TensorLike, x2: TensorLike, /) -> Tensor:
    """The length of the hypotenuse, sqrt(x1² + x2²), without overflow or underflow.

    Scaled by the larger magnitude as libm's ``hypot`` is, so ``hypot(1e300, 1e300)`` is
    finite; an infinite operand gives ``inf`` even when the other is NaN (IEEE 754, NumPy).
    Values agree with NumPy within a few ulps (NumPy calls libm, correctly rounded or nearly).

    Example:
        >>> import minilazy as ml
        >>> ml.hypot(ml.asarray([3.0, 3e300]), ml.asarray([4.0, 4e300])).tolist()
        [5.0, 5e+300]
    """
    a, b = _pair("hypot", x1, x2)
    a, b = abs(a), abs(b)
    big, small = maximum(a, b), minimum(a, b)
    safe = where(big == 0, 1, big)  # 0/0 would be NaN; the result there is 0 anyway
    ratio = divide(small, safe)
    out = big * sqrt(1 + ratio * ratio)
    return where(logical_or(isinf(a), isinf(b)), inf, out)


def logaddexp(x1: TensorLike, x2: TensorLike, /) -> Tensor:
    """``log(exp(x1) + exp(x2))``, computed stably as ``max + log1p(exp(min - max))``.

    Special cases as NumPy: equal operands give ``x + log(2)`` (so two ``-inf`` give ``-inf``
    and two ``inf`` give ``inf``, where the difference would be NaN); NaN propagates. The
    gradient is ``exp(x - logaddexp(x1, x2))`` for each operand: 0.5 each at a tie, as JAX's.

    Example:
        >>> import minilazy as ml
        >>> ml.logaddexp(ml.asarray([0.0, 1000.0]), ml.asarray([0.0, 1000.0])).tolist()
        [0.6931471805599453, 1000.6931471805599]
    """
    a, b = _pair("logaddexp", x1, x2)
    big, small = maximum(a, b), minimum(a, b)  # at a tie each splits its slope evenly
    # (a tie's gap is 0, also for two infinities, whose difference would be NaN)
    return big + log1p(exp(where(a == b, 0.0, small - big)))


def copysign(x1: TensorLike, x2: TensorLike, /) -> Tensor:
    """``x1``'s magnitude with ``x2``'s sign (``-0.0`` counts as negative; see ``signbit``).

    Example:
        >>> import minilazy as ml
        >>> ml.copysign(ml.asarray([1.0, -2.0, 3.0]), ml.asarray([-0.0, 1.0, -5.0])).tolist()
        [-1.0, 2.0, -3.0]
    """
    a, b = _pair("copysign", x1, x2)
    magnitude = abs(a)
    return where(signbit(b), negative(magnitude), magnitude)


@keywords
def vecdot(x1: TensorLike, x2: TensorLike, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along ``axis``, broadcasting the other axes.

    Complex ``x1`` is conjugated, as the standard (and NumPy's ``vecdot``) says. The result
    keeps the operands' promoted dtype (NumPy's ``vecdot``; ``sum`` would widen
    integers to int64). ``axis`` is negative, in ``[-N, -1]`` with ``N`` the smaller rank, as
    the standard says; a non-negative one only when both ranks agree (then it is unambiguous).

    Example:
        >>> import minilazy as ml
        >>> ml.vecdot(ml.asarray([[1, 2], [3, 4]]), ml.asarray([1, 1])).tolist()
        [3, 7]
    """
    x1, x2 = tensors(x1, x2)
    normalize_axis("vecdot", axis, max(x1.ndim, x2.ndim))  # an int, or TypeError / AxisError
    n, axis = min(x1.ndim, x2.ndim), int(axis)
    if axis >= 0 and x1.ndim == x2.ndim:
        axis -= n
    if not -n <= axis < 0:
        raise ValueError(f"vecdot: axis {axis} must be in [-{n}, -1] for shapes {x1.shape} and "
                         f"{x2.shape} (non-negative only when their ranks agree)")
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} has size {x1.shape[axis]} in x1 {x1.shape} and "
                         f"{x2.shape[axis]} in x2 {x2.shape}; they must be equal")
    product = (conj(x1) if x1.dtype in dtypes.COMPLEX else x1) * x2  # the standard's: conj(x1)
    return reduce_sum(product, axis=axis, dtype=product.dtype)


@keywords
def count_nonzero(x: TensorLike, /, *, axis: int | tuple[int, ...] | None = None,
                  keepdims: bool = False) -> Tensor:
    """How many elements of ``x`` are nonzero (true, for booleans) along ``axis``, as int64.

    Example:
        >>> import minilazy as ml
        >>> ml.count_nonzero(ml.asarray([[0, 1], [2, 3]]), axis=1).tolist()
        [1, 2]
    """
    x = tensor(x)
    nonzero = x if x.dtype == dtypes.bool_ else not_equal(x, 0)
    return reduce_sum(nonzero, axis=axis, dtype=dtypes.DEFAULT_INT, keepdims=keepdims)


@keywords
def diff(x: TensorLike, /, *, axis: int = -1, n: int = 1, prepend: TensorLike | None = None,
         append: TensorLike | None = None) -> Tensor:
    """The ``n``-th forward difference along ``axis``: ``x[i + 1] - x[i]``, ``n`` times.

    ``prepend`` and ``append`` are joined to ``x`` along ``axis`` first (a number or 0-d one
    as a slice of that value; not when ``n`` is 0: ``x`` itself then, whatever ``axis``, as in
    NumPy). Booleans differ by ``!=``, as in NumPy.

    Example:
        >>> import minilazy as ml
        >>> ml.diff(ml.asarray([1, 4, 9, 16]), n=2).tolist()
        [2, 2]
    """
    x = tensor(x, device_of(x, prepend, append))
    if n == 0:  # NumPy returns x itself then, prepend, append and axis unread
        return x
    if n < 0:
        raise ValueError(f"diff: n must be >= 0, got {n}")
    ax = normalize_axis("diff", axis, x.ndim)
    ends = [tensor(t, x.device) if t is not None else None for t in (prepend, append)]
    ends = [broadcast_to(t, (*x.shape[:ax], 1, *x.shape[ax + 1:])) if t is not None and
            t.ndim == 0 else t for t in ends]  # a 0-d end is a slice of its value, as NumPy's
    parts = [t for t in (ends[0], x, ends[1]) if t is not None]
    out = concat(parts, axis=ax) if len(parts) > 1 else x
    for _ in range(min(n, out.shape[ax])):  # then empty, and it stays so: never loop 2**62 times
        head = (slice(None),) * ax
        later, earlier = out[(*head, slice(1, None))], out[(*head, slice(None, -1))]
        out = not_equal(later, earlier) if out.dtype == dtypes.bool_ else later - earlier
    return out


def from_dlpack(x: Any, /, *, device: Device | None = None, copy: bool | None = None) -> Tensor:
    """A tensor from any DLPack exporter (a NumPy array, a jax array, a torch tensor...).

    A minilazy tensor gives a handle on the same values, nothing run (moved if ``device`` says
    so). Any other exporter is imported by NumPy (a host view where it can) and its values are
    copied to ``device`` as ``asarray`` copies them: a tensor never sees later writes to the
    producer's memory. So ``copy=False`` (share, never copy) is honoured only where sharing and
    copying cannot be told apart: a minilazy tensor on ``device``, or an export that nobody can
    write (a jax array's, read-only; one private copy is still made, unobservably). Writable
    memory (a NumPy array, whose owner may write it even when it is marked read-only, or a torch
    tensor) raises ``ValueError``, as a move to another device does.

    Example:
        >>> import numpy as np
        >>> import minilazy as ml
        >>> ml.from_dlpack(np.arange(3)).tolist()
        [0, 1, 2]
        >>> ml.from_dlpack(np.arange(3), copy=False)
        Traceback (most recent call last):
        ...
        ValueError: from_dlpack: copy=False would share ndarray memory that its owner can write
    """
    if isinstance(x, Tensor):
        if copy is False and device is not None and device != x.device:
            raise ValueError(f"from_dlpack: copy=False, but moving to {device} copies")
        return asarray(x, device=device, copy=copy)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} is not a DLPack exporter (it has no "
                        "__dlpack__); use asarray")
    view = np.from_dlpack(x)
    if copy is False and (isinstance(x, np.ndarray) or view.flags.writeable):
        raise ValueError(f"from_dlpack: copy=False would share {type(x).__name__} memory that "
                         "its owner can write")
    return asarray(view, device=device)
