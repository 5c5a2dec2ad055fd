"""Convolution: the public ``conv`` (N-d, strided, padded, dilated, grouped) and its VJP rule.

In the Array API namespace (``minilazy.api``). ``conv`` records one ``CONV`` op in torch's layouts
(input N, C, ...; filter O, C / groups, ...). Its VJP rule lives here, beside it, and records
convolutions again (JAX's transpose rules): the input's gradient is a convolution of the
cotangent with the reversed filter, spread by the strides; the filter's is a convolution of the
input with the cotangent, the batch split into the groups. Never imports jax.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from minilazy.api.creation import tensors
from minilazy.api.shaping import flip, permute_dims, reshape
from minilazy.api.tensor import Tensor, TensorLike, as_node, record
from minilazy.core.attrs import mismatch
from minilazy.core.infer import describe
from minilazy.core.ir import Node, Op, ShapeError, UnsupportedError
from minilazy.ops.conv import Conv, filter_vjp_padding, input_vjp_padding

IntOrInts = int | Sequence[int]


def _per_axis(what: str, value: IntOrInts, nd: int, least: int) -> tuple[int, ...]:
    """One int per spatial axis, each at least ``least``; ValueError naming ``what``."""
    out = tuple(operator.index(v) for v in (value if isinstance(value, Sequence) else
                                            [value] * nd))
    if len(out) != nd or any(v < least for v in out):
        raise ValueError(f"conv: {what} must be {nd} int(s) >= {least}, got {value!r}")
    return out


def _padding(padding: int | Sequence[int | tuple[int, int]], nd: int
             ) -> tuple[tuple[int, int], ...]:
    """Per spatial axis (low, high): from one int, one int per axis, or a pair per axis."""
    items = padding if isinstance(padding, Sequence) else [padding] * nd
    pairs = tuple((p, p) if not isinstance(p, Sequence) else tuple(p) for p in items)
    if len(pairs) != nd or any(len(p) != 2 or operator.index(p[0]) < 0 or
                               operator.index(p[1]) < 0 for p in pairs):
        raise ValueError(f"conv: padding must be {nd} int(s) >= 0 or (low, high) pairs, got "
                         f"{padding!r}")
    return tuple((operator.index(lo), operator.index(hi)) for lo, hi in pairs)


def conv(x: TensorLike, w: TensorLike, /, *, stride: IntOrInts = 1,
         padding: int | Sequence[int | tuple[int, int]] = 0, dilation: IntOrInts = 1,
         groups: int = 1) -> Tensor:
    """Convolve (cross-correlate, as torch) input ``x`` with filter ``w``: one op.

    Layouts are torch's: ``x`` (N, C, ...), ``w`` (O, C / groups, ...), the result (N, O, ...).
    ``stride``, ``padding`` (zeros; ints or (low, high) pairs) and ``dilation`` (of the filter)
    take one int for every spatial axis, or one per axis.

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([[[1.0, 2.0, 3.0, 4.0]]])
        >>> ml.conv(x, ml.asarray([[[1.0, -1.0]]]), padding=[(0, 1)]).tolist()
        [[[-1.0, -1.0, -1.0, 4.0]]]
    """
    x, w = tensors(x, w)
    nd = x.ndim - 2
    if nd < 1 or w.ndim != x.ndim:
        raise ShapeError(f"conv: input {describe(x._node)} and filter {describe(w._node)} need "
                         "the same number of dimensions, at least 3")
    groups = operator.index(groups)
    if groups < 1:
        raise ValueError(f"conv: groups must be >= 1, got {groups}")
    attrs = Conv(_per_axis("stride", stride, nd, 1), _padding(padding, nd), (1,) * nd,
                 _per_axis("dilation", dilation, nd, 1), groups, 1)
    # XLA's extents are int64: a padded input or a stride past it would fail at the barrier
    spans = zip(x.shape[2:], attrs.padding, attrs.strides)
    if any(max(n + lo + hi, s) >> 63 for n, (lo, hi), s in spans):
        raise ValueError(f"conv: padding {attrs.padding} or stride {attrs.strides} of "
                         f"{describe(x._node)} makes an extent past int64")
    return record(Op.CONV, (x._node, as_node(w, x.device)), attrs, x.device)


def _conv(lhs: Tensor, rhs: Tensor, attrs: Conv) -> Tensor:
    return record(Op.CONV, (lhs._node, rhs._node), attrs, lhs.device)


def conv_vjp(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node
             ) -> tuple[Tensor | None, ...]:
    """The cotangents of a convolution's input and filter, themselves convolutions.

    Example:
        >>> import minilazy as ml
        >>> f = lambda w: ml.sum(ml.conv(ml.ones((1, 1, 3)), w))
        >>> ml.grad(f)(ml.ones((1, 1, 2))).tolist()
        [[[2.0, 2.0]]]
    """
    match n.attrs:
        case Conv() as c:
            pass
        case _:
            raise mismatch(n.op, n.attrs)
    if c.batch_groups != 1:
        raise UnsupportedError("grad: a batch-grouped convolution (a filter's gradient) has no "
                               "gradient rule: differentiate a convolution once")
    x, w = xs
    nd, groups = len(c.strides), c.groups
    spatial = tuple(range(2, 2 + nd))
    out, per_group = w.shape[:2]
    # Input: the filter with its in and out channels swapped within each group, windows reversed.
    wt = permute_dims(reshape(w, (groups, out // groups, per_group, *w.shape[2:])),
                      (1, 0, *range(2, 3 + nd)))
    wt = reshape(wt, (out // groups, groups * per_group, *w.shape[2:]))
    wt = flip(permute_dims(wt, (1, 0, *spatial)), axis=spatial)
    dx = _conv(g, wt, Conv(c.lhs_dilation, input_vjp_padding(c, x.shape, w.shape, g.shape),
                           c.strides, c.rhs_dilation, groups, 1))
    # Filter: batch and channels swap roles in input and cotangent; the groups split the batch.
    dw = _conv(permute_dims(x, (1, 0, *spatial)), permute_dims(g, (1, 0, *spatial)),
               Conv(c.rhs_dilation, filter_vjp_padding(c, x.shape, w.shape, g.shape),
                    c.lhs_dilation, c.strides, 1, groups))
    return dx, permute_dims(dw, (1, 0, *spatial))
