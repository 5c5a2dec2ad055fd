"""Holes that mutants found: cases the rules' other tests did not build.

Each test here was missing until a mutant showed it: a catalogue mutant its own rule did not
kill alone (``python -m minilazy.conformance.mutate --catalogue --alone``), or a mutant
generated from the engine's source that the oracle let through (``--generated``). The
comment over each names the mutant.
"""

from __future__ import annotations

import signal
import threading
import tracemalloc
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.suite.util import counting, explain, fresh, require_graphs, settle

Array = np.ndarray[Any, Any]


def _ints(shape: tuple[int, ...], start: int = 1) -> Array:
    """Small integers as float32: every sum and product below is exact, whatever the fusion."""
    return np.arange(start, start + int(np.prod(shape)), dtype=np.float32).reshape(shape)


# key-ignores-attrs: its test of attributes changed an axis of a (2, 3) operand, which changes
# the result's shape too; a key without attributes still told them apart.
@pytest.mark.spec("LZ-HASH-004")
@pytest.mark.ops("sum")
def test_an_attribute_alone_changes_the_key(adapter: OptionalAdapter) -> None:
    require_graphs(adapter)
    x = adapter.from_numpy(_ints((3, 3)))
    rows, columns = (adapter.apply("sum", x, axis=a) for a in (0, 1))  # same shapes, dtypes
    assert adapter.key(rows) != adapter.key(columns), "sum(axis=0) and sum(axis=1): one key"


def _wired(adapter: OptionalAdapter, x: Any, y: Any, last: Any) -> Any:
    """``x * y + last``: with ``last`` x or y, the same ops on the same leaves, in one order."""
    return adapter.apply("add", adapter.apply("multiply", x, y), last)


# key-ignores-wiring: x*y+y and x*x+y list their nodes in different orders, which a key without
# wiring still sees; x*y+x and x*y+y list them in the same order.
@pytest.mark.spec("LZ-HASH-002")
@pytest.mark.ops("add", "multiply")
def test_graphs_that_differ_only_in_an_operand_have_different_keys(
        adapter: OptionalAdapter) -> None:
    require_graphs(adapter)
    x, y = adapter.from_numpy(_ints((3,))), adapter.from_numpy(_ints((3,), 7))
    assert adapter.key(_wired(adapter, x, y, x)) != adapter.key(_wired(adapter, x, y, y)), \
        "x*y+x and x*y+y have the same key"


# key-ignores-shape and key-ignores-wiring: a hit served a program compiled for other shapes
# (which raised) or for other wiring (other values); LZ-CACHE-003's tests never reached one
# structure again with only that changed.
@pytest.mark.spec("LZ-CACHE-003")
@pytest.mark.ops("add", "multiply")
@pytest.mark.parametrize("change", ["shape", "wiring"])
def test_a_structure_reached_again_with_other_shapes_or_wiring_keeps_numpys_values(
        adapter: OptionalAdapter, change: str) -> None:
    fresh(adapter)
    for n, last in ((3, 0), (4, 0)) if change == "shape" else ((3, 0), (3, 1)):
        x, y = _ints((n,)), _ints((n,), 7)
        explain(f"program as Python:\nx, y = np.arange(1.0, {n + 1}), np.arange(7.0, {n + 7})\n"
                f"x * y + {'xy'[last]}")
        leaves = adapter.from_numpy(x), adapter.from_numpy(y)
        got = adapter.to_numpy(_wired(adapter, *leaves, leaves[last]))
        np.testing.assert_array_equal(got, x * y + (x, y)[last], err_msg=f"x * y + {'xy'[last]}")


# scalar-shared-slot: every scalar parameter read the first one's slot, which a barrier between
# the two scalars' ops hides; the drawn programs with barriers seldom held two scalars.
@pytest.mark.spec("LZ-BAR-007")
@pytest.mark.ops("add", "multiply")
@pytest.mark.parametrize("barrier", [False, True])
def test_a_barrier_between_two_scalar_operands_changes_no_value(adapter: OptionalAdapter,
                                                                barrier: bool) -> None:
    data = _ints((3,))
    explain("program as Python:\nx = np.arange(1.0, 4.0, dtype=np.float32)\ny = x + 2.0\n"
            f"{'mark_step()' if barrier else ''}\n(y * 3.0)")
    y = adapter.apply("add", adapter.from_numpy(data), 2.0)
    if barrier:
        adapter.barrier()
    got = adapter.to_numpy(adapter.apply("multiply", y, 3.0))
    np.testing.assert_array_equal(got, (data + 2) * 3)


# cache-of-one: a cache that keeps the last program only still hits when one structure runs
# twice in a row; the rule's tests ran nothing else in between.
@pytest.mark.spec("LZ-CACHE-001")
@pytest.mark.ops("add", "multiply", "exp")
def test_two_structures_run_in_turns_compile_once_each(adapter: OptionalAdapter) -> None:
    settle(adapter)

    def turn(seed: int) -> None:
        x = adapter.from_numpy(_ints((2, 3), seed))
        adapter.to_numpy(adapter.apply("multiply", adapter.apply("add", x, 1.5), 2.0))
        adapter.to_numpy(adapter.apply("exp", adapter.apply("multiply", x, 0.25)))

    turn(1)  # each structure compiled once
    with counting(adapter) as d:
        turn(5)
        turn(9)
    assert d.n("compiles") == 0, f"{d.compiles} compiles for two structures run again"


class _Interrupt(Exception):
    """What the test's signal handler raises: a timeout's or a Ctrl-C's stand-in."""


# Generated mutant g-f88905eb9f (core/lowering_x64.py, the re-raise of its handler dropped): an
# exception that arrived while minilazy lowered, compiled or ran a program vanished, and the
# barrier went on without the program, to fail later with an error of its own. No test raised
# anything inside a barrier. (Python itself drops a handler's exception that lands in a
# finalizer, so one that never comes out is no failure; one that comes out changed is.)
@pytest.mark.spec("LZ-ERR-003")
@pytest.mark.ops("add", "multiply", "tanh")
def test_an_exception_raised_while_a_barrier_runs_reaches_the_caller(
        adapter: OptionalAdapter) -> None:
    if not hasattr(signal, "setitimer") or threading.current_thread() != threading.main_thread():
        pytest.skip("needs signal.setitimer in the main thread")
    if type(adapter).__module__.endswith(".process"):
        pytest.skip("the signal would interrupt the protocol's pipe, not the library")
    data = _ints((4,))
    kept = adapter.apply("multiply", adapter.from_numpy(data), 2.0)  # pending throughout

    def handler(signum: int, frame: Any) -> None:
        raise _Interrupt

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        for n in range(1, 16):  # a new structure each time: each barrier compiles
            y = adapter.from_numpy(_ints((n,)))
            for _ in range(12):
                y = adapter.apply("tanh", adapter.apply("add", adapter.apply("multiply", y,
                                                                             0.5), 1.0))
            try:  # any other exception fails the test: it is not the one raised
                signal.setitimer(signal.ITIMER_REAL, 0.002)
                adapter.to_numpy(y)
            except _Interrupt:
                pass
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    np.testing.assert_array_equal(adapter.to_numpy(kept), data * 2)  # nothing pending lost


# Generated mutant g-8ef8a63769 (autodiff/vjps.py fit: ``==`` flipped): a cotangent was cast to
# its operand's dtype only when it had it already, so the gradient of a float32 operand of an op
# with a float64 one came back float64. The rule's tests drew operands of one dtype.
@pytest.mark.spec("LZ-AD-002")
@pytest.mark.requires("float64")
@pytest.mark.ops("multiply", "sum")
@pytest.mark.parametrize("order", ["float32 first", "float64 first"])
def test_each_gradient_has_its_arguments_dtype_when_the_dtypes_differ(
        adapter: OptionalAdapter, order: str) -> None:
    x, y = _ints((3,)), _ints((3,), 4).astype(np.float64)
    args = [x, y] if order == "float32 first" else [y, x]
    grads = adapter.grad(lambda a, b: adapter.apply("sum", adapter.apply("multiply", a, b)),
                         (0, 1))(*(adapter.from_numpy(a) for a in args))
    for arg, other, g in zip(args, args[::-1], grads):
        got = adapter.to_numpy(g)
        assert got.dtype == arg.dtype, f"the gradient of a {arg.dtype} argument is {got.dtype}"
        np.testing.assert_array_equal(got, other.astype(arg.dtype))


# Generated mutant g-22f9df78c2 (core/tensor.py record: the pending-node count never grows):
# the auto-cut never came, and the 100 000-op loop of LZ-BAR-008's test still completed, its
# graph of 100 000 nodes within that test's slack of 128 MiB of resident memory. Python's own
# allocations, traced, tell a bounded graph from one that grows with the loop.
@pytest.mark.spec("LZ-BAR-008")
@pytest.mark.ops("add")
def test_the_memory_a_loop_holds_while_it_records_does_not_grow_with_it(
        adapter: OptionalAdapter) -> None:
    def peak(n: int) -> int:
        y = adapter.from_numpy(np.zeros(2, np.float32))
        tracemalloc.start()
        try:
            for _ in range(n):
                y = adapter.apply("add", y, 1.0)
            most = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert adapter.to_numpy(y).tolist() == [float(n)] * 2
        return most

    small, large = peak(25_000), peak(100_000)
    assert large < 2 * small, f"{small / 2**20:.1f} MiB held recording 25 000 ops, " \
        f"{large / 2**20:.1f} MiB recording 100 000"
