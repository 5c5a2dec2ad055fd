"""The VJP rules: one per op, in :data:`VJP`, a table keyed by the closed ``Op`` enum.

A rule takes the cotangent of a node's output (and the output and operands, as tensors) and
*records* the operands' cotangents, cut with the forward pass at the next barrier; the tape
(``tape.py``) walks the graph and applies these. At kinks and ties they follow JAX's. No jax.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Final

from minilazy.api.convolution import conv_vjp
from minilazy.api.creation import full, zeros_like
from minilazy.api.elementwise import astype, where
from minilazy.api.reductions import sum as reduce_sum
from minilazy.api.shaping import broadcast_to, reshape, take_along_axis
from minilazy.api.tensor import Tensor, record
from minilazy.core import dtypes
from minilazy.core.attrs import NONE, Attrs, Permute, Reduce, mismatch
from minilazy.core.infer import broadcast_shapes
from minilazy.core.ir import Node, Op
from minilazy.fft import fft_vjp
from minilazy.linalg.vjp import linalg_vjp
from minilazy.ops.linalg import Contract
from minilazy.ops.reductions import Scan
from minilazy.ops.shaping import Axes, Axis, Piece
from minilazy.ops.sort import Sort

Cotangents = tuple[Tensor | None, ...]
# A VJP rule: (cotangent of the output, the output, the operands, the node) -> operand cotangents
# (None where an operand gets none). Results may still need un-broadcasting: see _accumulate.
Rule = Callable[[Tensor, Tensor, tuple[Tensor, ...], Node], Cotangents]


def fit(ct: Tensor, shape: tuple[int, ...], dtype: dtypes.DType) -> Tensor:
    """A cotangent summed over the axes its operand was broadcast along, in its dtype."""
    if ct.shape != shape:
        if math.prod(ct.shape) == math.prod(shape) and len(ct.shape) != len(shape):
            ct = reshape(ct, shape)  # only leading 1s differ (setitem dropped them)
        else:
            lead = ct.ndim - len(shape)
            axes = tuple(range(lead)) + tuple(
                lead + i for i, d in enumerate(shape) if d == 1 and ct.shape[lead + i] != 1)
            ct = reshape(reduce_sum(ct, axis=axes), shape)
    if ct.dtype in dtypes.COMPLEX and dtype not in dtypes.COMPLEX:  # a real operand promoted:
        ct = _op(Op.REAL, ct)  # its cotangent is the real part (the transpose of real -> complex)
    return ct if ct.dtype == dtype else astype(ct, dtype)


def _op(op: Op, *xs: Tensor, attrs: Attrs = NONE) -> Tensor:
    return record(op, tuple(x._node for x in xs), attrs, xs[0].device)


def _unary(derivative: Callable[[Tensor, Tensor], Tensor]) -> Rule:
    """A rule for y = f(x) given f'(x) as a function of (x, y)."""
    return lambda g, y, xs, n: (g * derivative(xs[0], y),)


def _zero(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    return tuple(zeros_like(x) for x in xs)  # piecewise constant: derivative 0 where defined


def _not_differentiable(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    raise TypeError(f"grad: {n.op.value} is not differentiable (its result is "
                    f"{n.dtype}-valued); no float gradient can flow through it")


def _conj(x: Tensor) -> Tensor:
    return _op(Op.CONJ, x) if x.dtype in dtypes.COMPLEX else x


def _sqrt1(x: Tensor, sign: float) -> Tensor:
    return _op(Op.SQRT, 1.0 + sign * x * x)


def _abs(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    # real: the slope at 0 (and -0.0) is +1, JAX's, not sign(0); complex (not holomorphic):
    # d|z| = real(conj(z) dz) / |z|, whose transpose is conj(sign(z)), 0 at z = 0 as in JAX
    x = xs[0]
    return (g * _conj(_op(Op.SIGN, x)) if x.dtype in dtypes.COMPLEX else where(x >= 0, g, -g),)


UNARY_VJP: Final[dict[Op, Rule]] = {
    Op.NEG: lambda g, y, xs, n: (-g,),
    Op.ABS: _abs,
    Op.SQRT: _unary(lambda x, y: 0.5 / y),
    Op.SQUARE: _unary(lambda x, y: 2.0 * x),
    Op.EXP: _unary(lambda x, y: y),
    Op.EXPM1: _unary(lambda x, y: y + 1.0),
    Op.LOG: _unary(lambda x, y: 1.0 / x),
    Op.LOG1P: _unary(lambda x, y: 1.0 / (x + 1.0)),
    Op.LOG2: _unary(lambda x, y: 1.0 / (x * math.log(2.0))),
    Op.LOG10: _unary(lambda x, y: 1.0 / (x * math.log(10.0))),
    Op.SIN: _unary(lambda x, y: _op(Op.COS, x)),
    Op.COS: _unary(lambda x, y: -_op(Op.SIN, x)),
    Op.TAN: _unary(lambda x, y: 1.0 + y * y),
    Op.ASIN: _unary(lambda x, y: 1.0 / _sqrt1(x, -1.0)),
    Op.ACOS: _unary(lambda x, y: -1.0 / _sqrt1(x, -1.0)),
    Op.ATAN: _unary(lambda x, y: 1.0 / (1.0 + x * x)),
    Op.SINH: _unary(lambda x, y: _op(Op.COSH, x)),
    Op.COSH: _unary(lambda x, y: _op(Op.SINH, x)),
    Op.TANH: _unary(lambda x, y: 1.0 - y * y),
    Op.ASINH: _unary(lambda x, y: 1.0 / _sqrt1(x, 1.0)),
    Op.ACOSH: _unary(lambda x, y: 1.0 / _op(Op.SQRT, x * x - 1.0)),
    Op.ATANH: _unary(lambda x, y: 1.0 / (1.0 - x * x)),
    # real, imag and conj are R-linear: the transposes of x, -i x and conj(x) under real(a b)
    Op.REAL: lambda g, y, xs, n: (g,), Op.IMAG: lambda g, y, xs, n: (g * -1j,),
    Op.CONJ: lambda g, y, xs, n: (_conj(g),),
    Op.SIGN: _zero, Op.FLOOR: _zero, Op.CEIL: _zero, Op.ROUND: _zero, Op.TRUNC: _zero,
}


def _pow(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    a, b = xs
    # x**0 is 1 everywhere, so its slope is 0 also at x = 0 (not 0 * 0**-1 = NaN; JAX's for an
    # int exponent); d/db a**b = a**b log a, with log 0 read as 0 (JAX's: 0 where 0**b is finite)
    return (g * where(b == 0, 0.0, b * a ** (b - 1.0)),
            g * y * _op(Op.LOG, where(a == 0, 1.0, a)))


def _extremum(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    a, b = xs
    wins = a > b if n.op is Op.MAXIMUM else a < b
    ga = where(wins, g, where(a == b, 0.5 * g, 0.0))  # ties split evenly, as in JAX
    return ga, g - ga


def _atan2(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    a, b = xs
    r = a * a + b * b
    return g * b / r, -g * a / r


BINARY_VJP: Final[dict[Op, Rule]] = {
    Op.ADD: lambda g, y, xs, n: (g, g),
    Op.SUB: lambda g, y, xs, n: (g, -g),
    Op.MUL: lambda g, y, xs, n: (g * xs[1], g * xs[0]),
    Op.DIV: lambda g, y, xs, n: (g / xs[1], -g * y / xs[1]),
    Op.POW: _pow, Op.MAXIMUM: _extremum, Op.MINIMUM: _extremum, Op.ATAN2: _atan2,
    Op.FLOOR_DIV: _zero,
    Op.MOD: lambda g, y, xs, n: (g, -g * _op(Op.FLOOR_DIV, xs[0], xs[1])),
}


def _where(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    return None, where(xs[0], g, 0.0), where(xs[0], 0.0, g)


def _convert(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    return (g,)  # _accumulate casts back to the operand's dtype (or drops it if integer)


def _reduced(n: Node) -> Reduce:
    """A reduction node's attributes."""
    match n.attrs:
        case Reduce() as attrs:
            return attrs
    raise mismatch(n.op, n.attrs)


def _expand(g: Tensor, n: Node) -> Tensor:
    """Broadcast a reduction's cotangent back over the reduced axes."""
    x_shape, r = n.operands[0].shape, _reduced(n)
    if not r.keepdims:
        g = reshape(g, tuple(1 if i in r.axes else d for i, d in enumerate(x_shape)))
    return broadcast_to(g, x_shape)


def _sum(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    return (_expand(g, n),)


def _prod(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    # d/dx_i prod(x) = prod of the others: exact at zeros too (y / x_i would be 0/0 there).
    (x,), kept = xs, Reduce(_reduced(n).axes, True)
    is_zero = x == 0
    zeros = _expand(_op(Op.SUM, astype(is_zero, dtypes.int64), attrs=kept), n)
    others = _expand(_op(Op.PROD, where(is_zero, 1.0, x), attrs=kept), n)
    local = where(zeros == 0, others / where(is_zero, 1.0, x),
                  where((zeros == 1) & is_zero, others, 0.0))
    return (_expand(g, n) * local,)


def _extreme(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    (x,) = xs
    hit = astype(x == _expand(y, n), x.dtype)  # ties share the gradient evenly, as in JAX
    count = _expand(_op(Op.SUM, hit, attrs=Reduce(_reduced(n).axes, True)), n)
    return (_expand(g, n) * hit / count,)


def _cumsum(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    match n.attrs:  # x[i] is in every sum from i on: the scan of g the other way sums them
        case Scan(axis, reverse):
            return (_op(Op.CUMSUM, g, attrs=Scan(axis, not reverse)),)
    raise mismatch(n.op, n.attrs)


def _sort(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    match n.attrs:  # y = x[perm], so x's cotangent is g gathered by the inverse permutation
        case Sort(axis, descending):
            # Ties get JAX's order, whose descending sort is its stable ascending one reversed
            # (the values are the same whichever tied element lands where).
            perm = _op(Op.ARGSORT, xs[0], attrs=Sort(axis, False))
            if descending:
                perm = _op(Op.FLIP, perm, attrs=Axes((axis,)))
            inverse = _op(Op.ARGSORT, perm, attrs=Sort(axis, False))
            return (take_along_axis(g, inverse, axis=axis),)
    raise mismatch(n.op, n.attrs)


def _matmul(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    # Work on the 2-D (batched) forms NumPy promotes 1-D operands to, then undo the promotion.
    a, b = xs
    a2 = a if a.ndim > 1 else reshape(a, (1, a.shape[0]))
    b2 = b if b.ndim > 1 else reshape(b, (b.shape[0], 1))
    batch = broadcast_shapes("matmul", a2.shape[:-2], b2.shape[:-2])
    g2 = reshape(g, (*batch, a2.shape[-2], b2.shape[-1]))
    da = fit(_op(Op.MATMUL, g2, b2.mT), a2.shape, a2.dtype)
    db = fit(_op(Op.MATMUL, a2.mT, g2), b2.shape, b2.dtype)
    return reshape(da, a.shape), reshape(db, b.shape)


def _tensordot(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    a, b = xs
    match n.attrs:
        case Contract(axes_a, axes_b):
            pass
        case _:
            raise mismatch(n.op, n.attrs)
    free_a = tuple(i for i in range(a.ndim) if i not in axes_a)
    free_b = tuple(i for i in range(b.ndim) if i not in axes_b)
    g_a = tuple(range(len(free_a)))  # g's axes that came from a
    g_b = tuple(range(len(free_a), g.ndim))  # and from b
    # tensordot keeps an operand's remaining axes in its own order, so the contracted partner
    # axes come out sorted: map each back to the axis it pairs with, then permute into place.
    da = _op(Op.TENSORDOT, g, b, attrs=Contract(g_b, free_b))
    db = _op(Op.TENSORDOT, a, g, attrs=Contract(free_a, g_a))
    da_axes = (*free_a, *(axes_a[axes_b.index(j)] for j in sorted(axes_b)))
    db_axes = (*(axes_b[axes_a.index(i)] for i in sorted(axes_a)), *free_b)
    return (_op(Op.TRANSPOSE, da, attrs=_inverse(da_axes)),
            _op(Op.TRANSPOSE, db, attrs=_inverse(db_axes)))


def _inverse(perm: tuple[int, ...]) -> Permute:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return Permute(tuple(out))


def _transpose(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    match n.attrs:
        case Permute(perm):
            return (_op(Op.TRANSPOSE, g, attrs=_inverse(perm)),)
    raise mismatch(n.op, n.attrs)


def _pack(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    out, start = [], 0
    for x in xs:  # each operand's piece of the vector's cotangent
        out.append(_op(Op.UNPACK, g, attrs=Piece(start, x.shape)))
        start += x.size
    return tuple(out)


def _unpack(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    match n.attrs:
        case Piece(offset, shape):  # the piece's cotangent in place, zeros around it
            rest = xs[0].shape[0] - offset - math.prod(shape)
            zeros = [full((k,), 0, dtype=g.dtype, device=g.device) for k in (offset, rest)]
            return (_op(Op.PACK, zeros[0], g, zeros[1]),)
    raise mismatch(n.op, n.attrs)


def _concat(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    match n.attrs:
        case Axis(axis):
            out, start = [], 0
            for x in xs:
                out.append(g[(slice(None),) * axis + (slice(start, start + x.shape[axis]),)])
                start += x.shape[axis]
            return tuple(out)
    raise mismatch(n.op, n.attrs)


def _getitem(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    x, *index = xs  # repeated indices each add their share: scatter-add, not set
    return (_op(Op.SCATTER_ADD, zeros_like(x), g, *index, attrs=n.attrs),
            *(None for _ in index))


def _setitem(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    x, v, *index = xs
    picked = _op(Op.GETITEM, g, *index, attrs=n.attrs)
    if n.op is Op.SCATTER_ADD:
        return (g, picked, *(None for _ in index))
    cleared = _op(Op.SETITEM, g, full((), 0, dtype=g.dtype, device=g.device), *index, attrs=n.attrs)
    return (cleared, picked, *(None for _ in index))


SHAPE_VJP: Final[dict[Op, Rule]] = {
    Op.RESHAPE: lambda g, y, xs, n: (reshape(g, xs[0].shape),),
    Op.BROADCAST: lambda g, y, xs, n: (g,),  # _accumulate sums over the broadcast axes
    Op.FLIP: lambda g, y, xs, n: (_op(Op.FLIP, g, attrs=n.attrs),),
    Op.TRANSPOSE: _transpose, Op.CONCAT: _concat, Op.GETITEM: _getitem,
    Op.SETITEM: _setitem, Op.SCATTER_ADD: _setitem, Op.PACK: _pack, Op.UNPACK: _unpack,
    Op.SHARD: lambda g, y, xs, n: (_op(Op.SHARD, g, attrs=n.attrs),),  # as JAX: g split alike
}

# Ops whose results have no floating derivative: comparisons, logic, bits, indices of extremes.
NOT_DIFFERENTIABLE: Final = frozenset({
    Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.LOGICAL_AND, Op.LOGICAL_OR, Op.LOGICAL_XOR,
    Op.LOGICAL_NOT, Op.BITWISE_AND, Op.BITWISE_OR, Op.BITWISE_XOR, Op.BITWISE_INVERT,
    Op.SHIFT_LEFT, Op.SHIFT_RIGHT, Op.ISNAN, Op.ISINF, Op.ISFINITE, Op.SIGNBIT, Op.ARGMAX,
    Op.ARGMIN, Op.ANY, Op.ALL, Op.ARGSORT,
})

VJP: Final[Mapping[Op, Rule]] = {
    **{op: _not_differentiable for op in NOT_DIFFERENTIABLE},
    **UNARY_VJP, **BINARY_VJP, **SHAPE_VJP,
    Op.DATA: _zero, Op.SCALAR: _zero, Op.IOTA: _zero, Op.STOP_GRADIENT: _zero,  # 0: by fiat
    Op.WHERE: _where, Op.CONVERT: _convert,
    Op.SUM: _sum, Op.PROD: _prod, Op.MAX: _extreme, Op.MIN: _extreme, Op.CUMSUM: _cumsum,
    Op.MATMUL: _matmul, Op.TENSORDOT: _tensordot, Op.CONV: conv_vjp, Op.SORT: _sort,
    Op.LINALG: linalg_vjp, Op.FFT: fft_vjp,
}
