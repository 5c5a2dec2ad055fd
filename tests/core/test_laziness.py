"""minilazy's own laziness choices and counters, beyond the spec rules.

The rules themselves (recording runs nothing, what barriers materialise, the compile cache) are
checked once, through the adapter, by the conformance suite (src/minilazy/conformance/suite),
which the project's pytest runs on minilazy. These tests check what the adapter protocol cannot
see: ``ml.metrics()`` fields it lacks (``barriers``, ``barrier_causes``), the ``policy(...)``
knobs, and minilazy's answers to implementation-defined rules.
"""

from __future__ import annotations

import numpy as np

import minilazy as ml


def _m():
    return ml.metrics()


def test_recording_and_reading_metadata_run_no_barrier():
    """No barrier at all (``metrics().barriers``), however the tensor is recorded and read.

    The suite's LZ-REC-001/003 tests count compiles and executions; minilazy also counts the
    barriers, which an update in place or a metadata read must not start either.
    """
    x = ml.asarray(np.ones((3, 4), np.float32))
    y = ml.tanh(x @ ml.ones((4, 2), dtype=ml.float32) + 1.0)
    y[0, :] = 5.0
    repr(y), y.shape, y.dtype, y.ndim, y.size, len(y)
    m = _m()
    assert m.executions == 0 and m.compiles == 0 and m.barriers == 0
    assert m.ops_recorded >= 4
    assert y.is_pending


def test_observation_syncs_only_what_it_needs():
    """minilazy's answer to LZ-BAR-005 (implementation-defined): an observation materialises
    only the observed tensor (here ``sum(a)``: ``a`` is an intermediate, left pending), and
    ``barrier_causes`` records it as a ``float`` barrier."""
    x = ml.asarray(np.arange(3.0))
    a, b = x + 1, x * 2
    assert float(ml.sum(a)) == 6.0  # materialises only sum(a): a is an intermediate of it
    assert a.is_pending and b.is_pending
    assert _m().barrier_causes == {"float": 1}


def test_observe_all_policy_syncs_everything():
    """``policy(observe_all=True)``: an observation materialises every live pending tensor
    (LZ-BAR-005's other answer, which minilazy offers as an option)."""
    x = ml.asarray(np.arange(3.0))
    b = x * 2
    with ml.policy(observe_all=True):
        assert (x + 1).tolist() == [1.0, 2.0, 3.0]
    assert not b.is_pending


def test_sync_materialises_only_its_arguments():
    """``ml.sync(a)`` runs one program for ``a`` alone and leaves other pending tensors pending.

    LZ-BAR-006 (the named tensors are materialised) is the suite's; that nothing else is, in a
    single execution, is minilazy's choice.
    """
    x = ml.asarray(np.arange(3.0))
    a, b = x + 1, x * 2
    ml.sync(a)
    assert not a.is_pending and b.is_pending
    assert _m().executions == 1


def test_a_100k_iteration_loop_without_barriers_stays_bounded():
    """The auto-cut under ``policy(max_pending_nodes=1000)``: a cut every 1000 pending nodes
    (``barrier_causes["auto"]``), and the steady-state cuts share one compiled program.

    LZ-BAR-008 itself (a 100 000-op loop completes, bounded, with the right values) is checked
    by the suite in a fresh process; this checks minilazy's cut policy and its counters.
    """
    x = ml.zeros((4,))
    with ml.policy(max_pending_nodes=1000):
        for _ in range(100_000):
            x = x * 0.5 + 1.0
    assert x.tolist() == [2.0] * 4
    m = _m()
    assert m.barrier_causes.get("auto", 0) >= 199  # 200 000 ops, cut every 1000
    # The steady-state cut repeats one structure: only the first (from zeros), the phase it
    # leaves, and the last (partial) cut differ.
    assert m.compiles <= 4 and m.cache_hits >= 196


def test_special_scalars_bake_0_and_1_and_keep_other_values_parameters():
    """minilazy's answer to LZ-HASH-006 (implementation-defined): every Python number is a
    parameter by default; ``policy(special_scalars=True)`` bakes 0 and 1 into the program (in
    the IR text and the key, and through ``to_python``) and keeps other values parameters."""
    x = ml.asarray(np.array([-1.0, 2.0]))
    with ml.policy(special_scalars=True):
        relu = ml.maximum(x, 0.0)
        assert "constant (0.0)" in ml.graph(relu).text()
        keys = {ml.graph(x * s).key for s in (0.5, 0.25)}  # still parameters: one key
        assert len(keys) == 1 and ml.graph(x * 1.0).key not in keys
        code = ml.graph(relu * 3.0).to_python()
        scope = {}
        exec(code, scope)
        assert ml.graph(*scope["outputs"]).key == ml.graph(relu * 3.0).key
        assert relu.tolist() == [0.0, 2.0] and (x * -0.0).tolist() == [0.0, -0.0]
    assert "scalar[0] (0.0)" in ml.graph(ml.maximum(x, 0.0)).text()  # the default: parameters
