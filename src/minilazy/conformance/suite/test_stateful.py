"""The temporal rules, as a state machine: record, observe, sync and mark_step in any order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import numpy_apply
from minilazy.conformance.oracle.programgen import ELEMENTWISE, SCALARS
from minilazy.conformance.oracle.strategies import examples
from minilazy.conformance.registry import ops
from minilazy.conformance.suite.util import settle

Array = np.ndarray[Any, Any]
UNARY = [n for n in ELEMENTWISE if ops()[n].arity == 1]
BINARY = [n for n in ELEMENTWISE if ops()[n].arity == 2]


class Temporal(RuleBasedStateMachine):
    """Records ops on live tensors and cuts now and then, checking what ``checks`` names.

    ``executions``: recording between barriers runs nothing (LZ-BAR-010); ``pending``: nothing
    is pending after ``mark_step`` (LZ-BAR-001); ``keys``: compiles at barriers are at most the
    distinct keys cut (LZ-CACHE-005). Values are the value rules' business, not checked here.
    """

    tensors = Bundle("tensors")

    def __init__(self, adapter: OptionalAdapter, checks: frozenset[str]) -> None:
        super().__init__()
        self.adapter, self.checks = adapter, checks
        self.live: list[tuple[Any, Array]] = []  # (tensor, a NumPy dummy of its shape and dtype)
        self.keys: set[str] = set()
        self.compiles = 0
        settle(adapter)
        self.executions = self._executions()

    def _executions(self) -> int:
        return (self.adapter.counters().executions or 0) if "executions" in self.checks else 0

    def _cut(self, key_of: list[Any], run: Any) -> None:
        """Run a barrier, counting its compiles and the key it cuts."""
        if "keys" in self.checks:
            self.keys.add(repr(self.adapter.key(*key_of)))
            before = self.adapter.counters().compiles or 0
        run()
        if "keys" in self.checks:
            self.compiles += (self.adapter.counters().compiles or 0) - before
        self.executions = self._executions()

    def _add(self, t: Any, dummy: Array) -> tuple[Any, Array]:
        self.live.append((t, dummy))
        return t, dummy

    @initialize(target=tensors, dtype=st.sampled_from(["int8", "uint16", "float32", "bool"]))
    def leaf(self, dtype: str) -> tuple[Any, Array]:
        value = np.arange(6).reshape(2, 3).astype(dtype)
        return self._add(self.adapter.from_numpy(value), np.zeros((2, 3), dtype))

    @rule(target=tensors, x=tensors, op=st.sampled_from(UNARY))
    def unary(self, x: tuple[Any, Array], op: str) -> Any:
        try:
            dummy = numpy_apply(op, x[1])
        except TypeError:  # no loop for this dtype: record nothing (no discarded example)
            return multiple()
        return self._add(self.adapter.apply(op, x[0]), dummy)

    @rule(target=tensors, x=tensors, y=st.one_of(tensors, SCALARS), op=st.sampled_from(BINARY))
    def binary(self, x: tuple[Any, Array], y: Any, op: str) -> Any:
        other = y if isinstance(y, tuple) else (y, y)
        try:
            dummy = numpy_apply(op, x[1], other[1])
        except (TypeError, OverflowError):
            return multiple()
        return self._add(self.adapter.apply(op, x[0], other[0]), dummy)

    @rule(x=tensors)
    def observe(self, x: tuple[Any, Array]) -> None:
        self._cut([x[0]], lambda: self.adapter.to_numpy(x[0]))

    @rule(xs=st.lists(tensors, min_size=1, max_size=3))
    def sync(self, xs: list[tuple[Any, Array]]) -> None:
        if "sync" in self.adapter.capabilities:
            self._cut([x[0] for x in xs], lambda: self.adapter.sync(*[x[0] for x in xs]))

    @rule()
    def mark_step(self) -> None:
        self._cut([t for t, _ in self.live], self.adapter.barrier)
        if "pending" in self.checks:
            pending = [self.adapter.is_pending(t) for t, _ in self.live]
            assert not any(pending), f"{sum(pending)} of {len(pending)} live tensors pending"

    @invariant()
    def recording_ran_nothing(self) -> None:
        if "executions" in self.checks:
            assert self._executions() == self.executions, "recording executed something"

    @invariant()
    def compiles_at_most_keys(self) -> None:
        if "keys" in self.checks:
            assert self.compiles <= len(self.keys), f"{self.compiles} compiles, " \
                f"{len(self.keys)} distinct keys"


def _run(adapter: OptionalAdapter, checks: set[str]) -> None:
    class Bound(Temporal):  # Hypothesis makes machines from a class: bind the arguments
        def __init__(self) -> None:
            super().__init__(adapter, frozenset(checks))

    run_state_machine_as_test(Bound, settings=settings(examples(0.5), stateful_step_count=25))


@pytest.mark.spec("LZ-BAR-010")
def test_recording_between_barriers_runs_nothing(adapter: OptionalAdapter) -> None:
    _run(adapter, {"executions"})


@pytest.mark.spec("LZ-BAR-001")
@pytest.mark.requires("pending")
def test_nothing_is_pending_after_mark_step(adapter: OptionalAdapter) -> None:
    _run(adapter, {"pending"})


@pytest.mark.spec("LZ-CACHE-005")
@pytest.mark.requires("keys")
def test_compiles_never_exceed_the_distinct_keys_cut(adapter: OptionalAdapter) -> None:
    _run(adapter, {"keys"})
