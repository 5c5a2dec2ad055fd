"""Python numbers in the IR: how NumPy 2 types them (NEP 50), and parameter or constant.

Part of the tensor. ``x + 2.0`` records the 2.0 as a ``SCALAR`` leaf whose dtype is the
one NumPy 2 gives a *weak* Python scalar next to ``x`` (float32 next to float32), and raises
``OverflowError`` at the call where NumPy would. Each number is a parameter (new values reuse the
compiled program) unless ``BarrierPolicy(special_scalars=True)`` bakes 0 and 1 in. Never imports
jax.
"""

from __future__ import annotations

import math
from typing import Any, Final, TypeGuard

import numpy as np

from minilazy.core import dtypes
from minilazy.core.attrs import Constant
from minilazy.core.dtypes import DType, Number
from minilazy.core.infer import signature
from minilazy.core.ir import Node, Op, scalar_leaf
from minilazy.core.state import ENGINE, OVERRIDE
from minilazy.ops.elementwise import COMPARISONS


def is_weak(x: object) -> TypeGuard[Number]:
    """True for a Python ``bool``, ``int``, ``float``, ``complex`` (weak in NEP 50, not NumPy's).

    Example:
        >>> is_weak(2.0), is_weak(np.float64(2.0))
        (True, False)
    """
    return type(x) in (bool, int, float, complex)


# (op, Python type, other dtype, scalar first) -> the dtype NumPy gives the weak scalar
_WEAK: Final[dict[tuple[Op, type, DType, bool], DType]] = {}


def weak_scalar(op: Op, value: Number, other: DType, scalar_first: bool) -> Node:
    """A weak Python scalar as a leaf, typed as NumPy 2 types it next to ``other`` in ``op``.

    Example:
        >>> weak_scalar(Op.ADD, 2, dtypes.int8, scalar_first=False).dtype
        dtype('int8')
    """
    key = (op, type(value), other, scalar_first)
    dtype = _WEAK.get(key)
    if dtype is None:
        weak: type | DType = dtypes.bool_ if type(value) is bool else type(value)
        sig = signature(op, weak, other) if scalar_first else signature(op, other, weak)
        dtype = _WEAK[key] = sig[0] if scalar_first else sig[1]
    if type(value) is int and dtype in dtypes.INTEGER:
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            if op not in COMPARISONS:
                check_scalar(value, dtype)  # raises OverflowError, as NumPy 2 does
            if other in dtypes.INTEGER and not -(1 << 63) <= value < 1 << 64:  # (bool: NumPy
                # raises) beyond every integer: an infinity of its sign compares alike
                return scalar(math.inf if value > 0 else -math.inf, dtypes.float64)
            # NumPy 2 compares with an out-of-range Python int exactly: widen, do not overflow.
            wide = dtypes.int64 if value < 1 << 63 else dtypes.uint64
            sig = signature(op, wide, other) if scalar_first else signature(op, other, wide)
            dtype = sig[0] if scalar_first else sig[1]
            check_scalar(value, dtype)
    return scalar(value, dtype)


def scalar(value: Number, dtype: DType) -> Node:
    """The leaf for Python number ``value`` as ``dtype``: a parameter, or a baked-in constant.

    With ``BarrierPolicy(special_scalars=True)``, 0 and 1 are constants (as in PyTorch/XLA), so
    XLA can simplify ``x * 1`` or ``maximum(x, 0)``; the key then includes them.

    Example:
        >>> from minilazy.core import dtypes
        >>> scalar(0.5, dtypes.float32).attrs
        NoAttrs()
    """
    special = (OVERRIDE.get() or ENGINE.default).special_scalars
    # A complex 0 or 1 stays a parameter: the Constant family holds an int.
    if special and not isinstance(value, complex) and (
            value == 1 or value == 0 and str(value)[0] != "-"):
        return Node(Op.SCALAR, (), Constant(int(value)), (), dtype, value)  # baked in
    return scalar_leaf(value, dtype)


def result_type(*arrays_and_dtypes: DType | Number | Any) -> DType:
    """The dtype NumPy 2 gives when combining its arguments (dtypes, tensors, Python scalars).

    Python scalars are *weak* (NEP 50): they take the dtype of the tensor they meet (a
    ``complex`` makes a real dtype complex of the same precision).

    Example:
        >>> import minilazy as ml
        >>> ml.result_type(ml.int8, ml.uint8)
        dtype('int16')
        >>> ml.result_type(ml.float32, 2.0)
        dtype('float32')
        >>> ml.result_type(ml.float64, ml.complex64), ml.result_type(ml.float32, 1j)
        (dtype('complex128'), dtype('complex64'))
    """
    parts: list[Any] = []
    for a in arrays_and_dtypes:
        if isinstance(a, (bool, int, float, complex)):
            parts.append(a)
        elif isinstance(a, np.dtype) or isinstance(a, (type, str)):
            parts.append(dtypes.canonical(a))
        else:  # anything with a .dtype (a Tensor, an array); a list is no dtype
            parts.append(dtype_of(a))
    if not parts:
        raise ValueError("result_type() needs at least one argument")
    return dtypes.canonical(np.result_type(*parts))


def dtype_of(x: Any) -> DType:
    """The dtype ``x`` is, or a tensor's or an array's (``np.dtype`` has a ``shape`` too).

    Example:
        >>> dtype_of(np.zeros(2, np.float32)), dtype_of("int8")
        (dtype('float32'), dtype('int8'))
    """
    array = isinstance(getattr(x, "shape", None), tuple) and not isinstance(x, (np.dtype, type))
    return dtypes.canonical(x.dtype if array else x)


def check_scalar(value: Number, dtype: DType) -> None:
    """Raise ``OverflowError`` when a Python int cannot be a weak scalar of ``dtype`` (as NumPy 2).

    Example:
        >>> check_scalar(300, dtypes.int8)
        Traceback (most recent call last):
        ...
        OverflowError: Python integer 300 out of bounds for int8
    """
    if type(value) is int and dtype in dtypes.INTEGER:
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
