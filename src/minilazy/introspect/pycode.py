"""The Python printer: a cut graph as plain minilazy code that records the same graph again.

Part of ``minilazy.introspect``. :data:`PYTHON` maps every op to a rule writing the public call
that records it (``ml.exp(v0)``, ``v1[2:, None]``, ``ml.sum(v3, axis=(1,))``); the few internal
ops with no public function (``iota``, ``scatter_add``, an identity reshape) are written as
:func:`replay` calls. Running the code rebuilds a graph with the same key: data are zeros of the
right shape, which the key never looks at.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

from minilazy.core import attrs, dtypes, runtime
from minilazy.core.attrs import (
    NONE,
    Attrs,
    Constant,
    NoAttrs,
    Permute,
    Reduce,
    mismatch,
)
from minilazy.core.cut import Cut
from minilazy.core.dtypes import Scalar
from minilazy.core.ir import Device, Node, Op, scalar_leaf
from minilazy.core.tracer import Tensor, record, wrap

# Generated scripts import `attrs` from here, to spell the attributes of the ops they replay.
__all__ = ["PYTHON", "attrs", "elementwise", "reduction", "replay", "replayed",
           "scalar", "source"]

# A rule: (name of the result, the node, the operands' expressions) -> lines of code.
Rule = Callable[[str, Node, Sequence[str]], list[str]]


def replay(op: str, *operands: Tensor, attrs: Attrs = NONE, device: Device | None = None
           ) -> Tensor:
    """Record op ``op`` (its IR name) directly: for ops with no public function.

    Example:
        >>> from minilazy.core.attrs import Iota
        >>> replay("iota", attrs=Iota((3,), 0, 4)).tolist()
        [0, 1, 2]
    """
    dev = operands[0].device if operands else (device or runtime.default_device())
    return record(Op(op), tuple(t._node for t in operands), attrs, dev)


def scalar(value: Scalar, dtype: str) -> Tensor:
    """A Python number as a scalar parameter of ``dtype`` (what ``x + 2.0`` records for 2.0).

    Example:
        >>> scalar(2.0, "float32").dtype
        dtype('float32')
    """
    return wrap(scalar_leaf(value, dtypes.canonical(dtype)), runtime.default_device())


def _literal(value: object) -> str:
    if isinstance(value, complex) and not cmath.isfinite(value):  # repr gives `inf+1j`: no literal
        return f"complex({_literal(value.real)}, {_literal(value.imag)})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float('{value}')"
    return repr(value)


def _call(fn: str, **kwargs: object) -> Rule:
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return lambda name, n, args: [f"{name} = ml.{fn}({', '.join(args)}{extra})"]


def elementwise(name: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line that records an elementwise node again: its function of the namespace.

    Example:
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (), float32)
        >>> elementwise("v2", Node(Op.ADD, (x, x), attrs.NONE, (), float32), ["v0", "v1"])
        ['v2 = ml.add(v0, v1)']
    """
    return [f"{name} = ml.{n.op.value}({', '.join(args)})"]


def _code(value: object) -> str:
    """An attribute as the expression that makes it: ``attrs.Iota((3,), 0, 4)``.

    Core's families are spelled through ``attrs``; an op family's through its module, which
    ``import minilazy as ml`` has imported (``ml.ops.fft.Fft(...)``).
    """
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a family or an index entry
        cls = type(value)
        where = "attrs" if cls.__module__ == attrs.__name__ else cls.__module__.replace(
            "minilazy", "ml", 1)
        return f"{where}.{cls.__name__}({', '.join(map(_code, value))})"
    if isinstance(value, tuple):
        return f"({''.join(_code(v) + ', ' for v in value)})"
    return repr(value)


def replayed(name: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line that records ``n`` with :func:`replay`: for a node no public call records.

    Example:
        >>> from minilazy.core.attrs import Iota
        >>> from minilazy.core.dtypes import int64
        >>> from minilazy.core.ir import Node
        >>> replayed("v0", Node(Op.IOTA, (), Iota((3,), 0, 3), (3,), int64), [])
        ["v0 = replay('iota', attrs=attrs.Iota((3, ), 0, 3))"]
    """
    ops = "".join(f", {a}" for a in args)
    return [f"{name} = replay({n.op.value!r}{ops}, attrs={_code(n.attrs)})"]


def reduction(name: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line that records a reduction again: its function, with ``axis`` and ``keepdims``.

    Example:
        >>> from minilazy.core.attrs import Reduce
        >>> from minilazy.core.dtypes import float32
        >>> from minilazy.core.ir import data_leaf
        >>> x = data_leaf(None, (2, 3), float32)
        >>> reduction("v1", Node(Op.SUM, (x,), Reduce((1,), False), (2,), float32), ["v0"])
        ['v1 = ml.sum(v0, axis=(1,))']
    """
    match n.attrs:
        case Reduce(axes, keepdims):
            axis: object = axes
            if n.op in (Op.ARGMAX, Op.ARGMIN):  # one axis, or None for all of them
                axis = axes[0] if len(axes) == 1 and len(n.operands[0].shape) > 1 else None
            keep = ", keepdims=True" if keepdims else ""
            return [f"{name} = ml.{n.op.value}({args[0]}, axis={axis!r}{keep})"]
    raise mismatch(n.op, n.attrs)


def _reshape(name: str, n: Node, args: Sequence[str]) -> list[str]:
    if n.shape == n.operands[0].shape:  # ml.reshape would not record an identity
        return replayed(name, n, args)
    return [f"{name} = ml.reshape({args[0]}, {n.shape!r})"]


def _broadcast(name: str, n: Node, args: Sequence[str]) -> list[str]:
    if n.operands[0].op is Op.SCALAR:  # what ml.full records
        return [f"{name} = ml.full({n.shape!r}, {args[0]}, dtype='{n.dtype}')"]
    return [f"{name} = ml.broadcast_to({args[0]}, {n.shape!r})"]


def _permute_dims(name: str, n: Node, args: Sequence[str]) -> list[str]:
    match n.attrs:
        case Permute(perm):
            return [f"{name} = ml.permute_dims({args[0]}, {perm!r})"]
    raise mismatch(n.op, n.attrs)


def _leaf(name: str, n: Node, args: Sequence[str]) -> list[str]:
    return []  # parameters are written by source itself


# How a placed DATA leaf's placement is written as ``asarray``'s ``sharding=``, by its type
# (minilazy.scaleout.placement adds the Sharding's).
PLACED: Final[dict[type, Callable[[Any], str]]] = {}
PYTHON: Final[dict[Op, Rule]] = {
    **{op: elementwise for op in (Op.NEG, Op.ADD, Op.SUB, Op.MUL, Op.DIV)},
    Op.DATA: _leaf, Op.SCALAR: _leaf, Op.IOTA: replayed,
    Op.SUM: reduction, Op.MATMUL: _call("matmul"), Op.RESHAPE: _reshape,
    Op.TRANSPOSE: _permute_dims, Op.BROADCAST: _broadcast,
    Op.STOP_GRADIENT: _call("stop_gradient"),
}


def _replays(n: Node) -> bool:
    """Whether ``n`` is written as a :func:`replay` call, which takes tensors only."""
    return any("replay(" in line for line in PYTHON[n.op]("v", n, ["v"] * len(n.operands)))


def source(c: Cut, default: Device) -> str:
    """The cut as a runnable minilazy program ending with ``outputs = [...]``.

    Example:
        >>> import numpy as np
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.asarray(np.ones((2, 3), np.float32))
        >>> print(source(cut([ml.exp(x)[0, ::-1]._node], x.device), x.device))
        import numpy as np
        import minilazy as ml
        from minilazy.introspect.pycode import attrs, replay, scalar
        <BLANKLINE>
        v0 = ml.asarray(np.zeros((2, 3), 'float32'))
        v1 = ml.exp(v0)
        v3 = v1[0, 2::-1]
        outputs = [v3]
    """
    lines = ["import numpy as np", "import minilazy as ml",
             "from minilazy.introspect.pycode import attrs, replay, scalar", ""]
    names: list[str] = []
    for i, (node, ins) in enumerate(zip(c.order, c.operands)):
        if node.op is Op.SCALAR:
            value = _literal(node.payload)
            # a literal where public functions take it (with a tensor beside it: two numbers
            # are no call's operands); else one scalar tensor, named, as its users share it
            public = all(not _replays(u) and (len(u.operands) == 1 or any(
                o.op is not Op.SCALAR for o in u.operands)) for u in c.order if node in u.operands)
            if public:
                names.append(value)
                continue
            lines.append(f"v{i} = scalar({value}, '{node.dtype}')")
            names.append(f"v{i}")
            continue
        name = f"v{i}"
        names.append(name)
        if node.op is Op.DATA:
            where = "" if c.device == default else f", device=ml.devices({c.device.platform!r})" \
                                                    f"[{c.device.index}]"
            if type(node.attrs) is not NoAttrs:  # placed over a mesh
                where = f", sharding={PLACED[type(node.attrs)](node.attrs)}"
            lines.append(f"{name} = ml.asarray(np.zeros({node.shape!r}, '{node.dtype}'){where})")
        else:
            lines.extend(PYTHON[node.op](name, node, [names[j] for j in ins]))
    lines.append(f"outputs = [{', '.join(names[i] for i in c.outputs)}]")
    if any(type(n.attrs) is Constant for n in c.order):  # 0 and 1 were baked in
        body = lines[4:]
        lines[4:] = ["with ml.policy(special_scalars=True):", *("    " + b for b in body)]
    return "\n".join(lines)

