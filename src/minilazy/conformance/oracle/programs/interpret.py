"""Running a program: on NumPy (the oracle) or on an implementation through its adapter."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np

from minilazy.conformance.adapter import Adapter, OptionalAdapter
from minilazy.conformance.oracle import numpy_apply
from minilazy.conformance.oracle.programs.codec import loads
from minilazy.conformance.oracle.programs.form import (
    Array,
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
    leaf_data,
)


class Machine(Protocol):
    """What :func:`run` needs: the oracle (:class:`NumpyMachine`) or an implementation.

    Example:
        >>> machine: Machine = NumpyMachine()
        >>> machine.observe(machine.leaf(np.ones(2))).tolist()
        [1.0, 1.0]
    """

    def leaf(self, array: Array) -> Any:
        """A value holding ``array``."""

    def apply(self, op: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """``op(*args, **kwargs)``."""

    def barrier(self) -> None:
        """``mark_step``."""

    def sync(self, values: Sequence[Any]) -> None:
        """Materialise ``values``."""

    def observe(self, value: Any) -> Array:
        """The value on the host."""


class NumpyMachine:
    """The oracle: eager NumPy.

    Example:
        >>> NumpyMachine().apply("add", [np.ones(2, np.int8), 2], {}).tolist()
        [3, 3]
    """

    def leaf(self, array: Array) -> Array:
        return array

    def apply(self, op: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Array:
        return numpy_apply(op, *args, **kwargs)

    def barrier(self) -> None:
        pass

    def sync(self, values: Sequence[Any]) -> None:
        pass

    def observe(self, value: Any) -> Array:
        return np.array(value)


class AdapterMachine:
    """An implementation, through its adapter.

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> m = AdapterMachine(toy())
        >>> m.observe(m.apply("add", [m.leaf(np.ones(2)), 1.0], {})).tolist()
        [2.0, 2.0]
    """

    def __init__(self, adapter: Adapter) -> None:
        # Typed with the optional methods: only those the capabilities promise are called.
        self.adapter = cast(OptionalAdapter, adapter)

    def leaf(self, array: Array) -> Any:
        return self.adapter.from_numpy(array)

    def apply(self, op: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        return self.adapter.apply(op, *args, **kwargs)

    def barrier(self) -> None:
        self.adapter.barrier()

    def sync(self, values: Sequence[Any]) -> None:
        if "sync" in self.adapter.capabilities:
            self.adapter.sync(*values)

    def observe(self, value: Any) -> Array:
        return self.adapter.to_numpy(value)


@dataclass
class Trace:
    """What a run observed: ``(slot, value)`` per observation, branch decisions, keys.

    Example:
        >>> Trace().observations
        []
    """

    observations: list[tuple[int, Array]] = field(default_factory=list)
    decisions: list[bool] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)


def _arg(a: Any, env: list[Any]) -> Any:
    if isinstance(a, Ref):
        return env[a.slot]
    if isinstance(a, Refs):
        return [env[s] for s in a.slots]
    if isinstance(a, Num):
        return a.value
    return a


class _Interpreter:
    """One run of a program.

    A class, not nested closures: a recursive closure is a reference cycle, which would keep the
    run's tensors alive (and pending) after it returns.
    """

    def __init__(self, p: Program, machine: Machine, decisions: Sequence[bool] | None,
                 key: Callable[..., Hashable] | None) -> None:
        self.machine, self.key, self.trace = machine, key, Trace()
        self.replay: Iterator[bool] | None = iter(decisions) if decisions is not None else None
        self.env: list[Any] = [None] * p.slots
        for i, x in enumerate(p.leaves):
            self.env[i] = machine.leaf(leaf_data(x.dtype, x.shape, x.seed))

    def cut(self, values: list[Any]) -> None:
        if self.key is not None:
            self.trace.keys.append(repr(self.key(*values)))

    def observe(self, slot: int) -> Array:
        self.cut([self.env[slot]])
        value = self.machine.observe(self.env[slot])
        self.trace.observations.append((slot, value))
        return value

    def block(self, body: tuple[Instruction, ...]) -> None:
        env, machine = self.env, self.machine
        for i in body:
            if isinstance(i, Op):
                env[i.out] = machine.apply(i.op, [_arg(a, env) for a in i.args],
                                           {k: _arg(v, env) for k, v in i.kwargs})
            elif isinstance(i, Barrier):
                self.cut([v for v in env if v is not None])
                machine.barrier()
            elif isinstance(i, Sync):
                self.cut([env[s] for s in i.slots])
                machine.sync([env[s] for s in i.slots])
            elif isinstance(i, Observe):
                self.observe(i.slot)
            elif isinstance(i, Assign):
                env[i.target] = env[i.source]
            elif isinstance(i, Branch):
                total = float(np.sum(self.observe(i.slot), dtype=np.float64))
                taken = total > i.threshold if self.replay is None else next(self.replay)
                self.trace.decisions.append(taken)
                self.block(i.then if taken else i.orelse)
            else:
                for _ in range(i.times):
                    self.block(i.body)


def run(p: Program, machine: Machine, decisions: Sequence[bool] | None = None,
        key: Callable[..., Hashable] | None = None) -> Trace:
    """Interpret ``p`` on ``machine``; branches follow ``decisions`` when given.

    ``key`` (an adapter's ``key``) is called before each barrier, sync and observation on the
    values it cuts (a barrier: every value the program holds); the trace keeps each key's
    ``repr``. The run's values die when it returns: only the trace's host arrays remain.

    Example:
        >>> from minilazy.conformance.oracle.programs import Leaf, Num, Observe, Op, Program, Ref
        >>> p = Program((Leaf("int8", (2,), 0),), (Op(1, "add", (Ref(0), Num(1))), Observe(1)), 2)
        >>> run(p, NumpyMachine()).observations[0][1].dtype
        dtype('int8')
    """
    interpreter = _Interpreter(p, machine, decisions, key)
    interpreter.block(p.body)
    return interpreter.trace


def main(argv: Sequence[str] | None = None) -> int:
    r"""``python -m minilazy.conformance.oracle.programs IMPL``: key traces of programs on stdin.

    Reads one program's JSON per line, runs each on the implementation ``IMPL`` (a
    ``module:factory`` name), and prints the ``repr`` of its keys as a JSON list per line: what
    LZ-HASH-001 compares across processes.

    Example:
        >>> from minilazy.conformance.oracle.programs import Leaf, Observe, Op, Program, Ref, dumps
        >>> import io, sys
        >>> p = Program((Leaf("int8", (2,), 0),), (Op(1, "negative", (Ref(0),)), Observe(1)), 2)
        >>> sys.stdin, stdin = io.StringIO(dumps(p) + "\n"), sys.stdin
        >>> main(["minilazy.conformance.mutate.toy:toy"])
        ["'...'"]
        0
        >>> sys.stdin = stdin
    """
    import sys

    from minilazy.conformance.adapter import load

    args = list(sys.argv[1:] if argv is None else argv)
    adapter = cast(OptionalAdapter, load(args[0]))
    key = adapter.key
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(run(loads(line), AdapterMachine(adapter), key=key).keys))
    return 0

