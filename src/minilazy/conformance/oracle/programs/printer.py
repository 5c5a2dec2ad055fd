"""Printing a program as a plain Python script, against the adapter API or minilazy's."""

from __future__ import annotations

from typing import Any

from minilazy.conformance.oracle.programs.form import (
    Assign,
    Barrier,
    Branch,
    Instruction,
    Num,
    Observe,
    Op,
    Program,
    Ref,
    Refs,
    Sync,
)
from minilazy.conformance.registry import ops


def _py(a: Any) -> str:
    if isinstance(a, Ref):
        return f"v{a.slot}"
    if isinstance(a, Refs):
        return "[" + ", ".join(f"v{s}" for s in a.slots) + "]"
    if isinstance(a, Num):
        return repr(a.value)
    if a is Ellipsis:
        return "..."
    if isinstance(a, tuple):
        return "(" + ", ".join(_py(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    return repr(a)


def to_python(p: Program, api: str = "adapter", impl: str = "") -> str:
    """``p`` as a plain Python script against the adapter API, or minilazy's (``api="minilazy"``).

    Example:
        >>> from minilazy.conformance.oracle.programs import Leaf, Num, Observe, Op, Program, Ref
        >>> p = Program((Leaf("int8", (2,), 0),), (Op(1, "add", (Ref(0), Num(1))), Observe(1)), 2)
        >>> print(to_python(p, api="minilazy"))
        import numpy as np
        import minilazy as ml
        from minilazy.conformance.oracle.programs import leaf_data
        v0 = ml.asarray(leaf_data('int8', (2,), seed=0))
        v1 = ml.add(v0, 1)
        print('v1', v1.numpy())
    """
    lines = ["import numpy as np"]
    if api == "minilazy":
        lines += ["import minilazy as ml"]
        new, to_host, barrier = "ml.asarray({})", "{}.numpy()", "ml.mark_step()"
    else:
        lines += ["from minilazy.conformance.adapter import load"]
        new, to_host, barrier = "a.from_numpy({})", "a.to_numpy({})", "a.barrier()"
    lines += ["from minilazy.conformance.oracle.programs import leaf_data"]
    if api != "minilazy":
        lines += [f"a = load({impl!r})" if impl else "a = load()"]
    for n, x in enumerate(p.leaves):
        lines.append(f"v{n} = " + new.format(f"leaf_data({x.dtype!r}, {_py(x.shape)}, "
                                             f"seed={x.seed})"))

    def call(i: Op) -> str:
        args = [_py(a) for a in i.args] + [f"{k}={_py(v)}" for k, v in i.kwargs]
        method = ops()[i.op].method
        if api != "minilazy":
            return f"a.apply({i.op!r}, {', '.join(args)})"
        if method == "__getitem__":
            key = i.args[1]
            inner = ", ".join(_py(k) for k in key) if isinstance(key, tuple) and key else args[1]
            return f"{args[0]}[{inner}]"
        return f"ml.{i.op}({', '.join(args)})"

    def block(body: tuple[Instruction, ...], indent: str) -> None:
        if not body:
            lines.append(indent + "pass")
        for i in body:
            if isinstance(i, Op):
                lines.append(f"{indent}v{i.out} = {call(i)}")
            elif isinstance(i, Barrier):
                lines.append(indent + barrier)
            elif isinstance(i, Sync):
                slots = ", ".join(f"v{s}" for s in i.slots)
                lines.append(indent + (f"ml.sync({slots})" if api == "minilazy"
                                       else f"a.sync({slots})"))
            elif isinstance(i, Observe):
                lines.append(f"{indent}print('v{i.slot}', {to_host.format(f'v{i.slot}')})")
            elif isinstance(i, Assign):
                lines.append(f"{indent}v{i.target} = v{i.source}")
            elif isinstance(i, Branch):
                value = to_host.format(f"v{i.slot}")
                lines.append(f"{indent}if float(np.sum({value}, dtype=np.float64)) > "
                             f"{i.threshold!r}:")
                block(i.then, indent + "    ")
                lines.append(indent + "else:")
                block(i.orelse, indent + "    ")
            else:
                lines.append(f"{indent}for _ in range({i.times}):")
                block(i.body, indent + "    ")

    block(p.body, "")
    return "\n".join(lines)
