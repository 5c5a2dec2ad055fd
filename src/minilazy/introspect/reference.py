"""Reference semantics: a NumPy interpreter of the same IR the XLA lowering compiles.

The executable meaning of every op: :data:`REFERENCE` maps each op to a NumPy function of its
operands' values (core's ops here, a family's added by its module, ``minilazy.ops``), mirroring
``lowering.LOWER`` rule for rule (the same
loop-dtype casts, NumPy's own broadcasting). It is slow and never on a hot path; it exists so a
student can read what an op *means*, and so the conformance oracle can run it as an
implementation. Expected values in tests never come from here: they come from NumPy directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from minilazy.core import runtime
from minilazy.core.attrs import Iota, Permute, Reduce, ToShape, mismatch
from minilazy.core.cut import Cut, cut
from minilazy.core.infer import UFUNC, signature
from minilazy.core.ir import Node, Op
from minilazy.core.lowering import Evaluate
from minilazy.core.tracer import Tensor

Array = np.ndarray[Any, Any]
Rule = Callable[[Sequence[Array], Node], Array]


def elementwise(fn: Callable[..., Any]) -> Rule:
    """The rule of an elementwise op computed by NumPy's ``fn``, typed as the lowering's.

    Operands are cast to NumPy's loop dtypes, the result to the node's dtype; floating errors
    are values, not warnings.

    Example:
        >>> from minilazy.core.attrs import NONE
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (2,), float32)
        >>> elementwise(np.negative)([np.array([1, 2])], Node(Op.NEG, (x,), NONE, (2,), float32))
        array([-1., -2.], dtype=float32)
    """
    def rule(xs: Sequence[Array], n: Node) -> Array:
        sig = signature(n.op, *(o.dtype for o in n.operands))
        args = [np.asarray(x).astype(d, copy=False) for x, d in zip(xs, sig)]
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args)).astype(n.dtype, copy=False)

    return rule


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


def _sum(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Reduce(axes, keepdims):
            with np.errstate(all="ignore"):
                return np.asarray(np.sum(xs[0].astype(n.dtype), axis=axes, keepdims=keepdims))
    raise mismatch(n.op, n.attrs)


def _matmul(xs: Sequence[Array], n: Node) -> Array:
    sig = signature(n.op, *(o.dtype for o in n.operands))
    with np.errstate(all="ignore"):
        return np.asarray(np.matmul(xs[0].astype(sig[0]), xs[1].astype(sig[1])))


def _static(fn: Callable[[Array, tuple[int, ...]], Any]) -> Rule:
    """A rule whose one attribute (a shape, a permutation, axes) is passed straight to ``fn``."""
    def rule(xs: Sequence[Array], n: Node) -> Array:
        match n.attrs:
            case ToShape(v) | Permute(v):
                return np.asarray(fn(xs[0], v))
        raise mismatch(n.op, n.attrs)

    return rule


REFERENCE: Final[dict[Op, Rule]] = {
    Op.DATA: _param, Op.SCALAR: _param, Op.IOTA: _iota,
    **{op: elementwise(UFUNC[op]) for op in (Op.NEG, Op.ADD, Op.SUB, Op.MUL, Op.DIV)},
    Op.SUM: _sum,
    Op.MATMUL: _matmul,
    Op.RESHAPE: _static(np.reshape), Op.TRANSPOSE: _static(np.transpose),
    Op.BROADCAST: _static(np.broadcast_to),
    Op.STOP_GRADIENT: lambda xs, n: xs[0],  # a mark for the backward pass, not a computation
}


def with_namespace(evaluate: Evaluate) -> Rule:
    """The reference rule that is ``evaluate`` called with NumPy (the lowering's, on ``jax.numpy``).

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> rule = with_namespace(lambda xp, xs, n: xp.flip(xs[0]))
        >>> rule([np.arange(3)], data_leaf(None, (3,), float32))
        array([2., 1., 0.], dtype=float32)
    """
    return lambda xs, n: np.asarray(evaluate(np, xs, n)).astype(n.dtype, copy=False)


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
