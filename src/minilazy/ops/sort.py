"""The sort family: ``Op.SORT`` and ``Op.ARGSORT`` (stable, either direction), registered.

Like the FFT family (``ops/fft.py``, the worked example): a shape rule (``infer.INFER``), one
evaluation for any array namespace (the lowering's ``jax.numpy`` and the reference's NumPy share
``sort(stable=)``), and the public call that records it again (``pycode.PYTHON``). Its VJP
gathers by the permutation (``autodiff/vjps.py``). Never imports jax.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from minilazy.core import dtypes, infer, ir, lowering
from minilazy.core.attrs import Attrs, mismatch
from minilazy.core.dtypes import DType, typed
from minilazy.core.ir import Node, Op, Shape
from minilazy.introspect import printers, pycode, reference


class Sort(NamedTuple):
    """``SORT``, ``ARGSORT``: the axis sorted, and whether descending (every sort is stable).

    Example:
        >>> Sort(0, True).descending
        True
    """

    axis: int
    descending: bool


def rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``SORT`` keeps its operand's shape and dtype; ``ARGSORT`` gives default ints.

    Example:
        >>> from minilazy.core.ir import scalar_leaf
        >>> rule(Op.ARGSORT, (scalar_leaf(1.0, dtypes.float32),), Sort(0, False))
        Traceback (most recent call last):
        ...
        numpy.exceptions.AxisError: argsort: axis 0 is out of bounds for f32[]
    """
    match attrs:
        case Sort(axis, _):
            (x,) = xs
            if x.dtype in dtypes.COMPLEX:  # the standard orders real numbers only
                raise TypeError(f"{op.value}: not defined for complex dtypes, got "
                                f"{typed(x.dtype, x.shape)}")
            if not 0 <= axis < len(x.shape):
                raise np.exceptions.AxisError(f"{op.value}: axis {axis} is out of bounds for "
                                              f"{typed(x.dtype, x.shape)}")
            dtype = x.dtype if op is Op.SORT else dtypes.DEFAULT_INT
            return dtypes.sized(op.value, x.shape, dtype), dtype
    raise mismatch(op, attrs)


def evaluate(xp: Any, xs: Sequence[Any], n: Node) -> Any:
    """The value of a ``SORT`` or ``ARGSORT`` node computed with namespace ``xp``.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (3,), dtypes.float64)
        >>> n = Node(Op.ARGSORT, (x,), Sort(0, True), (3,), dtypes.int64)
        >>> evaluate(np, [np.array([1.0, 3.0, 1.0])], n).tolist()
        [1, 0, 2]
    """
    match n.attrs:
        case Sort(axis, descending):
            x = xs[0]
            if n.op is Op.SORT:  # descending sorts the reversed axis, reversed back, so that
                # tied values that differ (-0.0 and 0.0) keep their order, as x[argsort(x)] does
                if not descending:
                    return xp.sort(x, axis=axis, stable=True)
                return xp.flip(xp.sort(xp.flip(x, axis=axis), axis=axis, stable=True), axis=axis)
            if not descending:
                return xp.argsort(x, axis=axis, stable=True)
            # Stable and descending: sort the reversed axis stably, reverse back, and map
            # positions in the reversed axis to the original ones; ties then keep their original
            # order (as array-api-strict does), and NaNs, last when ascending, come first.
            last = x.shape[axis] - 1
            return last - xp.flip(xp.argsort(xp.flip(x, axis=axis), axis=axis, stable=True),
                                  axis=axis)
    raise mismatch(n.op, n.attrs)


def python(result: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line of minilazy code that records ``n`` again.

    Example:
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (3,), dtypes.float32)
        >>> python("v1", Node(Op.SORT, (x,), Sort(0, True), (3,), dtypes.float32), ["v0"])
        ['v1 = ml.sort(v0, axis=0, descending=True)']
    """
    match n.attrs:
        case Sort(axis, descending):
            return [f"{result} = ml.{n.op.value}({args[0]}, axis={axis}, "
                    f"descending={descending})"]
    raise mismatch(n.op, n.attrs)


def text(a: Sort) -> str:
    """How the IR text shows a sort's attributes.

    Example:
        >>> text(Sort(1, True))
        'axis=1 descending'
    """
    return f"axis={a.axis}" + (" descending" if a.descending else "")


ir.FAMILY.update(dict.fromkeys([Op.SORT, Op.ARGSORT], (Sort,)))
printers.TEXT[Sort] = text
for _op in (Op.SORT, Op.ARGSORT):
    infer.INFER[_op] = rule
    lowering.LOWER[_op] = lowering.with_namespace(evaluate)
    reference.REFERENCE[_op] = reference.with_namespace(evaluate)
    pycode.PYTHON[_op] = python
