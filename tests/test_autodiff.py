"""Reverse mode, engine side: minilazy's VJP rules against jax.grad, its table of rules, its
messages.

The autodiff rules (LZ-AD-*: derivatives against finite differences, broadcasting, reductions,
indexing and ``__setitem__``, control flow, laziness, higher order, errors) are checked through
the adapter by the conformance suite.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml
from minilazy.ir import Op
from minilazy.vjps import BINARY_VJP, NOT_DIFFERENTIABLE, SHAPE_VJP, UNARY_VJP, VJP

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


@pytest.mark.parametrize("name", UNARY + BINARY)
@settings(max_examples=6)
@given(data=st.data())
def test_vjp_rule_matches_jax(name, data):
    """Each of minilazy's VJP rules (``autodiff.VJP``) gives JAX's own gradient to 1e-10.

    That every derivative matches finite differences (LZ-AD-001) is the suite's; this holds the
    engine's hand-written rules to the much tighter agreement with ``jax.grad`` in float64.
    """
    arity = 1 if name in UNARY else 2
    xs, w = _inputs(data, name, arity)
    jnp_fn = getattr(jnp, NUMPY.get(name, name))

    def f_ml(*args):
        return ml.sum(getattr(ml, name)(*args) * w)

    grads = ml.grad(f_ml, argnums=tuple(range(arity)))(*map(ml.asarray, xs))
    with jax.enable_x64(True):
        expected_jax = jax.grad(lambda *a: jnp.sum(jnp_fn(*a) * w), argnums=tuple(range(arity)))(
            *xs)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g.numpy(), np.asarray(expected_jax[i]), rtol=1e-10, atol=1e-12)


RNG = np.random.default_rng(0)
A, B, V = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5)), RNG.standard_normal(4)


def test_define_by_run_control_flow_and_pytrees():
    """``ml.grad`` of a recursive function of a dict holding a list, with a Python int passed
    through after the differentiated argument, equals ``jax.grad`` to 1e-10.

    The rule (LZ-AD-003) is the suite's; passing non-tensor arguments through, and agreeing
    with JAX on the structure and values, is minilazy's API.
    """
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


def test_bad_uses_are_clear_errors():
    """minilazy's messages for refused gradients (the rule, LZ-AD-006, is the suite's): the
    result's dtype and shape, the argument's dtype, a Python float argument, and an op with no
    floating derivative, raised by its own VJP rule; nothing runs."""
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
    assert sum(len(p) for p in parts) + 13 == len(Op)  # + the 13 rules listed in VJP itself
    for p in parts[1:]:
        assert not set(p) & NOT_DIFFERENTIABLE, "an op both differentiable and not"


def test_same_argument_twice_gets_separate_gradients():
    x = ml.asarray(V)
    gx, gy = ml.grad(lambda a, b: ml.sum(a * b * b), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(gx.numpy(), V * V, rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), 2 * V * V, rtol=1e-12)
