"""Reverse mode: every VJP rule against central finite differences (float64) and jax.grad; the
gradient is lazy; a training loop compiles once and keeps memory flat."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.autodiff import BINARY_VJP, NOT_DIFFERENTIABLE, SHAPE_VJP, UNARY_VJP, VJP
from minilazy.ir import Op

# Inputs where each function is smooth, away from kinks and domain edges (float64).
SMOOTH = {
    "sqrt": (0.2, 4.0), "log": (0.2, 4.0), "log1p": (-0.5, 3.0), "log2": (0.2, 4.0),
    "log10": (0.2, 4.0), "asin": (-0.8, 0.8), "acos": (-0.8, 0.8), "atanh": (-0.8, 0.8),
    "acosh": (1.2, 4.0), "tan": (-1.2, 1.2), "divide": (0.5, 3.0), "pow": (0.5, 2.0),
    "remainder": (0.6, 2.9), "floor_divide": (0.6, 2.9), "floor": (0.1, 0.9), "ceil": (0.1, 0.9),
    "round": (0.1, 0.4), "trunc": (0.1, 0.9), "sign": (0.1, 3.0), "abs": (0.1, 3.0),
    "atan2": (0.2, 2.0),
}
UNARY = ["negative", "abs", "sign", "sqrt", "square", "exp", "expm1", "log", "log1p", "log2",
         "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
         "acosh", "atanh", "floor", "ceil", "round", "trunc"]
BINARY = ["add", "subtract", "multiply", "divide", "pow", "maximum", "minimum", "atan2",
          "remainder", "floor_divide"]
NUMPY = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
         "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2", "pow": "power"}
SHAPE = (2, 3)


def numeric_grad(f, args, i, h=1e-6):
    """Central differences of scalar NumPy function f with respect to args[i]."""
    x = args[i]
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[i][idx] += h
        down[i][idx] -= h
        g[idx] = (f(*up) - f(*down)) / (2 * h)
    return g


def _inputs(data, name, arity):
    lo, hi = SMOOTH.get(name, (-2.0, 2.0))
    values = hnp.arrays(np.float64, SHAPE, elements=st.floats(lo, hi))
    xs = [data.draw(values) for _ in range(arity)]
    if name in ("maximum", "minimum"):  # keep away from ties, where the derivative jumps
        xs[1] = np.where(np.abs(xs[0] - xs[1]) < 1e-3, xs[1] + 0.5, xs[1])
    if name in ("remainder", "floor_divide"):  # keep x1 / x2 half way between integers
        xs[0] = xs[1] * (np.floor(xs[0] / xs[1]) + 0.5)
    weights = data.draw(hnp.arrays(np.float64, SHAPE, elements=st.floats(-1, 1)))
    return xs, weights


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.parametrize("name", UNARY + BINARY)
@settings(max_examples=6)
@given(data=st.data())
def test_vjp_rule_matches_finite_differences_and_jax(name, data):
    arity = 1 if name in UNARY else 2
    xs, w = _inputs(data, name, arity)
    np_fn = getattr(np, NUMPY.get(name, name))
    jnp_fn = getattr(jnp, NUMPY.get(name, name))

    def f_ml(*args):
        return ml.sum(getattr(ml, name)(*args) * w)

    grads = ml.grad(f_ml, argnums=tuple(range(arity)))(*map(ml.asarray, xs))
    with jax.enable_x64(True):
        expected_jax = jax.grad(lambda *a: jnp.sum(jnp_fn(*a) * w), argnums=tuple(range(arity)))(
            *xs)
    for i, g in enumerate(grads):
        expected = numeric_grad(lambda *a: float(np.sum(np_fn(*a) * w)), xs, i)
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g.numpy(), np.asarray(expected_jax[i]), rtol=1e-10, atol=1e-12)


def _check(f_ml, f_jnp, *arrays, argnums=0):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    got = ml.grad(f_ml, argnums=nums)(*map(ml.asarray, arrays))
    with jax.enable_x64(True):
        want = jax.grad(f_jnp, argnums=nums)(*map(jnp.asarray, arrays))
        for i, g, e in zip(nums, got, want):
            assert g.shape == arrays[i].shape and g.dtype == arrays[i].dtype
            np.testing.assert_allclose(g.numpy(), np.asarray(e), rtol=1e-9, atol=1e-12)
            fd = numeric_grad(lambda *a: float(f_jnp(*map(jnp.asarray, a))), list(arrays), i)
            np.testing.assert_allclose(g.numpy(), fd, rtol=1e-5, atol=1e-6)


RNG = np.random.default_rng(0)
A, B, V = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5)), RNG.standard_normal(4)


@pytest.mark.spec("LZ-AD-002")
def test_broadcasting_and_keepdims_reductions():
    _check(lambda a, v: ml.sum(ml.exp(a - ml.max(a, axis=1, keepdims=True)) * v),
           lambda a, v: jnp.sum(jnp.exp(a - jnp.max(a, axis=1, keepdims=True)) * v),
           A, V, argnums=(0, 1))
    _check(lambda a: ml.mean(ml.var(a, axis=0) + ml.std(a, axis=1, keepdims=True)),
           lambda a: jnp.mean(jnp.var(a, axis=0) + jnp.std(a, axis=1, keepdims=True)), A)
    _check(lambda a: ml.sum(ml.prod(a, axis=1) * ml.min(a, axis=0)[:3]),
           lambda a: jnp.sum(jnp.prod(a, axis=1) * jnp.min(a, axis=0)[:3]), A)


@pytest.mark.spec("LZ-AD-002")
def test_prod_gradient_is_exact_at_zeros():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]])
    g = ml.grad(lambda a: ml.sum(ml.prod(a, axis=1)))(ml.asarray(x))
    np.testing.assert_array_equal(g.numpy(), [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [6.0, 3.0, 2.0]])


@pytest.mark.spec("LZ-AD-002")
def test_indexing_where_and_setitem():
    def f(a):
        y = a * 1.0
        y[1:, ::-2] = a[0, :2] * 3.0
        return ml.sum(ml.where(y > 0, y, 0.1 * y) * y) + ml.sum(a[[0, 2, 2], 1:] ** 2)

    def fj(a):
        y = a.at[1:, ::-2].set(a[0, :2] * 3.0)
        return jnp.sum(jnp.where(y > 0, y, 0.1 * y) * y) + jnp.sum(a[jnp.array([0, 2, 2]), 1:] ** 2)

    _check(f, fj, A)


@pytest.mark.spec("LZ-AD-002")
def test_matmul_tensordot_and_shapes():
    _check(lambda a, b, v: ml.sum(ml.sin((a @ b).T) * 2.0) + ml.sum(a @ v) + ml.sum(v @ b),
           lambda a, b, v: jnp.sum(jnp.sin((a @ b).T) * 2.0) + jnp.sum(a @ v) + jnp.sum(v @ b),
           A, B, V, argnums=(0, 1, 2))
    batch = RNG.standard_normal((2, 1, 3, 4))
    _check(lambda x, b: ml.sum((x @ b) ** 2), lambda x, b: jnp.sum((x @ b) ** 2), batch, B,
           argnums=(0, 1))
    t1, t2 = RNG.standard_normal((3, 2, 4)), RNG.standard_normal((2, 5, 3))
    _check(lambda a, b: ml.sum(ml.tensordot(a, b, axes=([1, 0], [0, 2])) ** 2),
           lambda a, b: jnp.sum(jnp.tensordot(a, b, axes=([1, 0], [0, 2])) ** 2), t1, t2,
           argnums=(0, 1))
    _check(lambda a: ml.sum(ml.concat([ml.flip(a, axis=0), ml.reshape(a, (4, 3))[:2].T],
                                      axis=1)[:, 1:5] * ml.stack([a, a * 2], axis=-1)[..., 1]),
           lambda a: jnp.sum(jnp.concatenate([jnp.flip(a, 0), jnp.reshape(a, (4, 3))[:2].T],
                                             1)[:, 1:5] * jnp.stack([a, a * 2], -1)[..., 1]), A)


@pytest.mark.spec("LZ-AD-003")
def test_define_by_run_control_flow_and_pytrees():
    def f(params, x, depth):
        h = x
        for i in range(depth):  # a Python loop, a branch on a Python value, recursion
            h = ml.tanh(h @ params["w"][i]) if i % 2 == 0 else h * params["scale"]
        return ml.sum(h) if depth == 0 else ml.sum(h) + f(params, x, depth - 1)

    def fj(params, x, depth):
        h = x
        for i in range(depth):
            h = jnp.tanh(h @ params["w"][i]) if i % 2 == 0 else h * params["scale"]
        return jnp.sum(h) if depth == 0 else jnp.sum(h) + fj(params, x, depth - 1)

    ws = [RNG.standard_normal((4, 4)) for _ in range(3)]
    x = RNG.standard_normal((2, 4))
    got = ml.grad(f)({"w": [ml.asarray(w) for w in ws], "scale": ml.asarray(0.7)},
                     ml.asarray(x), 3)
    with jax.enable_x64(True):
        want = jax.grad(fj)({"w": ws, "scale": 0.7}, x, 3)
    assert set(got) == {"w", "scale"} and isinstance(got["w"], list)
    for g, e in zip(got["w"], want["w"]):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-10)
    np.testing.assert_allclose(got["scale"].numpy(), want["scale"], rtol=1e-10)


@pytest.mark.spec("LZ-AD-004")
def test_gradients_are_lazy_until_a_barrier():
    value, g = ml.value_and_grad(lambda a: ml.sum(ml.exp(a) * 2.0))(ml.asarray(A))
    assert g.is_pending and value.is_pending
    assert ml.metrics().executions == 0
    ml.mark_step()
    assert ml.metrics().executions == 1  # forward and backward: one graph, one execution
    np.testing.assert_allclose(g.numpy(), 2 * np.exp(A), rtol=1e-12)


@pytest.mark.spec("LZ-AD-005")
def test_second_order_gradients():
    d2 = ml.grad(lambda x: ml.sum(ml.grad(lambda y: ml.sum(ml.sin(y) * y))(x)))(ml.asarray(V))
    np.testing.assert_allclose(d2.numpy(), 2 * np.cos(V) - V * np.sin(V), rtol=1e-12)


@pytest.mark.spec("LZ-AD-006")
def test_bad_uses_are_clear_errors():
    x = ml.asarray(A)
    with pytest.raises(TypeError, match=r"must return a 0-d floating tensor, got float64\[3, 4\]"):
        ml.grad(lambda a: a * 2.0)(x)
    with pytest.raises(TypeError, match="argument 0 has dtype int64"):
        ml.grad(lambda a: ml.sum(a * 1.0))(ml.asarray([1, 2]))
    with pytest.raises(TypeError, match="argument 0 is a float"):
        ml.grad(lambda a: a)(1.0)
    with pytest.raises(TypeError, match="argmax is not differentiable"):
        VJP[Op.ARGMAX](x, x, (x,), ml.argmax(x)._node)
    assert ml.metrics().executions == 0


def test_every_op_has_a_vjp_rule():
    # The table is built from its parts: an op missing from all of them is missing from VJP.
    assert set(VJP) == set(Op)
    parts = [NOT_DIFFERENTIABLE, UNARY_VJP, BINARY_VJP, SHAPE_VJP]
    assert sum(len(p) for p in parts) + 11 == len(Op)  # + the 11 rules listed in VJP itself
    for p in parts[1:]:
        assert not set(p) & NOT_DIFFERENTIABLE, "an op both differentiable and not"


def test_same_argument_twice_gets_separate_gradients():
    x = ml.asarray(V)
    gx, gy = ml.grad(lambda a, b: ml.sum(a * b * b), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(gx.numpy(), V * V, rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), 2 * V * V, rtol=1e-12)
