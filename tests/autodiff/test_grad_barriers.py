"""Gradients through every kind of barrier inside the differentiated function, and through
in-place updates of its arguments: each against jax.grad of the same function (LZ-AD-008/009).

A barrier rebinds tensors to result leaves; the backward pass walks through them to the ops
they stand for. Before that, it stopped there: gradients came out zero or partial, silently.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minilazy as ml

POINTS = hnp.arrays(np.float64, st.integers(1, 5), elements=st.floats(-2, 2, width=64))


def _jax_grad(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    with jax.enable_x64(True):
        return np.asarray(jax.grad(f)(jnp.asarray(x)))


# A barrier of each kind, on the forward's intermediate y, and the context f runs in.
def _observe(y: ml.Tensor) -> None:
    if float(ml.sum(y)) > 1e300:  # a branch on a value: an observation barrier
        raise AssertionError


BARRIERS: dict[str, tuple[Callable[[ml.Tensor], None], Callable[[], AbstractContextManager[Any]]]]
BARRIERS = {
    "mark_step": (lambda y: ml.mark_step(), nullcontext),
    "sync": (lambda y: ml.sync(y), nullcontext),
    "wait": (lambda y: ml.wait(y), nullcontext),
    "numpy": (lambda y: None if y.numpy() is None else None, nullcontext),
    "observation": (_observe, nullcontext),
    "observe_all": (_observe, lambda: ml.policy(observe_all=True)),
    "eager": (lambda y: None, ml.eager),
    "auto_cut": (lambda y: None, lambda: ml.policy(max_pending_nodes=8)),
    "staged": (lambda y: ml.mark_step(), lambda: ml.policy(max_depth=2)),
}


@pytest.mark.parametrize("kind", sorted(BARRIERS))
@given(x=POINTS)
def test_a_barrier_inside_f(kind: str, x: np.ndarray) -> None:
    barrier, context = BARRIERS[kind]

    def f(z: Any, np_: Any = ml) -> Any:
        y = np_.tanh(z) * np_.exp(z * 0.5)
        if np_ is ml:
            barrier(y)
        return np_.sum(np_.sin(y) * z + y * y)

    with context():
        got = ml.grad(f)(ml.asarray(x)).numpy()
    np.testing.assert_allclose(got, _jax_grad(lambda z: f(z, jnp), x), rtol=1e-12, atol=1e-14)


def test_an_automatic_cut_under_the_default_policy() -> None:
    """2200 ops: the default policy cuts at 2048 pending nodes, inside the forward pass."""
    x = np.linspace(-1, 1, 4)

    def f(z: Any, np_: Any = ml) -> Any:
        for i in range(1100):
            z = z * (1.0 + 1e-4 * (i % 3 - 1)) + 1e-3
        return np_.sum(np_.sin(z))

    ml.reset_metrics()
    got = ml.grad(f)(ml.asarray(x)).numpy()
    assert ml.metrics().barrier_causes["auto"] >= 1, "the forward pass was cut"
    np.testing.assert_allclose(got, _jax_grad(lambda z: f(z, jnp), x), rtol=1e-10)


@pytest.mark.parametrize("barrier", [True, False])
def test_repeated_calls_with_and_without_a_barrier(barrier: bool) -> None:
    """The backward tape of one structure never serves a forward pass that ran a barrier."""
    x = np.array([0.5, -1.5, 2.0])

    def f(z: Any, cut: bool) -> Any:
        y = z * z
        if cut:
            ml.mark_step()
        return ml.sum(y * z)

    for cut in [barrier, not barrier, barrier, not barrier]:
        np.testing.assert_allclose(ml.grad(f)(ml.asarray(x), cut).numpy(), 3 * x * x)


def test_the_gradient_of_a_gradient_through_a_barrier() -> None:
    x = np.array([0.3, -1.2, 2.5])

    def inner(z: Any) -> Any:
        y = ml.sin(z) * z
        ml.mark_step()
        return ml.sum(y)

    got = ml.grad(lambda z: ml.sum(ml.grad(inner)(z) * z))(ml.asarray(x)).numpy()
    want = _jax_grad(lambda z: jnp.sum(jax.grad(lambda u: jnp.sum(jnp.sin(u) * u))(z) * z), x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_barrier_from_another_thread_meanwhile() -> None:
    """Another thread's mark_step rebinds this thread's tensors too: the gradient holds."""
    x = np.array([0.1, 0.7, -0.4])
    started, done = threading.Event(), threading.Event()

    def other() -> None:
        started.wait(10)
        ml.mark_step()
        done.set()

    thread = threading.Thread(target=other)
    thread.start()

    def f(z: Any) -> Any:
        y = ml.exp(z) * z
        started.set()
        done.wait(10)  # the other thread's barrier ran between the two halves
        return ml.sum(y * y)

    got = ml.grad(f)(ml.asarray(x)).numpy()
    thread.join()
    np.testing.assert_allclose(got, _jax_grad(lambda z: jnp.sum((jnp.exp(z) * z) ** 2), x),
                               rtol=1e-12)


def test_a_barrier_from_another_thread_after_f_returns(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Another thread's mark_step between f's return and the backward pass (injected there: the
    window is a few bytecodes wide) rebinds f's result to a leaf the barrier log's snapshot does
    not know: the backward pass must still differentiate the graph f recorded (it gave zeros)."""
    from minilazy.autodiff import tape

    backward = tape._backward

    def late_barrier(*args: Any) -> Any:
        thread = threading.Thread(target=ml.mark_step)
        thread.start()
        thread.join()
        return backward(*args)

    monkeypatch.setattr(tape, "_backward", late_barrier)
    x = np.array([0.5, 1.0, 2.0])
    for _ in range(3):  # the rules, then the tape
        got = ml.grad(lambda z: ml.sum(ml.sin(z) * z))(ml.asarray(x)).numpy()
        np.testing.assert_allclose(got, _jax_grad(lambda z: jnp.sum(jnp.sin(z) * z), x),
                                   rtol=1e-12)


# In-place updates of the argument inside f, as the caller passed it.
INPLACE: dict[str, Callable[[Any], Any]] = {
    "imul": lambda z: z.__imul__(2.0),
    "iadd_self": lambda z: z.__iadd__(z),
    "isub": lambda z: z.__isub__(z * z),
    "ipow": lambda z: z.__ipow__(3),
}
JAX_INPLACE: dict[str, Callable[[Any], Any]] = {
    "imul": lambda z: z * 2.0, "iadd_self": lambda z: z + z, "isub": lambda z: z - z * z,
    "ipow": lambda z: z ** 3,
}


@pytest.mark.parametrize("name", sorted(INPLACE))
@pytest.mark.parametrize("cut", [False, True])
def test_an_inplace_update_of_the_argument(name: str, cut: bool) -> None:
    x = np.array([0.5, -1.5, 2.0])

    def f(z: Any) -> Any:
        z = INPLACE[name](z)
        if cut:
            ml.mark_step()
        return ml.sum(z * z)

    arg = ml.asarray(x)
    got = ml.grad(f)(arg).numpy()
    want = _jax_grad(lambda z: jnp.sum(JAX_INPLACE[name](z) ** 2), x)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_array_equal(arg.numpy(), x)  # the caller's tensor is untouched


def test_a_setitem_on_the_argument() -> None:
    x = np.array([0.5, -1.5, 2.0])

    def f(z: Any) -> Any:
        z[0] = 5.0
        z[1:] *= z[1:]
        return ml.sum(z * z)

    got = ml.grad(f)(ml.asarray(x)).numpy()
    want = _jax_grad(lambda z: jnp.sum(z.at[0].set(5.0).at[1:].multiply(z[1:]) ** 2), x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_nothing_is_kept_once_grad_returns() -> None:
    """The notes a barrier keeps for a gradient go with the gradient call."""
    from minilazy.autodiff.origins import ORIGINS

    ml.grad(lambda z: ml.sum(ml.exp(z)) if ml.mark_step() is None else None)(ml.ones((2,)))
    assert ORIGINS.found is None and ORIGINS.grads == 0
    with pytest.raises(ZeroDivisionError):
        ml.grad(lambda z: 1 / 0)(ml.ones((2,)))
    assert ORIGINS.found is None and ORIGINS.grads == 0
