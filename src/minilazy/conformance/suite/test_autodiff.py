"""Autodiff: gradients of recorded programs, against central finite differences in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import numpy_apply
from minilazy.conformance.suite.util import counting

Array = np.ndarray[Any, Any]
# Ops with a derivative, and inputs where they are smooth (away from kinks and domain edges).
SMOOTH: dict[str, tuple[float, float]] = {
    "negative": (-2, 2), "abs": (0.1, 3), "sqrt": (0.2, 4), "square": (-2, 2), "exp": (-2, 2),
    "expm1": (-2, 2), "log": (0.2, 4), "log1p": (-0.5, 3), "log2": (0.2, 4), "log10": (0.2, 4),
    "sin": (-2, 2), "cos": (-2, 2), "tan": (-1.2, 1.2), "asin": (-0.8, 0.8),
    "acos": (-0.8, 0.8), "atan": (-2, 2), "sinh": (-2, 2), "cosh": (-2, 2), "tanh": (-2, 2),
    "asinh": (-2, 2), "acosh": (1.2, 4), "atanh": (-0.8, 0.8),
    "add": (-2, 2), "subtract": (-2, 2), "multiply": (-2, 2), "divide": (0.5, 3),
    "pow": (0.5, 2), "atan2": (0.2, 2),
}
SHAPE = (2, 3)


def numeric_grad(f: Callable[..., float], args: list[Array], i: int, h: float = 1e-6) -> Array:
    """Central differences of scalar NumPy function ``f`` with respect to ``args[i]``.

    Example:
        >>> numeric_grad(lambda x: float(np.sum(x * x)), [np.array([1.0, 2.0])], 0).round(6)
        array([2., 4.])
    """
    g = np.zeros_like(args[i])
    for idx in np.ndindex(args[i].shape):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[i][idx] += h
        down[i][idx] -= h
        g[idx] = (f(*up) - f(*down)) / (2 * h)
    return g


def _check(adapter: OptionalAdapter, f_lazy: Callable[..., Any], f_numpy: Callable[..., float],
           args: list[Array]) -> None:
    nums = tuple(range(len(args)))
    grads = adapter.grad(f_lazy, nums)(*(adapter.from_numpy(a) for a in args))
    for i, g in enumerate(grads):
        got = adapter.to_numpy(g)
        want = numeric_grad(f_numpy, args, i)
        assert got.shape == args[i].shape and got.dtype == args[i].dtype, (got.dtype, got.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"argument {i}")


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.parametrize("op", sorted(SMOOTH))
@given(data=st.data())
def test_each_derivative_matches_finite_differences(adapter: OptionalAdapter, op: str,
                                                    data: st.DataObject) -> None:
    arity = 2 if op in ("add", "subtract", "multiply", "divide", "pow", "atan2") else 1
    lo, hi = SMOOTH[op]
    args = [data.draw(hnp.arrays(np.float64, SHAPE, elements=st.floats(lo, hi)))
            for _ in range(arity)]
    w = data.draw(hnp.arrays(np.float64, SHAPE, elements=st.floats(-1, 1)))  # not all ones

    def f_lazy(*xs: Any) -> Any:
        return adapter.apply("sum", adapter.apply("multiply", adapter.apply(op, *xs),
                                                  adapter.from_numpy(w)))

    _check(adapter, f_lazy, lambda *xs: float(np.sum(numpy_apply(op, *xs) * w)), args)


@pytest.mark.spec("LZ-AD-001")
@pytest.mark.ops("matmul", "sum", "multiply")
@pytest.mark.parametrize("shapes", [((3, 3), (3, 3)), ((2, 3), (3, 3)), ((3, 3), (3, 2)),
                                    ((3,), (3, 3)), ((2, 3, 3), (3, 3))],
                         ids=["square", "wide-a", "tall-b", "vector", "batch"])
def test_matmul_derivatives_match_finite_differences(adapter: OptionalAdapter,
                                                     shapes: tuple[Any, Any]) -> None:
    # Square operands: a gradient that forgets a transpose still has the right shape.
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(s) for s in shapes)
    w = rng.standard_normal(np.matmul(a, b).shape)

    def f_lazy(a: Any, b: Any) -> Any:
        return adapter.apply("sum", adapter.apply("multiply", adapter.apply("matmul", a, b),
                                                  adapter.from_numpy(w)))

    _check(adapter, f_lazy, lambda a, b: float(np.sum(np.matmul(a, b) * w)), [a, b])


@pytest.mark.spec("LZ-AD-002")
def test_gradients_through_broadcasting_reductions_indexing_and_where(
        adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(0)
    a, b, v = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(4)
    ap = adapter.apply

    def f_lazy(a: Any, b: Any, v: Any) -> Any:
        top = ap("max", a, axis=1, keepdims=True)
        soft = ap("sum", ap("multiply", ap("exp", ap("subtract", a, top)), v))
        mixed = ap("sum", ap("tanh", ap("matmul", a, b)))
        picked = ap("sum", ap("square", ap("getitem", ap("flip", a, axis=1),
                                           (slice(1, None), slice(None, None, 2)))))
        gated = ap("sum", ap("where", ap("greater", a, 0.0), a, ap("multiply", a, 0.1)))
        return ap("add", ap("add", soft, mixed), ap("add", picked, gated))

    def f_numpy(a: Array, b: Array, v: Array) -> float:
        soft = np.sum(np.exp(a - np.max(a, axis=1, keepdims=True)) * v)
        gated = np.sum(np.where(a > 0, a, 0.1 * a))
        picked = np.sum(np.flip(a, axis=1)[1:, ::2] ** 2)
        return float(soft + np.sum(np.tanh(a @ b)) + picked + gated)

    _check(adapter, f_lazy, f_numpy, [a, b, v])


@pytest.mark.spec("LZ-AD-003")
def test_python_control_flow_and_structured_arguments(adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(1)
    ws = [rng.standard_normal((3, 3)) for _ in range(3)]
    x = rng.standard_normal((2, 3))
    ap = adapter.apply

    def f_lazy(params: dict[str, Any]) -> Any:
        h, total = adapter.from_numpy(x), None
        for i, w in enumerate(params["w"]):  # a loop, and a branch on a Python value
            h = ap("tanh", ap("matmul", h, w)) if i % 2 == 0 else ap("multiply", h, params["s"])
            part = ap("sum", h)
            total = part if total is None else ap("add", total, part)
        return total

    grad = adapter.grad(f_lazy, (0,))({"w": [adapter.from_numpy(w) for w in ws],
                                        "s": adapter.from_numpy(np.array(0.7))})[0]
    assert set(grad) == {"w", "s"} and len(grad["w"]) == 3

    def f_numpy(*leaves: Array) -> float:
        h, total = x, 0.0
        for i, w in enumerate(leaves[:3]):
            h = np.tanh(h @ w) if i % 2 == 0 else h * leaves[3]
            total += float(np.sum(h))
        return total

    leaves = [*ws, np.array(0.7)]
    for i, got in enumerate([*grad["w"], grad["s"]]):
        np.testing.assert_allclose(adapter.to_numpy(got), numeric_grad(f_numpy, leaves, i),
                                   rtol=1e-5, atol=1e-6, err_msg=f"leaf {i}")


@pytest.mark.spec("LZ-AD-004")
@pytest.mark.requires("executions|compiles")
def test_gradients_are_recorded_not_run(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(np.linspace(-1, 1, 6))
    with counting(adapter) as delta:
        (g,) = adapter.grad(lambda t: adapter.apply("sum", adapter.apply("exp", t)), (0,))(x)
    assert delta.ran_nothing(), f"computing a gradient ran something: {delta}"
    np.testing.assert_allclose(adapter.to_numpy(g), np.exp(np.linspace(-1, 1, 6)), rtol=1e-12)


@pytest.mark.spec("LZ-AD-005")
def test_the_gradient_of_a_gradient(adapter: OptionalAdapter) -> None:
    x = np.linspace(-2, 2, 5)
    ap = adapter.apply

    def inner(t: Any) -> Any:
        return ap("sum", ap("multiply", ap("sin", t), t))

    def outer(t: Any) -> Any:
        return ap("sum", adapter.grad(inner, (0,))(t)[0])

    (g,) = adapter.grad(outer, (0,))(adapter.from_numpy(x))
    np.testing.assert_allclose(adapter.to_numpy(g), 2 * np.cos(x) - x * np.sin(x), rtol=1e-10)


@pytest.mark.spec("LZ-AD-006")
def test_bad_uses_raise_type_error_before_anything_runs(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(np.ones((2, 3)))
    ints = adapter.from_numpy(np.arange(3))
    with pytest.raises(TypeError):  # not a 0-d result
        adapter.grad(lambda t: adapter.apply("multiply", t, t), (0,))(x)
    with pytest.raises(TypeError):  # an integer argument
        adapter.grad(lambda t: adapter.apply("sum", adapter.apply("multiply", t, 1.0)), (0,))(ints)


@pytest.mark.spec("LZ-AD-007")
@pytest.mark.requires("compiles")
def test_a_training_step_compiles_once(adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(2)
    ap = adapter.apply
    w = adapter.from_numpy(rng.standard_normal((4, 3)))

    def loss(w: Any, x: Any) -> Any:
        return ap("mean", ap("square", ap("tanh", ap("matmul", x, w))))

    want = adapter.to_numpy(w)
    adapter.barrier()  # whatever earlier tests left pending is not part of step 0's graph
    for step in range(6):
        data = rng.standard_normal((5, 4))
        with counting(adapter) as delta:
            (g,) = adapter.grad(loss, (0,))(w, adapter.from_numpy(data))
            w = ap("subtract", w, ap("multiply", g, 0.1 / (1 + step)))  # a new rate each step
            adapter.barrier()
        if step:
            assert delta.compiles == 0, f"step {step} compiled"
        t = np.tanh(data @ want)
        want = want - (0.1 / (1 + step)) * (data.T @ (2 * t * (1 - t * t) / t.size))
    np.testing.assert_allclose(adapter.to_numpy(w), want, rtol=1e-10)
