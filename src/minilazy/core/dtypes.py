"""Dtypes: the closed set of element types, NumPy-2 (NEP 50) promotion, and the size rule.

The bottom of core. A minilazy dtype *is* a NumPy dtype, so values and promotion rules
match NumPy 2 by construction: result types come from NumPy's own ufunc type resolution, with
Python scalars treated as weak (NEP 50). :func:`sized` is NumPy's rule for which shapes of a
dtype can exist. Never imports jax.
"""

from __future__ import annotations

import math
from typing import Any, Final, TypeAlias

import numpy as np

DType: TypeAlias = np.dtype[Any]
Scalar: TypeAlias = bool | int | float
Number: TypeAlias = Scalar | complex  # what a weak Python scalar (NEP 50) may be
# What a caller may pass where a dtype is expected: a dtype, a NumPy scalar type, or a name.
DTypeLike: TypeAlias = np.dtype[Any] | type | str

bool_: Final[DType] = np.dtype(np.bool_)
int8: Final[DType] = np.dtype(np.int8)
int16: Final[DType] = np.dtype(np.int16)
int32: Final[DType] = np.dtype(np.int32)
int64: Final[DType] = np.dtype(np.int64)
uint8: Final[DType] = np.dtype(np.uint8)
uint16: Final[DType] = np.dtype(np.uint16)
uint32: Final[DType] = np.dtype(np.uint32)
uint64: Final[DType] = np.dtype(np.uint64)
float16: Final[DType] = np.dtype(np.float16)
float32: Final[DType] = np.dtype(np.float32)
float64: Final[DType] = np.dtype(np.float64)
complex64: Final[DType] = np.dtype(np.complex64)
complex128: Final[DType] = np.dtype(np.complex128)

# Complex last: a dtype's CODE is its position, and digests (and disk-cache keys) made before
# complex dtypes existed stay valid.
DTYPES: Final[tuple[DType, ...]] = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64,
    complex64, complex128,
)
# A small stable integer per dtype: what the structural hash uses (hash() of a str is salted).
CODE: Final[dict[DType, int]] = {d: i for i, d in enumerate(DTYPES)}
SIGNED: Final = frozenset({int8, int16, int32, int64})
UNSIGNED: Final = frozenset({uint8, uint16, uint32, uint64})
INTEGER: Final = SIGNED | UNSIGNED
FLOATING: Final = frozenset({float16, float32, float64})  # real floating, as the standard says
COMPLEX: Final = frozenset({complex64, complex128})
INEXACT: Final = FLOATING | COMPLEX  # what gradients flow through
NUMERIC: Final = INTEGER | FLOATING | COMPLEX  # the standard's "numeric" includes complex
# The real dtype of a complex one's parts (abs, real, imag give it); complex64 holds two float32.
PART: Final[dict[DType, DType]] = {complex64: float32, complex128: float64}
# NumPy's defaults on a 64-bit platform: what sum(int8) and arange(3) give.
DEFAULT_INT: Final[DType] = int64
DEFAULT_FLOAT: Final[DType] = float64


def short_name(dtype: DType) -> str:
    """The compact name used in IR text: ``f32``, ``i64``, ``u8``, ``c64``, ``bool``."""
    if dtype == bool_:
        return "bool"
    return f"{dtype.kind}{dtype.itemsize * 8}"


def typed(dtype: DType | str, shape: tuple[int, ...]) -> str:
    """``f32[2,3]``: how errors, printers and reprs show a value's type (the one formatter)."""
    name = dtype if isinstance(dtype, str) else short_name(dtype)
    return f"{name}[{','.join(map(str, shape))}]"


def canonical(dtype: DTypeLike) -> DType:
    """The minilazy dtype for ``dtype``, or a ``TypeError`` naming what is supported."""
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"a {type(dtype).__name__} is not a dtype: {dtype!r:.60}") from e
    if not d.isnative:  # ">f4" is float32 on a little-endian host: device data has no byte order
        d = d.newbyteorder("=")
    if d not in CODE:
        names = ", ".join(str(x) for x in DTYPES)
        raise TypeError(f"dtype {d} is not supported by minilazy (supported: {names})")
    return d


def promote(*ds: DType) -> DType:
    """The dtype NumPy 2 promotes ``ds`` to (``ml.result_type`` takes Python numbers too)."""
    return canonical(np.result_type(*ds))


MAX_BYTES: Final = int(np.iinfo(np.intp).max)


def sized(what: str, shape: tuple[int, ...], dtype: DType) -> tuple[int, ...]:
    """``shape`` if an array of it and ``dtype`` can exist, by NumPy's rule; else ValueError.

    The one size check of the shapes users' numbers make, at the call. As NumPy's: dimensions
    are int64s >= 0, and the *non-zero* ones times the item size fit in an int64 of bytes: a
    zero does not hide a huge dimension (XLA aborts the process on one, at the barrier).
    """
    if 0 < math.prod(shape) * dtype.itemsize <= MAX_BYTES and (not shape or min(shape) > 0):
        return shape  # the usual case, in C
    if not all(0 <= d <= MAX_BYTES for d in shape):
        raise ValueError(f"{what}: negative dimensions, or past int64, are not allowed: {shape}")
    if math.prod([d for d in shape if d]) * dtype.itemsize > MAX_BYTES:
        raise ValueError(f"{what}: array is too big: shape {shape} of {dtype} needs more than "
                         f"{MAX_BYTES} bytes")
    return shape
