"""Loops: which dtypes each elementwise op takes and gives, from NumPy's ufunc loop resolution.

One of core's op rules, beside inference (which re-exports it). Each elementwise op names the NumPy
ufunc whose loops define its dtypes (and, in ``inspect/reference.py``, its values), so types match
NumPy 2 with Python scalars weak (NEP 50) by construction. Two departures, both the standard's:
``real`` and ``imag`` are no ufuncs in NumPy (their types are the complex dtype's part), and the
orderings NumPy defines lexicographically on complex numbers (``<``, ``maximum``...) are refused.
Never imports jax.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Final

import numpy as np

from minilazy.core import dtypes
from minilazy.core.dtypes import DType
from minilazy.core.ir import Op

UFUNC: Final[Mapping[Op, np.ufunc]] = {
    Op.NEG: np.negative, Op.ABS: np.absolute, Op.SIGN: np.sign, Op.SQRT: np.sqrt,
    Op.SQUARE: np.square, Op.EXP: np.exp, Op.EXPM1: np.expm1, Op.LOG: np.log,
    Op.LOG1P: np.log1p, Op.LOG2: np.log2, Op.LOG10: np.log10, Op.SIN: np.sin, Op.COS: np.cos,
    Op.TAN: np.tan, Op.ASIN: np.arcsin, Op.ACOS: np.arccos, Op.ATAN: np.arctan, Op.SINH: np.sinh,
    Op.COSH: np.cosh, Op.TANH: np.tanh, Op.ASINH: np.arcsinh, Op.ACOSH: np.arccosh,
    Op.ATANH: np.arctanh, Op.FLOOR: np.floor, Op.CEIL: np.ceil, Op.ROUND: np.rint,
    Op.TRUNC: np.trunc, Op.LOGICAL_NOT: np.logical_not, Op.BITWISE_INVERT: np.invert,
    Op.ISNAN: np.isnan, Op.ISINF: np.isinf, Op.ISFINITE: np.isfinite, Op.SIGNBIT: np.signbit,
    Op.CONJ: np.conjugate,
    Op.ADD: np.add, Op.SUB: np.subtract, Op.MUL: np.multiply, Op.DIV: np.true_divide,
    Op.FLOOR_DIV: np.floor_divide, Op.MOD: np.remainder, Op.POW: np.power,
    Op.MAXIMUM: np.maximum, Op.MINIMUM: np.minimum, Op.ATAN2: np.arctan2, Op.EQ: np.equal,
    Op.NE: np.not_equal, Op.LT: np.less, Op.LE: np.less_equal, Op.GT: np.greater,
    Op.GE: np.greater_equal, Op.LOGICAL_AND: np.logical_and, Op.LOGICAL_OR: np.logical_or,
    Op.LOGICAL_XOR: np.logical_xor, Op.BITWISE_AND: np.bitwise_and, Op.BITWISE_OR: np.bitwise_or,
    Op.BITWISE_XOR: np.bitwise_xor, Op.SHIFT_LEFT: np.left_shift, Op.SHIFT_RIGHT: np.right_shift,
    Op.MATMUL: np.matmul,
}
# Not ufuncs (np.real and np.imag are plain functions): the part of a complex dtype, or the
# dtype itself for a real one (imag of a real array is zeros of its dtype, as NumPy's).
PARTS: Final = frozenset({Op.REAL, Op.IMAG})
# NumPy orders complex numbers lexicographically; the standard defines these for real numbers
# only, so a complex operand is a TypeError at the call (as in array-api-strict).
REAL_ONLY: Final = frozenset({Op.MAXIMUM, Op.MINIMUM, Op.LT, Op.LE, Op.GT, Op.GE})
InType = DType | type  # a dtype, or the Python type of a weak scalar (int, float, complex)


def _names(types: tuple[InType, ...]) -> str:
    return ", ".join(t.__name__ if isinstance(t, type) else str(t) for t in types)


@lru_cache(maxsize=4096)
def signature(op: Op, *types: InType) -> tuple[DType, ...]:
    """NumPy's loop dtypes for ``op`` on ``types``: the inputs' cast targets, then the result.

    Raises ``TypeError`` naming the op and dtypes when NumPy has no loop (e.g. ``sign`` of bool),
    or when the op is an ordering and an operand is complex.

    Example:
        >>> signature(Op.ADD, dtypes.int8, int)
        (dtype('int8'), dtype('int8'), dtype('int8'))
        >>> signature(Op.ABS, dtypes.complex64)
        (dtype('complex64'), dtype('float32'))
        >>> signature(Op.LT, dtypes.complex64, float)
        Traceback (most recent call last):
        ...
        TypeError: less: not defined for complex dtypes (complex64, float)
    """
    if op is Op.ROUND and isinstance(types[0], np.dtype) and types[0] in dtypes.INTEGER:
        return (types[0], types[0])  # np.round keeps integers; np.rint would make floats
    if op in PARTS:
        d = dtypes.canonical(types[0])
        return (d, dtypes.PART.get(d, d))
    if op in REAL_ONLY and any(t is complex or t in dtypes.COMPLEX for t in types):
        raise TypeError(f"{op.value}: not defined for complex dtypes ({_names(types)})")
    try:
        sig = UFUNC[op].resolve_dtypes((*types, None))
    except TypeError as e:
        raise TypeError(f"{op.value}: not defined for dtypes ({_names(types)})") from e
    return tuple(dtypes.canonical(d) for d in sig)
