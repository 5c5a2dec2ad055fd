"""Reference semantics: a NumPy interpreter of the same IR the XLA lowering compiles.

The executable meaning of every op: :data:`REFERENCE` maps each op to a
NumPy function of its operands' values, mirroring ``lowering.LOWER`` rule for rule (the same
loop-dtype casts, NumPy's own broadcasting). It is slow and never on a hot path; it exists so a
student can read what an op *means*, and so the conformance oracle can run it as an
implementation. Expected values in tests never come from here: they come from NumPy directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from minilazy.core import runtime
from minilazy.core.attrs import (
    Axes,
    Axis,
    Contract,
    Conv,
    Gap,
    Index,
    Iota,
    NewAxis,
    Permute,
    Piece,
    Reduce,
    Scan,
    Take,
    ToShape,
    mismatch,
)
from minilazy.core.cut import Cut, cut
from minilazy.core.index_rules import index_shape, numpy_index, widened
from minilazy.core.infer import UFUNC, signature
from minilazy.core.ir import BINARY, UNARY, Node, Op
from minilazy.core.lowering_complex import special_values
from minilazy.core.lowering_int import truncated
from minilazy.core.namespaced import evaluate as namespaced
from minilazy.core.tracer import Tensor
from minilazy.core.window_rules import dilated

Array = np.ndarray[Any, Any]
Rule = Callable[[Sequence[Array], Node], Array]


# np.real and np.imag are no ufuncs (see ufunc_loops.PARTS): the other elementwise ops' NumPy
# functions, with the standard's complex special values where NumPy's differ (the lowering's own
# table)
_UFUNCS: Final[Mapping[Op, Callable[..., Any]]] = {**UFUNC, Op.REAL: np.real, Op.IMAG: np.imag}
_NUMPY: Final = {op: special_values(op, fn, np) for op, fn in _UFUNCS.items()}


def _elementwise(xs: Sequence[Array], n: Node) -> Array:
    sig = signature(n.op, *(o.dtype for o in n.operands))
    args = [np.asarray(x).astype(d, copy=False) for x, d in zip(xs, sig)]
    if n.op is Op.ROUND:
        return np.asarray(np.round(args[0])).astype(n.dtype)
    with np.errstate(all="ignore"):
        if n.op is Op.POW and args[0].dtype.kind in "iu":  # NumPy raises for negative exponents
            a, b = args
            out = truncated(np, a, b, np.power(a, np.where(b < 0, 0, b)))
        else:
            out = _NUMPY[n.op](*args)
    return np.asarray(out).astype(n.dtype, copy=False)


def _param(xs: Sequence[Array], n: Node) -> Array:
    return np.asarray(xs[0], dtype=n.dtype)


def _iota(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Iota(_, axis, _):
            shape = [1] * len(n.shape)
            shape[axis] = n.shape[axis]
            counts = np.arange(n.shape[axis], dtype=n.dtype).reshape(shape)
            return np.broadcast_to(counts, n.shape)
    raise mismatch(n.op, n.attrs)


def _convert(xs: Sequence[Array], n: Node) -> Array:
    with np.errstate(all="ignore"):
        return xs[0].astype(n.dtype)


def _where(xs: Sequence[Array], n: Node) -> Array:
    c, a, b = xs
    return np.where(c, a.astype(n.dtype), b.astype(n.dtype))


def _reduction(fn: Callable[..., Any]) -> Rule:
    def rule(xs: Sequence[Array], n: Node) -> Array:
        match n.attrs:
            case Reduce(axes, keepdims):
                x = xs[0].astype(n.dtype) if n.op in (Op.SUM, Op.PROD) else xs[0]
                if n.op in (Op.ARGMAX, Op.ARGMIN):
                    axis = axes[0] if len(axes) == 1 else None
                    return np.asarray(fn(x, axis=axis, keepdims=keepdims)).astype(n.dtype)
                with np.errstate(all="ignore"):
                    return np.asarray(fn(x, axis=axes, keepdims=keepdims)).astype(n.dtype)
        raise mismatch(n.op, n.attrs)

    return rule


def _cumsum(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Scan(axis, reverse):
            x = xs[0].astype(n.dtype)
            with np.errstate(all="ignore"):
                if reverse:  # from the end: the sums of the suffixes
                    return np.flip(np.cumsum(np.flip(x, axis), axis), axis)
                return np.cumsum(x, axis)
    raise mismatch(n.op, n.attrs)


def _matmul(xs: Sequence[Array], n: Node) -> Array:
    sig = signature(n.op, *(o.dtype for o in n.operands))
    with np.errstate(all="ignore"):
        return np.asarray(np.matmul(xs[0].astype(sig[0]), xs[1].astype(sig[1])))


def _tensordot(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Contract(axes_a, axes_b):
            a, b = (x.astype(n.dtype) for x in xs)
            with np.errstate(all="ignore"):
                return np.asarray(np.tensordot(a, b, (axes_a, axes_b)))
    raise mismatch(n.op, n.attrs)


def _spread(x: Array, dilation: tuple[int, ...]) -> Array:
    """``x`` with ``d - 1`` zeros between neighbours along each spatial axis (2, 3, ...)."""
    shape = (*x.shape[:2], *(dilated(n, d) for n, d in zip(x.shape[2:], dilation)))
    out = np.zeros(shape, x.dtype)
    every: tuple[slice, ...] = (slice(None),) * 2 + tuple(slice(None, None, d) for d in dilation)
    out[every] = x
    return out


def _conv(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Conv(strides, padding, lhs_dilation, rhs_dilation, groups, batch_groups):
            x, w = _spread(xs[0].astype(n.dtype), lhs_dilation), _spread(xs[1], rhs_dilation)
            x = np.pad(x, [(0, 0)] * 2 + [(max(lo, 0), max(hi, 0)) for lo, hi in padding])
            crop: tuple[slice, ...] = (slice(None),) * 2 + tuple(  # negative padding crops
                slice(max(-lo, 0), x.shape[2 + k] - max(-hi, 0))
                for k, (lo, hi) in enumerate(padding))
            x = x[crop]
            nd, (b, g), (o, c) = len(strides), (batch_groups, groups), w.shape[:2]
            view = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], tuple(range(2, 2 + nd)))
            step: tuple[slice, ...] = (slice(None),) * 2 + tuple(
                slice(None, None, st) for st in strides) + (slice(None),) * nd
            windows = view[step]
            # batch split into b groups and channels into g (one of them is 1); the filter's
            # output channels split into b * g groups, each seeing its own part of the input
            windows = windows.reshape(b, x.shape[0] // b, g, c, *windows.shape[2:])
            w = w.astype(n.dtype).reshape(b, g, o // (b * g), c, *w.shape[2:])
            at, k = "pqrstu"[:nd], "ijklmv"[:nd]  # result positions, positions in the window
            out = np.einsum(f"bngc{at}{k},bgoc{k}->nbgo{at}", windows, w)
            return np.asarray(out.reshape(out.shape[0], o, *out.shape[4:]))
    raise mismatch(n.op, n.attrs)


def _index(n: Node) -> Index:
    match n.attrs:
        case Index() as spec:
            return spec
    raise mismatch(n.op, n.attrs)


def _clamped(x: Array, arrays: Sequence[Array], spec: Index) -> list[Array]:
    """Index arrays clamped into range, as XLA's gather clamps (implementation-defined)."""
    out = []
    axis = 0
    for entry in spec.entries:
        if isinstance(entry, Take):  # an index array: it indexes axis `axis`
            n, k = x.shape[axis], widened(arrays[entry.k])
            if n:  # (an empty axis can only be indexed by an empty array: nothing to clamp)
                k = np.minimum(k, n - 1) if k.dtype.kind == "u" else np.clip(k, -n, n - 1)
            out.append(k)
        if not isinstance(entry, NewAxis | Gap):  # the others each consume one axis
            axis += 1
    return out


def _getitem(xs: Sequence[Array], n: Node) -> Array:
    x, *arrays = xs
    spec = _index(n)
    return np.asarray(x[numpy_index(spec, _clamped(x, arrays, spec))])


def _dropping(x: Array, arrays: Sequence[Array], spec: Index) -> tuple[Array, list[Array]]:
    """``x`` padded by one element on each axis an index array updates, and the index arrays.

    Each out-of-range index is sent to the padding: XLA's scatter drops such writes
    (implementation-defined, LZ-NUM-005), and so does this once the padding is cut off again.
    """
    widths = [(0, 0)] * x.ndim
    out = []
    axis = 0
    for entry in spec.entries:
        if isinstance(entry, Take):
            n, k = x.shape[axis], widened(arrays[entry.k])
            inside = k < n if k.dtype.kind == "u" else (k >= -n) & (k < n)
            out.append(np.where(inside, np.mod(k, max(n, 1)), n))
            widths[axis] = (0, 1)
        if not isinstance(entry, NewAxis | Gap):
            axis += 1
    return (np.pad(x, widths) if out else x.copy()), out


def _setitem(xs: Sequence[Array], n: Node) -> Array:
    x, v, *arrays = xs
    spec = _index(n)
    out, kept = _dropping(x, arrays, spec)
    index = numpy_index(spec, kept)
    target = index_shape(x.shape, spec, [a.shape for a in arrays])
    while v.ndim > len(target):  # extra leading axes are 1s (checked when recorded)
        v = v[0]
    with np.errstate(all="ignore"):
        if n.op is Op.SCATTER_ADD:
            np.add.at(out, index, np.broadcast_to(v.astype(x.dtype), target))
        else:
            out[index] = np.broadcast_to(v.astype(x.dtype), target)
    return out[tuple(slice(0, side) for side in x.shape)]


def _unpack(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Piece(offset, shape):
            return xs[0][offset:offset + math.prod(shape)].reshape(shape)
    raise mismatch(n.op, n.attrs)


def _concat(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Axis(axis):
            return np.concatenate([x.astype(n.dtype) for x in xs], axis=axis)
    raise mismatch(n.op, n.attrs)


def _static(fn: Callable[[Array, tuple[int, ...]], Any]) -> Rule:
    """A rule whose one attribute (a shape, a permutation, axes) is passed straight to ``fn``."""
    def rule(xs: Sequence[Array], n: Node) -> Array:
        match n.attrs:
            case ToShape(v) | Permute(v) | Axes(v):
                return np.asarray(fn(xs[0], v))
        raise mismatch(n.op, n.attrs)

    return rule


REFERENCE: Final[Mapping[Op, Rule]] = {
    Op.DATA: _param, Op.SCALAR: _param, Op.IOTA: _iota, Op.CONVERT: _convert, Op.WHERE: _where,
    **{op: _elementwise for op in UNARY | BINARY},
    Op.SUM: _reduction(np.sum), Op.PROD: _reduction(np.prod), Op.MAX: _reduction(np.max),
    Op.MIN: _reduction(np.min), Op.ARGMAX: _reduction(np.argmax),
    Op.ARGMIN: _reduction(np.argmin), Op.ANY: _reduction(np.any), Op.ALL: _reduction(np.all),
    Op.CUMSUM: _cumsum,
    # the same functions as the lowering's, called on NumPy (see namespaced.evaluate)
    **{op: lambda xs, n: np.asarray(namespaced(np, xs, n)).astype(n.dtype, copy=False)
       for op in (Op.SORT, Op.ARGSORT, Op.LINALG, Op.FFT)},
    Op.MATMUL: _matmul, Op.TENSORDOT: _tensordot, Op.CONV: _conv,
    Op.RESHAPE: _static(np.reshape), Op.TRANSPOSE: _static(np.transpose),
    Op.BROADCAST: _static(np.broadcast_to), Op.FLIP: _static(np.flip), Op.CONCAT: _concat,
    Op.GETITEM: _getitem, Op.SETITEM: _setitem, Op.SCATTER_ADD: _setitem,
    Op.SHARD: lambda xs, n: xs[0],  # placement changes where a value lives, not what it is
    Op.STOP_GRADIENT: lambda xs, n: xs[0],  # a mark for the backward pass, not a computation
    Op.PACK: lambda xs, n: np.concatenate([x.ravel() for x in xs]), Op.UNPACK: _unpack,
}


def evaluate(c: Cut, params: Sequence[Any]) -> list[Array]:
    """Interpret the cut with NumPy: the values its outputs mean, given its ``DATA`` values.

    Scalar parameters are read from their nodes.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.asarray([1.0, 2.0])
        >>> evaluate(cut([(x + 1.0)._node], x.device), [np.array([5.0, 6.0])])
        [array([6., 7.])]
    """
    data = {p: i for i, p in enumerate(c.params)}
    env: list[Array] = []
    for node, ins in zip(c.order, c.operands):
        if node.op is Op.DATA:
            args = [np.asarray(params[data[node]])]
        elif node.op is Op.SCALAR:
            args = [np.asarray(node.payload)]
        else:
            args = [env[i] for i in ins]
        env.append(np.asarray(REFERENCE[node.op](args, node)))
    return [env[i].copy() for i in c.outputs]


def run(*tensors: Tensor) -> list[Array]:
    """The values of ``tensors`` computed by the reference interpreter (nothing is rebound).

    Example:
        >>> import minilazy as ml
        >>> run(ml.arange(3) * 2)
        [array([0, 2, 4])]
    """
    roots = [t._node for t in tensors]
    c = cut(roots, tensors[0].device)
    return evaluate(c, [runtime.copy_to_host(p.payload) for p in c.params])
