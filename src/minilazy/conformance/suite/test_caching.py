"""Caching: one compile per structure, whatever the data and scalars; a hit is a miss's twin."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.oracle.programgen import programs
from minilazy.conformance.oracle.programs import (
    AdapterMachine,
    NumpyMachine,
    Op,
    Program,
    Trace,
    observing_all,
    run,
    to_python,
    with_dtypes,
    with_scalars,
    with_seeds,
    with_shape,
)
from minilazy.conformance.oracle.strategies import dtypes_for, examples
from minilazy.conformance.suite.test_hashing import new_floats
from minilazy.conformance.suite.util import counting, explain, fresh, settle, typed

Array = np.ndarray[Any, Any]
FRESH = itertools.count()


def _step(adapter: OptionalAdapter, data: Array, scale: Any, shift: Any) -> Array:
    """One step of a loop: record, then observe (the barrier; ``mark_step`` is LZ-BAR-001's)."""
    x = adapter.from_numpy(data)
    y = adapter.apply("add", adapter.apply("multiply", adapter.apply("tanh", x), scale), shift)
    return adapter.to_numpy(y)


def _run(adapter: OptionalAdapter, p: Program, decisions: list[bool]) -> Trace:
    # Values are the business of the value rules: here only compiles and run-to-run equality.
    # Settled first, so that no auto-cut falls at another place in a rerun than in the first run.
    explain(f"program as Python:\n{to_python(p)}")
    settle(adapter)
    return run(p, AdapterMachine(adapter), decisions)


def _want(data: Array, scale: float, shift: float) -> Array:
    return np.asarray(numpy_apply("add", numpy_apply("multiply", np.tanh(data), scale), shift))


@pytest.mark.spec("LZ-CACHE-001")
@pytest.mark.ops("tanh", "multiply", "add")
def test_new_data_and_new_scalars_compile_nothing_new(adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(1)
    settle(adapter)
    _step(adapter, rng.standard_normal((3, 2, 5)).astype(np.float32), 2.5, 3.5)
    with counting(adapter) as d:
        for n in range(4):
            _step(adapter, rng.standard_normal((3, 2, 5)).astype(np.float32), 2.5 + n, 3.5 * n)
    assert d.compiles == 0, f"{d.compiles} compiles for a structure already compiled"


@pytest.mark.spec("LZ-CACHE-003")
@pytest.mark.ops("tanh", "multiply", "add")
def test_a_hit_with_new_data_and_new_scalars_computes_with_them(adapter: OptionalAdapter) -> None:
    # The same structure again and again: each run must use its own data and its own Python
    # scalars, not values a cached program kept from the run that compiled it.
    rng = np.random.default_rng(2)
    settle(adapter)
    # |shift| > |scale| + 1: no cancellation, so ulps measure the ops, not the subtraction.
    for scale, shift in [(2.5, 3.75), (-1.25, 2.5), (7.0, -9.25), (0.5, 10.5)]:
        data = rng.standard_normal((3, 2, 5)).astype(np.float32)
        want = _want(data, scale, shift)
        got = _step(adapter, data, scale, shift).astype(want.dtype)  # (dtypes: LZ-NUM-003's)
        assert_close(got, want, "ulp", what=f"scale {scale}, shift {shift}")


@pytest.mark.spec("LZ-CACHE-001", "LZ-CACHE-003")
@examples(0.5)
@given(data=st.data())
def test_a_warm_program_compiles_nothing(adapter: OptionalAdapter, data: st.DataObject) -> None:
    p = data.draw(programs(dtypes_for(adapter), control=False), label="program")
    settle(adapter)
    _run(adapter, p, [])
    with counting(adapter) as again:
        _run(adapter, p, [])
    variant = with_scalars(with_seeds(p, 1000), new_floats)
    with counting(adapter) as fresh:  # the same structure on new data and new scalars
        got = _run(adapter, variant, [])
    assert (again.compiles, fresh.compiles) == (0, 0)
    # ... and the warm program computed with the new values (LZ-CACHE-003).
    for n, ((slot, a), (_, e)) in enumerate(zip(got.observations,
                                                run(variant, NumpyMachine()).observations)):
        assert_close(a, e, "exact", what=f"rerun with new values: observation {n} (v{slot})")


@pytest.mark.spec("LZ-CACHE-002")
@pytest.mark.ops("tanh", "multiply", "add")
def test_a_new_shape_is_compiled_anew(adapter: OptionalAdapter) -> None:
    settle(adapter)
    for shape, new in [((3, 2, 6), True), ((3, 6, 2), True), ((3, 2, 6), False),
                       ((3, 2, 7), True)]:
        with counting(adapter) as d:
            got = _step(adapter, np.ones(shape, np.float32), 2.5, 3.5)
        assert got.shape == shape
        assert (d.n("compiles") > 0) == new, f"{d.compiles} compiles for shape {shape}"


@pytest.mark.spec("LZ-CACHE-002")
@examples(0.5)
@given(data=st.data())
def test_a_program_on_leaves_of_a_new_shape_compiles(adapter: OptionalAdapter,
                                                     data: st.DataObject) -> None:
    # Only observations cut (whether mark_step computes is LZ-BAR-001's business), and the last
    # op is observed: the program compiles something.
    p = data.draw(programs(dtypes_for(adapter), elementwise_only=True, control=False,
                           barriers=False), label="program")
    assume(any(isinstance(i, Op) for i in p.body))
    _run(adapter, p, [])
    with counting(adapter) as d:  # a shape no earlier example used: nothing can be cached
        _run(adapter, with_shape(p, (2, 4 + next(FRESH))), [])
    assert d.n("compiles") >= 1


@pytest.mark.spec("LZ-CACHE-003")
@pytest.mark.ops("tanh", "multiply", "add")
def test_a_hit_gives_the_values_of_a_miss(adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(7)
    # One structure, run on variants back to back: a cache that confuses them returns a hit
    # computed for another variant, which differs from the miss (and from NumPy).
    for dtype in [d.name for d in dtypes_for(adapter) if d.kind == "f"] + ["float32"]:
        data = rng.standard_normal((4, 5)).astype(dtype)
        scale, shift = typed(adapter, 1.5, dtype), typed(adapter, -2.5, dtype)
        first = _step(adapter, data, scale, shift)
        second = _step(adapter, data, scale, shift)
        want = np.tanh(data) * data.dtype.type(1.5) + data.dtype.type(-2.5)
        assert_close(first, want, "ulp", what=dtype)
        assert first.tobytes() == second.tobytes() and first.dtype == second.dtype, dtype


@pytest.mark.spec("LZ-CACHE-003")
@pytest.mark.ops("multiply", "add")
def test_a_hit_with_other_wiring_is_not_served_the_cached_program(
        adapter: OptionalAdapter) -> None:
    # x * y + y, then x * x + y: the same ops, shapes and dtypes, but the multiply reads other
    # parameters. A key that ignores which parameter an op reads serves the first program to
    # the second, which then computes [3, 4] * [5, 6] + [5, 6] = [20, 30], not [14, 22].
    def step(a: list[float], b: list[float], square: bool) -> Array:
        x, y = (adapter.from_numpy(np.array(v, np.float32)) for v in (a, b))
        return adapter.to_numpy(adapter.apply("add", adapter.apply(
            "multiply", x, x if square else y), y))

    assert_close(step([1, 2], [10, 20], False), np.array([20, 60], np.float32), "exact")
    assert_close(step([3, 4], [5, 6], True), np.array([14, 22], np.float32), "exact")


@pytest.mark.spec("LZ-CACHE-003")
@pytest.mark.ops("exp", "add")
def test_a_hit_with_other_outputs_is_not_served_the_cached_program(
        adapter: OptionalAdapter) -> None:
    # exp(x) + 1 observed alone, then the same graph with exp(x) live too: the same nodes, but
    # two outputs instead of one. A key that ignores which nodes are outputs serves the first.
    data = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    x = adapter.from_numpy(data)
    one = typed(adapter, 1.0, np.float32)
    assert_close(adapter.to_numpy(adapter.apply("add", adapter.apply("exp", x), one)),
                 np.exp(data) + np.float32(1), "ulp")
    x2 = adapter.from_numpy(data * 2)  # held: its buffer cannot be donated either time
    y = adapter.apply("exp", x2)
    z = adapter.apply("add", y, one)
    if "sync" in adapter.capabilities:  # one barrier for both, and not mark_step's business
        adapter.sync(y, z)
    else:
        adapter.barrier()
    assert_close(adapter.to_numpy(y), np.exp(data * 2), "ulp", what="exp(x)")
    assert_close(adapter.to_numpy(z), np.exp(data * 2) + np.float32(1), "ulp", what="exp(x)+1")


@pytest.mark.spec("LZ-CACHE-003")
@pytest.mark.requires("sync")
@pytest.mark.ops("add")
def test_a_tensor_synced_twice_then_two_alike_get_their_own_values(
        adapter: OptionalAdapter) -> None:
    # sync(a, a), then sync(a, b) with b the same op on other data: the same structure, one
    # output named twice, then two. A cache (or a cut's plan) made from the first that maps
    # both outputs to one node serves b's value for a (minilazy's plans did, via run(a, a)).
    one = typed(adapter, 1.0, np.float32)
    xs, ys = np.arange(3, dtype=np.float32), np.arange(10, 13, dtype=np.float32)
    for k in range(3):
        a = adapter.apply("add", adapter.from_numpy(xs + k), one)
        b = adapter.apply("add", adapter.from_numpy(ys + k), one)
        adapter.sync(a, a)
        a = adapter.apply("add", adapter.from_numpy(xs - k), one)
        adapter.sync(a, b)
        assert_close(adapter.to_numpy(a), xs - k + np.float32(1), "exact", what="a")
        assert_close(adapter.to_numpy(b), ys + k + np.float32(1), "exact", what="b")


@pytest.mark.spec("LZ-CACHE-003")
@examples(0.5)
@given(data=st.data())
def test_a_program_run_twice_observes_the_same_values(adapter: OptionalAdapter,
                                                      data: st.DataObject) -> None:
    p = data.draw(programs(dtypes_for(adapter)), label="program")
    decisions = run(p, NumpyMachine()).decisions
    first, second = _run(adapter, p, decisions), _run(adapter, p, decisions)
    for (_, a), (_, b) in zip(first.observations, second.observations):
        assert a.tobytes() == b.tobytes() and a.dtype == b.dtype


@pytest.mark.spec("LZ-CACHE-003")
@examples(0.5)
@given(data=st.data())
def test_a_program_after_its_variant_of_other_dtypes_gets_the_values_of_a_miss(
        adapter: OptionalAdapter, data: st.DataObject) -> None:
    dtypes = dtypes_for(adapter)
    if max(Counter(d.kind for d in dtypes).values()) < 2:
        pytest.skip(f"{adapter.name} declares no two dtypes of one kind: there is no variant")
    p = observing_all(data.draw(programs(dtypes), label="program"))
    # The same program on leaves of other dtypes of the same kinds: the same structure, so a
    # cache keyed too coarsely hands it a program compiled for the first.
    kin = [[d.name for d in dtypes if d.kind == np.dtype(x.dtype).kind and d.name != x.dtype]
           or [x.dtype] for x in p.leaves]
    q = with_dtypes(p, [data.draw(st.sampled_from(k), label="dtype") for k in kin])
    assume(q != p)
    try:
        oracle = run(q, NumpyMachine())
    except (TypeError, ValueError, OverflowError):
        assume(False)  # an op the first dtypes allowed and these do not
    fresh(adapter)
    _run(adapter, p, run(p, NumpyMachine()).decisions)
    after = _run(adapter, q, oracle.decisions)
    if "reset" in adapter.capabilities:  # every program compiled anew: the misses
        fresh(adapter)
        alone: Trace = _run(adapter, q, oracle.decisions)
    else:
        alone = oracle
    for (slot, a), (_, b) in zip(after.observations, alone.observations):
        assert_close(a, b, what=f"v{slot}")


class _Counting(AdapterMachine):
    """Counts compiles across barriers and observations only (recording is LZ-REC-001's)."""

    compiles = 0

    def _counted(self, f: Any, *args: Any) -> Any:
        before = self.adapter.counters().compiles or 0
        try:
            return f(*args)
        finally:
            self.compiles += (self.adapter.counters().compiles or 0) - before

    def barrier(self) -> None:
        self._counted(super().barrier)

    def sync(self, values: Sequence[Any]) -> None:
        self._counted(super().sync, values)

    def observe(self, value: Any) -> Array:
        result: Array = self._counted(super().observe, value)
        return result


@pytest.mark.spec("LZ-CACHE-005")
@pytest.mark.requires("keys")
@examples(0.5)
@given(data=st.data())
def test_compiles_are_at_most_the_distinct_keys_cut(adapter: OptionalAdapter,
                                                    data: st.DataObject) -> None:
    p = data.draw(programs(dtypes_for(adapter)), label="program")
    oracle = run(p, NumpyMachine())
    machine = _Counting(adapter)
    cut: set[str] = set()
    for variant in (p, p, with_seeds(p, 77)):
        trace = run(variant, machine, oracle.decisions if variant is p else None, key=adapter.key)
        cut |= set(trace.keys)
    assert machine.compiles <= len(cut), f"{machine.compiles} compiles for {len(cut)} keys"


@pytest.mark.spec("LZ-CACHE-004")
@pytest.mark.ops("multiply", "subtract")
def test_an_update_in_a_loop_donates_the_buffer_it_replaces(adapter: OptionalAdapter) -> None:
    w = adapter.from_numpy(np.ones((64, 64), np.float32))
    rate = typed(adapter, 0.5, np.float32)
    settle(adapter)
    with counting(adapter) as d:
        for _ in range(3):  # the old w is held by no live tensor at each mark_step
            w = adapter.apply("subtract", w, adapter.apply("multiply", w, rate))
            adapter.barrier()
    assert d.n("donations") >= 2, f"{d.donations} buffers donated in 3 steps"
    assert adapter.to_numpy(w)[0, 0] == np.float32(0.125)


@pytest.mark.spec("LZ-CACHE-004")
@pytest.mark.requires("setitem")
@pytest.mark.ops("multiply", "subtract")
def test_an_update_in_place_donates_and_reuses_its_program(adapter: OptionalAdapter) -> None:
    # `w -= w * rate * k` with mark_step each step: the buffer `w` named before the update is
    # held by nothing else, so it is donated, and every step is the same program.
    start = np.linspace(1, 2, 48, dtype=np.float32).reshape(6, 8)
    w, want = adapter.from_numpy(start), start
    rate = typed(adapter, 0.125, np.float32)
    counted = satisfies(capabilities_of(adapter), "compiles")
    settle(adapter)
    with counting(adapter) as d:
        for step in range(4):
            k = typed(adapter, step + 1, np.float32)  # a new value each step: a parameter
            with counting(adapter) as this:
                adapter.inplace("subtract", w, adapter.apply(
                    "multiply", adapter.apply("multiply", w, rate), k))
                adapter.barrier()
            if step and counted:
                assert this.n("compiles") == 0, f"step {step} compiled its program again"
            want = want - want * np.float32(0.125) * np.float32(step + 1)
    assert d.n("donations") >= 3, f"{d.donations} buffers donated in 4 steps"
    assert_close(adapter.to_numpy(w), want, "ulp")  # (a compiler may fuse * and -)


@pytest.mark.spec("LZ-CACHE-006")
@pytest.mark.ops("multiply", "subtract", "add")
def test_a_buffer_still_read_is_never_donated(adapter: OptionalAdapter) -> None:
    start = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    w = adapter.from_numpy(start)
    rate, one = typed(adapter, 0.5, np.float32), typed(adapter, 1.0, np.float32)
    settle(adapter)
    for step in range(3):
        old = w  # a live tensor holding the value the update replaces
        before = adapter.to_numpy(old)  # whatever it holds: the barrier must not change it
        reader = adapter.apply("add", w, one)  # a pending graph reading it, still live
        w = adapter.apply("subtract", w, adapter.apply("multiply", w, rate))
        adapter.barrier()
        assert_close(adapter.to_numpy(old), before, what=f"step {step}: the old value")
        assert_close(adapter.to_numpy(reader), before + np.float32(1), what="its reader")


@pytest.mark.spec("LZ-CACHE-006")
@pytest.mark.ops("multiply", "add")
def test_an_input_a_live_tensor_holds_is_never_donated(adapter: OptionalAdapter) -> None:
    """A live input, never observed before the barrier, of an output's shape and dtype.

    No host view can pin its buffer, and the program runs again and again: where donation can
    happen, it must not take the buffer the live ``x`` still holds.
    """
    start = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    two, one = typed(adapter, 2.0, np.float32), typed(adapter, 1.0, np.float32)
    settle(adapter)
    for step in range(4):
        x = adapter.from_numpy(start + np.float32(step))
        y = adapter.apply("add", adapter.apply("multiply", x, two), one)
        adapter.barrier()
        assert_close(adapter.to_numpy(y), (start + np.float32(step)) * 2 + 1, what=f"step {step}")
        assert_close(adapter.to_numpy(x), start + np.float32(step), what=f"step {step}: x")
