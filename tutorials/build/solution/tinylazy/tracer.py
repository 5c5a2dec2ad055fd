"""Tensors that record: every op makes a :class:`~tinylazy.ir.Node`, and nothing runs.

A :class:`Tensor` is a handle on a node. In-place ops (``x += y``, ``x[i] = v``) record a new
node and move the handle onto it: functional underneath, so whoever read the old value keeps it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinylazy.ir import STATE, In, Node
from tinylazy.ops import SCALARS, dummy, infer, weak


class Tensor:
    """A handle on a node; registered as live while it exists.

    Example:
        >>> x = apply("add", asarray(np.ones(2)), 1.0)
        >>> x.shape, x.node.pending, float(x[0])
        ((2,), True, 2.0)
    """

    __slots__ = ("node", "serial", "__weakref__")

    def __init__(self, node: Node) -> None:
        self.node = node
        self.serial = STATE.serial = STATE.serial + 1  # a stable order for mark_step's roots
        STATE.live.add(self)

    shape = property(lambda self: self.node.shape)
    dtype = property(lambda self: self.node.dtype)
    ndim = property(lambda self: len(self.node.shape))
    size = property(lambda self: int(np.prod(self.node.shape)))

    def __repr__(self) -> str:  # metadata only: never a barrier
        state = "pending" if self.node.pending else "ready"
        return f"<tinylazy {self.dtype}{list(self.shape)} {state}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return int(self.shape[0])

    def __getitem__(self, key: Any) -> Tensor:
        return apply("getitem", self, key)

    # Observations are barriers: they live in the layer above (barrier.py).
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        from tinylazy.barrier import observe
        return observe(self)

    def item(self) -> Any:
        from tinylazy.barrier import to_scalar
        return to_scalar(self)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        return bool(self.item())

    def __index__(self) -> int:
        if self.shape or self.dtype.kind not in "iub":
            raise TypeError(f"only 0-d integer tensors can be an index, not {self!r}")
        return int(self.item())


def asarray(array: Any) -> Tensor:
    """A tensor holding a copy of host ``array`` (a leaf: nothing to record or run)."""
    a = np.array(array)  # a copy: later changes to the caller's array must not leak in
    return Tensor(Node("data", (), None, a.shape, a.dtype, a))


def template_of(arg: Any, inputs: list[Node], weak_scalars: bool) -> Any:
    """``arg`` with each operand replaced by an ``In`` placeholder, its node added to ``inputs``.

    Assignment 1, "Record ops": LZ-REC-002, LZ-ERR-008, LZ-NUM-003.

    Tensors become placeholders; so do Python scalars where ``weak_scalars`` (elementwise
    ops), as ``"scalar"`` leaf nodes holding their value: a scalar is a parameter of the
    program, never a constant in it (a new learning rate must not compile anew). NumPy arrays
    inside an argument become data leaves; tuples and lists are templated item by item (their
    scalars are attributes, not weak operands); anything else (axes, dtypes, slices) stays.
    """
    if isinstance(arg, Tensor):
        inputs.append(arg.node)
        return In(len(inputs) - 1)
    if weak_scalars and type(arg) in SCALARS:
        inputs.append(Node("scalar", (), None, (), None, arg))
        return In(len(inputs) - 1)
    if isinstance(arg, (tuple, list)):
        return type(arg)(template_of(a, inputs, False) for a in arg)
    if isinstance(arg, np.ndarray):
        return template_of(asarray(arg), inputs, False)
    return arg


def make(op: str, inputs: tuple[Node, ...], template: Any, shape: tuple[int, ...],
         dtype: np.dtype[Any]) -> Node:
    """A new pending node, counted and shown to the barrier layer (given)."""
    node = Node(op, inputs, template, shape, dtype)
    STATE.counts["ops_recorded"] += 1
    if STATE.after_record is not None:
        STATE.after_record(node)
    return node


def record(op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Node:
    """Record ``op(*args, **kwargs)``: a pending node whose shape and dtype are NumPy's.

    Assignment 1, "Record ops": LZ-REC-001, LZ-REC-002, LZ-ERR-001, LZ-ERR-002, LZ-ERR-006,
    LZ-ERR-007, LZ-ERR-008, LZ-NUM-003.

    Template the arguments (:func:`template_of`; keyword arguments sorted, so the template is
    the same however the caller ordered them), infer shape and dtype with
    :func:`~tinylazy.ops.infer` on dummies of the inputs (scalars as their values), and
    :func:`make` the node. Nothing runs: errors are NumPy's, raised at this call.
    """
    inputs: list[Node] = []
    w = weak(op)
    template = (tuple(template_of(a, inputs, w) for a in args),
                {k: template_of(v, inputs, False) for k, v in sorted(kwargs.items())})
    operands = [n.value if n.op == "scalar" else dummy(n.shape, n.dtype) for n in inputs]
    shape, dtype = infer(op, template, operands)
    return make(op, tuple(inputs), template, shape, dtype)


def apply(op: str, *args: Any, **kwargs: Any) -> Any:
    """``op`` applied lazily: a new tensor (``setitem``: ``args[0]``, rebound) (given)."""
    node = record(op, args, kwargs)
    if op == "setitem":
        args[0].node = node  # x[key] = value rebinds x
        return args[0]
    return Tensor(node)


def inplace(op: str, x: Tensor, other: Any) -> Tensor:
    """``x op= other``: record op ``op + "="`` and rebind ``x`` to it; return ``x``.

    Assignment 1, "Record ops": LZ-REC-004.

    The op ``"add="`` is NumPy's ``x += y`` (the result keeps ``x``'s dtype, or raises as NumPy
    does when it cannot); both operands are weak-scalar positions.
    """
    x.node = record(op + "=", (x, other), {})
    return x
