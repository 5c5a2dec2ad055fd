"""Optimizers (capability ``optim``): LZ-OPT-001 to LZ-OPT-005.

Each step is the optimizer's formula, kept in each weight's dtype, recorded, compiled once, and
donating what it replaces. The formulas are torch's (``SGD`` with heavy-ball momentum, ``Adam``,
``AdamW``), computed here in NumPy in float64 from the weights and gradients as the implementation
holds them; a step in a narrower dtype may differ by its rounding: ``32 eps`` of the weight's
dtype, relative to the magnitudes of the weight and of the updates so far.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.extensions import OPTIMIZERS
from minilazy.conformance.oracle.strategies import undeclared
from minilazy.conformance.suite.util import counting, explain, settle

Array = np.ndarray[Any, Any]
# name -> (the optimizer, its hyperparameters besides lr)
CONFIGS: dict[str, tuple[str, dict[str, float]]] = {
    "sgd": ("sgd", {}), "sgd-momentum": ("sgd", {"momentum": 0.9}),
    "adam": ("adam", {}), "adamw": ("adam", {"weight_decay": 0.05}),
}
FLOATS = ("float16", "float32", "float64")


def reference(name: str, hyper: dict[str, float], weights: list[Array],
              grads: list[list[Array]], rates: list[float]) -> tuple[list[Array], list[Array]]:
    """The weights after each step's ``grads`` at ``rates``, in float64, and their slack.

    The slack is the sum of each weight's magnitudes and its updates' (what a rounding error
    is relative to).

    Example:
        >>> w, _ = reference("sgd", {}, [np.ones(2)], [[np.ones(2)]], [0.5])
        >>> w[0].tolist()
        [0.5, 0.5]
    """
    h = {**OPTIMIZERS[name], **hyper}
    ws = [w.astype(np.float64) for w in weights]
    slack = [np.abs(w) for w in ws]
    state = [[np.zeros_like(w), np.zeros_like(w)] for w in ws]
    for t, (gs, lr) in enumerate(zip(grads, rates), start=1):
        for i, g64 in enumerate(g.astype(np.float64) for g in gs):
            m, v = state[i]
            if name == "sgd":
                m = h["momentum"] * m + g64 if h["momentum"] else g64
                step = m
            else:
                m = h["b1"] * m + (1 - h["b1"]) * g64
                v = h["b2"] * v + (1 - h["b2"]) * g64 * g64
                step = (m / (1 - h["b1"] ** t)) / (np.sqrt(v / (1 - h["b2"] ** t)) + h["eps"])
                step = step + h["weight_decay"] * ws[i]
            state[i] = [m, v]
            ws[i] = ws[i] - lr * step
            slack[i] = slack[i] + np.abs(lr * step) + np.abs(ws[i])
    return ws, slack


def _run(adapter: OptionalAdapter, name: str, hyper: dict[str, float], weights: list[Array],
         grads: list[list[Array]], rates: list[float]) -> list[Array]:
    params, state = [adapter.from_numpy(w) for w in weights], None
    for gs, lr in zip(grads, rates):
        params, state = adapter.optim(name, params, [adapter.from_numpy(g) for g in gs], state,
                                      lr=lr, **hyper)
        adapter.barrier()
    return [adapter.to_numpy(p) for p in params]


def _check(got: list[Array], weights: list[Array], want: list[Array], slack: list[Array],
           what: str) -> None:
    for i, (g, w, e, s) in enumerate(zip(got, weights, want, slack)):
        assert g.shape == w.shape and g.dtype == w.dtype, (
            f"{what}: weight {i} is {g.dtype}{list(g.shape)}, was {w.dtype}{list(w.shape)}")
        bound = 32 * float(np.finfo(w.dtype).eps) * s
        bad = ~(np.abs(g.astype(np.float64) - e) <= bound)
        assert not bad.any(), (f"{what}: weight {i} ({w.dtype}) differs from the formula at "
                               f"{np.argwhere(bad)[:3].tolist()}: got {g[bad][:3]}, want "
                               f"{e[bad][:3]}")


def _gradients(dtype: str) -> Any:
    """Gradients of magnitude 1/4 to 2, either sign: Adam's ``sqrt(v)`` stays a normal number."""
    return st.floats(0.25, 2.0).flatmap(lambda m: st.sampled_from([m, -m]))


@pytest.mark.spec("LZ-OPT-001")
@pytest.mark.parametrize("config", sorted(CONFIGS))
@given(data=st.data())
def test_each_step_is_the_optimizers_formula(adapter: OptionalAdapter, config: str,
                                             data: st.DataObject) -> None:
    name, hyper = CONFIGS[config]
    dtype = data.draw(st.sampled_from([d for d in FLOATS if not undeclared(adapter, d)]),
                      label="dtype")
    shapes = data.draw(st.lists(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
                                min_size=1, max_size=3), label="shapes")
    weights = [data.draw(hnp.arrays(dtype, s, elements=st.floats(-2, 2, width=16)),
                         label="weight") for s in shapes]
    steps = data.draw(st.integers(1, 3), label="steps")
    grads = [[data.draw(hnp.arrays(dtype, s, elements=_gradients(dtype)), label="grad")
              for s in shapes] for _ in range(steps)]
    rates = [data.draw(st.sampled_from([0.1, 0.05, 0.01]), label="lr") for _ in range(steps)]
    explain(f"{name}{hyper}, {steps} steps at {rates}: weights {[list(s) for s in shapes]} "
            f"{dtype}")
    want, slack = reference(name, hyper, weights, grads, rates)
    _check(_run(adapter, name, hyper, weights, grads, rates), weights, want, slack, config)


@pytest.mark.spec("LZ-OPT-002")
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_weights_of_several_dtypes_keep_theirs(adapter: OptionalAdapter, config: str) -> None:
    name, hyper = CONFIGS[config]
    dtypes = [d for d in FLOATS if not undeclared(adapter, d)]
    rng = np.random.default_rng(3)
    weights = [rng.uniform(-2, 2, (3, 2)).astype(d) for d in dtypes] + [
        rng.uniform(-2, 2, 4).astype(dtypes[0])]  # a second weight of the first dtype
    grads = [[(rng.uniform(0.25, 2, w.shape) * rng.choice([-1, 1], w.shape)).astype(w.dtype)
              for w in weights] for _ in range(3)]
    rates = [0.1, 0.05, 0.1]
    want, slack = reference(name, hyper, weights, grads, rates)
    _check(_run(adapter, name, hyper, weights, grads, rates), weights, want, slack,
           f"{config} on {dtypes}")


@pytest.mark.spec("LZ-OPT-003")
@pytest.mark.requires("compiles")
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_steps_with_new_rates_compile_nothing_new(adapter: OptionalAdapter, config: str) -> None:
    name, hyper = CONFIGS[config]
    rng = np.random.default_rng(4)
    weights = [rng.uniform(-1, 1, (4, 3)).astype(np.float32), np.zeros(3, np.float32)]
    params, state = [adapter.from_numpy(w) for w in weights], None
    settle(adapter)
    for step, lr in enumerate([0.1, 0.1, 0.05, 0.02, 0.3]):
        grads = [adapter.from_numpy(rng.standard_normal(w.shape).astype(np.float32))
                 for w in weights]
        with counting(adapter) as d:
            params, state = adapter.optim(name, params, grads, state, lr=lr, **hyper)
            adapter.barrier()
        assert step < 2 or d.n("compiles") == 0, (
            f"step {step} (lr {lr}) compiled {d.compiles} programs: the steps before were alike")


@pytest.mark.spec("LZ-OPT-004")
@pytest.mark.requires("optim")
@pytest.mark.parametrize("config", ["sgd-momentum", "adam"])
def test_a_step_donates_the_buffers_it_replaces(adapter: OptionalAdapter, config: str) -> None:
    name, hyper = CONFIGS[config]
    weights = [np.ones((32, 32), np.float32), np.ones(32, np.float32)]
    params, state = [adapter.from_numpy(w) for w in weights], None
    settle(adapter)
    with counting(adapter) as d:
        for _ in range(4):
            grads = [adapter.from_numpy(np.full(w.shape, 0.5, np.float32)) for w in weights]
            params, state = adapter.optim(name, params, grads, state, lr=0.1, **hyper)
            adapter.barrier()
    assert d.n("donations") >= 4, f"{d.donations} buffers donated in 4 steps"


@pytest.mark.spec("LZ-OPT-005")
@pytest.mark.requires("executions|compiles")
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_a_step_is_recorded_not_run(adapter: OptionalAdapter, config: str) -> None:
    name, hyper = CONFIGS[config]
    weights = [np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)]
    grads = [[np.full((2, 3), 0.5, np.float32)] for _ in range(2)]
    params, state = [adapter.from_numpy(w) for w in weights], None
    for gs in grads:
        lazy = [adapter.from_numpy(g) for g in gs]
        settle(adapter)
        with counting(adapter) as d:
            params, state = adapter.optim(name, params, lazy, state, lr=0.1, **hyper)
        assert d.ran_nothing(), f"{config}: the step ran something before a barrier: {d}"
        if "pending" in adapter.capabilities:
            assert adapter.is_pending(params[0]), f"{config}: the new weight is not pending"
    want, slack = reference(name, hyper, weights, grads, [0.1, 0.1])
    _check([adapter.to_numpy(p) for p in params], weights, want, slack, config)
