"""The elementwise family: every elementwise function beyond core's arithmetic, registered.

With ``where`` and ``astype`` (``CONVERT``), the selection and the conversion.

Core computes ``negative``, ``add``, ``subtract``, ``multiply`` and ``divide``; this module adds
the other unary and binary ops of the standard (roots, exponentials and logarithms,
trigonometry, rounding, comparisons, logic, bits, complex parts), each with rules like core's
own: NumPy's loop typing for the shape and dtype (its ufunc in ``infer.UFUNC``, or a loop rule
in ``infer.LOOPS`` for ``real``/``imag``, ``round`` and the orderings), a
``jax.numpy`` function for the lowering and a NumPy one for the reference (both through
``lowering.elementwise``/``reference.elementwise``, which cast to the loop dtypes), and the
public call for the printer. Where XLA and NumPy part ways the function is mended: the integer
corners NumPy defines (``ops/integers.py``: powers, floor division, remainders, signs) and the
standard's complex special values (``ops/complex.py``, the same rows for both namespaces).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import jax
import jax.numpy as jnp
import numpy as np

from minilazy.core import dtypes, infer, ir, lowering
from minilazy.core.attrs import Attrs, Cast, NoAttrs, mismatch
from minilazy.core.dtypes import DType
from minilazy.core.infer import InType, describe
from minilazy.core.ir import Node, Op, Shape, ShapeError
from minilazy.introspect import pycode, reference
from minilazy.ops.complex import special_values
from minilazy.ops.integers import floor_divide, power, remainder, sign, truncated

Array = jax.Array
# The family's ops by arity (core's arithmetic among them), and the comparisons.
UNARY: Final = frozenset({
    Op.NEG, Op.ABS, Op.SIGN, Op.SQRT, Op.SQUARE, Op.EXP, Op.EXPM1, Op.LOG, Op.LOG1P, Op.LOG2,
    Op.LOG10, Op.SIN, Op.COS, Op.TAN, Op.ASIN, Op.ACOS, Op.ATAN, Op.SINH, Op.COSH, Op.TANH,
    Op.ASINH, Op.ACOSH, Op.ATANH, Op.FLOOR, Op.CEIL, Op.ROUND, Op.TRUNC, Op.LOGICAL_NOT,
    Op.BITWISE_INVERT, Op.ISNAN, Op.ISINF, Op.ISFINITE, Op.SIGNBIT, Op.REAL, Op.IMAG, Op.CONJ,
})
BINARY: Final = frozenset({
    Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.FLOOR_DIV, Op.MOD, Op.POW, Op.MAXIMUM, Op.MINIMUM,
    Op.ATAN2, Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.LOGICAL_AND, Op.LOGICAL_OR,
    Op.LOGICAL_XOR, Op.BITWISE_AND, Op.BITWISE_OR, Op.BITWISE_XOR, Op.SHIFT_LEFT, Op.SHIFT_RIGHT,
})
COMPARISONS: Final = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE})


def _int_only(fn: Callable[..., Array]) -> Callable[..., Array]:
    """``fn`` on floats; identity on integers and bools (floor/ceil/trunc/round of an int)."""
    return lambda x: x if x.dtype.kind in "biu" else fn(x)


_PY_COMPARE: Final = {Op.EQ: operator.eq, Op.NE: operator.ne, Op.LT: operator.lt,
                      Op.LE: operator.le, Op.GT: operator.gt, Op.GE: operator.ge}


def _compare(fn: Callable[[Array, Array], Array], op: Op) -> Callable[[Array, Array], Array]:
    """An exact comparison, also of int64 with uint64 (NumPy 2 has loops for that pair)."""

    def compare(a: Array, b: Array) -> Array:
        if a.dtype == b.dtype:
            return fn(a, b)
        u64 = np.dtype(np.uint64)  # a negative int64 is below every uint64; else compare as u64
        if a.dtype.kind == "i":
            return jnp.where(a < 0, _PY_COMPARE[op](-1, 0), fn(lowering.astype(a, u64), b))
        return jnp.where(b < 0, _PY_COMPARE[op](0, -1), fn(a, lowering.astype(b, u64)))

    return compare


UNARY_FN: Final[Mapping[Op, Callable[[Array], Array]]] = {
    Op.ABS: jnp.abs, Op.SIGN: sign, Op.SQRT: jnp.sqrt,
    Op.SQUARE: jnp.square, Op.EXP: jnp.exp, Op.EXPM1: jnp.expm1, Op.LOG: jnp.log,
    Op.LOG1P: jnp.log1p, Op.LOG2: jnp.log2, Op.LOG10: jnp.log10, Op.SIN: jnp.sin, Op.COS: jnp.cos,
    Op.TAN: jnp.tan, Op.ASIN: jnp.arcsin, Op.ACOS: jnp.arccos, Op.ATAN: jnp.arctan,
    Op.SINH: jnp.sinh, Op.COSH: jnp.cosh, Op.TANH: jnp.tanh, Op.ASINH: jnp.arcsinh,
    Op.ACOSH: jnp.arccosh, Op.ATANH: jnp.arctanh, Op.FLOOR: _int_only(jnp.floor),
    Op.CEIL: _int_only(jnp.ceil), Op.ROUND: _int_only(jnp.round), Op.TRUNC: _int_only(jnp.trunc),
    Op.LOGICAL_NOT: jnp.logical_not, Op.BITWISE_INVERT: jnp.invert, Op.ISNAN: jnp.isnan,
    Op.ISINF: jnp.isinf, Op.ISFINITE: jnp.isfinite, Op.REAL: jnp.real, Op.IMAG: jnp.imag,
    Op.CONJ: jnp.conj, Op.SIGNBIT: jnp.signbit,
}
BINARY_FN: Final[Mapping[Op, Callable[[Array, Array], Array]]] = {
    Op.FLOOR_DIV: floor_divide, Op.MOD: remainder, Op.POW: power, Op.MAXIMUM: jnp.maximum,
    Op.MINIMUM: jnp.minimum, Op.ATAN2: jnp.arctan2, Op.LOGICAL_AND: jnp.logical_and,
    Op.LOGICAL_OR: jnp.logical_or, Op.LOGICAL_XOR: jnp.logical_xor,
    Op.BITWISE_AND: jnp.bitwise_and, Op.BITWISE_OR: jnp.bitwise_or,
    Op.BITWISE_XOR: jnp.bitwise_xor, Op.SHIFT_LEFT: jnp.left_shift,
    Op.SHIFT_RIGHT: jnp.right_shift,
    **{op: _compare(fn, op) for op, fn in [
        (Op.EQ, jnp.equal), (Op.NE, jnp.not_equal), (Op.LT, jnp.less), (Op.LE, jnp.less_equal),
        (Op.GT, jnp.greater), (Op.GE, jnp.greater_equal)]},
}
# Core's own elementwise ops (lowering._ARITHMETIC); all the others are this family's.
CORE: Final = frozenset({Op.NEG, Op.ADD, Op.SUB, Op.MUL, Op.DIV})
assert set(UNARY_FN) == UNARY - CORE and set(BINARY_FN) == BINARY - CORE

# The NumPy ufunc that types each op (and computes it in the reference), as core's own.
UFUNC: Final[Mapping[Op, np.ufunc]] = {
    Op.ABS: np.absolute, Op.SIGN: np.sign, Op.SQRT: np.sqrt, Op.SQUARE: np.square, Op.EXP: np.exp,
    Op.EXPM1: np.expm1, Op.LOG: np.log, Op.LOG1P: np.log1p, Op.LOG2: np.log2, Op.LOG10: np.log10,
    Op.SIN: np.sin, Op.COS: np.cos, Op.TAN: np.tan, Op.ASIN: np.arcsin, Op.ACOS: np.arccos,
    Op.ATAN: np.arctan, Op.SINH: np.sinh, Op.COSH: np.cosh, Op.TANH: np.tanh,
    Op.ASINH: np.arcsinh, Op.ACOSH: np.arccosh, Op.ATANH: np.arctanh, Op.FLOOR: np.floor,
    Op.CEIL: np.ceil, Op.ROUND: np.rint, Op.TRUNC: np.trunc, Op.LOGICAL_NOT: np.logical_not,
    Op.BITWISE_INVERT: np.invert, Op.ISNAN: np.isnan, Op.ISINF: np.isinf,
    Op.ISFINITE: np.isfinite, Op.SIGNBIT: np.signbit, Op.CONJ: np.conjugate,
    Op.FLOOR_DIV: np.floor_divide, Op.MOD: np.remainder, Op.POW: np.power,
    Op.MAXIMUM: np.maximum, Op.MINIMUM: np.minimum, Op.ATAN2: np.arctan2, Op.EQ: np.equal,
    Op.NE: np.not_equal, Op.LT: np.less, Op.LE: np.less_equal, Op.GT: np.greater,
    Op.GE: np.greater_equal, Op.LOGICAL_AND: np.logical_and, Op.LOGICAL_OR: np.logical_or,
    Op.LOGICAL_XOR: np.logical_xor, Op.BITWISE_AND: np.bitwise_and, Op.BITWISE_OR: np.bitwise_or,
    Op.BITWISE_XOR: np.bitwise_xor, Op.SHIFT_LEFT: np.left_shift, Op.SHIFT_RIGHT: np.right_shift,
}
# NumPy's functions for the reference: its ufuncs, and np.real and np.imag (no ufuncs).
_NUMPY: Final[Mapping[Op, Callable[..., Any]]] = {**UFUNC, Op.REAL: np.real, Op.IMAG: np.imag}


def part(op: Op, *types: InType) -> tuple[DType, ...]:
    """``real``'s and ``imag``'s loop (no ufuncs): a complex dtype's part, a real dtype itself.

    Example:
        >>> part(Op.IMAG, dtypes.complex64)
        (dtype('complex64'), dtype('float32'))
    """
    d = dtypes.canonical(types[0])
    return (d, dtypes.PART.get(d, d))


def real_only(op: Op, *types: InType) -> tuple[DType, ...]:
    """An ordering's loop: NumPy orders complex numbers, the standard does not (TypeError).

    Example:
        >>> real_only(Op.LT, dtypes.complex64, float)
        Traceback (most recent call last):
        ...
        TypeError: less: not defined for complex dtypes (complex64, float)
    """
    if any(t is complex or t in dtypes.COMPLEX for t in types):
        raise TypeError(f"{op.value}: not defined for complex dtypes ({infer.names(types)})")
    return infer.loop(op, *types)


def rounded(op: Op, *types: InType) -> tuple[DType, ...]:
    """``round``'s loop: an integer stays itself (``np.rint``'s loop would make a float).

    Example:
        >>> rounded(Op.ROUND, dtypes.int8)
        (dtype('int8'), dtype('int8'))
    """
    t = types[0]
    return (t, t) if isinstance(t, np.dtype) and t in dtypes.INTEGER else infer.loop(op, *types)


def _numpy_power(a: Any, b: Any) -> Any:
    """NumPy's power; a negative integer exponent truncates, as the lowering's does.

    (NumPy raises; a lazy exponent is known only after the barrier.)
    """
    if a.dtype.kind not in "iu":
        return _NUMPY[Op.POW](a, b)
    return truncated(np, a, b, np.power(a, np.where(b < 0, 0, b)))


def _numpy(op: Op) -> Callable[..., Any]:
    """``op``'s NumPy function for the reference, mended as the lowering's is."""
    if op is Op.ROUND:
        return np.round  # half to even, as XLA's round_nearest_even (np.rint's loop would do)
    fn: Callable[..., Any] = _numpy_power if op is Op.POW else _NUMPY[op]
    return special_values(op, fn, np)


# -- where and astype: a selection and a conversion, NumPy's dtypes ---------------------------
def where(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``where``'s shape and dtype: all three broadcast, the two values' dtypes promote.

    Example:
        >>> from minilazy.core.attrs import NONE
        >>> from minilazy.core.ir import data_leaf
        >>> c = data_leaf(None, (2, 1), dtypes.bool_)
        >>> where(Op.WHERE, (c, data_leaf(None, (3,), dtypes.int8), c), NONE)
        ((2, 3), dtype('int8'))
    """
    c, a, b = xs
    if c.dtype != dtypes.bool_:
        raise TypeError(f"where: the condition must be bool, got {describe(c)}")
    try:
        shape = infer.broadcast_shapes(op.value, c.shape, a.shape, b.shape)
    except ShapeError:
        raise ShapeError(f"where: cannot broadcast {', '.join(map(describe, xs))}") from None
    dtype = dtypes.promote(a.dtype, b.dtype)
    return dtypes.sized("where", shape, dtype), dtype


def convert(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``astype``'s: the operand's shape, the dtype its attributes name (which must fit).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> convert(Op.CONVERT, (data_leaf(None, (2,), dtypes.int8),), Cast(4))
        ((2,), dtype('int64'))
    """
    match attrs:
        case Cast(code):
            d, x = dtypes.DTYPES[code], xs[0]
            return (x.shape if d.itemsize <= x.dtype.itemsize else
                    dtypes.sized(op.value, x.shape, d)), d
    raise mismatch(op, attrs)


def _where(xp: Any, xs: Sequence[Any], n: Node) -> Any:
    c, a, b = xs
    if xp is np:
        return np.where(c, a.astype(n.dtype), b.astype(n.dtype))
    return jnp.where(c, lowering.astype(a, n.dtype), lowering.astype(b, n.dtype))


def _reference_convert(xs: Sequence[Any], n: Node) -> Any:
    with np.errstate(all="ignore"):
        return xs[0].astype(n.dtype)


infer.UFUNC.update(UFUNC)
infer.LOOPS.update({Op.REAL: part, Op.IMAG: part, Op.ROUND: rounded, **dict.fromkeys(
    [Op.MAXIMUM, Op.MINIMUM, Op.LT, Op.LE, Op.GT, Op.GE], real_only)})
_FUNCTIONS: Final[dict[Op, Callable[..., Array]]] = {**UNARY_FN}
_FUNCTIONS.update(BINARY_FN)
for _op, _fn in _FUNCTIONS.items():
    ir.FAMILY[_op] = (NoAttrs,)
    infer.INFER[_op] = infer.unary if _op in UNARY else infer.binary
    lowering.LOWER[_op] = lowering.elementwise(special_values(_op, _fn, jnp))
    reference.REFERENCE[_op] = reference.elementwise(_numpy(_op))
    pycode.PYTHON[_op] = pycode.elementwise
ir.FAMILY.update({Op.WHERE: (NoAttrs,), Op.CONVERT: (Cast,)})
infer.INFER.update({Op.WHERE: where, Op.CONVERT: convert})
lowering.LOWER.update({
    Op.WHERE: lambda xs, n: _where(jnp, xs, n),
    Op.CONVERT: lambda xs, n: lowering.astype(xs[0], n.dtype)})
reference.REFERENCE.update({
    Op.WHERE: lambda xs, n: _where(np, xs, n),
    Op.CONVERT: _reference_convert})
pycode.PYTHON.update({
    Op.WHERE: lambda name, n, args: [f"{name} = ml.where({', '.join(args)})"],
    Op.CONVERT: lambda name, n, args: [f"{name} = ml.astype({args[0]}, '{n.dtype}')"]})
