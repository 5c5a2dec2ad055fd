"""A captured step (``ml.capture``, minilazy.parts.capture): after two identical recordings the
compiled program runs directly, and every value is NumPy's; whatever decided the program that
changes makes the call record again, and what capture cannot see is refused, saying why."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minilazy as ml
from minilazy.core import runtime


def _sgd(state, x, y, lr):
    """One step of linear least squares, as a pure function of its state: (loss, new state)."""
    w, b = state["w"], state["b"]
    err = x @ w + b - y
    loss = ml.mean(err * err)
    gw = x.T @ err * (2.0 / x.shape[0])
    gb = ml.mean(err, axis=0) * 2.0
    return loss, {"w": w - lr * gw, "b": b - lr * gb}


def _sgd_numpy(state, x, y, lr):
    w, b = state["w"], state["b"]
    err = x @ w + b - y
    return np.mean(err * err), {"w": w - lr * (x.T @ err * (2.0 / x.shape[0])),
                                "b": b - lr * (np.mean(err, axis=0) * 2.0)}


def _data(rng, n=6):
    return [(rng.standard_normal((4, 3)), rng.standard_normal((4, 2))) for _ in range(n)]


@given(seed=st.integers(0, 2**16), lrs=st.lists(st.floats(0.001, 0.5), min_size=5, max_size=8,
                                                 unique=True))
def test_a_captured_step_gives_numpys_values_and_records_nothing_after_two_calls(seed, lrs):
    rng = np.random.default_rng(seed)
    init = {"w": rng.standard_normal((3, 2)), "b": np.zeros(2)}
    data = _data(rng, len(lrs))
    step = ml.capture(_sgd)
    state = {k: ml.asarray(v) for k, v in init.items()}
    ml.mark_step()
    want = dict(init)
    before = ml.metrics()
    for i, ((x, y), lr) in enumerate(zip(data, lrs)):
        m = ml.metrics()
        loss, state = step(state, ml.asarray(x), ml.asarray(y), lr)
        loss_np, want = _sgd_numpy(want, x, y, lr)
        np.testing.assert_allclose(float(loss), loss_np, rtol=1e-12)
        if i >= 2:  # the third call on: the program, with nothing recorded
            assert ml.metrics().ops_recorded == m.ops_recorded
    np.testing.assert_allclose(state["w"].numpy(), want["w"], rtol=1e-12)
    np.testing.assert_allclose(state["b"].numpy(), want["b"], rtol=1e-12)
    after = ml.metrics()
    assert step.replays == len(lrs) - 2 and step.refused is None
    assert after.barrier_causes.get("capture", 0) - before.barrier_causes.get("capture", 0) \
        == len(lrs) - 2
    assert after.compiles - before.compiles <= 1  # a learning rate is a parameter


def test_a_rate_the_optimizer_rounds_to_the_weights_dtype_is_still_an_argument():
    # ml.optim records lr as full((), lr, float32): the parameter is lr rounded to float32.
    def fn(params, velocity, g, lr):
        new, state = ml.optim.sgd(lr, momentum=0.9).update(g, velocity, params)
        return new, state

    step = ml.capture(fn)
    w = np.ones(3, np.float32)
    params = {"w": ml.asarray(w)}
    velocity = ml.optim.sgd(0.1, momentum=0.9).init(params)
    ml.mark_step()
    v = np.zeros(3, np.float32)
    for i in range(5):
        lr, g = 0.1 / (i + 1), np.full(3, i + 1.0, np.float32)
        params, velocity = step(params, velocity, {"w": ml.asarray(g)}, lr)
        v = np.float32(0.9) * v + g
        w = w - np.float32(lr) * v
    np.testing.assert_allclose(params["w"].numpy(), w, rtol=1e-6)
    assert step.replays == 3 and step.refused is None


def _held_step():
    """A step that updates a tensor it holds (not an argument) in place, and returns the loss."""
    w = ml.asarray(np.array([1.0, 2.0, 3.0]))
    ml.mark_step()

    def step(x, lr):
        nonlocal w
        loss = ml.sum((w * x) ** 2)
        w -= lr * (2.0 * w * x * x)
        return loss

    return step, lambda: w


def test_a_held_tensor_updated_in_place_is_rebound_and_its_buffer_donated():
    fn, w = _held_step()
    step = ml.capture(fn)
    want = np.array([1.0, 2.0, 3.0])
    x = np.array([1.0, 0.5, 2.0])
    for i in range(5):
        lr = 0.01 * (i + 1)
        m = ml.metrics()
        loss = step(ml.asarray(x), lr)
        assert float(loss) == pytest.approx(np.sum((want * x) ** 2), rel=1e-12)
        want = want - lr * (2.0 * want * x * x)
        if i >= 2:
            assert ml.metrics().donations - m.donations == 1
    np.testing.assert_allclose(w().numpy(), want, rtol=1e-12)
    assert step.replays == 3


def _captured_held():
    fn, w = _held_step()
    step = ml.capture(fn)
    for _ in range(3):
        step(ml.asarray([1.0, 1.0, 1.0]), 0.1)
    assert step.replays == 1
    return step, w


def _replays(step, *args):
    before = step.replays
    out = step(*args)
    return step.replays - before, out


@pytest.mark.parametrize("change", ["dtype", "pending", "policy", "pending_work", "number"])
def test_a_change_to_what_decided_the_program_records_again_with_numpys_value(change):
    step, w = _captured_held()
    x, lr = ml.asarray([1.0, 1.0, 1.0]), 0.1
    w_np = w().numpy()
    other = ml.asarray([5.0]) * 2.0 if change == "pending_work" else None
    if change == "dtype":
        x = ml.asarray(np.ones(3, np.float32))
    elif change == "pending":
        x = ml.asarray([0.5, 0.5, 0.5]) * 2.0
    if change == "policy":
        with ml.policy(special_scalars=True):
            ran, loss = _replays(step, x, lr)
    else:
        ran, loss = _replays(step, x, 0.25 if change == "number" else lr)
    if change != "number":
        assert ran == 0
    assert float(loss) == pytest.approx(np.sum(w_np ** 2), rel=1e-6)
    if other is not None:
        assert not other.is_pending and other.tolist() == [10.0]


def test_a_number_argument_that_stayed_the_same_is_checked_not_assumed():
    fn, w = _held_step()
    step = ml.capture(fn)
    x = ml.asarray([1.0, 1.0, 1.0])
    for _ in range(3):
        step(x, 0.1)  # the same rate: its slot looked constant to capture
    w_np = w().numpy()
    ran, _ = _replays(step, x, 0.3)
    assert ran == 0  # not bound to an argument: a new value is recorded, never assumed
    np.testing.assert_allclose(w().numpy(), w_np - 0.3 * 2.0 * w_np, rtol=1e-12)


@given(n=st.integers(1, 5))
def test_a_new_shape_records_again(n):
    step = ml.capture(lambda a: ml.sum(a * 2.0))
    for _ in range(3):
        step(ml.asarray(np.ones(2)))
    ran, out = _replays(step, ml.asarray(np.arange(n, dtype=np.float64)))
    assert ran == (n == 2) and float(out) == 2.0 * np.arange(n).sum()


def test_the_same_tensor_twice_is_not_two_tensors():
    def f(a, b):
        return ml.sum(a * 2.0 + b)

    step = ml.capture(f)
    for _ in range(3):
        step(ml.asarray([1.0, 2.0]), ml.asarray([3.0, 4.0]))
    x = ml.asarray([1.0, 2.0])
    ran, out = _replays(step, x, x)
    assert ran == 0 and float(out) == 9.0


def test_a_held_tensor_passed_as_an_argument_too_is_one_buffer_in_two_places():
    step, w = _captured_held()
    # the step's x is now w itself: the program read two buffers, and would consume one
    before = w().numpy()
    ran, loss = _replays(step, w(), 0.1)
    assert ran == 0
    assert float(loss) == pytest.approx(np.sum((before * before) ** 2), rel=1e-12)
    np.testing.assert_allclose(w().numpy(), before - 0.1 * 2.0 * before * before ** 2,
                               rtol=1e-12)


def test_a_step_given_one_tensor_twice_is_captured_and_reads_it_twice():
    step = ml.capture(lambda a, b: ml.sum(a * 2.0 + b))
    outs = []
    for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        x = ml.asarray(v)
        outs.append(float(step(x, x)))
    assert step.replays == 1 and outs == [9.0, 21.0, 33.0]


def test_another_tensor_on_a_consumed_buffer_keeps_its_value():
    # The program consumes w's old buffer; a second tensor on the same node must keep reading
    # it: the call records, and the donor keeps the buffer.
    step, w = _captured_held()
    from minilazy.core.tracer import wrap
    alias = wrap(w()._node, w().device)
    old = w().numpy()
    ran, _ = _replays(step, ml.asarray([1.0, 1.0, 1.0]), 0.1)
    assert ran == 0
    np.testing.assert_array_equal(alias.numpy(), old)


def test_a_held_tensor_that_is_gone_is_not_read():
    holder = {"w": ml.asarray([1.0, 2.0])}
    ml.mark_step()

    def f(x):
        return ml.sum(holder["w"] * x)

    step = ml.capture(f)
    for _ in range(3):
        step(ml.asarray([1.0, 1.0]))
    assert step.replays == 1
    holder["w"] = ml.asarray([10.0, 20.0])  # replaced: the old tensor dies
    ran, out = _replays(step, ml.asarray([1.0, 1.0]))
    assert ran == 0 and float(out) == 30.0


def test_another_thread_records():
    step, w = _captured_held()
    out = {}
    t = threading.Thread(target=lambda: out.update(r=_replays(step, ml.asarray([1.0] * 3), 0.1)))
    t.start()
    t.join()
    assert out["r"][0] == 0


@pytest.mark.parametrize("body, why", [
    (lambda s, x: s.append(x * 2.0) or ml.sum(x), "keeps a tensor it made outside its result"),
    (lambda s, x: ml.sum(x) + float(ml.sum(x)), "runs a barrier inside"),
    (lambda s, x: ml.sum(x * ml.asarray(np.ones(2))), "reads device data it made"),
    (lambda s, x: (ml.sum(x), object()), "returns a object"),
])
def test_what_capture_cannot_see_is_refused_saying_why(body, why):
    kept: list = []
    step = ml.capture(lambda x: body(kept, x))
    with pytest.warns(ml.CaptureWarning, match=why):
        for _ in range(4):
            out = step(ml.asarray([1.0, 2.0]))
    assert step.replays == 0 and why in step.refused
    first = out[0] if isinstance(out, tuple) else out
    assert float(first) in (3.0, 6.0, 9.0)


def test_a_number_read_inside_that_changes_is_refused():
    count = [0]

    def f(x):
        count[0] += 1
        return ml.sum(x * float(count[0]))

    step = ml.capture(f)
    with pytest.warns(ml.CaptureWarning, match="a Python number changed between calls"):
        outs = [float(step(ml.asarray([1.0, 2.0]))) for _ in range(4)]
    assert outs == [3.0, 6.0, 9.0, 12.0] and step.replays == 0


def test_recheck_records_again_and_catches_a_number_read_inside():
    scale = [1.0]

    def f(x):
        return ml.sum(x * scale[0])

    step = ml.capture(f, recheck=2)
    x = ml.asarray([1.0, 2.0])
    assert [float(step(x)) for _ in range(3)] == [3.0, 3.0, 3.0] and step.replays == 1
    scale[0] = 5.0  # invisible to a replay: the recheck (every 2nd captured call) sees it
    with pytest.warns(ml.CaptureWarning, match="a Python number changed"):
        assert float(step(x)) == 15.0
    assert step.plan is None


def test_a_replay_that_fails_before_consuming_anything_records_instead(monkeypatch):
    def f(x):
        return ml.sum(x * 2.0)

    step = ml.capture(f)
    for _ in range(3):
        step(ml.asarray([1.0, 2.0]))
    real = runtime.execute
    calls = []

    def flaky(entry, args):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("injected")
        return real(entry, args)

    monkeypatch.setattr(runtime, "execute", flaky)
    ran, out = _replays(step, ml.asarray([3.0, 4.0]))
    assert ran == 0 and float(out) == 14.0


def test_a_replay_that_fails_after_consuming_a_buffer_says_so_and_loses_only_that(monkeypatch):
    step, w = _captured_held()
    other = ml.asarray([7.0])
    real = runtime.execute

    def failing(entry, args):  # as a run that failed after its donated input was consumed
        assert any(entry.donated)
        for a, d in zip(args, entry.donated):
            if d:
                a.delete()
        raise RuntimeError("injected after donation")

    monkeypatch.setattr(runtime, "execute", failing)
    with pytest.raises(RuntimeError, match="injected after donation"):
        step(ml.asarray([1.0, 1.0, 1.0]), 0.1)
    monkeypatch.setattr(runtime, "execute", real)
    with pytest.raises(RuntimeError, match="injected after donation"):
        w().numpy()  # its buffer is gone: it says why, every time it is read
    assert other.tolist() == [7.0]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_fork_child_gets_the_barriers_clear_error_from_a_captured_step():
    script = textwrap.dedent("""
        import os, warnings
        warnings.simplefilter("ignore")
        import minilazy as ml
        step = ml.capture(lambda x, lr: ml.sum(x * lr))
        x = ml.asarray([1.0, 2.0])
        for lr in (1.0, 2.0, 3.0):
            out = step(x, lr)
        assert step.replays == 1
        pid = os.fork()
        if pid == 0:
            try:
                step(x, 4.0)
            except RuntimeError as e:
                print("child:", e)
                os._exit(0)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        print("parent:", float(step(x, 5.0)), os.waitstatus_to_exitcode(status))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert "child: minilazy cannot run in a process forked after JAX started" in out.stdout
    assert "parent: 15.0 0" in out.stdout, out.stdout + out.stderr


def test_capture_is_a_decorator_with_or_without_arguments():
    @ml.capture
    def a(x):
        return x + 1.0

    @ml.capture(recheck=3)
    def b(x):
        return x + 1.0

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a(ml.asarray([1.0])).tolist() == [2.0] and b.recheck == 3
