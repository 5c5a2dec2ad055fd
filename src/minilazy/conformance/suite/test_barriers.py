"""Barriers: what ``mark_step``, ``sync`` and observations materialise, and what they must not."""

from __future__ import annotations

import gc
import subprocess
import sys
import time
from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close
from minilazy.conformance.oracle.strategies import undeclared
from minilazy.conformance.suite.util import Raised, counting, leave_by_raising, settle, typed

Array = np.ndarray[Any, Any]
X = np.linspace(-2.0, 2.0, 12, dtype=np.float32).reshape(3, 4)


def _pending_trio(adapter: OptionalAdapter) -> tuple[list[Any], list[Array]]:
    """Three live pending tensors of different shapes, and their NumPy values."""
    x = adapter.from_numpy(X)
    tensors = [adapter.apply("add", x, typed(adapter, 1.0, X.dtype)),
               adapter.apply("sum", x, axis=1),
               adapter.apply("negative", adapter.apply("getitem", x, (slice(None), 1)))]
    return tensors, [X + np.float32(1), np.sum(X, axis=1), -X[:, 1]]


@pytest.mark.spec("LZ-BAR-001")
@pytest.mark.requires("pending")
@pytest.mark.ops("add", "sum", "negative", "getitem")
def test_mark_step_leaves_nothing_pending(adapter: OptionalAdapter) -> None:
    tensors, want = _pending_trio(adapter)
    adapter.barrier()
    assert [adapter.is_pending(t) for t in tensors] == [False] * 3
    for t, w in zip(tensors, want):  # materialised means holding its value, not any value
        assert_close(adapter.to_numpy(t), w, "reduction", bound=1e-5)


@pytest.mark.spec("LZ-BAR-001")
@pytest.mark.requires("executions")
@pytest.mark.ops("add", "sum", "negative", "getitem")
def test_after_mark_step_observing_runs_nothing(adapter: OptionalAdapter) -> None:
    tensors, want = _pending_trio(adapter)
    adapter.barrier()
    with counting(adapter) as d:
        got = [adapter.to_numpy(t) for t in tensors]
    assert d.executions == 0, f"{d.executions} executions after mark_step: something was pending"
    for g, w in zip(got, want):
        assert_close(g, w, "reduction", bound=1e-5)


@pytest.mark.spec("LZ-BAR-001")
@pytest.mark.requires("pending")
@pytest.mark.ops("exp", "reshape", "add")
def test_mark_step_materialises_every_handle_on_a_value(adapter: OptionalAdapter) -> None:
    # A no-op reshape may be a second handle on the same pending value: both are live tensors.
    y = adapter.apply("exp", adapter.from_numpy(X))
    same = adapter.apply("reshape", y, X.shape)
    flat = adapter.apply("reshape", adapter.apply("add", y, 1.0), (X.size,))
    adapter.barrier()
    assert [adapter.is_pending(t) for t in (y, same, flat)] == [False] * 3
    assert_close(adapter.to_numpy(same), np.exp(X), "ulp")


@pytest.mark.spec("LZ-BAR-001")
@pytest.mark.requires("pending")
@pytest.mark.ops("add", "multiply")
def test_mark_step_materialises_tensors_made_while_handling_an_error(
        adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(X)
    one, two = typed(adapter, 1.0, X.dtype), typed(adapter, 2.0, X.dtype)
    try:
        raise ValueError("a user's error, handled")
    except ValueError:
        inside = adapter.apply("multiply", adapter.apply("add", x, one), two)
    adapter.barrier()
    assert not adapter.is_pending(inside), "a tensor made in an except block stayed pending"
    assert_close(adapter.to_numpy(inside), (X + np.float32(1)) * np.float32(2))


@pytest.mark.spec("LZ-BAR-002")
@pytest.mark.ops("add", "sum", "negative", "getitem")
def test_mark_step_runs_one_execution(adapter: OptionalAdapter) -> None:
    tensors, _ = _pending_trio(adapter)
    with counting(adapter) as d:
        adapter.barrier()
    assert d.n("executions") <= 1, f"{d.executions} executions for one device"
    del tensors


@pytest.mark.spec("LZ-BAR-003")
@pytest.mark.ops("exp", "add", "multiply", "sum")
def test_dead_tensors_are_not_computed(adapter: OptionalAdapter) -> None:
    # A shape no other test uses, so the cache holds none of these programs yet.
    data = np.random.default_rng(3).standard_normal((3, 5, 7)).astype(np.float32)

    def step(scale: float, dead: bool) -> Any:
        x = adapter.from_numpy(data * scale)
        kept = adapter.apply("add", adapter.apply("exp", x), x)
        if dead:
            gone = adapter.apply("sum", adapter.apply("multiply", x, x))
            del gone
            gc.collect()
        adapter.barrier()
        return kept

    settle(adapter)
    with counting(adapter) as with_dead:
        step(1.0, dead=True)
    with counting(adapter) as without:
        kept = step(2.0, dead=False)
    # Had the dead sum been in the first program, the second (without it) would be a new one.
    assert without.compiles == 0, "the first program computed the dead tensor"
    if with_dead.executions is not None and without.executions is not None:
        assert with_dead.executions <= without.executions, "the dead tensor ran on its own"
    del kept


@pytest.mark.spec("LZ-BAR-004")
@pytest.mark.ops("tanh", "multiply", "add")
def test_an_observation_gives_the_oracles_value(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(X)
    y = adapter.apply("add", adapter.apply("tanh", adapter.apply(
        "multiply", x, typed(adapter, 0.5, X.dtype))), typed(adapter, 3, X.dtype))
    got = adapter.to_numpy(y)
    assert_close(got, np.tanh(X * np.float32(0.5)) + np.float32(3), "ulp")
    if "pending" in adapter.capabilities:
        assert not adapter.is_pending(y), "the observed tensor must be materialised"


@pytest.mark.spec("LZ-BAR-004")
@pytest.mark.ops("multiply", "add", "sum")
def test_an_observation_of_python_scalars_math_gives_the_oracles_value(
        adapter: OptionalAdapter) -> None:
    # Several Python scalars in one program: each is its own parameter.
    x = adapter.from_numpy(X)
    y = adapter.apply("add", adapter.apply("multiply", adapter.apply("add", x, 0.75), 2.5),
                      -1.25)
    want = (X + np.float32(0.75)) * np.float32(2.5) + np.float32(-1.25)
    assert_close(adapter.to_numpy(y), want, "ulp")  # a compiler may fuse * and + (one rounding)


@pytest.mark.spec("LZ-BAR-004")
@pytest.mark.ops("multiply", "add", "getitem")
@pytest.mark.parametrize("convert", ["item", "float", "int", "bool"])
def test_a_scalar_observation_of_a_pending_tensor_materialises_it(
        adapter: OptionalAdapter, convert: str) -> None:
    x = adapter.from_numpy(np.array(2.5, np.float32))  # 0-d: NumPy 2 converts only those
    one = adapter.apply("multiply", x, 3.0)  # 7.5, pending: one op on device data
    two = adapter.apply("add", adapter.apply("multiply", x, -3.0), 0.25)  # -7.25
    zero = adapter.apply("multiply", x, 0.0)  # falsy: a bool() that cannot be False fails
    for y, value in ((one, 7.5), (two, -7.25), (zero, 0.0)):
        want = {"item": value, "float": value, "int": int(value), "bool": bool(value)}[convert]
        if convert == "item":
            if not hasattr(y, "item"):
                pytest.skip(f"{adapter.name}'s tensors have no item()")
            got = y.item()
        else:
            got = {"float": float, "int": int, "bool": bool}[convert](y)
        assert got == want and type(got) is type(want), f"{convert}() gave {got!r}, not {want}"


@pytest.mark.spec("LZ-BAR-006")
@pytest.mark.requires("sync")
@pytest.mark.ops("add", "sum", "negative", "getitem")
def test_sync_materialises_the_named_tensors(adapter: OptionalAdapter) -> None:
    tensors, want = _pending_trio(adapter)
    adapter.sync(tensors[0], tensors[2])
    if "pending" in adapter.capabilities:
        assert not adapter.is_pending(tensors[0]) and not adapter.is_pending(tensors[2])
    if satisfies(capabilities_of(adapter), "executions"):
        with counting(adapter) as d:
            got = [adapter.to_numpy(tensors[0]), adapter.to_numpy(tensors[2])]
        assert d.executions == 0, "sync left a named tensor pending"
    else:
        got = [adapter.to_numpy(tensors[0]), adapter.to_numpy(tensors[2])]
    assert_close(got[0], want[0])
    assert_close(got[1], want[2])


@pytest.mark.spec("LZ-BAR-007")
@pytest.mark.ops("multiply", "add", "sum", "matmul")
@pytest.mark.parametrize("cut", ["none", "after_first", "every_op"])
def test_a_barrier_anywhere_changes_no_value(adapter: OptionalAdapter, cut: str) -> None:
    w = np.arange(8, dtype=np.float32).reshape(4, 2) / 8

    def maybe(point: str) -> None:
        if cut == "every_op" or cut == point:
            adapter.barrier()

    x = adapter.from_numpy(X)
    y = adapter.apply("multiply", x, typed(adapter, 2.0, X.dtype))
    maybe("after_first")
    y = adapter.apply("add", y, adapter.apply("sum", x, axis=0))
    maybe("every_op")
    z = adapter.apply("matmul", y, adapter.from_numpy(w))
    maybe("every_op")
    want = (X * np.float32(2) + np.sum(X, axis=0)) @ w
    assert_close(adapter.to_numpy(z), want, "reduction", bound=1e-4)


# A loop without barriers, in a fresh process whose memory the test can watch (and stop).
LOOP = """
import sys
import numpy as np
from minilazy.conformance.adapter import load
a = load(sys.argv[1])
x = a.from_numpy(np.zeros(4))
for _ in range(int(sys.argv[2]) // 2):  # +1 a step, exactly: a step lost shows in the count
    x = a.apply("subtract", a.apply("add", x, 1.5), 0.5)
print(a.to_numpy(x).tolist())
"""
LOOP_SECONDS, LOOP_RSS_MIB = 90, 4096


def _rss_mib(pid: int) -> float:
    """The resident memory of process ``pid`` in MiB (0 where /proc cannot tell)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS")),
                        0.0)
    except OSError:
        return 0.0


def _loop(impl: str, ops: int) -> tuple[str, float]:
    """Run ``ops`` recorded ops without a barrier in a fresh process: its output, peak MiB."""
    child = subprocess.Popen([sys.executable, "-c", LOOP, impl, str(ops)], text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak, start = 0.0, time.monotonic()
    while child.poll() is None:
        peak = max(peak, _rss_mib(child.pid))
        if peak > LOOP_RSS_MIB or time.monotonic() - start > LOOP_SECONDS:
            child.kill()
            child.communicate()
            pytest.fail(f"{ops} ops without a barrier: stopped after "
                        f"{time.monotonic() - start:.0f} s at {peak:.0f} MiB (limits "
                        f"{LOOP_SECONDS} s, {LOOP_RSS_MIB} MiB)")
        time.sleep(0.05)
    out, err = child.communicate()
    assert child.returncode == 0, err[-2000:]
    return out.strip(), peak


@pytest.mark.spec("LZ-BAR-008")
@pytest.mark.ops("subtract", "add")
def test_a_100k_op_loop_without_barriers_completes_bounded(lazy_impl: str) -> None:
    small, small_peak = _loop(lazy_impl, 10_000)
    large, large_peak = _loop(lazy_impl, 100_000)
    assert (small, large) == (str([5000.0] * 4), str([50000.0] * 4)), (small, large)
    # Ten times the ops, about the same memory: what is pending stays bounded.
    assert large_peak <= small_peak * 1.25 + 128, f"{small_peak:.0f} MiB for 10 000 ops, " \
        f"{large_peak:.0f} MiB for 100 000"


@pytest.mark.spec("LZ-BAR-009")
@pytest.mark.requires("eager", "pending")
@pytest.mark.ops("multiply", "add")
def test_eager_mode_runs_op_by_op(adapter: OptionalAdapter) -> None:
    counted = satisfies(capabilities_of(adapter), "executions")
    with counting(adapter) if counted else nullcontext(None) as d:
        with adapter.eager():
            y = adapter.apply("multiply", adapter.from_numpy(np.ones(3, np.float32)), 3.0)
            assert not adapter.is_pending(y)
            z = adapter.apply("add", y, 1.0)
            assert not adapter.is_pending(z)
    if d is not None:  # each op ran on its own: one execution each
        assert d.n("executions") >= 2, f"{d.executions} executions for two eager ops"
    assert adapter.to_numpy(z).tolist() == [4.0] * 3


@pytest.mark.spec("LZ-BAR-013")
@pytest.mark.requires("eager", "pending")
@pytest.mark.ops("multiply")
@pytest.mark.parametrize("nested", [False, True])
def test_eager_mode_ends_with_its_block_also_by_an_exception(adapter: OptionalAdapter,
                                                             nested: bool) -> None:
    x = adapter.from_numpy(np.ones(3, np.float32))
    if not adapter.is_pending(adapter.apply("multiply", x, 1.0)):
        pytest.skip("recording runs ops here, in any mode (LZ-REC-001's business)")
    leave_by_raising(adapter.eager, nested)
    y = adapter.apply("multiply", x, 3.0)
    assert adapter.is_pending(y), "eager mode outlived its block, left by an exception"
    with adapter.eager():  # and a block left normally after an inner one raised
        with pytest.raises(Raised), adapter.eager():
            raise Raised
        z = adapter.apply("multiply", y, 2.0)
        assert not adapter.is_pending(z), "an inner block's exception ended the outer block"
    assert adapter.to_numpy(z).tolist() == [6.0] * 3


@pytest.mark.spec("LZ-BAR-010")
@pytest.mark.ops("multiply", "add", "sin")
def test_recording_many_ops_between_barriers_runs_nothing(adapter: OptionalAdapter) -> None:
    # float64 where declared; else float32 (laziness is no 64-bit question), within its eps:
    # each step halves the error carried in (|d sin(y/2 + x)/dy| <= 1/2), so it stays a few ulp
    dtype, bound = (np.float64, 1e-9) if not undeclared(adapter, np.float64) else (
        np.float32, 1e-5)
    x = adapter.from_numpy(np.linspace(0, 1, 5, dtype=dtype))
    settle(adapter)
    with counting(adapter) as d:
        y = x
        for _ in range(300):  # 900 ops: below any sensible auto-cut limit
            y = adapter.apply("sin", adapter.apply("add", adapter.apply("multiply", y, 0.5), x))
    assert d.ran_nothing(), f"recording ran something: {d}"
    start = np.linspace(0, 1, 5, dtype=dtype)
    want: Any = start
    for _ in range(300):
        want = np.sin(want * np.asarray(0.5, dtype) + start)
    assert_close(adapter.to_numpy(y), want, "reduction", bound=bound)


@pytest.mark.spec("LZ-BAR-011")
@pytest.mark.requires("executions")
@pytest.mark.ops("multiply", "sin")
def test_a_loop_whose_results_die_never_cuts(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(np.linspace(0, 1, 5).astype(np.float32))
    settle(adapter)
    with counting(adapter) as d:
        for _ in range(40):  # 16 000 ops in all, but never more than 400 alive
            y = x
            for _ in range(200):
                y = adapter.apply("multiply", adapter.apply("sin", y), 0.5)
    assert d.executions == 0, f"{d.executions} auto-cuts of graphs no live tensor reaches"


@pytest.mark.spec("LZ-BAR-011")
@pytest.mark.requires("executions", "compiles")
@pytest.mark.ops("multiply", "add")
def test_a_loop_that_accumulates_cuts_where_its_structure_repeats(
        adapter: OptionalAdapter) -> None:
    acc = adapter.from_numpy(np.zeros(4, np.float32))
    settle(adapter)
    with counting(adapter) as d:
        for _ in range(20_000):
            acc = adapter.apply("add", adapter.apply("multiply", acc, 0.5), 1.0)
        got = adapter.to_numpy(acc)
    assert got.tolist() == [2.0] * 4
    assert d.n("executions") > 1, "no auto-cut in 40 000 ops"
    assert d.n("compiles") <= 4, f"{d.compiles} compiles for {d.executions} cuts of one loop"
