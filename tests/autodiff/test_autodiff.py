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
from minilazy.autodiff import tape as autodiff
from minilazy.autodiff.vjps import BINARY_VJP, NOT_DIFFERENTIABLE, SHAPE_VJP, UNARY_VJP, VJP
from minilazy.core.ir import Node, Op

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
    assert sum(len(p) for p in parts) + 17 == len(Op)  # + the 17 rules listed in VJP itself
    for p in parts[1:]:
        assert not set(p) & NOT_DIFFERENTIABLE, "an op both differentiable and not"


def test_same_argument_twice_gets_separate_gradients():
    x = ml.asarray(V)
    gx, gy = ml.grad(lambda a, b: ml.sum(a * b * b), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(gx.numpy(), V * V, rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), 2 * V * V, rtol=1e-12)


@pytest.mark.parametrize("argnums", [(0, 0), (1, 0, 1), (0, -2)])
def test_an_argument_named_twice_in_argnums_is_refused(argnums):
    """A second watch of one argument stopped the first's gradient: it came out zero."""
    x = ml.asarray(V)
    with pytest.raises(ValueError, match="twice"):
        ml.grad(lambda a, b: ml.sum(a * b), argnums=argnums)(x, x)


# -- tapes: a backward pass recorded once per forward structure, then replayed ---------------------
def _mlp(p, x):
    h = ml.tanh(x @ p["w"] + p["b"])
    return ml.mean(ml.nn.log_softmax(h, axis=-1)[:, 0]) + ml.sum(ml.where(h > 0, h, 0.0) ** 2)


def _mlp_jax(p, x):
    h = jnp.tanh(x @ p["w"] + p["b"])
    return jnp.mean(jax.nn.log_softmax(h, axis=-1)[:, 0]) + jnp.sum(jnp.where(h > 0, h, 0.0) ** 2)


def _grads(p, x):
    value, g = ml.value_and_grad(_mlp)({k: ml.asarray(v) for k, v in p.items()}, ml.asarray(x))
    return value, g, ml.graph(value, *g.values()).key


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_a_taped_backward_pass_is_the_rules_graph_replayed(n, k, m, seed):
    """The second gradient of a structure replays the first one's tape: no VJP rule runs, the
    graph (its key) is the one the rules record, and the values are jax.grad's. The third
    clones the taped nodes with the digests noted at the second: each is the node's own."""
    rng = np.random.default_rng(seed)
    ml.clear_cache()  # forgets the tapes too: the first call runs the rules
    ml.reset_metrics()
    runs = []
    for _ in range(3):  # new data, same structure
        p = {"w": rng.standard_normal((k, m)), "b": rng.standard_normal(m)}
        x = rng.standard_normal((n, k))
        runs.append((p, x, *_grads(p, x)))
        assert ml.metrics().backward_replays == len(runs) - 1
    assert runs[0][4] == runs[1][4] == runs[2][4]
    seen, stack = set(), [t._node for t in runs[2][3].values()]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(node.operands)
            again = Node(node.op, node.operands, node.attrs, node.shape, node.dtype)
            assert (node.digest, node.exact) == (again.digest, again.exact), node
    for p, x, value, g, _ in runs:
        with jax.enable_x64(True):
            want_value, want = jax.value_and_grad(_mlp_jax)(p, x)
        np.testing.assert_allclose(value.item(), float(want_value), rtol=1e-10)
        for name in p:
            np.testing.assert_allclose(g[name].numpy(), np.asarray(want[name]), rtol=1e-9,
                                       atol=1e-12)


def test_a_new_structure_or_policy_records_with_the_rules():
    p = {"w": RNG.standard_normal((4, 3)), "b": RNG.standard_normal(3)}
    ml.clear_cache()
    ml.reset_metrics()
    _grads(p, RNG.standard_normal((2, 4)))
    _grads(p, RNG.standard_normal((5, 4)))  # a new batch size: a new structure
    with ml.policy(special_scalars=True):  # scalars recorded otherwise: another tape
        _grads(p, RNG.standard_normal((5, 4)))
    with ml.eager():  # op by op: the rules run (and nothing is taped)
        _, g, _ = _grads(p, RNG.standard_normal((5, 4)))
        assert not g["w"].is_pending
    assert ml.metrics().backward_replays == 0
    _grads(p, RNG.standard_normal((5, 4)))
    assert ml.metrics().backward_replays == 1


def test_colliding_keys_never_replay_another_structure(monkeypatch):
    """Every structure hashes alike here; a tape is replayed only for the structure it was
    recorded for, so each gradient is still right."""
    monkeypatch.setattr(autodiff, "hash", lambda _: 0, raising=False)
    ml.clear_cache()
    ml.reset_metrics()
    for rows in (2, 3, 2):
        p = {"w": RNG.standard_normal((4, 3)), "b": RNG.standard_normal(3)}
        x = RNG.standard_normal((rows, 4))
        _, g, _ = _grads(p, x)
        with jax.enable_x64(True):
            want = jax.grad(_mlp_jax)(p, x)
        np.testing.assert_allclose(g["w"].numpy(), np.asarray(want["w"]), rtol=1e-9)
    assert ml.metrics().backward_replays == 0 and len(autodiff.TAPES) == 1


def test_a_replay_auto_cuts_like_the_rules_would():
    p = {"w": RNG.standard_normal((4, 3)), "b": RNG.standard_normal(3)}
    x = RNG.standard_normal((2, 4))
    with jax.enable_x64(True):
        want = jax.grad(_mlp_jax)(p, x)
    ml.clear_cache()
    _grads(p, x)  # taped
    ml.reset_metrics()
    with ml.policy(max_pending_nodes=40):  # the backward pass alone is longer
        _, g, _ = _grads(p, x)
        assert ml.metrics().barrier_causes["auto"] == 1 and not g["b"].is_pending
    np.testing.assert_allclose(g["b"].numpy(), np.asarray(want["b"]), rtol=1e-9)
    assert ml.metrics().backward_replays == 1
