"""Autodiff at its seams: barriers and in-place updates inside the differentiated function.

LZ-AD-008 and LZ-AD-009: the gradient is the derivative, whatever ran meanwhile. LZ-AD-010: a
``stop_gradient`` the function asks for is a constant to differentiation, and nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minilazy.conformance.adapter import OptionalAdapter, capabilities_of, satisfies, supports
from minilazy.conformance.suite.util import counting

Array = np.ndarray[Any, Any]
POINTS = hnp.arrays(np.float64, st.integers(1, 6),
                    elements=st.floats(-2, 2, allow_nan=False, allow_subnormal=False))


def _want(x: Array) -> Array:
    """d/dx of sum(y * y * exp(x)) with y = x sin(x), written out in NumPy."""
    y, dy = x * np.sin(x), np.sin(x) + x * np.cos(x)
    want: Array = (2 * y * dy + y * y) * np.exp(x)
    return want


# Each barrier kind, run on the forward's intermediate ``y`` (and what it needs of the adapter).
BARRIERS: dict[str, tuple[str, Callable[[OptionalAdapter, Any], None]]] = {
    "mark_step": ("", lambda a, y: a.barrier()),
    "observation": ("", lambda a, y: None if float(np.sum(a.to_numpy(y))) else None),
    "sync": ("sync", lambda a, y: a.sync(y)),
    "twice": ("", lambda a, y: _twice(a, y)),
}


def _twice(adapter: OptionalAdapter, y: Any) -> None:
    adapter.barrier()
    adapter.to_numpy(y)
    adapter.barrier()


def _loss(adapter: OptionalAdapter, barrier: Callable[[Any], None]) -> Callable[[Any], Any]:
    ap = adapter.apply

    def f(x: Any) -> Any:
        y = ap("multiply", x, ap("sin", x))
        barrier(y)
        return ap("sum", ap("multiply", ap("multiply", y, y), ap("exp", x)))

    return f


@pytest.mark.spec("LZ-AD-008")
@pytest.mark.parametrize("kind", sorted(BARRIERS))
@given(x=POINTS)
def test_a_barrier_inside_f_leaves_the_gradient_unchanged(adapter: OptionalAdapter, kind: str,
                                                          x: Array) -> None:
    need, run = BARRIERS[kind]
    if need and need not in adapter.capabilities:
        pytest.skip(f"needs capability {need!r}")
    (g,) = adapter.grad(_loss(adapter, lambda y: run(adapter, y)), (0,))(adapter.from_numpy(x))
    np.testing.assert_allclose(adapter.to_numpy(g), _want(x), rtol=1e-10, atol=1e-12,
                               err_msg=f"a {kind} barrier inside f changed the gradient")


@pytest.mark.spec("LZ-AD-008")
@given(x=POINTS)
def test_f_run_in_eager_mode_has_the_same_gradient(adapter: OptionalAdapter, x: Array) -> None:
    if "eager" not in adapter.capabilities:
        pytest.skip("needs capability 'eager'")
    with adapter.eager():
        (g,) = adapter.grad(_loss(adapter, lambda y: None), (0,))(adapter.from_numpy(x))
    np.testing.assert_allclose(adapter.to_numpy(g), _want(x), rtol=1e-10, atol=1e-12)


@pytest.mark.spec("LZ-AD-008")
def test_a_forward_longer_than_an_automatic_cut(adapter: OptionalAdapter) -> None:
    """2200 ops: more than an implementation records before it cuts on its own (minilazy: 2048)."""
    x = np.linspace(-1, 1, 5)
    ap = adapter.apply

    def f(t: Any) -> Any:
        y = t
        for i in range(1100):
            y = ap("add", ap("multiply", y, 1.0 + 1e-4 * (i % 3 - 1)), 1e-3)
        return ap("sum", ap("multiply", y, y))

    scale, shift = 1.0, 0.0
    for i in range(1100):
        scale, shift = scale * (1.0 + 1e-4 * (i % 3 - 1)), shift * (1.0 + 1e-4 * (i % 3 - 1))
        shift += 1e-3
    (g,) = adapter.grad(f, (0,))(adapter.from_numpy(x))
    np.testing.assert_allclose(adapter.to_numpy(g), 2 * scale * (scale * x + shift), rtol=1e-9)


# x op= c inside f: the gradient is with respect to x as passed, through the update.
INPLACE: dict[str, Callable[[Array, float], Array]] = {
    "multiply": lambda x, c: 2 * c * c * x,       # sum((c x)^2)
    "add": lambda x, c: 2 * (x + c),              # sum((x + c)^2)
    "subtract": lambda x, c: 2 * (x - c),
    "divide": lambda x, c: 2 * x / (c * c),
}


@pytest.mark.spec("LZ-AD-009")
@pytest.mark.parametrize("op", sorted(INPLACE))
@given(x=POINTS, c=st.sampled_from([0.5, 2.0, -3.0]), observe=st.booleans())
def test_an_inplace_update_of_an_argument_is_differentiated_through(
        adapter: OptionalAdapter, op: str, x: Array, c: float, observe: bool) -> None:
    if "setitem" not in adapter.capabilities:
        pytest.skip("needs capability 'setitem' (in-place ops)")
    ap = adapter.apply

    def f(t: Any) -> Any:
        t = adapter.inplace(op, t, c)
        if observe:  # and the updated argument materialised before the loss reads it
            adapter.barrier()
        return ap("sum", ap("multiply", t, t))

    arg = adapter.from_numpy(x)
    with adapter.eager() if observe and "eager" in adapter.capabilities else nullcontext():
        (g,) = adapter.grad(f, (0,))(arg)
    np.testing.assert_allclose(adapter.to_numpy(g), INPLACE[op](x, c), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(adapter.to_numpy(arg), x, "f's update reached the caller")


@pytest.mark.spec("LZ-AD-010")
@given(x=hnp.arrays(np.float32, st.integers(1, 6),
                    elements=st.floats(-2, 2, width=32, allow_subnormal=False)))
def test_stop_gradient_is_a_constant_to_differentiation(adapter: OptionalAdapter,
                                                        x: Array) -> None:
    if not supports(adapter, "stop_gradient"):
        pytest.skip("the implementation offers no stop_gradient")
    ap = adapter.apply
    arg = adapter.from_numpy(x)
    counted = satisfies(capabilities_of(adapter), "executions|compiles")
    with counting(adapter) if counted else nullcontext(None) as d:
        y = ap("stop_gradient", arg)
    assert d is None or d.ran_nothing(), f"stop_gradient ran something at record time: {d}"
    got = adapter.to_numpy(y)
    assert got.dtype == x.dtype and got.shape == x.shape, f"{got.dtype}{got.shape}"
    np.testing.assert_array_equal(got, x, "stop_gradient changed the value")

    def f(t: Any) -> Any:  # d/dt of sum(t * s + sin(s)) with s = t held constant: s itself
        s = ap("stop_gradient", t)
        return ap("sum", ap("add", ap("multiply", t, s), ap("sin", s)))

    (g,) = adapter.grad(f, (0,))(arg)
    np.testing.assert_allclose(adapter.to_numpy(g), x, rtol=1e-6, atol=1e-7,
                               err_msg="a gradient flowed through stop_gradient (or not "
                               "through the other use of its argument)")
