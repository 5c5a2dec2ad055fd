"""Mutants: the toy implementation broken in one place each, to prove the oracle catches bugs.

An oracle that passes a broken implementation is not an oracle. Each factory below makes a
:class:`~minilazy.conformance.mutate.toy.Toy` with one deliberate, realistic bug and the same
declared capabilities (a mutant claims to conform). minilazy's
``tests/conformance/test_conformance.py`` runs the suite against each and checks that it fails
exactly the rules the bug breaks. Name one with
``--lazy-impl=minilazy.conformance.mutate.toy_mutants:mutant_stale_cache`` (and so on).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minilazy.conformance.mutate.toy import Node, Program, Toy


class HashIgnoresShape(Toy):
    """The key forgets shapes: a new shape reuses a program compiled for another.

    Example:
        >>> m = HashIgnoresShape()
        >>> m.key(m.from_numpy(np.ones(2))) == m.key(m.from_numpy(np.ones(3)))
        True
    """

    name = "mutant-hash-ignores-shape"

    def signature(self, n: Node) -> tuple[Any, ...]:
        return tuple(part for part in super().signature(n) if part != n.shape)


class BarrierDoesNothing(Toy):
    """``mark_step`` returns without materialising anything (observations still work).

    Example:
        >>> m = BarrierDoesNothing()
        >>> x = m.apply("add", m.from_numpy(np.ones(2)), 1.0)
        >>> m.barrier(); m.is_pending(x)
        True
    """

    name = "mutant-barrier-does-nothing"

    def barrier(self) -> None:
        pass


class StaleCache(Toy):
    """The key forgets dtypes: a program compiled for one dtype runs data of another.

    Example:
        >>> m = StaleCache()
        >>> float32, float64 = (m.from_numpy(np.ones(2, d)) for d in ("float32", "float64"))
        >>> m.key(float32) == m.key(float64)
        True
    """

    name = "mutant-stale-cache"

    def signature(self, n: Node) -> tuple[Any, ...]:
        return tuple(part for part in super().signature(n) if part != str(n.dtype))


class ExecutesAtRecordTime(Toy):
    """Every op runs as soon as it is recorded (eager), while claiming to be lazy.

    Example:
        >>> m = ExecutesAtRecordTime()
        >>> x = m.apply("add", m.from_numpy(np.ones(2)), 1.0)
        >>> m.counters().executions
        1
    """

    name = "mutant-executes-at-record-time"

    def __init__(self) -> None:
        super().__init__()
        self.eager_mode = True


class StrongScalars(Toy):
    """Python scalars are strongly typed (float64, int64), as NumPy 1 did, not weak (NEP 50).

    Example:
        >>> m = StrongScalars()
        >>> m.dtype(m.apply("add", m.from_numpy(np.ones(2, "float32")), 1.0))
        dtype('float64')
    """

    name = "mutant-strong-scalars"

    def scalar(self, value: bool | int | float) -> Any:
        return np.asarray(value)[()]  # a NumPy scalar: strong, unlike the Python number


class DropsPending(Toy):
    """``mark_step`` skips the newest live pending tensor, yet marks it materialised (zeros).

    Example:
        >>> m = DropsPending()
        >>> x = m.apply("add", m.from_numpy(np.ones(2)), 1.0)
        >>> m.barrier(); m.to_numpy(x).tolist()
        [0.0, 0.0]
    """

    name = "mutant-drops-pending"

    def barrier(self) -> None:
        roots = self.pending_roots()
        if not roots:
            return
        dropped = roots.pop()  # as if its output buffer were allocated but never written
        self._run(roots)
        assert dropped.dtype is not None
        dropped.value = np.zeros(dropped.shape, dropped.dtype)
        dropped.inputs, dropped.template = (), None


class MaxKeepdimsDropped(Toy):
    """``max``/``min`` are compiled without ``keepdims``; outputs are reshaped at the end.

    Only a consumer in the same program sees the wrong shape, and its program fails (or
    broadcasts wrongly). The toy keeps a tensor whose program failed pending: without the
    oracle's isolation between tests, this one bug would fail the tests of many rules.

    Example:
        >>> m = MaxKeepdimsDropped()
        >>> x = m.from_numpy(np.ones((2, 3)))
        >>> m.to_numpy(m.apply("max", x, axis=1, keepdims=True)).shape  # alone: reshaped
        (2, 1)
    """

    name = "mutant-max-keepdims-dropped"

    def compile(self, order: list[Node], wiring: list[tuple[int, ...]],
                outputs: list[int]) -> Program:
        for n in order:
            if n.op in ("max", "min") and n.pending:
                args, kwargs = n.template
                n.template = (args, {k: v for k, v in kwargs.items() if k != "keepdims"})
        program = super().compile(order, wiring, outputs)
        shapes = [order[i].shape for i in outputs]
        return lambda params: [np.reshape(v, s) for v, s in zip(program(params), shapes)]


def mutant_hash_ignores_shape() -> Toy:
    """Factory of :class:`HashIgnoresShape`.

    Example:
        >>> mutant_hash_ignores_shape().name
        'mutant-hash-ignores-shape'
    """
    return HashIgnoresShape()


def mutant_barrier_does_nothing() -> Toy:
    """Factory of :class:`BarrierDoesNothing`.

    Example:
        >>> mutant_barrier_does_nothing().name
        'mutant-barrier-does-nothing'
    """
    return BarrierDoesNothing()


def mutant_stale_cache() -> Toy:
    """Factory of :class:`StaleCache`.

    Example:
        >>> mutant_stale_cache().name
        'mutant-stale-cache'
    """
    return StaleCache()


def mutant_executes_at_record_time() -> Toy:
    """Factory of :class:`ExecutesAtRecordTime`.

    Example:
        >>> mutant_executes_at_record_time().name
        'mutant-executes-at-record-time'
    """
    return ExecutesAtRecordTime()


def mutant_strong_scalars() -> Toy:
    """Factory of :class:`StrongScalars`.

    Example:
        >>> mutant_strong_scalars().name
        'mutant-strong-scalars'
    """
    return StrongScalars()


def mutant_drops_pending() -> Toy:
    """Factory of :class:`DropsPending`.

    Example:
        >>> mutant_drops_pending().name
        'mutant-drops-pending'
    """
    return DropsPending()


def mutant_max_keepdims_dropped() -> Toy:
    """Factory of :class:`MaxKeepdimsDropped`.

    Example:
        >>> mutant_max_keepdims_dropped().name
        'mutant-max-keepdims-dropped'
    """
    return MaxKeepdimsDropped()


# Every mutant factory by name (the name after ``minilazy.conformance.mutate.toy_mutants:``).
MUTANTS: dict[str, Callable[[], Toy]] = {
    f.__name__: f for f in (mutant_hash_ignores_shape, mutant_barrier_does_nothing,
                            mutant_stale_cache, mutant_executes_at_record_time,
                            mutant_strong_scalars, mutant_drops_pending,
                            mutant_max_keepdims_dropped)
}
