"""Complex special values: the standard's C99 Annex G values where XLA or NumPy differ.

Part of the elementwise family (``ops/elementwise.py``): its lowering and its reference rules
wrap their functions in :func:`special_values`, given the array namespace (``jax.numpy`` or
NumPy), so the two interpretations agree by construction. XLA's complex ``exp``, ``log``,
``sqrt``, ``sinh``... are right on finite inputs but lose signed zeros and mishandle infinities
and NaNs (NumPy's ``expm1`` too). The Array API
standard lists each function's values at those inputs for the upper half-plane and states the
symmetries that give the rest: ``f(conj z) = conj f(z)``; ``sinh``, ``tanh``, ``asinh``,
``atanh`` odd, ``cosh`` even. So :func:`special_values` computes a function on the canonical
quarter (``b >= 0``; ``a >= 0`` too where odd or even), lets the rows of :data:`MENDS` replace
the values the standard gives where XLA or NumPy get them wrong, and moves the result back.
``sin``, ``cos``, ``tan``, ``asin``, ``atan`` are the standard's exact rotations of their
hyperbolic twins (``sin(z) = -1j sinh(1j z)``), ``log2`` and ``log10`` are ``log(z) / log(b)``
part by part. It is all elementwise selects that XLA fuses; real dtypes are never touched.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
from jax import lax

from minilazy.core.ir import Op

Value = Any  # a jax.Array in the lowering, a NumPy array in the reference
Fn = Callable[..., Value]  # unary where mended; others pass through unchanged
Cond = Callable[[Any, Value], Value]  # (namespace, one canonical part) -> mask
Fix = float | Callable[[Any, Value, Value], Value] | None  # a value, f(xp, a, b), or keep
Row = tuple[Cond, Cond, Fix, Fix]  # when (a, b): the real and imaginary parts

INF, NAN, PI = math.inf, math.nan, math.pi


class Symmetry(enum.Enum):
    """What the standard says relates a function's values across the axes."""

    NONE = 0  # its rows hold for every sign
    CONJ = 1  # f(conj z) = conj f(z)
    ODD = 2  # and f(-z) = -f(z)
    EVEN = 3  # and f(-z) = f(z)


def _eq(v: float) -> Cond:
    return lambda xp, x: x == v


def _nan(xp: Any, x: Value) -> Value:
    return xp.isnan(x)


def _inf(xp: Any, x: Value) -> Value:
    return xp.isinf(x)


def _fin(xp: Any, x: Value) -> Value:
    return xp.isfinite(x)


def _nonfin(xp: Any, x: Value) -> Value:
    return ~xp.isfinite(x)


def _any(xp: Any, x: Value) -> Value:
    return xp.ones_like(x, dtype=bool)


def _zero_times(f: str) -> Fix:
    return lambda xp, a, b: a * getattr(xp, f)(b)  # +0 * cos(b): a zero with cos(b)'s sign


def _sign_a(xp: Any, a: Value, b: Value) -> Value:
    return xp.sign(a)


def _sign_b(xp: Any, a: Value, b: Value) -> Value:
    return xp.sign(b)


_ZERO, _PINF, _MINF = _eq(0.0), _eq(INF), _eq(-INF)
# Per function: its symmetry and, on the canonical quarter, the rows (first match wins) where
# XLA's or NumPy's value is not the standard's. The tests hold every row of the standard.
MENDS: Final[Mapping[Op, tuple[Symmetry, Sequence[Row]]]] = {
    Op.EXP: (Symmetry.CONJ, [(_PINF, _nonfin, INF, NAN), (_MINF, _nonfin, 0.0, 0.0)]),
    Op.EXPM1: (Symmetry.CONJ, [(_PINF, _nonfin, INF, NAN), (_MINF, _nonfin, -1.0, 0.0),
                               (_any, _ZERO, None, 0.0)]),
    # |z| is infinite if a part is: rows for every sign, so no canonical quarter (which would
    # also keep XLA from fusing log's atan2 into the result)
    Op.LOG: (Symmetry.NONE, [(_inf, _any, INF, None), (_any, _inf, INF, None)]),
    Op.LOG1P: (Symmetry.NONE, [(_inf, _any, INF, None), (_any, _inf, INF, None)]),
    Op.SQRT: (Symmetry.CONJ, [(_any, _PINF, INF, INF), (_PINF, _nan, INF, NAN),
                              (_MINF, _nan, NAN, INF)]),
    Op.SINH: (Symmetry.ODD, [(_ZERO, _fin, _zero_times("cos"), None),
                             (_ZERO, _nonfin, 0.0, NAN), (_PINF, _nonfin, INF, NAN)]),
    Op.COSH: (Symmetry.EVEN, [(_ZERO, _fin, None, _zero_times("sin")),
                              (_ZERO, _nonfin, NAN, 0.0), (_PINF, _nonfin, INF, NAN)]),
    Op.TANH: (Symmetry.ODD, [(_ZERO, _nonfin, 0.0, NAN), (_PINF, _fin, 1.0, 0.0)]),
    # (XLA's large-|z| formulas read no NaN part: asinh(nan + 1e300j) had a finite real part)
    Op.ASINH: (Symmetry.ODD, [(_nan, _ZERO, None, 0.0), (_nan, _fin, NAN, NAN)]),
    Op.ACOSH: (Symmetry.CONJ, [(_ZERO, _nan, NAN, PI / 2), (_fin, _nan, NAN, NAN)]),
    Op.ATANH: (Symmetry.ODD, [(_ZERO, _nan, 0.0, NAN), (_PINF, _nan, 0.0, NAN),
                              (_any, _nan, NAN, NAN), (_nan, _fin, NAN, NAN)]),
    Op.ACOS: (Symmetry.CONJ, [(_ZERO, _nan, PI / 2, NAN), (_fin, _nan, NAN, NAN)]),
    # abs is real: only its real column counts; sign at an infinity is NumPy's unit (the
    # standard leaves infinite complex division to the implementation)
    Op.ABS: (Symmetry.NONE, [(_inf, _any, INF, None), (_any, _inf, INF, None)]),
    Op.SIGN: (Symmetry.NONE, [(_nan, _any, NAN, NAN), (_any, _nan, NAN, NAN),
                              (_inf, _inf, NAN, NAN), (_ZERO, _ZERO, 0.0, 0.0),
                              (_inf, _any, _sign_a, 0.0), (_any, _inf, 0.0, _sign_b)]),
}
ROTATED: Final = {Op.SIN: Op.SINH, Op.COS: Op.COSH, Op.TAN: Op.TANH, Op.ASIN: Op.ASINH,
                  Op.ATAN: Op.ATANH}
BASES: Final = {Op.LOG2: 2.0, Op.LOG10: 10.0}
TWINS: Final = {Op.SINH: "sinh", Op.COSH: "cosh", Op.TANH: "tanh", Op.ASINH: "arcsinh",
                Op.ATANH: "arctanh"}  # the twins' names in both namespaces


def _complex(xp: Any, re: Value, im: Value) -> Value:
    """``re + im j`` exactly (``re + 1j * im`` would turn an infinite ``im`` into NaN)."""
    if xp is not np:
        return lax.complex(re, im)
    out = np.empty(np.shape(re), np.result_type(re, np.complex64))
    out.real, out.imag = re, im
    return out


def _fix(xp: Any, fix: Fix, a: Value, b: Value, like: Value) -> Value:
    value = fix(xp, a, b) if callable(fix) else fix
    return xp.asarray(value, like.dtype)


def _mend(xp: Any, op: Op, fn: Fn, z: Value) -> Value:
    """``fn(z)`` on the canonical quarter, mended by ``MENDS[op]``'s rows, moved back."""
    symmetry, rows = MENDS[op]
    a, b = xp.real(z), xp.imag(z)
    flip_a = xp.signbit(a) & (symmetry in (Symmetry.ODD, Symmetry.EVEN))
    flip_b = xp.signbit(b) & (symmetry is not Symmetry.NONE)
    a, b = xp.where(flip_a, -a, a), xp.where(flip_b, -b, b)
    w = fn(_complex(xp, a, b) if symmetry is not Symmetry.NONE else z)
    real = w.dtype.kind != "c"
    re, im = (w, w) if real else (xp.real(w), xp.imag(w))
    for cond_a, cond_b, fix_re, fix_im in reversed(rows):  # the first row applied last wins
        hit = cond_a(xp, a) & cond_b(xp, b)
        if fix_re is not None:
            re = xp.where(hit, _fix(xp, fix_re, a, b, re), re)
        if fix_im is not None and not real:
            im = xp.where(hit, _fix(xp, fix_im, a, b, im), im)
    if real:
        return re
    if symmetry is Symmetry.ODD:
        re = xp.where(flip_a, -re, re)
    im = xp.where(flip_a ^ flip_b if symmetry is Symmetry.EVEN else flip_b, -im, im)
    return _complex(xp, re, im)


def _zero_base(xp: Any, x: Value, y: Value, p: Value) -> Value:
    """``x ** y`` with ``0 ** y = 0`` where ``Re(y) > 0`` (``exp(y log 0)``; XLA gives NaN)."""
    if p.dtype.kind != "c":
        return p
    return xp.where((x == 0) & (xp.real(y) > 0), xp.zeros_like(p), p)


def special_values(op: Op, fn: Fn, xp: Any) -> Fn:
    """``fn``, ``op``'s function in namespace ``xp``, with the standard's complex special values.

    Ops without special values, and real or integer operands, get ``fn`` itself: their
    programs are unchanged. ``pow`` is binary; the others mended here are unary.

    Example:
        >>> exp = special_values(Op.EXP, np.exp, np)
        >>> exp(np.array([complex(-np.inf, np.inf)]))
        array([0.+0.j])
    """
    if op is Op.POW:
        return lambda x, y: _zero_base(xp, x, y, fn(x, y))
    if op not in MENDS and op not in ROTATED and op not in BASES:
        return fn

    def mended(z: Value) -> Value:
        if z.dtype.kind != "c":
            return fn(z)
        if op in ROTATED:  # sin(z) = -1j sinh(1j z), cos(z) = cosh(1j z): exact rotations
            twin = ROTATED[op]
            w = _mend(xp, twin, getattr(xp, TWINS[twin]), _complex(xp, -xp.imag(z), xp.real(z)))
            return w if op is Op.COS else _complex(xp, xp.imag(w), -xp.real(w))
        if op in BASES:  # log(z) / log(base), part by part (a complex division spoils NaNs)
            w, k = _mend(xp, Op.LOG, xp.log, z), math.log(BASES[op])
            return _complex(xp, xp.real(w) / k, xp.imag(w) / k)
        return _mend(xp, op, fn, z)

    return mended
