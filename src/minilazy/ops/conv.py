"""The convolution family: ``Op.CONV`` (N-d, grouped, dilated), registered into the engine.

Like the FFT family (``ops/fft.py``, the worked example), with the window arithmetic its rules
share: a result shape (:func:`conv_shape`, the shape rule), the paddings of its VJPs (used by
``api/convolution.py``, where the VJP is written with the namespace) and the dilations of the
NumPy reference, so the three agree by construction. Its lowering is ``lax``'s general dilated
convolution; its reference, windows of NumPy summed with ``einsum``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from jax import lax

from minilazy.core import dtypes, infer, ir, lowering
from minilazy.core.attrs import Attrs, mismatch
from minilazy.core.dtypes import DType
from minilazy.core.ir import Node, Op, Shape, ShapeError
from minilazy.introspect import printers, pycode, reference


class Conv(NamedTuple):
    """``CONV``: strides, padding, dilations and groups of an N-d convolution.

    Per spatial axis: the window ``strides``, the ``padding`` (low, high; negative crops), the
    spacing of the input (``lhs_dilation``: a transposed convolution) and of the filter
    (``rhs_dilation``); then how features and batch split into groups. Layouts are torch's:
    input (N, C, ...), filter (O, C / groups, ...), result (N, O, ...).

    Example:
        >>> Conv((1,), ((0, 0),), (1,), (1,), 1, 1).groups
        1
    """

    strides: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    lhs_dilation: tuple[int, ...]
    rhs_dilation: tuple[int, ...]
    groups: int
    batch_groups: int  # the filter's gradient splits the batch, not the features

Array = np.ndarray[Any, Any]


def dilated(n: int, d: int) -> int:
    """The length of ``n`` elements spaced ``d`` apart (``d - 1`` zeros between neighbours).

    Example:
        >>> dilated(3, 2), dilated(0, 2)
        (5, 0)
    """
    return 0 if n == 0 else (n - 1) * d + 1

def conv_shape(lhs: Shape, rhs: Shape, c: Conv) -> Shape:
    """The result shape of ``CONV`` on an input ``lhs`` and a filter ``rhs`` (torch's layouts).

    Raises ``ShapeError`` naming both shapes when they do not fit together.

    Example:
        >>> conv_shape((1, 2, 5), (4, 2, 3), Conv((2,), ((1, 1),), (1,), (1,), 1, 1))
        (1, 4, 3)
    """
    def fail(why: str) -> ShapeError:
        return ShapeError(f"conv: {why}: input {list(lhs)}, filter {list(rhs)}")

    nd = len(lhs) - 2
    if nd < 1 or len(rhs) != len(lhs):
        raise fail("input and filter need the same number of dimensions, at least 3")
    if not len(c.strides) == len(c.padding) == len(c.lhs_dilation) == len(c.rhs_dilation) == nd:
        raise fail(f"strides, padding and dilations need one entry per spatial axis ({nd})")
    (n, channels), (out, per_group) = lhs[:2], rhs[:2]
    groups = c.groups * c.batch_groups
    if channels != per_group * c.groups:
        raise fail(f"{channels} input channels are not {c.groups} group(s) of the filter's "
                   f"{per_group}")
    if out % groups or n % c.batch_groups:
        raise fail(f"the filter's {out} output channels do not split into {groups} groups")
    spatial = []
    for k in range(nd):
        size = dilated(lhs[2 + k], c.lhs_dilation[k]) + sum(c.padding[k])
        window = dilated(rhs[2 + k], c.rhs_dilation[k])
        if window == 0 or size < window:
            raise fail(f"along spatial axis {k} the window ({window}) does not fit in the padded "
                       f"input ({size})")
        spatial.append((size - window) // c.strides[k] + 1)
    return (n // c.batch_groups, out, *spatial)


def input_vjp_padding(c: Conv, lhs: Shape, rhs: Shape, out: Shape
                      ) -> tuple[tuple[int, int], ...]:
    """The padding of the convolution that maps a cotangent back onto the input (JAX's rule).

    Example:
        >>> input_vjp_padding(Conv((1,), ((1, 1),), (1,), (1,), 1, 1), (1, 1, 5), (1, 1, 3),
        ...                   (1, 1, 5))
        ((1, 1),)
    """
    pads = []
    for k, (lo, _) in enumerate(c.padding):
        before = dilated(rhs[2 + k], c.rhs_dilation[k]) - lo - 1
        after = (dilated(lhs[2 + k], c.lhs_dilation[k]) + dilated(rhs[2 + k], c.rhs_dilation[k])
                 - 1 - dilated(out[2 + k], c.strides[k]) - before)
        pads.append((before, after))
    return tuple(pads)


def filter_vjp_padding(c: Conv, lhs: Shape, rhs: Shape, out: Shape
                       ) -> tuple[tuple[int, int], ...]:
    """The padding of the convolution of input and cotangent that gives the filter's gradient.

    Example:
        >>> filter_vjp_padding(Conv((1,), ((1, 1),), (1,), (1,), 1, 1), (1, 1, 5), (1, 1, 3),
        ...                    (1, 1, 5))
        ((1, 1),)
    """
    return tuple((lo, dilated(out[2 + k], c.strides[k]) - dilated(lhs[2 + k], c.lhs_dilation[k])
                  + dilated(rhs[2 + k], c.rhs_dilation[k]) - lo - 1)
                 for k, (lo, _) in enumerate(c.padding))


def rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """The result shape and dtype of ``CONV``: floating operands only, as in torch.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (1, 2, 5), dtypes.int32)
        >>> w = data_leaf(None, (4, 2, 3), dtypes.int32)
        >>> rule(Op.CONV, (x, w), Conv((1,), ((0, 0),), (1,), (1,), 1, 1))
        Traceback (most recent call last):
        ...
        TypeError: conv: needs floating operands, got i32[1,2,5] and i32[4,2,3]
    """
    match attrs:
        case Conv():
            lhs, rhs = xs
            dtype = dtypes.promote(lhs.dtype, rhs.dtype)
            if dtype not in dtypes.FLOATING:  # as torch: XLA's integer convolutions differ
                raise TypeError(f"conv: needs floating operands, got {infer.describe(lhs)} and "
                                f"{infer.describe(rhs)}")
            return dtypes.sized("conv", conv_shape(lhs.shape, rhs.shape, attrs), dtype), dtype
    raise mismatch(op, attrs)


def lower(xs: Sequence[Any], n: Node) -> Any:
    """``CONV`` as ``lax.conv_general_dilated`` (layouts NCH..., OIH...: lax's defaults)."""
    match n.attrs:
        case Conv(strides, padding, lhs_dilation, rhs_dilation, groups, batch_groups):
            lhs, rhs = (lowering.astype(x, n.dtype) for x in xs)
            return lax.conv_general_dilated(
                lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, feature_group_count=groups,
                batch_group_count=batch_groups, precision=lowering.HIGHEST)
    raise mismatch(n.op, n.attrs)


def _spread(x: Array, dilation: tuple[int, ...]) -> Array:
    """``x`` with ``d - 1`` zeros between neighbours along each spatial axis (2, 3, ...)."""
    shape = (*x.shape[:2], *(dilated(n, d) for n, d in zip(x.shape[2:], dilation)))
    out = np.zeros(shape, x.dtype)
    every: tuple[slice, ...] = (slice(None),) * 2 + tuple(slice(None, None, d) for d in dilation)
    out[every] = x
    return out


def reference_rule(xs: Sequence[Array], n: Node) -> Array:
    """``CONV`` in NumPy: the dilated, padded input's windows times the filter, by ``einsum``.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x, w = data_leaf(None, (1, 1, 3), dtypes.float64), data_leaf(None, (1, 1, 2),
        ...                                                             dtypes.float64)
        >>> n = Node(Op.CONV, (x, w), Conv((1,), ((0, 0),), (1,), (1,), 1, 1), (1, 1, 2),
        ...          dtypes.float64)
        >>> reference_rule([np.array([[[1.0, 2.0, 3.0]]]), np.array([[[1.0, 10.0]]])], n)
        array([[[21., 32.]]])
    """
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


def python(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line of minilazy code that records ``n`` again (a VJP's transposed ones: replayed).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x, w = data_leaf(None, (1, 1, 3), dtypes.float32), data_leaf(None, (1, 1, 2),
        ...                                                             dtypes.float32)
        >>> python("v2", Node(Op.CONV, (x, w), Conv((1,), ((0, 0),), (1,), (1,), 1, 1),
        ...                   (1, 1, 2), dtypes.float32), ["v0", "v1"])
        ['v2 = ml.conv(v0, v1, stride=(1,), padding=((0, 0),), dilation=(1,), groups=1)']
    """
    match n.attrs:
        case Conv(strides, padding, lhs, rhs, groups, 1) if set(lhs) == {1} and all(
                p >= 0 for pair in padding for p in pair):
            return [f"{result} = ml.conv({args[0]}, {args[1]}, stride={strides!r}, "
                    f"padding={padding!r}, dilation={rhs!r}, groups={groups})"]
    return pycode.replayed(result, n, args)


def text(a: Conv) -> str:
    """How the IR text shows a convolution's attributes.

    Example:
        >>> text(Conv((1,), ((0, 0),), (1,), (1,), 1, 1))
        'strides=(1,) padding=((0, 0),) lhs_dilation=(1,) rhs_dilation=(1,) groups=1 batch_groups=1'
    """
    return (f"strides={a.strides} padding={a.padding} lhs_dilation={a.lhs_dilation} "
            f"rhs_dilation={a.rhs_dilation} groups={a.groups} batch_groups={a.batch_groups}")


ir.FAMILY[Op.CONV] = (Conv,)
printers.TEXT[Conv] = text
infer.INFER[Op.CONV] = rule
lowering.LOWER[Op.CONV] = lower
reference.REFERENCE[Op.CONV] = reference_rule
pycode.PYTHON[Op.CONV] = python
