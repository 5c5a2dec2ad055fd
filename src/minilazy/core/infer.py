"""Inference: what each op's result shape and dtype are, and which operands are errors.

One table, :data:`INFER`, keyed by :class:`~minilazy.core.ir.Op`: core's ops here, an op
family's added by its module (``minilazy.ops``). The tracer calls it when it records a node, so a
bad shape or dtype raises *at the op call* with the shapes in the message. Elementwise dtypes
come from NumPy's own ufunc loop resolution (NEP 50: :func:`signature`), so they match
NumPy 2 by construction. Never imports jax.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Final

import numpy as np

from minilazy.core import dtypes
from minilazy.core.attrs import (
    Attrs,
    Iota,
    Permute,
    Reduce,
    ToShape,
    mismatch,
)
from minilazy.core.dtypes import DType, sized, typed
from minilazy.core.ir import Node, Op, Shape, ShapeError

InType = DType | type  # a dtype, or the Python type of a weak scalar (int, float, complex)
Loop = Callable[..., tuple[DType, ...]]  # (op, *types) -> the inputs' cast targets, the result
# The NumPy ufunc whose loops type each elementwise op (and, in the reference, compute it): core's
# here, a family's added by its module. LOOPS: an op typed by a rule of its own instead.
UFUNC: Final[dict[Op, np.ufunc]] = {
    Op.NEG: np.negative, Op.ADD: np.add, Op.SUB: np.subtract, Op.MUL: np.multiply,
    Op.DIV: np.true_divide, Op.MATMUL: np.matmul}
LOOPS: Final[dict[Op, Loop]] = {}


def names(types: tuple[InType, ...]) -> str:
    """Operand types as errors name them."""
    return ", ".join(t.__name__ if isinstance(t, type) else str(t) for t in types)


def loop(op: Op, *types: InType) -> tuple[DType, ...]:
    """The loop NumPy's ufunc for ``op`` resolves for ``types``; ``TypeError`` if it has none."""
    try:
        sig = UFUNC[op].resolve_dtypes((*types, None))
    except TypeError as e:
        raise TypeError(f"{op.value}: not defined for dtypes ({names(types)})") from e
    return tuple(dtypes.canonical(d) for d in sig)


@lru_cache(maxsize=4096)
def signature(op: Op, *types: InType) -> tuple[DType, ...]:
    """The loop dtypes of ``op`` on ``types`` (:data:`LOOPS`' rule, or :func:`loop`).

    Raises ``TypeError`` naming the op and dtypes when there is none (``sign`` of bool, say).
    """
    return LOOPS.get(op, loop)(op, *types)


def describe(node: Node) -> str:
    """``f32[2,3]``: how errors and printers show a node's type (:func:`~dtypes.typed`)."""
    return typed(node.dtype, node.shape)


@lru_cache(maxsize=4096)
def broadcast_shapes(op_name: str, *shapes: Shape) -> Shape:
    """NumPy broadcasting of ``shapes``; ``ShapeError`` naming ``op_name`` and the shapes.

    Example:
        >>> broadcast_shapes("add", (2, 1), (3,))
        (2, 3)
    """
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i} - {1}
        if len(sizes) > 1:
            shown = " with ".join(str(list(s)) for s in shapes)
            raise ShapeError(f"{op_name}: cannot broadcast shapes {shown}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


Rule = Callable[[Op, tuple[Node, ...], Attrs], tuple[Shape, DType]]


def _leaf(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    raise TypeError(f"{op.value} leaves are made by asarray/scalars, not recorded")


def _iota(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    match attrs:
        case Iota(shape, _, code):
            return sized(op.value, shape, dtypes.DTYPES[code]), dtypes.DTYPES[code]
    raise mismatch(op, attrs)


@cache
def _widest(sig: tuple[DType, ...]) -> DType:
    return max(sig, key=lambda d: d.itemsize)


def _computed(op: Op, x: Node, shape: Shape, sig: tuple[DType, ...]) -> Shape:
    # The size rule for the result (dtype sig[-1]) and, if not empty, for the loop dtypes of
    # sig: XLA aborts on a cast past int64 bytes even fused away (bool < 1 casts to int64).
    if shape is x.shape and _widest(sig).itemsize <= x.dtype.itemsize:
        return shape  # nothing wider than x, which exists
    return sized(op.value, shape, _widest(sig) if math.prod(shape) else sig[-1])


def unary(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """The rule of a unary elementwise op: its operand's shape, the dtype of NumPy's loop."""
    x = xs[0]
    loop, dtype = sig = signature(op, x.dtype)
    return (x.shape if loop is dtype is x.dtype else _computed(op, x, x.shape, sig)), dtype


def binary(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """The rule of a binary elementwise op: the broadcast shape, the dtype of NumPy's loop.

    Example:
        >>> from minilazy.core.attrs import NONE
        >>> from minilazy.core.ir import data_leaf
        >>> a, b = data_leaf(None, (2, 1), dtypes.int8), data_leaf(None, (3,), dtypes.float32)
        >>> binary(Op.ADD, (a, b), NONE)
        ((2, 3), dtype('float32'))
    """
    a, b = xs
    sig = signature(op, a.dtype, b.dtype)
    if a.shape == b.shape or not b.shape:  # the common cases first: same shape, a scalar
        return (a.shape if sig[0] is sig[1] is sig[2] is a.dtype else
                _computed(op, a, a.shape, sig)), sig[2]
    if not a.shape:
        return _computed(op, b, b.shape, sig), sig[2]
    try:
        shape = broadcast_shapes(op.value, a.shape, b.shape)
    except ShapeError:
        raise ShapeError(f"{op.value}: cannot broadcast {describe(a)} with {describe(b)}") from None
    return _computed(op, a, shape, sig), sig[2]


@cache
def summed(dtype: DType) -> DType:
    """The dtype NumPy sums ``dtype`` in (``sum(int8)`` is int64, ``sum(uint8)`` uint64)."""
    return dtypes.canonical(np.sum(np.zeros(1, dtype)).dtype)


def reduced(op: Op, x: Node, axes: tuple[int, ...], keepdims: bool, dtype: DType) -> Shape:
    """The shape of reduction ``op`` of ``x`` over ``axes`` to ``dtype`` (which must fit)."""
    if keepdims:
        shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    else:
        shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    if dtype.itemsize > x.dtype.itemsize:  # XLA casts x first (else x, which exists, is as big)
        sized(op.value, *((x.shape, dtype) if math.prod(x.shape) else (shape, dtype)))
    return shape


def _sum(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    match attrs:
        case Reduce(axes, keepdims):
            dtype = summed(xs[0].dtype)
            return reduced(op, xs[0], axes, keepdims, dtype), dtype
    raise mismatch(op, attrs)


def _matmul(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    a, b = xs
    dtype = signature(op, a.dtype, b.dtype)[-1]
    if not a.shape or not b.shape:
        raise ShapeError(f"matmul: operands must be at least 1-D, got {describe(a)} and "
                         f"{describe(b)}")
    sa = (1, *a.shape) if len(a.shape) == 1 else a.shape
    sb = (*b.shape, 1) if len(b.shape) == 1 else b.shape
    if sa[-1] != sb[-2]:
        raise ShapeError(f"matmul: contracted dimensions differ: {describe(a)} @ {describe(b)} "
                         f"({sa[-1]} != {sb[-2]})")
    try:
        batch = broadcast_shapes("matmul", sa[:-2], sb[:-2])
    except ShapeError:
        raise ShapeError(f"matmul: batch dimensions of {describe(a)} and {describe(b)} do not "
                         "broadcast") from None
    shape = (*batch, *((sa[-2],) if len(a.shape) > 1 else ()), *((sb[-1],) if len(b.shape) > 1
                                                                 else ()))
    return sized("matmul", shape, dtype), dtype


def _reshape(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    match attrs:
        case ToShape(shape):
            (x,) = xs
            if (size := math.prod(shape)) != math.prod(x.shape):
                raise ShapeError(f"reshape: cannot reshape {describe(x)} (size "
                                 f"{math.prod(x.shape)}) into shape {shape}")
            return (shape if size else sized("reshape", shape, x.dtype)), x.dtype  # (0, 2**62)
    raise mismatch(op, attrs)


def _transpose(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    match attrs:
        case Permute(perm):
            (x,) = xs
            if sorted(perm) != list(range(len(x.shape))):
                raise ValueError(f"permute_dims: {perm} is not a permutation of the axes of "
                                 f"{describe(x)}")
            return tuple(x.shape[i] for i in perm), x.dtype
    raise mismatch(op, attrs)


def _broadcast(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    match attrs:
        case ToShape(shape):
            (x,) = xs
            ok = len(shape) >= len(x.shape) and all(
                n in (1, m) for n, m in zip(x.shape[::-1], shape[::-1]))
            if not ok:
                raise ShapeError(f"broadcast_to: cannot broadcast {describe(x)} to shape {shape}")
            return sized("broadcast_to", shape, x.dtype), x.dtype
    raise mismatch(op, attrs)


def _same(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    return xs[0].shape, xs[0].dtype  # flip, stop_gradient; shard (its sharding was checked)


INFER: Final[dict[Op, Rule]] = {
    Op.DATA: _leaf, Op.SCALAR: _leaf, Op.IOTA: _iota,
    Op.NEG: unary, Op.ADD: binary, Op.SUB: binary, Op.MUL: binary, Op.DIV: binary,
    Op.SUM: _sum,
    Op.MATMUL: _matmul, Op.RESHAPE: _reshape, Op.TRANSPOSE: _transpose,
    Op.BROADCAST: _broadcast, Op.STOP_GRADIENT: _same,
}
