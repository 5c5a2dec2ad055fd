"""Elementwise functions: the Array API names, each recording one op.

In the Array API namespace (``minilazy.api``). Every unary and binary op of the IR is exposed under
its Array API name (``ml.exp``, ``ml.atan2``, ``ml.bitwise_left_shift``...), generated from the
op table so that the name, the op and the docstring cannot drift apart. Python numbers are weak
scalar parameters (NEP 50). Never imports jax.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from minilazy.api.creation import device_of, tensor
from minilazy.api.keywords import keywords
from minilazy.api.scalars import check_scalar, is_weak, result_type, scalar
from minilazy.api.tensor import Tensor, TensorLike, as_node, binary, record
from minilazy.core import dtypes
from minilazy.core.attrs import NONE, Cast
from minilazy.core.dtypes import DType, DTypeLike
from minilazy.core.ir import Device, Node, Op


def _unary(op: Op, summary: str, example: str = "[1.0, 2.0]") -> Callable[[TensorLike], Tensor]:
    def fn(x: TensorLike, /) -> Tensor:
        t = tensor(x)
        return record(op, (t._node,), NONE, t.device)

    fn.__name__ = fn.__qualname__ = op.value
    fn.__doc__ = f"""{summary} Elementwise; recorded, not run.

    Example:
        >>> import minilazy as ml
        >>> ml.{op.value}(ml.asarray({example})).shape
        (2,)
    """
    return fn


def _binary(op: Op, summary: str) -> Callable[[TensorLike, TensorLike], Tensor]:
    def fn(x1: TensorLike, x2: TensorLike, /) -> Tensor:
        if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):  # a Python number
            # stays weak (NEP 50): the other operand is the one made a tensor
            x1, x2 = (x1, tensor(x2)) if is_weak(x1) and not is_weak(x2) else (tensor(x1), x2)
        return binary(op, x1, x2)

    fn.__name__ = fn.__qualname__ = op.value
    fn.__doc__ = f"""{summary} Elementwise with broadcasting; recorded, not run.

    Python numbers are weak scalars: they take the tensor's dtype, as in NumPy 2.

    Example:
        >>> import minilazy as ml
        >>> ml.{op.value}(ml.asarray([1, 2], dtype=ml.int8), 1).shape
        (2,)
    """
    return fn


# One public function per elementwise op, named as in the Array API (the op's value).
negative = _unary(Op.NEG, "Negation, -x.")
abs = _unary(Op.ABS, "Absolute value.")
sign = _unary(Op.SIGN, "Sign: -1, 0 or 1 (NaN stays NaN).")
sqrt = _unary(Op.SQRT, "Square root.")
square = _unary(Op.SQUARE, "x * x.")
exp = _unary(Op.EXP, "e to the power x.")
expm1 = _unary(Op.EXPM1, "exp(x) - 1, accurate near 0.")
log = _unary(Op.LOG, "Natural logarithm.")
log1p = _unary(Op.LOG1P, "log(1 + x), accurate near 0.")
log2 = _unary(Op.LOG2, "Base-2 logarithm.")
log10 = _unary(Op.LOG10, "Base-10 logarithm.")
sin = _unary(Op.SIN, "Sine.")
cos = _unary(Op.COS, "Cosine.")
tan = _unary(Op.TAN, "Tangent.")
asin = _unary(Op.ASIN, "Inverse sine.")
acos = _unary(Op.ACOS, "Inverse cosine.")
atan = _unary(Op.ATAN, "Inverse tangent.")
sinh = _unary(Op.SINH, "Hyperbolic sine.")
cosh = _unary(Op.COSH, "Hyperbolic cosine.")
tanh = _unary(Op.TANH, "Hyperbolic tangent.")
asinh = _unary(Op.ASINH, "Inverse hyperbolic sine.")
acosh = _unary(Op.ACOSH, "Inverse hyperbolic cosine.")
atanh = _unary(Op.ATANH, "Inverse hyperbolic tangent.")
floor = _unary(Op.FLOOR, "Round down (integers unchanged).")
ceil = _unary(Op.CEIL, "Round up (integers unchanged).")
round = _unary(Op.ROUND, "Round half to even (integers unchanged).")
trunc = _unary(Op.TRUNC, "Round towards zero (integers unchanged).")
logical_not = _unary(Op.LOGICAL_NOT, "Logical not.")
bitwise_invert = _unary(Op.BITWISE_INVERT, "Bitwise not, ~x.", "[1, 2]")
isnan = _unary(Op.ISNAN, "True where NaN.")
isinf = _unary(Op.ISINF, "True where infinite.")
isfinite = _unary(Op.ISFINITE, "True where finite.")
real = _unary(Op.REAL, "The real part, of the complex dtype's part type (a real tensor: itself).",
              "[1 + 2j, 3j]")
imag = _unary(Op.IMAG, "The imaginary part (a real tensor: zeros of its dtype).", "[1 + 2j, 3j]")
conj = _unary(Op.CONJ, "The complex conjugate (a real tensor: itself).", "[1 + 2j, 3j]")

add = _binary(Op.ADD, "x1 + x2.")
subtract = _binary(Op.SUB, "x1 - x2.")
multiply = _binary(Op.MUL, "x1 * x2.")
divide = _binary(Op.DIV, "True division, x1 / x2.")
floor_divide = _binary(Op.FLOOR_DIV, "Floor division, x1 // x2 (integer x // 0 is 0, as NumPy).")
remainder = _binary(Op.MOD, "Remainder x1 % x2, with the sign of x2.")
pow = _binary(Op.POW, "x1 ** x2. Integer powers wrap modulo 2**bits, as NumPy's; a negative "
              "integer exponent raises ValueError when known at the call, and gives the power "
              "truncated toward zero (1, -1 or 0) when it is only known on the device.")
maximum = _binary(Op.MAXIMUM, "Elementwise maximum (NaN propagates).")
minimum = _binary(Op.MINIMUM, "Elementwise minimum (NaN propagates).")
atan2 = _binary(Op.ATAN2, "Angle of the point (x2, x1), in radians.")
equal = _binary(Op.EQ, "x1 == x2.")
not_equal = _binary(Op.NE, "x1 != x2.")
less = _binary(Op.LT, "x1 < x2.")
less_equal = _binary(Op.LE, "x1 <= x2.")
greater = _binary(Op.GT, "x1 > x2.")
greater_equal = _binary(Op.GE, "x1 >= x2.")
logical_and = _binary(Op.LOGICAL_AND, "Logical and.")
logical_or = _binary(Op.LOGICAL_OR, "Logical or.")
logical_xor = _binary(Op.LOGICAL_XOR, "Logical xor.")
bitwise_and = _binary(Op.BITWISE_AND, "Bitwise and, x1 & x2.")
bitwise_or = _binary(Op.BITWISE_OR, "Bitwise or, x1 | x2.")
bitwise_xor = _binary(Op.BITWISE_XOR, "Bitwise xor, x1 ^ x2.")
bitwise_left_shift = _binary(Op.SHIFT_LEFT, "x1 << x2.")
bitwise_right_shift = _binary(Op.SHIFT_RIGHT, "x1 >> x2 (arithmetic for signed integers).")


def signbit(x: TensorLike, /) -> Tensor:
    """Whether the sign bit is set: True for negatives, ``-0.0`` and ``-nan``; recorded, not run.

    The bit itself is read, as NumPy's ``signbit`` and the standard's (a NaN's sign too).
    Integers: ``x < 0``; booleans and complex numbers have no sign bit (``TypeError``).

    Example:
        >>> import minilazy as ml
        >>> ml.signbit(ml.asarray([-1.0, -0.0, 0.0, -ml.nan])).tolist()
        [True, True, False, True]
    """
    t = tensor(x)
    if t.dtype not in dtypes.INTEGER | dtypes.FLOATING:
        raise TypeError(f"signbit: needs a real numeric tensor, got dtype {t.dtype}")
    return record(Op.SIGNBIT, (t._node,), NONE, t.device)


def positive(x: TensorLike, /) -> Tensor:
    """+x: the same values (a new handle, so in-place ops on it do not touch ``x``).

    Numeric dtypes only: ``+`` of a boolean is NumPy's and the standard's ``TypeError``.

    Example:
        >>> import minilazy as ml
        >>> ml.positive(ml.asarray([-1])).tolist()
        [-1]
    """
    x = tensor(x)
    if x.dtype == dtypes.bool_:
        raise TypeError("positive: not defined for dtype bool (NumPy has no loop for it)")
    return Tensor(x._node, x.device)


@keywords
def astype(x: TensorLike, dtype: DTypeLike, /, *, copy: bool = True, device: Device | None = None
           ) -> Tensor:
    """``x`` converted to ``dtype`` (NumPy's ``astype`` casting: wrapping, truncating).

    ``device`` moves the result there too (``x.to_device(device)``). A complex tensor converts
    to complex or to ``bool`` (True where either part is nonzero) only: the standard wants the
    part named (``real(x)``), where NumPy would drop the imaginary part with a warning.

    Example:
        >>> import minilazy as ml
        >>> ml.astype(ml.asarray([1.7, -1.7]), ml.int32).tolist()
        [1, -1]
        >>> ml.astype(ml.asarray([1j]), ml.float64)
        Traceback (most recent call last):
        ...
        TypeError: astype: cannot convert complex128 to float64; take real(x) or imag(x) first
    """
    x = tensor(x)
    d = dtypes.canonical(dtype)
    if x.dtype in dtypes.COMPLEX and d not in dtypes.COMPLEX and d != dtypes.bool_:
        raise TypeError(f"astype: cannot convert {x.dtype} to {d}; take real(x) or imag(x) first")
    if d == x.dtype:
        t = Tensor(x._node, x.device) if copy else x
    else:
        t = record(Op.CONVERT, (x._node,), Cast(dtypes.CODE[d]), x.device)
    return t if device is None or device == t.device else t.to_device(device)


def _branch(x: TensorLike, dtype: DType, device: Device) -> Node:
    if is_weak(x):
        check_scalar(x, dtype)
        return scalar(dtype.type(x).item(), dtype)
    return as_node(x, device)


def where(condition: TensorLike, x1: TensorLike, x2: TensorLike, /) -> Tensor:
    """Elements of ``x1`` where ``condition`` is true, else of ``x2`` (broadcast together).

    Python numbers are weak, as in NumPy 2's ``np.where``: ``where(c, x_f32, 0.0)`` is float32.

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([1.0, -2.0, 3.0])
        >>> ml.where(x > 0, x, 0.0).tolist()
        [1.0, 0.0, 3.0]
    """
    c = tensor(condition, device_of(condition, x1, x2))
    device = c.device
    a, b = (x if is_weak(x) else tensor(x, device) for x in (x1, x2))
    d = result_type(a, b)
    return record(Op.WHERE, (c._node, _branch(a, d, device), _branch(b, d, device)), NONE,
                  device)


def clip(x: TensorLike, /, min: TensorLike | None = None, max: TensorLike | None = None
         ) -> Tensor:
    """``x`` limited to ``[min, max]``; the result keeps ``x``'s dtype.

    A Python int bound beyond an integer ``x``'s range that cannot bite (``min=-1`` for
    ``uint8``) is no bound, as NumPy's; one that would raises ``OverflowError``.

    Example:
        >>> import minilazy as ml
        >>> ml.clip(ml.asarray([-1, 5, 9]), 0, 6).tolist()
        [0, 5, 6]
    """
    out = x = tensor(x, device_of(x, min, max))
    if x.dtype in dtypes.INTEGER:
        info = np.iinfo(x.dtype)
        min = None if type(min) is int and min < info.min else min
        max = None if type(max) is int and max > info.max else max
    if min is not None:
        out = binary(Op.MAXIMUM, out, min)
    if max is not None:
        out = binary(Op.MINIMUM, out, max)
    return out if out.dtype == x.dtype else astype(out, x.dtype)
