"""Variants of a program: the same structure on new data, shapes, dtypes, scalars, barriers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from minilazy.conformance.oracle.programs.form import (
    Barrier,
    Branch,
    Instruction,
    Num,
    Observe,
    Op,
    Program,
    Repeat,
    Scalar,
)


def with_seeds(p: Program, offset: int) -> Program:
    """The same program on new data: every leaf's seed moved by ``offset``.

    Example:
        >>> from minilazy.conformance.oracle.programs import Leaf, Program
        >>> with_seeds(Program((Leaf("int8", (), 1),), (), 1), 5).leaves[0].seed
        6
    """
    return dataclasses.replace(p, leaves=tuple(dataclasses.replace(x, seed=x.seed + offset)
                                               for x in p.leaves))


def with_shape(p: Program, shape: tuple[int, ...]) -> Program:
    """The same program with every leaf of shape ``shape`` (valid for elementwise programs).

    Example:
        >>> from minilazy.conformance.oracle.programs import Leaf, Program
        >>> with_shape(Program((Leaf("int8", (), 1),), (), 1), (2, 2)).leaves[0].shape
        (2, 2)
    """
    return dataclasses.replace(p, leaves=tuple(dataclasses.replace(x, shape=shape)
                                               for x in p.leaves))


def with_dtypes(p: Program, dtypes: Sequence[str]) -> Program:
    """The same program with leaf ``i`` of dtype ``dtypes[i]`` (NumPy says whether it is valid).

    Example:
        >>> from minilazy.conformance.oracle.programs import Leaf, Program
        >>> with_dtypes(Program((Leaf("int8", (), 1),), (), 1), ["int16"]).leaves[0].dtype
        'int16'
    """
    return dataclasses.replace(p, leaves=tuple(dataclasses.replace(x, dtype=d)
                                               for x, d in zip(p.leaves, dtypes)))


def observing_all(p: Program) -> Program:
    """The same program, then an observation of every value its top level holds.

    Example:
        >>> from minilazy.conformance.oracle.programs import Leaf, Observe, Op, Program, Ref
        >>> p = Program((Leaf("int8", (), 1),), (Op(1, "negative", (Ref(0),)),), 2)
        >>> observing_all(p).body[-2:]
        (Observe(slot=0), Observe(slot=1))
    """
    held = list(range(len(p.leaves))) + [i.out for i in p.body if isinstance(i, Op)]
    return dataclasses.replace(p, body=p.body + tuple(Observe(s) for s in held))


def _map_ops(body: tuple[Instruction, ...], f: Callable[[Op], Op]) -> tuple[Instruction, ...]:
    out: list[Instruction] = []
    for i in body:
        if isinstance(i, Op):
            out.append(f(i))
        elif isinstance(i, Branch):
            out.append(dataclasses.replace(i, then=_map_ops(i.then, f),
                                           orelse=_map_ops(i.orelse, f)))
        elif isinstance(i, Repeat):
            out.append(dataclasses.replace(i, body=_map_ops(i.body, f)))
        else:
            out.append(i)
    return tuple(out)


def with_scalars(p: Program, change: Callable[[Scalar], Scalar]) -> Program:
    """The same program with every Python scalar operand ``v`` replaced by ``change(v)``.

    Example:
        >>> from minilazy.conformance.oracle.programs import Num, Op, Program
        >>> p = Program((), (Op(0, "add", (Num(1), Num(2))),), 1)
        >>> with_scalars(p, lambda v: v + 1).body[0].args
        (Num(value=2), Num(value=3))
    """
    def op(i: Op) -> Op:
        return dataclasses.replace(i, args=tuple(Num(change(a.value)) if isinstance(a, Num)
                                                 else a for a in i.args))
    return dataclasses.replace(p, body=_map_ops(p.body, op))


def with_barriers(p: Program, where: Callable[[], bool]) -> Program:
    """The same program with a :class:`Barrier` after each instruction where ``where()`` says.

    Example:
        >>> from minilazy.conformance.oracle.programs import Observe, Program
        >>> len(with_barriers(Program((), (Observe(0), Observe(0)), 1), lambda: True).body)
        4
    """
    def block(body: tuple[Instruction, ...]) -> tuple[Instruction, ...]:
        out: list[Instruction] = []
        for i in body:
            if isinstance(i, Branch):
                i = dataclasses.replace(i, then=block(i.then), orelse=block(i.orelse))
            elif isinstance(i, Repeat):
                i = dataclasses.replace(i, body=block(i.body))
            out.append(i)
            if where():
                out.append(Barrier())
        return tuple(out)
    return dataclasses.replace(p, body=block(p.body))
