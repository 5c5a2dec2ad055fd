"""Threads: barriers from many threads are correct, and each thread has its own policy.

The model (docs/troubleshooting.md, "Threads"): barriers run one at a time under the engine
lock; ``mark_step`` materialises the live tensors of every thread, as PyTorch/XLA's does for
a device; a buffer is donated only when nothing outside the program -- another thread's op in
progress included -- reads it. ``with ml.policy(...)`` holds in its own thread only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

import minilazy as ml

THREADS, STEPS = 4, 250


def run_threads(n: int, work: Callable[[int], None]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def body(i: int) -> None:
        start.wait()
        try:
            work(i)
        except BaseException as e:  # collected: a failure in a thread must fail the test
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_threads_recording_and_barriers_each_on_their_own_tensors_lose_nothing() -> None:
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        w = ml.asarray(np.full((8, 8), float(i), np.float32))
        for step in range(STEPS):
            w = w * 0.5 + 1.0  # an update in a loop: the old buffer is a donation candidate
            if step % 3 == 0:
                ml.mark_step()
            elif step % 3 == 1:
                float(ml.sum(w))  # an observation barrier
        results[i] = w.numpy()

    errors = run_threads(THREADS, work)
    assert errors == [], errors[:3]
    for i in range(THREADS):
        want = np.full((8, 8), float(i), np.float32)
        for _ in range(STEPS):
            want = want * np.float32(0.5) + np.float32(1.0)
        np.testing.assert_allclose(results[i], want, rtol=1e-6)


def test_threads_sharing_a_tensor_read_it_while_others_update_theirs() -> None:
    shared = ml.asarray(np.arange(16, dtype=np.float32).reshape(4, 4))
    ml.mark_step()
    sums: dict[int, list[float]] = {}

    def work(i: int) -> None:
        mine = ml.zeros((4, 4), dtype=ml.float32)
        seen = []
        for _ in range(100):
            mine = mine + shared  # reads the shared buffer, which must never be donated
            ml.mark_step()
            seen.append(float(ml.sum(mine)))
        sums[i] = seen

    assert run_threads(THREADS, work) == []
    want = [float(np.arange(16).sum() * k) for k in range(1, 101)]
    assert all(sums[i] == want for i in range(THREADS))
    np.testing.assert_array_equal(shared.numpy(), np.arange(16, dtype=np.float32).reshape(4, 4))


def test_counters_stay_exact_under_threads() -> None:
    ml.reset_metrics()

    def work(i: int) -> None:
        x = ml.asarray(np.ones(3, np.float32))
        for _ in range(500):
            x = ml.exp(x) * 0.0  # two ops a step
        ml.sync(x)

    assert run_threads(THREADS, work) == []
    assert ml.metrics().ops_recorded == THREADS * 500 * 2


def test_a_policy_block_holds_in_its_own_thread_only() -> None:
    seen: dict[str, bool] = {}
    inside = threading.Event()
    checked = threading.Event()

    def eager_thread(_: int) -> None:
        with ml.policy(eager=True):
            inside.set()
            seen["eager thread"] = ml.current_policy().eager
            y = ml.ones((2,)) * 2.0
            seen["eager op ran"] = not y.is_pending
            checked.wait(10)

    def lazy_thread(_: int) -> None:
        inside.wait(10)
        with ml.policy(max_pending_nodes=500):
            seen["lazy thread"] = ml.current_policy().eager
            y = ml.ones((2,)) * 2.0
            seen["lazy op pending"] = y.is_pending
        checked.set()

    assert run_threads(2, lambda i: (eager_thread if i == 0 else lazy_thread)(i)) == []
    assert seen == {"eager thread": True, "eager op ran": True, "lazy thread": False,
                    "lazy op pending": True}


def test_set_policy_is_the_default_of_every_thread() -> None:
    ml.set_policy(ml.BarrierPolicy(max_pending_nodes=777))
    seen = []
    assert run_threads(2, lambda i: seen.append(ml.current_policy().max_pending_nodes)) == []
    assert seen == [777, 777]


def test_donation_resumes_once_the_other_threads_have_ended() -> None:
    def work(i: int) -> None:
        x = ml.asarray(np.ones(4, np.float32))
        for _ in range(10):
            x = x + 1.0
            ml.mark_step()

    assert run_threads(2, work) == []
    ml.reset_metrics()
    w = ml.asarray(np.ones((8, 8), np.float32))
    for _ in range(3):
        w = w * 0.5
        ml.mark_step()
    assert ml.metrics().donations >= 2


def on_a_reused_ident(makes_tensors: bool) -> tuple[threading.Thread, threading.Event]:
    """A running thread that got the ident of an ended tensor-making thread.

    Thread idents are reused: a thread started after another ended often gets its ident. This
    one makes a tensor first or not, then waits for the returned event.
    """
    for _ in range(200):
        maker = threading.Thread(target=lambda: ml.asarray(np.ones(2, np.float32)))
        maker.start()
        maker.join()
        started, done = threading.Event(), threading.Event()
        second = threading.Thread(target=wait_in_thread, args=(makes_tensors, started, done))
        second.start()
        started.wait()
        if second.ident == maker.ident:
            return second, done
        done.set()
        second.join()
    pytest.fail("no thread ident was reused in 200 tries")


def wait_in_thread(makes_tensors: bool, started: threading.Event, done: threading.Event) -> None:
    held = ml.asarray(np.ones(2, np.float32)) + 1.0 if makes_tensors else None
    started.set()
    done.wait()
    del held


def donations_in_three_steps() -> int:
    ml.reset_metrics()
    w = ml.asarray(np.ones((8, 8), np.float32))
    for _ in range(3):
        w = w * 0.5
        ml.mark_step()
    return ml.metrics().donations


@pytest.mark.parametrize("makes_tensors", [False, True])
def test_a_thread_on_an_ended_makers_ident_counts_only_if_it_makes_tensors(
        makes_tensors: bool) -> None:
    # A timer on a reused ident makes no tensor: donation goes on. A thread that makes
    # tensors, on whatever ident, is a second maker: nothing may be donated while it runs.
    second, done = on_a_reused_ident(makes_tensors)
    try:
        assert (donations_in_three_steps() == 0) == makes_tensors
    finally:
        done.set()
        second.join()
