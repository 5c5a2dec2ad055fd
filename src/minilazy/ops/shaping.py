"""The shaping family: ``flip``, ``concat``, and the multi-tensor ``pack`` and ``unpack``.

Ops that move elements without computing on them, beyond core's reshape, broadcast and
transpose; registered into every table as each family does (``ops/fft.py``, the worked
example). ``pack`` lays a group of tensors end to end in one vector (each in C order) and
``unpack`` takes one back out: an optimizer then updates a whole group of weights with a few
ops on the vector. Their VJPs are ``autodiff/vjps.py``'s (a flip's is a flip, a concat's its
pieces, a pack's the unpacks).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from jax import lax
from jax import numpy as jnp

from minilazy.core import dtypes, infer, ir, lowering
from minilazy.core.attrs import Attrs, NoAttrs, mismatch
from minilazy.core.dtypes import DType, sized
from minilazy.core.infer import describe
from minilazy.core.ir import Node, Op, Shape, ShapeError
from minilazy.introspect import printers, pycode, reference


class Axes(NamedTuple):
    """``FLIP``: the axes reversed.

    Example:
        >>> Axes((0,)).axes
        (0,)
    """

    axes: tuple[int, ...]


class Axis(NamedTuple):
    """``CONCAT``: the axis joined along.

    Example:
        >>> Axis(1).axis
        1
    """

    axis: int


class Piece(NamedTuple):
    """``UNPACK``: the piece of a packed vector that starts at ``offset``, as ``shape``.

    Example:
        >>> Piece(4, (2, 3)).shape
        (2, 3)
    """

    offset: int
    shape: tuple[int, ...]


# -- shape rules ------------------------------------------------------------------------------
def concat(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``concat``'s shape and dtype: the sizes along ``axis`` add up, the dtypes promote.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> a, b = data_leaf(None, (2, 3), dtypes.int8), data_leaf(None, (1, 3), dtypes.float32)
        >>> concat(Op.CONCAT, (a, b), Axis(0))
        ((3, 3), dtype('float32'))
    """
    match attrs:
        case Axis(axis):
            first = xs[0].shape
            for x in xs[1:]:
                if len(x.shape) != len(first) or any(
                        n != m for i, (n, m) in enumerate(zip(x.shape, first)) if i != axis):
                    shown = ", ".join(describe(x) for x in xs)
                    raise ShapeError(f"concat: shapes differ off axis {axis}: {shown}")
            shape = (*first[:axis], sum(x.shape[axis] for x in xs), *first[axis + 1:])
            dtype = dtypes.promote(*(x.dtype for x in xs))
            return sized("concat", shape, dtype), dtype
    raise mismatch(op, attrs)


def pack(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``pack``'s: one vector of every operand's elements, all of one dtype.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> a, b = data_leaf(None, (2, 3), dtypes.int8), data_leaf(None, (4,), dtypes.int8)
        >>> pack(Op.PACK, (a, b), ())
        ((10,), dtype('int8'))
    """
    if not xs or any(x.dtype != xs[0].dtype for x in xs):  # one vector holds one dtype
        raise TypeError(f"pack: takes tensors of one dtype, got {', '.join(map(describe, xs))}")
    return sized("pack", (sum(math.prod(x.shape) for x in xs),), xs[0].dtype), xs[0].dtype


def unpack(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``unpack``'s: the piece's shape, which must lie inside the vector.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> unpack(Op.UNPACK, (data_leaf(None, (10,), dtypes.int8),), Piece(4, (2, 3)))
        ((2, 3), dtype('int8'))
    """
    match attrs:
        case Piece(offset, shape):
            (x,) = xs
            if type(offset) is not int:  # (a float would reach XLA, and fail only at the barrier)
                raise TypeError(f"unpack: the offset must be an integer, got {offset!r}")
            if len(x.shape) != 1 or not 0 <= offset <= offset + math.prod(shape) <= x.shape[0]:
                raise ShapeError(f"unpack: no piece of shape {shape} at offset {offset} in "
                                 f"{describe(x)} (a 1-D vector)")
            return sized("unpack", shape, x.dtype), x.dtype
    raise mismatch(op, attrs)


# -- values: the lowering's (lax) and the reference's (NumPy), rule for rule ---------------------
def _flip(xp: Any, x: Any, n: Node) -> Any:
    match n.attrs:
        case Axes(axes):
            return lax.rev(x, axes) if xp is jnp else np.flip(x, axes)
    raise mismatch(n.op, n.attrs)


def _concat(xp: Any, xs: Sequence[Any], n: Node) -> Any:
    match n.attrs:
        case Axis(axis):
            if xp is jnp:
                return lax.concatenate([lowering.astype(x, n.dtype) for x in xs], axis)
            return np.concatenate([x.astype(n.dtype) for x in xs], axis=axis)
    raise mismatch(n.op, n.attrs)


def _unpack(xp: Any, x: Any, n: Node) -> Any:
    match n.attrs:
        case Piece(offset, shape):
            size = math.prod(shape)
            start = offset if size else 0  # an empty piece from 0, or XLA may abort (findings)
            piece = lax.slice(x, (start,), (start + size,)) if xp is jnp else x[start:start + size]
            return xp.reshape(piece, shape)
    raise mismatch(n.op, n.attrs)


# -- printers: IR text and the public call that records a node again --------------------------
def python(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line of minilazy code that records ``n`` again.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (3,), dtypes.float32)
        >>> python("v1", Node(Op.FLIP, (x,), Axes((0,)), (3,), dtypes.float32), ["v0"])
        ['v1 = ml.flip(v0, axis=(0,))']
    """
    match n.attrs:
        case Axes(axes):
            return [f"{result} = ml.flip({args[0]}, axis={axes!r})"]
        case Axis(axis):
            return [f"{result} = ml.concat([{', '.join(args)}], axis={axis})"]
        case Piece(offset, shape):
            return [f"{result} = ml.unpack({args[0]}, [{shape!r}], offset={offset})[0]"]
    return [f"{result} = ml.pack([{', '.join(args)}])"]


def text(a: Axes | Axis | Piece) -> str:
    """How the IR text shows a shaping op's attributes.

    Example:
        >>> text(Piece(4, (2, 3)))
        'offset=4 shape=(2, 3)'
    """
    if isinstance(a, Piece):
        return f"offset={a.offset} shape={a.shape}"
    return f"axes={a.axes}" if isinstance(a, Axes) else f"axis={a.axis}"


ir.FAMILY.update({Op.FLIP: (Axes,), Op.CONCAT: (Axis,), Op.PACK: (NoAttrs,),
                  Op.UNPACK: (Piece,)})
printers.TEXT.update(dict.fromkeys([Axes, Axis, Piece], text))
infer.INFER.update({Op.FLIP: lambda op, xs, attrs: (xs[0].shape, xs[0].dtype),
                    Op.CONCAT: concat, Op.PACK: pack, Op.UNPACK: unpack})
lowering.LOWER.update({
    Op.FLIP: lambda xs, n: _flip(jnp, xs[0], n), Op.CONCAT: lambda xs, n: _concat(jnp, xs, n),
    Op.PACK: lambda xs, n: lax.concatenate([jnp.ravel(x) for x in xs], 0),
    Op.UNPACK: lambda xs, n: _unpack(jnp, xs[0], n)})
reference.REFERENCE.update({
    Op.FLIP: lambda xs, n: _flip(np, xs[0], n), Op.CONCAT: lambda xs, n: _concat(np, xs, n),
    Op.PACK: lambda xs, n: np.concatenate([x.ravel() for x in xs]),
    Op.UNPACK: lambda xs, n: _unpack(np, xs[0], n)})
pycode.PYTHON.update(dict.fromkeys([Op.FLIP, Op.CONCAT, Op.PACK, Op.UNPACK], python))
