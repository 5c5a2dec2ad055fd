"""ml.nn's layers and ml.optim's optimizers (issue 13, item 2): values against NumPy, gradients
against jax.grad of the same function in jax.numpy (float64), the optimizers against NumPy over
three steps, and laziness: nothing runs before a barrier, and training steps compile once.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml

FLOATS = st.floats(-3, 3, allow_nan=False, width=64)


def _array(data: st.DataObject, *shape: int, elements: st.SearchStrategy[float] = FLOATS
           ) -> np.ndarray:
    return data.draw(hnp.arrays(np.float64, shape, elements=elements))


def _lazy() -> None:
    """Recording ran nothing since the last reset: no compile, no execution before a barrier."""
    m = ml.metrics()
    assert (m.compiles, m.executions) == (0, 0)


def _check(ml_fn, jax_fn, want: np.ndarray, *args: np.ndarray, rtol: float = 1e-12,
           grad_rtol: float = 1e-10) -> None:
    """``ml_fn`` of ``args`` equals ``want`` (lazily), and d/dargs sum(w * f) equals jax.grad's."""
    ml.reset_metrics()  # per example: the fixture resets once per test
    got = ml_fn(*map(ml.asarray, args))
    _lazy()
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol)
    w = np.linspace(-1.0, 2.0, want.size).reshape(want.shape)
    argnums = tuple(range(len(args)))
    grads = ml.grad(lambda *a: ml.sum(ml.asarray(w) * ml_fn(*a)), argnums)(*map(ml.asarray, args))
    with jax.enable_x64(True):
        expected = jax.grad(lambda *a: jnp.sum(jnp.asarray(w) * jax_fn(*a)), argnums)(
            *map(jnp.asarray, args))
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=grad_rtol, atol=grad_rtol)


# -- layers -----------------------------------------------------------------------------------
# Shapes come from short lists: a value never seen is a new example, a shape never seen a new
# compile (and jax's op-by-op compiles), which would make these tests slow.
@given(data=st.data(), shape=st.sampled_from([(1, 1, 3), (4, 3, 2)]), bias=st.booleans())
def test_linear_matches_numpy(data, shape, bias):
    n, i, o = shape
    x, w, b = _array(data, n, i), _array(data, i, o), _array(data, o)
    if bias:
        _check(ml.nn.linear, lambda x, w, b: x @ w + b, x @ w + b, x, w, b)
    else:
        _check(ml.nn.linear, lambda x, w: x @ w, x @ w, x, w)


@given(data=st.data(), shape=st.sampled_from([(), (2, 3, 4)]))
def test_relu_matches_numpy(data, shape):
    x = _array(data, *shape, elements=st.integers(-3, 3).map(float))  # 0 included: gradient 0
    _check(ml.nn.relu, jax.nn.relu, np.maximum(x, 0), x)


@given(data=st.data(), shape=st.sampled_from([(), (3, 5)]))
def test_gelu_matches_the_exact_erf_form(data, shape):
    x = _array(data, *shape, elements=st.floats(-12, 12, width=64))
    erf = np.vectorize(math.erf, otypes=[np.float64])
    want = x * 0.5 * (1 + erf(x / math.sqrt(2)))
    # the erfc approximation's relative error is under 1.2e-7 (float32's rounding), its slope's
    # under 1e-6: exact to float32, not to float64
    _check(ml.nn.gelu, lambda x: jax.nn.gelu(x, approximate=False), want, x, rtol=2e-7,
           grad_rtol=2e-6)


@given(data=st.data(), shape=st.sampled_from([(), (3, 5)]))
def test_gelu_tanh_matches_numpy(data, shape):
    x = _array(data, *shape)
    want = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    _check(lambda t: ml.nn.gelu(t, approximate="tanh"),
           lambda t: jax.nn.gelu(t, approximate=True), want, x)


def test_gelu_in_float32_is_torchs_exact_gelu():
    x = np.linspace(-10, 10, 2001).astype(np.float32)
    with jax.enable_x64(True):
        want = np.asarray(jax.nn.gelu(jnp.asarray(x, jnp.float64), approximate=False))
    got = ml.nn.gelu(ml.asarray(x)).numpy()
    assert got.dtype == np.float32
    # within float32's rounding near 1 (1+erf in float32, torch's form, loses the whole tail)
    np.testing.assert_allclose(got, want, rtol=5e-7, atol=2e-7)
    with pytest.raises(ValueError, match="approximate must be"):
        ml.nn.gelu(ml.asarray(x), approximate="erf")


@given(data=st.data(), shape=st.sampled_from([(1,), (2, 3, 4)]))
def test_softmax_and_log_softmax_match_numpy(data, shape):
    x = _array(data, *shape, elements=st.floats(-50, 50, width=64))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    shifted = x - x.max(axis=axis, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    _check(lambda t: ml.nn.softmax(t, axis), lambda t: jax.nn.softmax(t, axis=axis),
           np.exp(shifted - log_norm), x)
    _check(lambda t: ml.nn.log_softmax(t, axis), lambda t: jax.nn.log_softmax(t, axis=axis),
           shifted - log_norm, x)


def test_softmax_is_stable_and_refuses_integers():
    assert ml.nn.log_softmax(ml.asarray([1e4, 0.0])).tolist() == [0.0, -1e4]
    with pytest.raises(TypeError, match="softmax: expects a floating tensor"):
        ml.nn.softmax(ml.asarray([1, 2]))


@given(data=st.data(), shape=st.sampled_from([((1,), 1), ((2, 3), 4)]))
def test_cross_entropy_matches_numpy(data, shape):
    lead, c = shape
    z = _array(data, *lead, c, elements=st.floats(-20, 20, width=64))
    y = data.draw(hnp.arrays(np.int32, lead, elements=st.integers(0, c - 1)))
    log_p = z - z.max(-1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(-1, keepdims=True))
    want = -np.take_along_axis(log_p, y[..., None], -1).mean()

    def jax_fn(z):
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(z), jnp.asarray(y)[..., None], -1))

    _check(lambda t: ml.nn.cross_entropy(t, ml.asarray(y)), jax_fn, np.asarray(want), z)
    assert ml.metrics().fallbacks == 0


def test_cross_entropy_refuses_bad_labels():
    with pytest.raises(TypeError, match="integer labels"):
        ml.nn.cross_entropy(ml.zeros((2, 3)), ml.zeros((2,)))
    with pytest.raises(ml.ShapeError, match=r"of shape \(2,\)"):
        ml.nn.cross_entropy(ml.zeros((2, 3)), ml.zeros((3,), dtype=ml.int32))


@given(data=st.data(), shape=st.sampled_from([((), 2), ((2, 3), 5)]), affine=st.booleans())
def test_layer_norm_matches_numpy(data, shape, affine):
    lead, d = shape
    x = _array(data, *lead, d)
    x[..., 0] += 1.0  # a variance well above eps, so the float64 comparison is well conditioned
    w, b = _array(data, d), _array(data, d)
    norm = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)

    def jax_norm(x):
        return (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)

    if affine:
        _check(ml.nn.layer_norm, lambda x, w, b: jax_norm(x) * w + b, norm * w + b, x, w, b,
               rtol=1e-10, grad_rtol=1e-8)
    else:
        _check(ml.nn.layer_norm, jax_norm, norm, x, rtol=1e-10, grad_rtol=1e-8)


@given(data=st.data(), shape=st.sampled_from([((), 1, 1), ((3, 4), 5, 3)]))
def test_embedding_matches_numpy_and_adds_gradients_of_repeated_ids(data, shape):
    ids_shape, v, d = shape
    table = _array(data, v, d)
    ids = data.draw(hnp.arrays(np.int64, ids_shape, elements=st.integers(0, v - 1)))
    _check(lambda t: ml.nn.embedding(ml.asarray(ids), t), lambda t: t[jnp.asarray(ids)],
           table[ids], table)
    with pytest.raises(TypeError, match="embedding: expects integer ids"):
        ml.nn.embedding(ml.asarray(table), ml.asarray(table))


@given(data=st.data(), p=st.sampled_from([0.1, 0.5, 0.9]), seed=st.integers(0, 2**32 - 1))
def test_dropout_matches_numpy_with_the_same_mask(data, p, seed):
    x = _array(data, 3, 4)
    key = ml.random.key(seed)
    keep = ml.random.bernoulli(key, 1 - p, x.shape).numpy()
    want = np.where(keep, x / (1 - p), 0.0)
    _check(lambda t: ml.nn.dropout(t, p, key), lambda t: jnp.where(keep, t / (1 - p), 0.0), want,
           x)


def test_dropout_is_inverted_and_a_new_key_or_p_never_recompiles():
    x = ml.ones((4000,), dtype=ml.float32)
    assert ml.nn.dropout(x, 0.0, ml.random.key(0)) is x
    assert ml.nn.dropout(x, 1.0, ml.random.key(0)).tolist() == [0.0] * 4000
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        ml.nn.dropout(x, 1.5, ml.random.key(0))
    ml.mark_step()
    ml.reset_metrics()
    kept = []
    for step, p in enumerate([0.25, 0.25, 0.5]):
        y = ml.nn.dropout(x, p, ml.random.key(step))
        if step == 0:
            _lazy()
        kept.append((y.numpy(), p))
    assert ml.metrics().compiles == 1  # keys are data, p a parameter
    for y, p in kept:
        assert set(np.unique(y)) == {0.0, np.float32(1 / (1 - p))}
        assert abs(y.mean() - 1.0) < 0.1 and abs((y == 0).mean() - p) < 0.05
    assert not np.array_equal(kept[0][0], kept[1][0])


def _attention_numpy(x, wq, wk, wv, wo, h):
    b, t, d = x.shape

    def heads(y):
        return y.reshape(b, t, h, d // h).transpose(0, 2, 1, 3)

    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d // h)
    s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    y = (p / p.sum(-1, keepdims=True)) @ v
    return y.transpose(0, 2, 1, 3).reshape(b, t, d) @ wo


def _attention_jax(x, wq, wk, wv, wo, h):
    b, t, d = x.shape

    def heads(y):
        return y.reshape(b, t, h, d // h).transpose(0, 2, 1, 3)

    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d // h)
    s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -jnp.inf)
    return (jax.nn.softmax(s) @ v).transpose(0, 2, 1, 3).reshape(b, t, d) @ wo


@given(data=st.data(), shape=st.sampled_from([(1, 1, 1, 1), (2, 4, 2, 3)]))
def test_causal_self_attention_matches_numpy(data, shape):
    b, t, h, dh = shape
    d = h * dh
    x = _array(data, b, t, d)
    ws = [_array(data, d, d, elements=st.floats(-1, 1, width=64)) for _ in range(4)]
    _check(lambda *a: ml.nn.causal_self_attention(*a, n_heads=h),
           lambda *a: _attention_jax(*a, h), _attention_numpy(x, *ws, h), x, *ws,
           rtol=1e-10, grad_rtol=1e-9)


def test_causal_self_attention_never_looks_ahead_and_records_a_small_graph():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    ws = [ml.asarray(rng.standard_normal((8, 8)).astype(np.float32)) for _ in range(4)]
    changed = x.copy()
    changed[:, 3:] += 1.0  # only the future of positions 0..2
    ml.mark_step()
    ml.reset_metrics()
    y = ml.nn.causal_self_attention(ml.asarray(x), *ws, n_heads=2)
    recorded = ml.metrics().ops_recorded
    assert recorded <= 40, recorded  # 4 matmuls, heads, scale, mask, softmax, merge
    z = ml.nn.causal_self_attention(ml.asarray(changed), *ws, n_heads=2)
    np.testing.assert_allclose(y.numpy()[:, :3], z.numpy()[:, :3], rtol=1e-6)
    assert not np.allclose(y.numpy()[:, 3:], z.numpy()[:, 3:])
    with pytest.raises(ml.ShapeError, match="divisible by n_heads=3"):
        ml.nn.causal_self_attention(ml.asarray(x), *ws, n_heads=3)


# -- optimizers -------------------------------------------------------------------------------
def _numpy_sgd(p, grads, lr, momentum):
    v = np.zeros_like(p)
    for g in grads:
        v = momentum * v + g
        p = p - lr * v
    return p


def _numpy_adam(p, grads, lr, b1, b2, eps, wd):
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        p = p - lr * wd * p - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return p


OPTIMIZERS = {
    "sgd": (lambda: ml.optim.sgd(0.1), lambda p, gs: _numpy_sgd(p, gs, 0.1, 0.0)),
    "sgd-momentum": (lambda: ml.optim.sgd(0.1, momentum=0.9),
                     lambda p, gs: _numpy_sgd(p, gs, 0.1, 0.9)),
    "adam": (lambda: ml.optim.adam(0.01),
             lambda p, gs: _numpy_adam(p, gs, 0.01, 0.9, 0.999, 1e-8, 0.0)),
    "adamw": (lambda: ml.optim.adam(0.01, b1=0.8, b2=0.99, eps=1e-6, weight_decay=0.1),
              lambda p, gs: _numpy_adam(p, gs, 0.01, 0.8, 0.99, 1e-6, 0.1)),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
@given(data=st.data())
def test_optimizer_matches_numpy_over_three_steps(name, data):
    make, numpy_steps = OPTIMIZERS[name]
    start = {"w": _array(data, 2, 3), "b": _array(data, 3)}
    grads = [{k: _array(data, *v.shape) for k, v in start.items()} for _ in range(3)]
    opt = make()
    params = {"layer": {k: ml.asarray(v) for k, v in start.items()}}  # a nested tree
    state = opt.init(params)
    for g in grads:
        params, state = opt.update({"layer": {k: ml.asarray(v) for k, v in g.items()}}, state,
                                   params)
    for k, v in start.items():
        want = numpy_steps(v, [g[k] for g in grads])
        np.testing.assert_allclose(params["layer"][k].numpy(), want, rtol=1e-12, atol=1e-12)


def test_optimizers_refuse_trees_of_another_structure():
    opt = ml.optim.adam(0.1)
    params = {"w": ml.ones(2)}
    with pytest.raises(TypeError, match="differ in structure"):
        opt.update({"v": ml.ones(2)}, opt.init(params), params)


def _loss(p, x, y):
    h = ml.nn.gelu(ml.nn.layer_norm(ml.nn.linear(x, p["w1"], p["b1"])))
    return ml.nn.cross_entropy(ml.nn.linear(h, p["w2"]), y)


@pytest.mark.parametrize("opt", [ml.optim.sgd(0.05, momentum=0.9),
                                 ml.optim.adam(0.01, weight_decay=0.01)], ids=["sgd", "adamw"])
def test_a_training_step_is_lazy_and_compiles_once(opt):
    rng = np.random.default_rng(0)
    params = {"w1": ml.asarray(rng.standard_normal((6, 8)).astype(np.float32) * 0.3),
              "b1": ml.zeros(8, dtype=ml.float32),
              "w2": ml.asarray(rng.standard_normal((8, 3)).astype(np.float32) * 0.3)}
    state = opt.init(params)
    ml.mark_step()  # so the first step's graph looks like every later one (leaves, not ops)
    x = rng.standard_normal((16, 6)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0)
    ml.reset_metrics()
    losses = []
    for step in range(5):
        loss, grads = ml.value_and_grad(_loss)(params, ml.asarray(x), ml.asarray(y))
        params, state = opt.update(grads, state, params)
        if step == 0:
            _lazy()
        ml.mark_step()
        losses.append(loss.item())
    m = ml.metrics()
    assert m.compiles == 1, m.compile_causes  # 5 steps, 1 compile: lr and the count are data
    assert m.fallbacks == 0 and losses[-1] < losses[0], losses


@pytest.mark.parametrize("ids", [[3], [[0, -4]], np.array([7, 0])])
def test_embedding_checks_host_ids_at_the_call(ids):
    table = ml.reshape(ml.arange(6.0), (3, 2))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
        ml.nn.embedding(ids, table)
    good = np.array([[2, 0], [-1, 1]])
    np.testing.assert_array_equal(ml.nn.embedding(good, table).numpy(),
                                  np.arange(6.0).reshape(3, 2)[good])
