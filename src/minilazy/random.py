"""Random numbers: a key-based counter RNG (Threefry-2x32) built from recorded uint32 ops.

Exported as ``ml.random``. A *key* is an ordinary tensor, uint32 of
shape ``(2,)``: device data, so a new seed or a new step's key is new data for the same program and
never recompiles. There is no hidden state: the same key always gives the same numbers (lazily,
eagerly in ``ml.eager()``, and in the reference interpreter), and ``split`` or ``fold_in`` make
fresh keys. The hash is Random123's Threefry-2x32 (20 rounds) recorded op by op (add wraps mod
2**32, xor, shifts), with the counters JAX uses (``jax_threefry_partitionable``, its default):
element ``i`` of a shape hashes the 64-bit counter ``i``, so ``key``, ``split``, ``fold_in``,
``bits``, ``uniform`` and ``bernoulli`` give the same bits as ``jax.random`` with a raw key.

The algorithm's constants (rotation amounts, round numbers) are Python ints, so they are scalar
*parameters* like every number in minilazy; one shared leaf per value keeps a program to a
handful of them. Never imports jax.

Example:
    >>> import minilazy as ml
    >>> k1, k2 = ml.random.split(ml.random.key(0))
    >>> ml.random.uniform(k1, (3, 4), dtype=ml.float32).shape
    (3, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np

from minilazy.api.axes import integers
from minilazy.api.creation import asarray, full
from minilazy.api.elementwise import cos, log1p, maximum, sqrt
from minilazy.api.shaping import reshape, stack
from minilazy.api.tensor import Tensor, record
from minilazy.core import dtypes
from minilazy.core.attrs import NONE, Cast, Iota
from minilazy.core.dtypes import DType, DTypeLike
from minilazy.core.ir import Device, Node, Op, scalar_leaf

__all__ = ["bernoulli", "bits", "fold_in", "key", "normal", "split", "uniform"]

_U32: Final = dtypes.uint32
_MASK: Final = 0xFFFFFFFF
_PARITY: Final = 0x1BD11BDA  # Threefry's key-schedule parity constant
_ROTATIONS: Final = ((13, 15, 26, 6), (17, 29, 16, 24))  # alternate between blocks of 4 rounds
_CAST: Final = {d: Cast(dtypes.CODE[d]) for d in dtypes.FLOATING}
# One shared uint32 leaf per constant: a program holds each value once, as one parameter.
_LEAVES: Final[dict[int, Node]] = {}


def _leaf(value: int) -> Node:
    node = _LEAVES.get(value)
    if node is None:
        node = _LEAVES[value] = scalar_leaf(value, _U32)
    return node


def _op(op: Op, a: Tensor, b: Tensor | int) -> Tensor:
    """Record ``a op b`` on uint32 words; an int ``b`` is a shared scalar-parameter leaf."""
    return record(op, (a._node, _leaf(b) if isinstance(b, int) else b._node), NONE, a.device)


def _add(a: Tensor, b: Tensor | int) -> Tensor:
    return _op(Op.ADD, a, b)


def _xor(a: Tensor, b: Tensor | int) -> Tensor:
    return _op(Op.BITWISE_XOR, a, b)


def _rotl(x: Tensor, r: int) -> Tensor:
    return _op(Op.BITWISE_OR, _op(Op.SHIFT_LEFT, x, r), _op(Op.SHIFT_RIGHT, x, 32 - r))


def _check_key(k: object, what: str) -> Tensor:
    if not isinstance(k, Tensor):
        raise TypeError(f"{what}: key must be a minilazy Tensor (from ml.random.key), got "
                        f"{type(k).__name__}")
    if k.dtype != _U32:
        raise TypeError(f"{what}: key must have dtype uint32, got {k.dtype}")
    if k.shape != (2,):
        raise ValueError(f"{what}: key must have shape (2,), got {k.shape}")
    return k


def _shape(shape: int | Sequence[int], what: str, dtype: DType = _U32) -> tuple[int, ...]:
    dims = integers(what, shape)  # NumPy's TypeError for a float or a bool
    if any(d < 0 for d in dims):
        raise ValueError(f"{what}: shape must be non-negative ints, got {shape!r}")
    dtypes.sized(what, dims, dtype)  # NumPy's size rule: (0, 2**62) is too big, as it says
    if math.prod(dims) >= 1 << 32:
        raise ValueError(f"{what}: at most 2**32 - 1 numbers per call, got shape {dims}")
    return dims


def _threefry(k: Tensor, counts: Tensor) -> tuple[Tensor, Tensor]:
    """Threefry-2x32 of the counters ``(0, counts)`` under key ``k``: the two output words."""
    k0, k1 = k[0], k[1]
    ks = (k0, k1, _xor(_xor(k0, k1), _PARITY))
    x0, x1 = k0, _add(counts, k1)  # the high counter word is 0: 0 + ks[0] is ks[0]
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            x0 = _add(x0, x1)
            x1 = _xor(_rotl(x1, r), x0)
        x0 = _add(x0, ks[(block + 1) % 3])
        x1 = _add(x1, _add(ks[(block + 2) % 3], block + 1))  # the 0-d key word + round number
    return x0, x1


def _words(k: Tensor, shape: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    """Both Threefry words for counters ``0 .. size-1`` laid out in ``shape`` (row-major)."""
    n = math.prod(shape)
    counts = record(Op.IOTA, (), Iota((n,), 0, dtypes.CODE[_U32]), k.device)
    return _threefry(k, counts if shape == (n,) else reshape(counts, shape))


def key(seed: int, device: Device | None = None) -> Tensor:
    """A new key from an integer seed: uint32 ``[seed >> 32, seed & 0xFFFFFFFF]`` (as ``jax``).

    The key is transferred data, so a new seed reuses every compiled program.

    Args:
        seed: a Python int in ``[-2**63, 2**64)``; negative seeds use their 64-bit two's
            complement.
        device: where the key lives (the default device if None); keys and draws stay there.

    Returns:
        A uint32 tensor of shape ``(2,)``.

    Example:
        >>> import minilazy as ml
        >>> ml.random.key(42).tolist()
        [0, 42]
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"key: seed must be an int, got {type(seed).__name__}")
    s = int(seed)
    if not -(1 << 63) <= s < 1 << 64:
        raise ValueError(f"key: seed {s} does not fit in 64 bits")
    return asarray(np.array([(s >> 32) & _MASK, s & _MASK], dtype=_U32), device=device)


def split(key: Tensor, num: int = 2) -> Tensor:
    """``num`` new keys from ``key``, as a ``(num, 2)`` tensor (``jax.random.split``'s keys).

    Iterating the result gives the keys one by one, so ``k1, k2 = split(k)`` unpacks two.

    Example:
        >>> import minilazy as ml
        >>> k1, k2 = ml.random.split(ml.random.key(0))
        >>> k1.shape, k1.dtype
        ((2,), dtype('uint32'))
    """
    k = _check_key(key, "split")
    y0, y1 = _words(k, _shape(num, "split"))
    return stack([y0, y1], axis=-1)


def fold_in(key: Tensor, data: int | Tensor) -> Tensor:
    """A new key from ``key`` and an integer (a step, a layer number): ``split(key, n)[data]``.

    ``data`` is a parameter (a Python int) or a uint32 tensor, so a new step never recompiles.

    Example:
        >>> import minilazy as ml
        >>> k = ml.random.key(0)
        >>> ml.random.fold_in(k, 1).tolist() == ml.random.split(k, 2)[1].tolist()
        True
    """
    k = _check_key(key, "fold_in")
    if isinstance(data, Tensor):
        if data.dtype != _U32 or data.shape != ():
            raise TypeError(f"fold_in: data must be an int or a 0-d uint32 tensor, got "
                            f"{data.dtype}{list(data.shape)}")
        counts = data
    else:
        counts = full((), int(data) & _MASK, dtype=_U32, device=k.device)
    y0, y1 = _threefry(k, counts)
    return stack([y0, y1])


def bits(key: Tensor, shape: int | Sequence[int] = ()) -> Tensor:
    """Uniformly random uint32 bits of ``shape`` (``jax.random.bits``'s, for a raw key).

    Example:
        >>> import minilazy as ml
        >>> b = ml.random.bits(ml.random.key(0), (2, 3))
        >>> b.shape, b.dtype
        ((2, 3), dtype('uint32'))
    """
    y0, y1 = _words(_check_key(key, "bits"), _shape(shape, "bits"))
    return _xor(y0, y1)


def _float_dtype(dtype: DTypeLike, what: str) -> DType:
    d = dtypes.canonical(dtype)
    if d not in dtypes.FLOATING:
        raise TypeError(f"{what}: dtype must be a floating dtype, got {d}")
    return d


def _unit(k: Tensor, shape: tuple[int, ...], d: DType) -> Tensor:
    """Uniform in ``[0, 1)`` as ``jax.random.uniform`` makes it: the random mantissa of 1.x - 1.

    float32 keeps the top 23 bits (multiples of 2**-23), float16 the top 10 of the low 16
    bits, float64 the top 52 of the 64 bits ``(y0 << 32) | y1``. Every step is exact.
    """
    y0, y1 = _words(k, shape)
    if d == dtypes.float64:
        hi = record(Op.CONVERT, (y0._node,), _CAST[d], k.device) * 2.0**-32
        lo = record(Op.CONVERT, (_op(Op.SHIFT_RIGHT, y1, 12)._node,), _CAST[d], k.device)
        return hi + lo * 2.0**-52
    b = _xor(y0, y1)
    nmant = 10 if d == dtypes.float16 else 23
    if d == dtypes.float16:
        b = _op(Op.BITWISE_AND, b, 0xFFFF)
    b = _op(Op.SHIFT_RIGHT, b, (16 if d == dtypes.float16 else 32) - nmant)
    return record(Op.CONVERT, (b._node,), _CAST[d], k.device) * 2.0**-nmant


def uniform(key: Tensor, shape: int | Sequence[int] = (), dtype: DTypeLike = dtypes.float64,
            minval: float = 0.0, maxval: float = 1.0) -> Tensor:
    """Uniform floats in ``[minval, maxval)``, the same values as ``jax.random.uniform``.

    In ``[0, 1)`` the values are exact multiples of ``2**-nmant`` (23 mantissa bits for float32,
    52 for float64), then scaled: ``max(minval, u * (maxval - minval) + minval)``. ``minval``
    and ``maxval`` are parameters. The default dtype is minilazy's default float, float64.

    Example:
        >>> import minilazy as ml
        >>> u = ml.random.uniform(ml.random.key(0), (1000,), dtype=ml.float32)
        >>> u.dtype, 0.0 <= float(ml.min(u)) and float(ml.max(u)) < 1.0
        (dtype('float32'), True)
    """
    d = _float_dtype(dtype, "uniform")
    u = _unit(_check_key(key, "uniform"), _shape(shape, "uniform", d), d)
    span = float(np.asarray(maxval, d) - np.asarray(minval, d))  # as jax: in the dtype
    return maximum(u * span + minval, minval)


def normal(key: Tensor, shape: int | Sequence[int] = (),
           dtype: DTypeLike = dtypes.float64) -> Tensor:
    """Standard normal floats, by Box–Muller from two uniforms ``u1, u2`` in ``[0, 1)``.

    ``sqrt(-2 log(1 - u1)) * cos(2 pi u2)``; ``1 - u1`` is never 0, so there is no ``log(0)``.
    Both uniforms come from one hash of ``2 * size`` counters (``uniform(key, (2, *shape))``).

    Example:
        >>> import minilazy as ml
        >>> z = ml.random.normal(ml.random.key(0), (10000,), dtype=ml.float32)
        >>> abs(float(ml.mean(z))) < 0.05
        True
    """
    d = _float_dtype(dtype, "normal")
    u = _unit(_check_key(key, "normal"), (2, *_shape(shape, "normal", d)), d)
    return sqrt(log1p(-u[0]) * -2.0) * cos(u[1] * (2 * math.pi))


def bernoulli(key: Tensor, p: float | Tensor = 0.5,
              shape: int | Sequence[int] | None = None) -> Tensor:
    """Random booleans, True with probability ``p``: ``uniform(key, shape) < p``.

    A Python float ``p`` is a parameter (a new ``p`` never recompiles) compared with float32
    uniforms, as ``jax.random.bernoulli``; a tensor ``p`` broadcasts and sets the dtype.
    ``shape`` defaults to ``p``'s.

    Example:
        >>> import minilazy as ml
        >>> m = ml.random.bernoulli(ml.random.key(0), 0.25, (10000,))
        >>> m.dtype, 0.23 < float(ml.mean(ml.astype(m, ml.float32))) < 0.27
        (dtype('bool'), True)
    """
    if isinstance(p, Tensor):
        d = _float_dtype(p.dtype, "bernoulli")
        dims = p.shape if shape is None else _shape(shape, "bernoulli", d)
    else:
        d = dtypes.float32
        dims = () if shape is None else _shape(shape, "bernoulli", d)
    return _unit(_check_key(key, "bernoulli"), dims, d) < p


