"""Autodiff: reverse mode as a graph-to-graph transform on the recorded IR.

The layer above the barrier. ``grad(f)`` runs ``f`` (ordinary Python: loops, branches,
recursion) on tensors, which records its graph; then walks that graph from the output back to
the inputs, applying one VJP rule per op from :data:`VJP`, a table keyed by ``Op``. The rules
*record* ops too, so gradients are lazy tensors: forward, backward and an optimizer update cut
into one graph at the next barrier. Never imports jax.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from minilazy import dtypes
from minilazy.attrs import NONE, Attrs, Axis, Contract, Permute, Reduce, Scan, ToShape, mismatch
from minilazy.convolution import conv_vjp
from minilazy.creation import full, full_like, zeros_like
from minilazy.cut import linearize
from minilazy.elementwise import astype, where
from minilazy.infer import broadcast_shapes
from minilazy.ir import Node, Op
from minilazy.reductions import sum as reduce_sum
from minilazy.shaping import broadcast_to, reshape
from minilazy.tracer import Tensor, handle, record

Cotangents = tuple[Tensor | None, ...]
# A VJP rule: (cotangent of the output, the output, the operands, the node) -> operand cotangents
# (None where an operand gets none). Results may still need un-broadcasting: see _accumulate.
Rule = Callable[[Tensor, Tensor, tuple[Tensor, ...], Node], Cotangents]


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


def _sqrt1(x: Tensor, sign: float) -> Tensor:
    return _op(Op.SQRT, 1.0 + sign * x * x)


UNARY_VJP: Final[dict[Op, Rule]] = {
    Op.NEG: lambda g, y, xs, n: (-g,),
    Op.ABS: _unary(lambda x, y: _op(Op.SIGN, x)),
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
    Op.SIGN: _zero, Op.FLOOR: _zero, Op.CEIL: _zero, Op.ROUND: _zero, Op.TRUNC: _zero,
}


def _pow(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    a, b = xs
    da = g * b * a ** (b - 1.0)
    # d/db a**b = a**b log a; at a == 0 the limit (for b > 0) is 0, not 0 * -inf
    db = g * where(a == 0, 0.0, y * _op(Op.LOG, where(a == 0, 1.0, a)))
    return da, db


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
    c = xs[0]
    return None, where(c, g, 0.0), where(c, 0.0, g)


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


def _matmul(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Cotangents:
    # Work on the 2-D (batched) forms NumPy promotes 1-D operands to, then undo the promotion.
    a, b = xs
    a2 = a if a.ndim > 1 else reshape(a, (1, a.shape[0]))
    b2 = b if b.ndim > 1 else reshape(b, (b.shape[0], 1))
    batch = broadcast_shapes("matmul", a2.shape[:-2], b2.shape[:-2])
    g2 = reshape(g, (*batch, a2.shape[-2], b2.shape[-1]))
    da = _fit(_op(Op.MATMUL, g2, b2.mT), a2.shape, a2.dtype)
    db = _fit(_op(Op.MATMUL, a2.mT, g2), b2.shape, b2.dtype)
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
    cleared = _op(Op.SETITEM, g, full((), 0, g.dtype, g.device), *index, attrs=n.attrs)
    return (cleared, picked, *(None for _ in index))


SHAPE_VJP: Final[dict[Op, Rule]] = {
    Op.RESHAPE: lambda g, y, xs, n: (reshape(g, xs[0].shape),),
    Op.BROADCAST: lambda g, y, xs, n: (g,),  # _accumulate sums over the broadcast axes
    Op.FLIP: lambda g, y, xs, n: (_op(Op.FLIP, g, attrs=n.attrs),),
    Op.TRANSPOSE: _transpose, Op.CONCAT: _concat, Op.GETITEM: _getitem,
    Op.SETITEM: _setitem, Op.SCATTER_ADD: _setitem,
    Op.SHARD: lambda g, y, xs, n: (_op(Op.SHARD, g, attrs=n.attrs),),  # as JAX: g split alike
}

# Ops whose results have no floating derivative: comparisons, logic, bits, indices of extremes.
NOT_DIFFERENTIABLE: Final = frozenset({
    Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.LOGICAL_AND, Op.LOGICAL_OR, Op.LOGICAL_XOR,
    Op.LOGICAL_NOT, Op.BITWISE_AND, Op.BITWISE_OR, Op.BITWISE_XOR, Op.BITWISE_INVERT,
    Op.SHIFT_LEFT, Op.SHIFT_RIGHT, Op.ISNAN, Op.ISINF, Op.ISFINITE, Op.ARGMAX, Op.ARGMIN,
    Op.ANY, Op.ALL,
})

VJP: Final[Mapping[Op, Rule]] = {
    **{op: _not_differentiable for op in NOT_DIFFERENTIABLE},
    **UNARY_VJP, **BINARY_VJP, **SHAPE_VJP,
    Op.DATA: _zero, Op.SCALAR: _zero, Op.IOTA: _zero,  # no operands: an empty tuple of zeros
    Op.WHERE: _where, Op.CONVERT: _convert,
    Op.SUM: _sum, Op.PROD: _prod, Op.MAX: _extreme, Op.MIN: _extreme, Op.CUMSUM: _cumsum,
    Op.MATMUL: _matmul, Op.TENSORDOT: _tensordot, Op.CONV: conv_vjp,
}


def _fit(ct: Tensor, shape: tuple[int, ...], dtype: dtypes.DType) -> Tensor:
    """A cotangent summed over the axes its operand was broadcast along, in its dtype."""
    if ct.shape != shape:
        if math.prod(ct.shape) == math.prod(shape) and len(ct.shape) != len(shape):
            ct = reshape(ct, shape)  # only leading 1s differ (setitem dropped them)
        else:
            lead = ct.ndim - len(shape)
            axes = tuple(range(lead)) + tuple(
                lead + i for i, d in enumerate(shape) if d == 1 and ct.shape[lead + i] != 1)
            ct = reshape(reduce_sum(ct, axis=axes), shape)
    return ct if ct.dtype == dtype else astype(ct, dtype)


def _backward(out: Tensor, wrt: Sequence[Tensor]) -> list[Tensor]:
    """The gradients of scalar ``out`` with respect to ``wrt``, recorded (lazy)."""
    targets = {t._node: i for i, t in enumerate(wrt)}
    order = linearize([out._node])
    # Only nodes that depend on a target carry cotangents worth computing.
    reaches = set(targets)
    for node in order:
        if any(o in reaches for o in node.operands):
            reaches.add(node)
    device = out.device
    cotangents: dict[Node, Tensor] = {out._node: full_like(out, 1)}
    grads: dict[int, Tensor] = {}
    for node in reversed(order):
        g = cotangents.pop(node, None)
        if g is None:
            continue
        if node in targets:
            grads[targets[node]] = g
            continue
        operands = tuple(handle(o, device) for o in node.operands)
        contributions = VJP[node.op](g, handle(node, device), operands, node)
        for o, ct in zip(node.operands, contributions):
            if ct is None or o not in reaches or o.dtype not in dtypes.FLOATING:
                continue
            ct = _fit(ct, o.shape, o.dtype)
            cotangents[o] = cotangents[o] + ct if o in cotangents else ct
    # (no `grads.get(i) or ...`: truth-testing a tensor would be an observation barrier)
    return [grads[i] if i in grads else zeros_like(t) for i, t in enumerate(wrt)]


def _flatten(tree: Any, where: str) -> tuple[list[Tensor], Callable[[list[Tensor]], Any]]:
    """The tensors of a pytree (tensor, list, tuple, dict) and a function rebuilding it."""
    if isinstance(tree, Tensor):
        return [tree], lambda leaves: leaves[0]
    if isinstance(tree, (list, tuple)):
        parts = [_flatten(x, f"{where}[{i}]") for i, x in enumerate(tree)]
        kind = type(tree)
    elif isinstance(tree, dict):
        parts = [_flatten(v, f"{where}[{k!r}]") for k, v in tree.items()]
        keys = list(tree)
    else:
        raise TypeError(f"grad: {where} is a {type(tree).__name__}; differentiable arguments "
                        "must be tensors or lists, tuples and dicts of tensors")
    leaves = [t for ts, _ in parts for t in ts]
    sizes = [len(ts) for ts, _ in parts]

    def rebuild(flat: list[Tensor]) -> Any:
        out, i = [], 0
        for (_, build), n in zip(parts, sizes):
            out.append(build(flat[i:i + n]))
            i += n
        return dict(zip(keys, out)) if isinstance(tree, dict) else kind(out)

    return leaves, rebuild


def value_and_grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0
                   ) -> Callable[..., tuple[Tensor, Any]]:
    """``f`` and its gradient with respect to the arguments ``argnums``, both lazy.

    ``f`` is ordinary Python (loops, branches on Python values, recursion) returning a 0-d
    floating tensor. Differentiated arguments are float tensors or lists/tuples/dicts of them;
    the gradient has the same structure (a tuple of such when ``argnums`` is a tuple).

    Example:
        >>> import minilazy as ml
        >>> f = lambda w: ml.sum(w * w)
        >>> value, g = ml.value_and_grad(f)(ml.asarray([1.0, 2.0]))
        >>> value.item(), g.tolist()
        (5.0, [2.0, 4.0])
    """
    single = isinstance(argnums, int)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def wrapped(*given: Any) -> tuple[Tensor, Any]:
        args = list(given)
        wrt: list[Tensor] = []
        rebuilds = []
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"grad: argnums {i} is out of range for {len(args)} arguments")
            leaves, rebuild = _flatten(args[i], f"argument {i}")
            fresh = [_watch(t, f"argument {i}") for t in leaves]
            args[i] = rebuild(fresh)
            wrt += fresh
            rebuilds.append((len(fresh), rebuild))
        out = f(*args)
        if not isinstance(out, Tensor) or out.shape != () or out.dtype not in dtypes.FLOATING:
            shown = f"{out.dtype}{list(out.shape)}" if isinstance(out, Tensor) else type(out)
            raise TypeError(f"grad: f must return a 0-d floating tensor, got {shown}")
        grads = _backward(out, wrt)
        trees, k = [], 0
        for n, rebuild in rebuilds:
            trees.append(rebuild(grads[k:k + n]))
            k += n
        return out, trees[0] if single else tuple(trees)

    return wrapped


def _watch(t: Tensor, where: str) -> Tensor:
    """A fresh node standing for ``t``: gradients stop here, even if ``t`` is passed twice."""
    if t.dtype not in dtypes.FLOATING:
        raise TypeError(f"grad: {where} has dtype {t.dtype}; only floating tensors have "
                        "gradients")
    return record(Op.RESHAPE, (t._node,), ToShape(t.shape), t.device)


def grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The gradient of ``f`` with respect to the arguments ``argnums`` (see value_and_grad).

    Example:
        >>> import minilazy as ml
        >>> df = ml.grad(lambda x: ml.sum(ml.sin(x)))
        >>> df(ml.asarray([0.0])).tolist()
        [1.0]
    """
    vg = value_and_grad(f, argnums)
    return lambda *args: vg(*args)[1]
