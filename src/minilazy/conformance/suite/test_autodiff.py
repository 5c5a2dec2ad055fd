"""Autodiff: gradients of recorded programs, against central finite differences in float64."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies
from minilazy.conformance.oracle import assert_close, numpy_apply
from minilazy.conformance.suite.util import counting, settle

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
    # Piecewise: inputs inside one piece, where the derivative is that piece's.
    "sign": (0.1, 3), "floor": (0.1, 0.9), "ceil": (0.1, 0.9), "round": (0.1, 0.4),
    "trunc": (0.1, 0.9), "maximum": (-2, 2), "minimum": (-2, 2), "remainder": (0.6, 2.9),
    "floor_divide": (0.6, 2.9),
}
BINARY = ("add", "subtract", "multiply", "divide", "pow", "atan2", "maximum", "minimum",
          "remainder", "floor_divide")
SHAPE = (2, 3)


def _away_from_kinks(op: str, args: list[Array]) -> list[Array]:
    """Move drawn inputs off the points where ``op``'s derivative jumps."""
    if op in ("maximum", "minimum"):  # no ties
        args[1] = np.where(np.abs(args[0] - args[1]) < 1e-3, args[1] + 0.5, args[1])
    if op in ("remainder", "floor_divide"):  # x1 / x2 half way between two integers
        args[0] = args[1] * (np.floor(args[0] / args[1]) + 0.5)
    return args


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
    arity = 2 if op in BINARY else 1
    lo, hi = SMOOTH[op]
    args = _away_from_kinks(op, [data.draw(hnp.arrays(np.float64, SHAPE,
                                                      elements=st.floats(lo, hi)))
                                 for _ in range(arity)])
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


@pytest.mark.spec("LZ-AD-002")
@pytest.mark.ops("max", "min", "mean", "var", "std", "prod", "exp", "subtract", "multiply",
                 "add", "sum", "getitem")
def test_gradients_through_statistics_and_keepdims(adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(3)
    a, v = rng.standard_normal((3, 4)), rng.standard_normal(4)
    ap = adapter.apply

    def f_lazy(a: Any, v: Any) -> Any:
        spread = ap("mean", ap("add", ap("var", a, axis=0), ap("std", a, axis=1, keepdims=True)))
        low = ap("getitem", ap("min", a, axis=0), (slice(None, 3),))
        rows = ap("sum", ap("multiply", ap("prod", a, axis=1), low))
        return ap("add", ap("add", spread, rows), ap("sum", ap("multiply", ap(
            "exp", ap("subtract", a, ap("max", a, axis=1, keepdims=True))), v)))

    def f_numpy(a: Array, v: Array) -> float:
        spread = np.mean(np.var(a, axis=0) + np.std(a, axis=1, keepdims=True))
        rows = np.sum(np.prod(a, axis=1) * np.min(a, axis=0)[:3])
        return float(spread + rows + np.sum(np.exp(a - np.max(a, axis=1, keepdims=True)) * v))

    _check(adapter, f_lazy, f_numpy, [a, v])


@pytest.mark.spec("LZ-AD-002")
@pytest.mark.ops("prod", "sum")
def test_the_gradient_of_prod_is_exact_at_zeros(adapter: OptionalAdapter) -> None:
    # d prod / d x_i is the product of the others: not prod / x_i, which is NaN at a zero.
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]])
    (g,) = adapter.grad(lambda t: adapter.apply("sum", adapter.apply("prod", t, axis=1)),
                        (0,))(adapter.from_numpy(x))
    want = np.array([[np.prod(np.delete(row, i)) for i in range(3)] for row in x])
    assert_close(adapter.to_numpy(g), want)


@pytest.mark.spec("LZ-AD-002")
@pytest.mark.requires("setitem")
@pytest.mark.ops("multiply", "setitem", "getitem", "where", "greater", "square", "sum", "add")
def test_gradients_through_setitem_and_repeated_indices(adapter: OptionalAdapter) -> None:
    a = np.random.default_rng(5).standard_normal((3, 4))
    ap = adapter.apply

    def f_lazy(a: Any) -> Any:
        y = ap("multiply", a, 1.0)
        ap("setitem", y, (slice(1, None), slice(None, None, -2)),
           ap("multiply", ap("getitem", a, (0, slice(None, 2))), 3.0))
        leaky = ap("where", ap("greater", y, 0.0), y, ap("multiply", y, 0.1))
        picked = ap("getitem", a, ([0, 2, 2], slice(1, None)))  # row 2 twice: summed
        return ap("add", ap("sum", ap("multiply", leaky, y)), ap("sum", ap("square", picked)))

    def f_numpy(a: Array) -> float:
        y = a * 1.0
        y[1:, ::-2] = a[0, :2] * 3.0
        leaky = np.where(y > 0, y, 0.1 * y)
        return float(np.sum(leaky * y) + np.sum(a[[0, 2, 2], 1:] ** 2))

    _check(adapter, f_lazy, f_numpy, [a])


@pytest.mark.spec("LZ-AD-002")
@pytest.mark.ops("matmul", "tensordot", "matrix_transpose", "sin", "multiply", "sum", "add",
                 "square", "concat", "flip", "reshape", "stack", "getitem")
def test_gradients_through_matmul_tensordot_and_shape_functions(
        adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(6)
    a, b, v = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(4)
    batch = rng.standard_normal((2, 1, 3, 4))
    t1, t2 = rng.standard_normal((3, 2, 4)), rng.standard_normal((2, 5, 3))
    ap = adapter.apply

    def f_lazy(a: Any, b: Any, v: Any, batch: Any, t1: Any, t2: Any) -> Any:
        products = ap("add", ap("sum", ap("multiply", ap("sin", ap("matrix_transpose", ap(
            "matmul", a, b))), 2.0)), ap("add", ap("sum", ap("matmul", a, v)),
                                           ap("sum", ap("matmul", v, b))))
        batched = ap("sum", ap("square", ap("matmul", batch, b)))  # b broadcast over (2, 1)
        dotted = ap("sum", ap("square", ap("tensordot", t1, t2, axes=([1, 0], [0, 2]))))
        joined = ap("concat", [ap("flip", a, axis=0), ap("matrix_transpose", ap(
            "getitem", ap("reshape", a, (4, 3)), (slice(None, 2),)))], axis=1)
        stacked = ap("stack", [a, ap("multiply", a, 2.0)], axis=-1)
        shaped = ap("sum", ap("multiply", ap("getitem", joined, (slice(None), slice(1, 5))),
                              ap("getitem", stacked, (Ellipsis, 1))))
        return ap("add", ap("add", products, batched), ap("add", dotted, shaped))

    def f_numpy(a: Array, b: Array, v: Array, batch: Array, t1: Array, t2: Array) -> float:
        products = np.sum(np.sin((a @ b).T) * 2.0) + np.sum(a @ v) + np.sum(v @ b)
        joined = np.concat([np.flip(a, axis=0), np.reshape(a, (4, 3))[:2].T], axis=1)
        shaped = np.sum(joined[:, 1:5] * np.stack([a, a * 2], axis=-1)[..., 1])
        return float(products + np.sum((batch @ b) ** 2)
                     + np.sum(np.tensordot(t1, t2, axes=([1, 0], [0, 2])) ** 2) + shaped)

    _check(adapter, f_lazy, f_numpy, [a, b, v, batch, t1, t2])


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


@pytest.mark.spec("LZ-AD-003")
@pytest.mark.ops("matmul", "tanh", "multiply", "sum", "add")
def test_recursion_and_a_tuple_of_a_list_and_a_dict(adapter: OptionalAdapter) -> None:
    rng = np.random.default_rng(8)
    ws = [rng.standard_normal((3, 3)) for _ in range(3)]
    x = rng.standard_normal((2, 3))
    ap = adapter.apply

    def f_lazy(params: tuple[list[Any], dict[str, Any]]) -> Any:
        def go(h: Any, depth: int) -> Any:  # recursion, depth a Python value
            if depth == 0:
                return ap("sum", h)
            i = depth - 1
            h = ap("tanh", ap("matmul", h, params[0][i])) if i % 2 == 0 else ap(
                "multiply", h, params[1]["s"])
            return ap("add", ap("sum", h), go(h, depth - 1))
        return go(adapter.from_numpy(x), 3)

    (grad,) = adapter.grad(f_lazy, (0,))(([adapter.from_numpy(w) for w in ws],
                                          {"s": adapter.from_numpy(np.array(0.7))}))
    assert isinstance(grad, tuple) and len(grad) == 2, type(grad)
    assert isinstance(grad[0], list) and len(grad[0]) == 3 and set(grad[1]) == {"s"}

    def f_numpy(*leaves: Array) -> float:
        def go(h: Array, depth: int) -> float:
            if depth == 0:
                return float(np.sum(h))
            i = depth - 1
            h = np.tanh(h @ leaves[i]) if i % 2 == 0 else h * leaves[3]
            return float(np.sum(h)) + go(h, depth - 1)
        return go(x, 3)

    leaves = [*ws, np.array(0.7)]
    for i, got in enumerate([*grad[0], grad[1]["s"]]):
        np.testing.assert_allclose(adapter.to_numpy(got), numeric_grad(f_numpy, leaves, i),
                                   rtol=1e-5, atol=1e-6, err_msg=f"leaf {i}")


@pytest.mark.spec("LZ-AD-004")
@pytest.mark.requires("executions|compiles")
def test_gradients_are_recorded_not_run(adapter: OptionalAdapter) -> None:
    x = adapter.from_numpy(np.linspace(-1, 1, 6))
    settle(adapter)

    def f(t: Any) -> Any:
        return adapter.apply("sum", adapter.apply("multiply", adapter.apply("exp", t), 2.0))

    with counting(adapter) as delta:
        value = f(x)
        (g,) = adapter.grad(f, (0,))(x)
    assert delta.ran_nothing(), f"computing a gradient ran something: {delta}"
    if "pending" in adapter.capabilities:
        assert adapter.is_pending(g) and adapter.is_pending(value), "not pending until a barrier"
    adapter.barrier()  # forward and backward are cut together (in how many programs: LZ-BAR-002)
    with counting(adapter) as read:  # ... by that barrier: nothing is left to run
        got = adapter.to_numpy(g), adapter.to_numpy(value)
    assert read.ran_nothing(), f"the barrier left the gradient or the value pending: {read}"
    want = 2 * np.exp(np.linspace(-1, 1, 6))
    np.testing.assert_allclose(got[0], want, rtol=1e-12)
    np.testing.assert_allclose(got[1], np.sum(want), rtol=1e-12)


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
    settle(adapter)
    counted = satisfies(capabilities_of(adapter), "executions|compiles")
    with counting(adapter) if counted else nullcontext(None) as d:
        with pytest.raises(TypeError):  # not a 0-d result
            adapter.grad(lambda t: adapter.apply("multiply", t, t), (0,))(x)
        with pytest.raises(TypeError):  # an integer argument
            adapter.grad(lambda t: adapter.apply("sum", adapter.apply("multiply", t, 1.0)),
                         (0,))(ints)
    assert d is None or d.ran_nothing(), f"the refused gradients ran something: {d}"


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
