"""Limits: deep graphs, huge shapes, long loops without barriers, many shapes, and fork().

Nothing a user writes may crash the process: deep graphs run in depth bands (no recursion, no
compiler stack overflow), shapes too big to exist raise ``ValueError`` at the call, the auto-cut
counts only what live tensors reach, memory stays bounded however many shapes are compiled, and
a fork() child says why it cannot run JAX.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import minilazy as ml
from minilazy.core.cache import CACHE


def _chain(x: ml.Tensor, n: int) -> tuple[ml.Tensor, np.ndarray]:
    want = np.asarray(x.numpy())
    for i in range(n):
        if i % 3 == 0:
            x, want = ml.sin(x), np.sin(want)
        else:
            x, want = x * 0.75 + 0.25, want * np.float32(0.75) + np.float32(0.25)
    return x, want


def test_a_chain_deeper_than_one_program_runs_in_bands_that_repeat() -> None:
    x = ml.asarray(np.linspace(-1, 1, 8, dtype=np.float32))
    with ml.policy(max_pending_nodes=10**9, max_depth=64):
        y, want = _chain(x, 3 * 64 * 6)  # a repeating pattern: later bands hit the cache
        ml.mark_step()
    m = ml.metrics()
    assert m.compiles < m.cache_hits  # bands of the same structure compile once
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)


def test_a_chain_of_20000_ops_compiles_without_recursion() -> None:
    x = ml.asarray(np.full(4, 0.5, np.float32))
    with ml.policy(max_pending_nodes=10**9):
        y, want = _chain(x, 20_000)
        ml.mark_step()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-4, atol=1e-5)


def test_a_deep_graph_with_branches_keeps_every_output() -> None:
    # Outputs at many depths, some read by later bands and some not.
    x = ml.asarray(np.arange(4, dtype=np.float32) / 4)
    outs, wants, w = [], [], x.numpy()
    with ml.policy(max_pending_nodes=10**9, max_depth=16):
        for i in range(200):
            x = ml.cos(x) + x * 0.5 if i % 2 else ml.tanh(x) - 0.125
            w = np.cos(w) + w * np.float32(0.5) if i % 2 else np.tanh(w) - np.float32(0.125)
            if i % 37 == 0:
                outs.append(x * 2.0)
                wants.append(w * np.float32(2))
        ml.mark_step()
    for got, want in zip([*outs, x], [*wants, w]):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda: ml.zeros((10**10, 10**10)),
    lambda: ml.ones((2**40, 2**30), dtype=ml.int8),
    lambda: ml.arange(3.0)[None, :] * ml.ones((10**19 // 8, 1)),
    lambda: ml.broadcast_to(ml.ones((1,)), (10**10, 10**10)),
    lambda: ml.eye(10**10),
], ids=["zeros", "ones", "broadcast", "broadcast_to", "eye"])
def test_a_shape_too_big_to_exist_is_a_value_error_at_the_call(make) -> None:
    with pytest.raises(ValueError, match="too big"):
        make()
    ml.mark_step()


def test_a_loop_that_drops_its_results_never_cuts() -> None:
    x = ml.asarray(np.ones(4, np.float32))
    with ml.policy(max_pending_nodes=256):
        for _ in range(10):
            y = x
            for _ in range(100):  # 200 live pending nodes at most: below the limit
                y = ml.sin(y) * 0.5
    assert ml.metrics().compiles == 0 and ml.metrics().barriers == 0


def test_a_loop_that_accumulates_cuts_where_the_structure_repeats() -> None:
    acc = ml.asarray(np.zeros(4, np.float32))
    want = np.zeros(4, np.float32)
    with ml.policy(max_pending_nodes=256):
        for _ in range(3000):
            acc = acc * 0.5 + 1.0
            want = want * np.float32(0.5) + np.float32(1.0)
            waste = ml.exp(acc) * 3.0  # dead next iteration: never counted, never computed
    del waste
    m = ml.metrics()
    assert m.barrier_causes.get("auto", 0) >= 10
    assert m.compiles <= 3  # the same cut, again and again
    np.testing.assert_allclose(acc.numpy(), want)


def test_a_failing_auto_cut_resets_the_pending_count() -> None:
    impossible = ml.ones((2**20, 2**20), dtype=ml.float32) * 2.0  # 4 TiB: fails to run
    x = ml.asarray(np.ones(3, np.float32))
    failures = 0
    with ml.policy(max_pending_nodes=50):
        for _ in range(200):
            try:
                x = x + 1.0
            except Exception:
                failures += 1
    assert failures == 0  # the auto-cut failed once; the tensor holds its error
    np.testing.assert_array_equal(x.numpy(), np.full(3, 201.0, np.float32))
    with pytest.raises(Exception, match="(?i)memory|resource"):
        impossible.numpy()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_fork_child_gets_a_clear_error_at_its_first_barrier(tmp_path) -> None:
    script = textwrap.dedent("""
        import os, sys, warnings
        warnings.simplefilter("ignore")
        import numpy as np, minilazy as ml
        x = ml.asarray(np.ones(3)) + 1.0
        ml.mark_step()                       # JAX has started in the parent
        pid = os.fork()
        if pid == 0:
            try:
                (x * 2.0).numpy()
            except RuntimeError as e:
                print("child:", e)
                os._exit(0)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        print("parent:", (x * 2.0).tolist(), os.waitstatus_to_exitcode(status))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert "child: minilazy cannot run in a process forked after JAX started" in out.stdout
    assert "parent: [4.0, 4.0, 4.0] 0" in out.stdout, out.stdout + out.stderr


def test_memory_stays_bounded_through_hundreds_of_distinct_shapes(monkeypatch) -> None:
    # A new shape is a new program (300 compiles, ~7 s). The LRU frees the programs it evicts,
    # but JAX's own caches kept traces of every shape (~200 Python objects each, for ever; 39,000
    # more here): counted as live objects, which (unlike RSS) do not depend on the allocator.
    monkeypatch.setattr(CACHE, "capacity", 8)  # full, and evicting, from the 9th shape

    def run(shapes: range) -> int:
        for n in shapes:
            a = np.linspace(-1, 1, n, dtype=np.float32)
            got = ml.tanh(ml.asarray(a) * 2.0) + 1.0
            np.testing.assert_allclose(got.numpy(), np.tanh(a * np.float32(2)) + 1, atol=1e-6)
        gc.collect()
        return len(gc.get_objects())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ml.RecompileWarning)  # a compile per step, on purpose
        start = run(range(1, 101))
        growth = run(range(101, 301)) - start
    assert ml.metrics().compiles == 300
    assert growth < 10_000, f"{growth} more live objects after 200 more shapes"
