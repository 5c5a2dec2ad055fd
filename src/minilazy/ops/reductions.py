"""The reductions family: every reduction but ``sum``, and the scan ``cumulative_sum``.

``prod``, ``max``, ``min``, ``argmax``, ``argmin``, ``any`` and ``all`` register into the
engine's tables as every family does (``ops/fft.py``, the worked example).

Core reduces with ``sum`` alone (``infer.summed`` and ``infer.reduced`` are its dtype and shape,
shared here); the others add what NumPy does differently: ``prod`` accumulates as ``sum`` does,
the extremes refuse complex operands and empty axes (no identity), ``argmax``/``argmin`` give
default integers and index the flattened array when reducing over all axes, ``any``/``all``
give bools (a complex number is true if either part is). ``cumulative_sum`` scans one axis,
either way (its VJP is the scan the other way).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import lax

from minilazy.core import dtypes, infer, ir, lowering
from minilazy.core.attrs import Attrs, Reduce, mismatch
from minilazy.core.dtypes import DType
from minilazy.core.ir import Node, Op, Shape
from minilazy.introspect import printers, pycode, reference


class Scan(NamedTuple):
    """``CUMSUM``: the axis scanned, and whether from its end (a cumulative sum's VJP).

    Example:
        >>> Scan(0, True).reverse
        True
    """

    axis: int
    reverse: bool

Array = Any  # a jax.Array in the lowering, a NumPy array in the reference
EXTREMES: Final = frozenset({Op.MAX, Op.MIN, Op.ARGMAX, Op.ARGMIN})
INDICES: Final = frozenset({Op.ARGMAX, Op.ARGMIN})


def rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """The result shape and dtype of a reduction other than ``sum``, as NumPy's.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (2, 0), dtypes.float32)
        >>> rule(Op.ANY, (x,), Reduce((1,), False))
        ((2,), dtype('bool'))
        >>> rule(Op.MAX, (x,), Reduce((1,), False))
        Traceback (most recent call last):
        ...
        ValueError: max: zero-size reduction over axes (1,) of f32[2,0] has no identity
    """
    match attrs:
        case Reduce(axes, keepdims):
            (x,) = xs
            if op in EXTREMES and x.dtype in dtypes.COMPLEX:  # the standard orders reals only
                raise TypeError(f"{op.value}: not defined for complex dtypes, got "
                                f"{infer.describe(x)}")
            if op in EXTREMES and any(x.shape[a] == 0 for a in axes):
                raise ValueError(f"{op.value}: zero-size reduction over axes {axes} of "
                                 f"{infer.describe(x)} has no identity")
            dtype = (infer.summed(x.dtype) if op is Op.PROD else dtypes.DEFAULT_INT
                     if op in INDICES else dtypes.bool_ if op in (Op.ANY, Op.ALL) else x.dtype)
            return infer.reduced(op, x, axes, keepdims, dtype), dtype
    raise mismatch(op, attrs)


def scan_rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``cumulative_sum``'s shape (its operand's) and dtype (``sum``'s).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> scan_rule(Op.CUMSUM, (data_leaf(None, (3,), dtypes.int8),), Scan(0, False))
        ((3,), dtype('int64'))
    """
    match attrs:
        case Scan(axis, _):
            (x,) = xs
            if not 0 <= axis < len(x.shape):
                raise np.exceptions.AxisError(f"{op.value}: axis {axis} is out of bounds for "
                                              f"{infer.describe(x)}")
            dtype = infer.summed(x.dtype)
            return dtypes.sized(op.value, x.shape, dtype), dtype
    raise mismatch(op, attrs)


def _lowered(fn: Callable[..., Array]) -> Callable[[Sequence[Array], Node], Array]:
    """The lowering rule of a reduction computed by ``jax.numpy``'s ``fn``."""
    def lower(xs: Sequence[Array], n: Node) -> Array:
        match n.attrs:
            case Reduce(axes, keepdims):
                x = xs[0]
                if n.op in (Op.PROD, Op.ANY, Op.ALL):  # prod(int8) accumulates in int64; any,
                    x = lowering.astype(x, n.dtype)  # all: complex truth is either part
                if n.op not in INDICES:
                    return lowering.astype(fn(x, axis=axes, keepdims=keepdims), n.dtype)
                if len(axes) != 1:  # NumPy's axis=None: the index into the flattened array
                    return lowering.astype(fn(jnp.ravel(x)), n.dtype).reshape(n.shape)
                return lowering.astype(fn(x, axis=axes[0], keepdims=keepdims), n.dtype)
        raise mismatch(n.op, n.attrs)

    return lower


def _referenced(fn: Callable[..., Array]) -> Callable[[Sequence[Array], Node], Array]:
    """The reference rule of a reduction computed by NumPy's ``fn``."""
    def evaluate(xs: Sequence[Array], n: Node) -> Array:
        match n.attrs:
            case Reduce(axes, keepdims):
                x = xs[0].astype(n.dtype) if n.op is Op.PROD else xs[0]
                if n.op in INDICES:
                    axis = axes[0] if len(axes) == 1 else None
                    return np.asarray(fn(x, axis=axis, keepdims=keepdims)).astype(n.dtype)
                with np.errstate(all="ignore"):
                    return np.asarray(fn(x, axis=axes, keepdims=keepdims)).astype(n.dtype)
        raise mismatch(n.op, n.attrs)

    return evaluate


def lower_scan(xs: Sequence[Array], n: Node) -> Array:
    """``cumulative_sum`` as ``lax.cumsum`` (from the end if ``reverse``)."""
    match n.attrs:
        case Scan(axis, reverse):
            return lax.cumsum(lowering.astype(xs[0], n.dtype), axis, reverse)
    raise mismatch(n.op, n.attrs)


def reference_scan(xs: Sequence[Array], n: Node) -> Array:
    """``cumulative_sum`` in NumPy; from the end, the sums of the suffixes.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (3,), dtypes.int64)
        >>> reference_scan([np.array([1, 2, 3])], Node(Op.CUMSUM, (x,), Scan(0, True), (3,),
        ...                                             dtypes.int64))
        array([6, 5, 3])
    """
    match n.attrs:
        case Scan(axis, reverse):
            x = xs[0].astype(n.dtype)
            with np.errstate(all="ignore"):
                if reverse:
                    return np.flip(np.cumsum(np.flip(x, axis), axis), axis)
                return np.cumsum(x, axis)
    raise mismatch(n.op, n.attrs)


def python_scan(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line that records ``cumulative_sum`` again (the VJP's scan from the end: replayed).

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (3,), dtypes.int64)
        >>> python_scan("v1", Node(Op.CUMSUM, (x,), Scan(0, False), (3,), dtypes.int64), ["v0"])
        ['v1 = ml.cumulative_sum(v0, axis=0)']
    """
    match n.attrs:
        case Scan(axis, reverse):
            if reverse:
                return pycode.replayed(result, n, args)
            return [f"{result} = ml.cumulative_sum({args[0]}, axis={axis})"]
    raise mismatch(n.op, n.attrs)


def text(a: Scan) -> str:
    """How the IR text shows a scan's attributes.

    Example:
        >>> text(Scan(0, True))
        'axis=0 reverse'
    """
    return f"axis={a.axis}" + (" reverse" if a.reverse else "")


for _op, _jnp, _np in ((Op.PROD, jnp.prod, np.prod), (Op.MAX, jnp.max, np.max),
                       (Op.MIN, jnp.min, np.min), (Op.ARGMAX, jnp.argmax, np.argmax),
                       (Op.ARGMIN, jnp.argmin, np.argmin), (Op.ANY, jnp.any, np.any),
                       (Op.ALL, jnp.all, np.all)):
    ir.FAMILY[_op] = (Reduce,)
    infer.INFER[_op] = rule
    lowering.LOWER[_op] = _lowered(_jnp)
    reference.REFERENCE[_op] = _referenced(_np)
    pycode.PYTHON[_op] = pycode.reduction
ir.FAMILY[Op.CUMSUM] = (Scan,)
printers.TEXT[Scan] = text
infer.INFER[Op.CUMSUM] = scan_rule
lowering.LOWER[Op.CUMSUM] = lower_scan
reference.REFERENCE[Op.CUMSUM] = reference_scan
pycode.PYTHON[Op.CUMSUM] = python_scan
