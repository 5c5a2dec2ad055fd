"""Exact integer arithmetic for the elementwise family: powers, division and signs as NumPy 2.

Part of the elementwise family (``ops/elementwise.py`` puts these functions in its lowering
rules). XLA and ``jax.numpy`` leave some edges to the implementation where NumPy defines them:
an integer power wraps modulo 2**bits (``jnp.power`` reads only the exponent's low 6 bits), a
zero remainder takes the divisor's sign, ``sign(-0.0)`` is ``+0.0``. Each function takes operands
already cast to NumPy's loop dtype, so one rule serves every dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

Array = jax.Array


def truncated(xp: Any, a: Any, b: Any, p: Any) -> Any:
    """``p`` where ``b >= 0``; where ``b < 0``, ``a ** b`` rounded toward zero, in namespace ``xp``.

    NumPy raises ``ValueError`` for a negative integer exponent, but a lazy exponent is on the
    device: the value is only known after the barrier, when no error can reach the call. So an
    exponent that turns out negative gives the true power truncated to an integer, as C's
    ``1 / a**-b`` would: 1 for ``a == 1``, 1 or -1 for ``a == -1`` (by the exponent's parity), 0
    for every other base, 0 included (as NumPy's integer ``x // 0`` is 0). PyTorch does the same.
    A negative exponent known on the host still raises NumPy's error at the call.

    Example:
        >>> b = np.array([-1, -2, -3, 2], np.int8)
        >>> truncated(np, np.array([1, -1, 2, -1], np.int8), b, np.zeros(4, np.int8)).tolist()
        [1, 1, 0, 0]
    """
    one = xp.ones_like(p)
    odd = (b & 1) == 1
    return xp.where(b >= 0, p, xp.where(a == 1, one, xp.where(a == -1, xp.where(odd, -one, one),
                                                               xp.zeros_like(p))))


def power(a: Array, b: Array) -> Array:
    """``a ** b``; integers wrap modulo 2**bits as NumPy's do, however large the exponent.

    Binary exponentiation over every bit of the exponent (``jnp.power`` stops after 6, so
    ``2 ** 64`` was 1), then :func:`truncated` for negative exponents.

    Example:
        >>> power(jnp.asarray([2, 5], jnp.int32), jnp.asarray([32, 33], jnp.int32)).tolist()
        [0, -1671385723]
    """
    if a.dtype.kind not in "iu":
        return jnp.power(a, b)
    signed = a.dtype.kind == "i"

    def step(_: int, state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        acc, base, e = state
        return jnp.where((e & 1) == 1, acc * base, acc), base * base, e >> 1

    # A loop in the program, not unrolled: 63 unrolled steps cost XLA over a second to compile.
    start = (jnp.ones_like(a), a, jnp.where(b < 0, 0, b) if signed else b)
    acc, _, _ = lax.fori_loop(0, np.iinfo(a.dtype).bits - signed, step, start)  # int64: 63 bits
    out: Array = truncated(jnp, a, b, acc) if signed else acc
    return out


Binary = Callable[[Array, Array], Array]


def _widened(fn: Binary) -> Binary:
    """``fn`` computed in float32 for float16: NumPy's half loops convert, divide, round back."""
    def rule(a: Array, b: Array) -> Array:
        if a.dtype == np.float16:
            f32 = np.dtype(np.float32)
            return fn(lax.convert_element_type(a, f32), lax.convert_element_type(b, f32))
        return fn(a, b)

    return rule


@_widened
def floor_divide(a: Array, b: Array) -> Array:
    """``a // b`` as NumPy's ``npy_divmod``: integer ``x // 0`` is 0, floats exactly rounded.

    Example:
        >>> floor_divide(jnp.asarray([7, -7, 7]), jnp.asarray([2, 2, 0])).tolist()
        [3, -4, 0]
    """
    if a.dtype.kind in "biu":
        zero = b == 0
        return jnp.where(zero, 0, jnp.floor_divide(a, jnp.where(zero, 1, b))).astype(a.dtype)
    # Divide the exact multiple a - fmod(a, b), then round to an integer; floor(a / b) would be
    # off by one where a / b rounds up to the next integer.
    mod = lax.rem(a, b)
    div = (a - mod) / b
    div = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = jnp.floor(div)
    floor = jnp.where(div - floor > 0.5, floor + 1, floor)
    floor = jnp.where(div == 0, jnp.copysign(jnp.zeros_like(div), a / b), floor)
    return jnp.where(b == 0, a / b, floor)


@_widened
def remainder(a: Array, b: Array) -> Array:
    """``a % b`` with the sign of ``b``, as NumPy's ``npy_divmod``.

    A zero remainder is ``±0`` by ``b``'s sign; ``x % 0`` is 0 for integers and NaN for floats;
    ``-1 % inf`` is ``inf``.

    Example:
        >>> remainder(jnp.asarray([-1.0, 1.0]), jnp.asarray([1.0, -1.0])).tolist()
        [0.0, -0.0]
    """
    if a.dtype.kind in "biu":
        return jnp.remainder(a, b)  # jnp divides by 1 where b == 0, so x % 0 is 0
    mod = lax.rem(a, b)  # C's fmod, exact
    moved = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)
    return jnp.where(mod == 0, jnp.copysign(jnp.zeros_like(mod), b), moved)


def sign(x: Array) -> Array:
    """-1, 0 or 1; ``sign(-0.0)`` is ``+0.0`` (NumPy 2 and the standard: "the result is 0").

    Example:
        >>> jnp.signbit(sign(jnp.asarray([-0.0, -2.0]))).tolist()
        [False, True]
    """
    if x.dtype.kind == "f":  # XLA's sign keeps the zero's sign bit
        return jnp.where(x == 0, jnp.zeros_like(x), jnp.sign(x))
    return jnp.sign(x)
