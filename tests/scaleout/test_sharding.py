"""Sharding over a mesh of 8 CPU devices (the test session asks XLA for them: conftest.py).

Values come from NumPy; that XLA really split the program is read from its HLO (collectives)
and from where the buffers' parts live; compiles from ``ml.metrics()``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minilazy as ml
from minilazy import demo
from minilazy.demo.datasets import digits

DEVICES = ml.devices("cpu")
pytestmark = pytest.mark.skipif(len(DEVICES) < 8, reason="needs 8 CPU devices (conftest.py)")


@pytest.fixture(scope="module")
def mesh() -> ml.Mesh:
    return ml.Mesh(DEVICES[:8], ("data",))


@pytest.fixture(scope="module")
def grid() -> ml.Mesh:
    return ml.Mesh(np.array(DEVICES[:8], dtype=object).reshape(2, 4), ("data", "model"))


def _parts(t: ml.Tensor) -> list[tuple[int, ...]]:
    """The shapes of the parts of ``t``'s buffer, one per device (t must be computed)."""
    ml.sync(t)
    return sorted(s.data.shape for s in t._node.payload.addressable_shards)


def test_a_mesh_checks_its_devices_and_names():
    assert ml.Mesh(DEVICES[:4], "data").shape == (4,)
    with pytest.raises(ValueError, match="need 2 axis names"):
        ml.Mesh(np.array(DEVICES[:4], dtype=object).reshape(2, 2), ("data",))
    with pytest.raises(ValueError, match="appears twice"):
        ml.Mesh([DEVICES[0], DEVICES[0]], ("data",))
    with pytest.raises(ValueError, match="distinct"):
        ml.Mesh(np.array(DEVICES[:4], dtype=object).reshape(2, 2), ("a", "a"))
    with pytest.raises(TypeError, match="not a minilazy Device"):
        ml.Mesh([0, 1], ("data",))
    with pytest.raises(ValueError, match="no devices"):
        ml.Mesh([], ("data",))
    assert ml.Mesh(DEVICES[:2], ("a",)) == ml.Mesh(DEVICES[:2], ("a",)) != ml.Mesh(
        DEVICES[:2], ("b",))


def test_placed_data_is_split_across_the_devices(mesh, grid):
    x = np.arange(64.0).reshape(16, 4)
    t = ml.asarray(x, sharding=(mesh, ("data", None)))
    assert t.sharding.spec == ("data", None) and t.device == DEVICES[0]
    assert _parts(t) == [(2, 4)] * 8
    u = ml.asarray(x, sharding=(grid, ("data", "model")))
    assert _parts(u) == [(8, 1)] * 8
    np.testing.assert_array_equal(u.numpy(), x)  # .numpy() gathers the parts
    ml.reset_metrics()
    ml.mark_sharding(ml.asarray(x), mesh, (None, None))
    assert ml.metrics().transfers_to_device == 2  # to one device, then to the mesh


def test_bad_specs_raise_at_the_call(mesh, grid):
    x = ml.ones((8, 6))
    pending = x * 2.0
    with pytest.raises(ValueError, match="1 entry for a tensor of shape"):
        ml.mark_sharding(x, mesh, ("data",))
    with pytest.raises(ValueError, match="'model' is not an axis"):
        ml.mark_sharding(x, mesh, ("model", None))
    with pytest.raises(ValueError, match="size 6 .* does not split evenly over 8"):
        ml.mark_sharding(x, mesh, (None, "data"))
    with pytest.raises(ValueError, match="uses mesh axis 'data' twice"):
        ml.mark_sharding(x, grid, ("data", ("model", "data")))
    with pytest.raises(TypeError, match="partition spec entry"):
        ml.mark_sharding(x, mesh, (0, None))
    with pytest.raises(TypeError, match="Mesh"):
        ml.mark_sharding(x, "mesh", (None, None))
    with pytest.raises(TypeError, match=r"\(Mesh, partition spec\) pair"):
        ml.asarray(np.ones(8), sharding=("data",))
    with pytest.raises(ml.DeviceError, match="not on the mesh"):
        ml.mark_sharding(ml.ones((8,), device=DEVICES[5]), ml.Mesh(DEVICES[:2], "d"), ("d",))
    assert x.sharding is None and pending.sharding is None  # nothing was changed
    np.testing.assert_array_equal(pending.numpy(), np.full((8, 6), 2.0))


@st.composite
def _program(draw):
    """A sharded input, a spec for it, and a small program over it and a replicated one."""
    rows, cols = 8 * draw(st.integers(1, 3)), 4 * draw(st.integers(1, 3))
    spec = draw(st.sampled_from([("data", None), (None, "model"), ("data", "model"),
                                 (("data", "model"), None), (None, None)]))
    x = draw(st.lists(st.floats(-3, 3, width=32), min_size=rows * cols, max_size=rows * cols))
    return np.array(x, np.float32).reshape(rows, cols), spec


@given(_program())
def test_sharded_programs_compute_what_numpy_does(grid, drawn):
    x, spec = drawn
    w = np.linspace(-1, 1, x.shape[1] * 3, dtype=np.float32).reshape(x.shape[1], 3)
    t = ml.asarray(x, sharding=(grid, spec))
    h = ml.tanh(t @ ml.asarray(w)) * 2.0
    out = [h, ml.sum(h, axis=0), ml.max(t, axis=1), t.T[::2] + 1.0, ml.mean(t)]
    hh = np.tanh(x @ w) * 2
    want = [hh, hh.sum(0), x.max(1), x.T[::2] + 1, x.mean(dtype=np.float32)]
    for got, expected in zip(out, want):
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_a_pending_tensor_is_annotated_and_its_result_kept_split(mesh):
    x = ml.asarray(np.arange(32.0).reshape(8, 4))
    y = ml.mark_sharding(ml.exp(x / 32.0), mesh, ("data", None))
    assert "shard" in ml.graph(y).text() and y.sharding.spec == ("data", None)
    assert _parts(y) == [(1, 4)] * 8
    assert y.sharding.spec == ("data", None)  # the result leaf says how it is split
    np.testing.assert_allclose(y.numpy(), np.exp(np.arange(32.0).reshape(8, 4) / 32))
    with ml.eager():
        z = ml.mark_sharding(x * 2.0, mesh, ("data", None))
        assert not z.is_pending and _parts(z) == [(1, 4)] * 8


def test_gradients_flow_through_a_sharding(mesh):
    x = np.linspace(-1, 1, 32).reshape(8, 4)

    def f(t):
        return ml.sum(ml.mark_sharding(ml.sin(t), mesh, ("data", None)) ** 2)

    g = ml.grad(f)(ml.asarray(x))
    np.testing.assert_allclose(g.numpy(), 2 * np.sin(x) * np.cos(x))


def _mlp_losses(steps: int, place=None) -> list[float]:
    """SGD-with-momentum on the demo's MLP; ``place(name, array)`` places each tensor."""
    place = place or (lambda name, a: ml.asarray(a))
    x, y = digits(64 * steps, seed=3)
    p = {k: place(k, v) for k, v in demo.init_params().items()}
    v = {k: place(k, np.zeros_like(a)) for k, a in demo.init_params().items()}
    ml.mark_step()
    out = []
    for i in range(steps):
        xb, yb = x[i * 64:(i + 1) * 64], y[i * 64:(i + 1) * 64]
        out.append(demo.train_step(p, v, place("x", xb), place("y", yb), lr=0.05).item())
    return out


def test_data_parallel_and_tensor_parallel_steps_match_one_device(mesh, grid):
    one = _mlp_losses(4)
    ml.reset_metrics()
    data = _mlp_losses(4, lambda k, a: ml.asarray(
        a, sharding=(mesh, ("data",) + (None,) * (a.ndim - 1) if k in "xy" else (None,) * a.ndim)))
    dp = ml.metrics()
    tensor = {"w1": (None, "model"), "b1": ("model",), "w2": ("model", None), "b2": (None,),
              "x": ("data", None), "y": ("data",)}
    ml.reset_metrics()
    both = _mlp_losses(4, lambda k, a: ml.asarray(a, sharding=(grid, tensor[k])))
    tp = ml.metrics()
    np.testing.assert_allclose(data, one, rtol=2e-5)
    np.testing.assert_allclose(both, one, rtol=2e-5)
    assert dp.compiles == 1 and tp.compiles == 1  # one step program, then cache hits
    assert dp.cache_hits == tp.cache_hits == 3


def test_the_partitioned_program_has_the_collectives(mesh):
    x = ml.asarray(np.ones((16, 4), np.float32), sharding=(mesh, ("data", None)))
    w = ml.asarray(np.ones((4, 2), np.float32), sharding=(mesh, (None, None)))
    hlo = ml.graph(ml.sum(x @ w, axis=0)).hlo()
    assert "all-reduce" in hlo and "num_partitions=8" in hlo


def test_programs_over_cpu_devices_run_one_at_a_time(mesh, monkeypatch):
    # XLA:CPU's pool has as many threads as devices and starts devices' parts in no fixed order:
    # with two such programs in flight, the second could hold every thread while the first's
    # collective waited, until XLA aborted the process. The next one starts only when the last
    # one has finished (each program's outputs are ready when the next one is called).
    from minilazy.core import runtime

    ready, last = [], []
    real = runtime.compiled

    def watched(executable, donated):
        c = real(executable, donated)
        inner = c.executable

        def run(*args):
            ready.append(all(o.is_ready() for o in last))
            last[:] = inner(*args)
            return last[:]

        c.executable = run
        return c

    monkeypatch.setattr(runtime, "compiled", watched)
    w = ml.asarray(np.eye(256, dtype=np.float32), sharding=(mesh, ("data", None)))
    for _ in range(6):
        for _ in range(8):
            w = ml.tanh(w @ w.T + 0.5)
        ml.mark_step()
    assert len(ready) == 6 and all(ready)
    np.testing.assert_allclose(w.numpy().sum(), _steps_in_numpy(6), rtol=1e-3)


def _steps_in_numpy(steps):
    w = np.eye(256, dtype=np.float32)
    for _ in range(steps * 8):
        w = np.tanh(w @ w.T + 0.5)
    return w.sum()


def test_a_sharding_change_compiles_and_says_why(mesh, grid):
    a = np.ones((8, 4), np.float32)
    ml.sync(ml.asarray(a, sharding=(mesh, ("data", None))) * 2.0)
    ml.sync(ml.asarray(a, sharding=(grid, (None, "model"))) * 2.0)
    record = ml.compile_history()[-1]
    assert record.kind == "sharding"
    assert "(None, 'model')" in record.detail and "('data', None)" in record.detail
    ml.sync(ml.asarray(a) * 2.0)
    assert ml.compile_history()[-1].kind == "sharding"
    assert "one device" in ml.compile_history()[-1].detail


def test_one_program_on_two_meshes_fails_alone(mesh):
    other = ml.Mesh(DEVICES[:4], ("data",))
    a = ml.asarray(np.ones(8), sharding=(mesh, ("data",)))
    b = ml.asarray(np.ones(8), sharding=(other, ("data",)))
    fine = ml.asarray(np.arange(8.0)) * 3.0
    bad = a + b
    with pytest.raises(ValueError, match="several meshes"):
        ml.mark_step()
    np.testing.assert_array_equal(fine.numpy(), np.arange(8.0) * 3)
    with pytest.raises(ValueError, match="several meshes"):
        bad.numpy()


def test_the_printed_program_replays_with_the_same_key(mesh):
    from minilazy.core.cut import cut
    from minilazy.introspect.pycode import source

    x = ml.asarray(np.ones((8, 2)), sharding=(mesh, ("data", None)))
    y = ml.mark_sharding(ml.exp(x) + 1.0, mesh, (None, None))
    c = cut([y._node], y.device)
    scope: dict[str, object] = {}
    exec(source(c, ml.default_device()), scope)  # noqa: S102 - our own generated code
    again = scope["outputs"][0]
    assert cut([again._node], again.device).key == c.key


def test_an_optimizer_step_keeps_a_split_weight_split(grid):
    """``ml.optim`` packs a group of weights into one vector; a weight split over a mesh is a
    group of its own, updated as it is, so its parts stay where they were (and the values are
    NumPy's: one SGD step)."""
    w, b = np.arange(32.0).reshape(8, 4), np.ones(4)
    params = {"w": ml.asarray(w, sharding=(grid, ("data", "model"))), "b": ml.asarray(b),
              "c": ml.asarray(b * 2)}
    grads = {"w": ml.asarray(w * 0.5), "b": ml.asarray(b), "c": ml.asarray(b)}
    new, _ = ml.optim.sgd(0.1).update(grads, {}, params)
    assert _parts(new["w"]) == [(4, 1)] * 8 and new["w"].sharding is not None
    np.testing.assert_allclose(new["w"].numpy(), w - 0.1 * w * 0.5)
    np.testing.assert_allclose(new["c"].numpy(), b * 2 - 0.1 * b)
