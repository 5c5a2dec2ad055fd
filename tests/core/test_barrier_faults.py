"""Signals in the middle of a barrier: a handler's exception or barrier loses nothing.

A Python signal handler runs in the main thread between two bytecodes, wherever the barrier is:
in the cut, the compile cache, the lowering, XLA's compile, the disk cache, the run, the
rebinding. It may raise (a timer's timeout, Ctrl-C) or observe tensors (a progress printer),
which runs a barrier inside the barrier. Each test sends one such signal (really, with
``os.kill``, ``pthread_kill`` or a timer, or by calling the installed handler from the stage,
as the interpreter would) while one stage runs, during a ``mark_step`` or an observation, and
checks against NumPy that every tensor keeps its value: the handler's exception reaches the
caller with every tensor as it was (pending, computed by the next barrier, never failed for
good), and a handler's barrier gets the right values while the outer barrier completes.

``tests/core/test_faults.py`` injects the program's own failures (a lone failing tensor then holds
its error); this module injects what is not the program's fault.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

import minilazy as ml
from minilazy.core import barrier, lowering, runtime
from minilazy.core.cache import CACHE
from minilazy.parts import signals
from minilazy.persist import diskcache


class Timeout(Exception):
    """What the tests' timer handler raises: a user's exception, not the program's failure."""


# Stage -> (owner, attribute) of the function during which the signal arrives, in pipeline
# order. "donating run": a warm program that consumes its donated input; the signal arrives
# after it ran, before its results are rebound.
STAGES: dict[str, tuple[Any, str]] = {
    "cut": (barrier, "cut"),
    "lookup": (CACHE, "lookup"),
    "donation mask": (barrier.PARTS.donor, "mask"),
    "lower": (lowering, "lower"),
    "compile": (runtime, "compile_lowered"),
    "disk write": (diskcache, "write"),
    "execute": (runtime, "execute"),
    "donating run": (runtime, "execute"),
    "bind": (barrier, "data_leaf"),
}
# What arrives: an exception a handler raises (called from the stage as the interpreter would
# call it, or sent for real), or a handler that observes tensors (a barrier in the barrier).
RAISING = {"handler raises": Timeout, "KeyboardInterrupt": KeyboardInterrupt,
           "SIGINT": KeyboardInterrupt, "SIGALRM timer": Timeout}
OBSERVING = ["observes the same tensor", "observes another tensor", "runs mark_step"]
KINDS = ["mark_step", "observe", "auto-cut"]
SIG = signal.SIGUSR1


def cases() -> Iterator[Any]:
    for stage in STAGES:
        for fault in [*RAISING, *OBSERVING]:
            for kind in KINDS:
                if stage == "donation mask" and kind == "observe":
                    continue  # an observation donates nothing: no mask is computed
                if kind == "auto-cut" and (fault in OBSERVING or stage == "donating run"):
                    continue  # as mark_step's, but its exceptions come from the op's call
                if stage == "donating run" and (kind == "observe" or fault in (
                        "handler raises", "KeyboardInterrupt")):
                    continue  # no handler can run there (signals are held): only real ones
                yield pytest.param(stage, fault, kind, id=f"{stage}-{fault}-{kind}")


class Scene:
    """Live tensors of a small training step, their NumPy values, and what handlers saw."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.a_np = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
        self.b_np = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
        self.w_np = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
        self.a, self.b = ml.asarray(self.a_np), ml.asarray(self.b_np)
        self.w = ml.asarray(self.w_np)
        self.seen: list[tuple[str, np.ndarray]] = []  # what observing handlers saw
        self.calls: list[bool] = []  # each handler call: whether the stage was running
        self.inside = False  # the stage is running
        self.fired = [0]  # calls of the stage's function

    def step(self) -> None:
        """One more update of ``w`` (its old buffer is then a donation candidate), and more."""
        self.w = self.w * 0.5 + self.a
        self.w_np = self.w_np * np.float32(0.5) + self.a_np
        self.x = ml.sin(self.a) * self.b
        self.y = ml.exp(self.b) - 1.0

    def expected(self) -> dict[str, np.ndarray]:
        return {"a": self.a_np, "b": self.b_np, "w": self.w_np,
                "x": np.sin(self.a_np) * self.b_np, "y": np.exp(self.b_np) - np.float32(1.0)}

    def tensors(self) -> dict[str, ml.Tensor]:
        return {"a": self.a, "b": self.b, "w": self.w, "x": self.x, "y": self.y}

    def check(self) -> None:
        """Nothing failed, and every tensor equals NumPy's value."""
        tensors, want = self.tensors(), self.expected()
        for name, t in tensors.items():
            assert "failed" not in repr(t), f"{name} failed for good: {t!r}"
        for name, t in tensors.items():
            np.testing.assert_allclose(t.numpy(), want[name], rtol=2e-6, atol=1e-6,
                                       err_msg=name)


@pytest.fixture(autouse=True)
def fresh_caches(tmp_path: Path) -> Iterator[None]:
    """Cold caches (the lowering and the compile run; the disk cache is written), and the
    signal handlers and the timer as they were afterwards."""
    before = ml.cache_dir()
    ml.set_cache_dir(tmp_path / "cache")
    CACHE.reset()
    handlers = {s: signal.getsignal(s) for s in (SIG, signal.SIGALRM, signal.SIGINT)}
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for s, h in handlers.items():
            signal.signal(s, h)
        ml.set_cache_dir(before)


def arrive(fault: str, scene: Scene, held: bool) -> None:
    """The fault arrives here, in the middle of a stage; its handler runs here too, unless
    minilazy holds signals (``held``: then the handler runs once the barrier let them go)."""
    if fault == "handler raises":
        handler = signal.getsignal(SIG)
        assert callable(handler)
        handler(SIG, None)
    if fault == "KeyboardInterrupt":
        raise KeyboardInterrupt
    n = len(scene.calls)
    if fault == "SIGINT":  # Python's own handler: KeyboardInterrupt
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
    elif fault == "SIGALRM timer":
        signal.setitimer(signal.ITIMER_REAL, 0.001)
    else:  # to the process: any thread may take it, the main thread runs the handler
        os.kill(os.getpid(), SIG)
    deadline = time.monotonic() + (0.05 if held else 10.0)
    while len(scene.calls) == n and time.monotonic() < deadline:
        time.sleep(0.001)  # the handler runs in here (a raising one ends the wait)


def install(fault: str, kind: str, scene: Scene) -> None:
    """The handler of the fault's signal: it raises, or it observes tensors."""
    def raising(signum: int, frame: object) -> None:
        scene.calls.append(scene.inside)
        raise Timeout(f"signal {signum}: too slow")

    def observing(signum: int, frame: object) -> None:
        scene.calls.append(scene.inside)
        if fault == "runs mark_step":
            ml.mark_step()
            name = "w"
        elif fault == "observes the same tensor":  # the one the barrier is computing
            name = "x" if kind == "observe" else "w"
        else:
            name = "y"  # outside an observation's barrier; in a mark_step's, not first
        scene.seen.append((name, scene.tensors()[name].numpy()))

    handler = raising if fault in RAISING else observing
    signal.signal(signal.SIGALRM if fault == "SIGALRM timer" else SIG, handler)


def patch(stage: str, fault: str, scene: Scene) -> Callable[[], None]:
    """Make the stage's first call meet the fault; returns what puts the stage back."""
    owner, name = STAGES[stage]
    real = getattr(owner, name)
    calls = [0]

    def stage_with_fault(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] > 1:  # one fault; a handler's own barrier passes
            return real(*args, **kwargs)
        if stage == "donating run":  # the inputs are consumed: now the signal comes
            assert any(args[0].donated) and args[0].ran, "not a donating program's run"
            out = real(*args, **kwargs)
            scene.inside = True
            arrive(fault, scene, held=True)
            scene.inside = False
            return out
        scene.inside = True
        try:
            arrive(fault, scene, held=False)
        finally:
            scene.inside = False
        return real(*args, **kwargs)

    setattr(owner, name, stage_with_fault)
    scene.fired = calls
    return lambda: setattr(owner, name, real)


@pytest.mark.parametrize(("stage", "fault", "kind"), list(cases()))
def test_a_signal_at_any_stage_of_a_barrier_loses_nothing(stage: str, fault: str,
                                                          kind: str) -> None:
    """A signal while one stage of a barrier runs: a handler's exception reaches the caller
    with every tensor as it was, a handler's barrier sees right values, the outer barrier
    completes; every tensor equals NumPy's value afterwards and the next step runs."""
    scene = Scene(sum(map(ord, stage + fault + kind)))
    scene.step()
    if stage == "donating run":  # warm: the program has run, so it consumes its input
        for _ in range(2):
            ml.mark_step()
            scene.step()
        ml.reset_metrics()
    install(fault, kind, scene)
    restore = patch(stage, fault, scene)
    raised: type[BaseException] | None = None
    try:
        if kind == "mark_step":
            ml.mark_step()
        elif kind == "observe":
            scene.x.numpy()
        else:
            with ml.policy(max_pending_nodes=2):
                scene.x + 1.0  # the op that reaches the limit: an auto-cut (a mark_step)
    except (Timeout, KeyboardInterrupt) as e:
        raised = type(e)
    finally:
        restore()
    assert scene.fired[0] >= 1, "the stage was not reached"
    held = stage == "donating run"
    if held:
        assert ml.metrics().donations > 0
    assert raised is RAISING.get(fault), "the handler's exception must reach the caller"
    if fault in ("KeyboardInterrupt", "SIGINT"):
        assert scene.calls == []
    else:  # the handler ran in the stage, or (signals held) once the results were rebound
        assert scene.calls == [not held]
    want = scene.expected()
    for name, value in scene.seen:
        np.testing.assert_allclose(value, want[name], rtol=2e-6, atol=1e-6, err_msg=name)
    scene.check()
    scene.step()  # the next step
    ml.mark_step()
    scene.check()


# A handler that runs inside a garbage-collector callback (JAX has one) has its exception
# printed and ignored by Python: that barrier just goes on.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_timer_raising_in_many_barriers_never_fails_a_step() -> None:
    """A periodic timer whose handler raises in the middle of 60 training steps' barriers
    (cached runs, donating runs, compiles): each interrupted step stays pending, the next
    barrier computes it, and no step is lost or failed for good (formerly one timeout failed
    the parameter and every later step raised it again)."""
    w_np = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    w = ml.asarray(w_np)
    armed = [False]

    def on_alarm(signum: int, frame: object) -> None:
        if armed[0]:  # only inside a barrier: the loop's own lines are not interrupted
            armed[0] = False
            raise Timeout("step too slow")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.0003, 0.0003)
    timeouts = 0
    for step in range(60):
        if step % 10 == 0:
            ml.clear_cache()  # a compile now and then: a long barrier
        w = w * 0.5 + 1.0
        w_np = w_np * np.float32(0.5) + np.float32(1.0)
        try:
            armed[0] = True
            ml.mark_step()
            armed[0] = False
        except Timeout:
            timeouts += 1
            # where the user handles it: minilazy's 64-bit mode is off again already
            assert not jax.config.jax_enable_x64, f"64-bit mode left on at step {step}"
    signal.setitimer(signal.ITIMER_REAL, 0)
    assert timeouts > 0, "no barrier was interrupted: the test tests nothing"
    assert "failed" not in repr(w)
    np.testing.assert_allclose(w.numpy(), w_np, rtol=2e-6)


class Handlers:
    """A handler as a bound method and as a callable object."""

    def method(self, signum: int, frame: object) -> None:
        raise Timeout("from a method")

    def __call__(self, signum: int, frame: object) -> None:
        raise Timeout("from a callable object")


def from_function(signum: int, frame: object) -> None:
    raise Timeout("from a function")


def from_partial(message: str, signum: int, frame: object) -> None:
    raise Timeout(message)


@pytest.mark.parametrize("handler", [from_function, Handlers().method, Handlers(),
                                     functools.partial(from_partial, "from a partial")],
                         ids=["function", "method", "callable object", "partial"])
def test_an_exception_a_handler_raised_is_told_from_the_programs_own(handler: Any) -> None:
    # What decides whether a failing program's tensors fail for good: only the program's own.
    signal.signal(SIG, handler)
    with pytest.raises(Timeout) as raised:
        os.kill(os.getpid(), SIG)
        time.sleep(5)  # the handler raises in here
    assert signals.interruption(raised.value) is raised.value
    try:
        raise Timeout("raised by the program itself")
    except Timeout as e:
        assert signals.interruption(e) is None



@pytest.mark.parametrize("interruption", ["handler", "KeyboardInterrupt"])
def test_an_interruption_a_library_fails_to_unwind_still_reaches_the_caller(
        monkeypatch: pytest.MonkeyPatch, interruption: str) -> None:
    # JAX's traceback filter raised TypeError on a frame a handler had interrupted (seen with a
    # 2 ms timer during lowering): the caller got TypeError and the tensor failed for good.
    signal.signal(SIG, from_function)  # raises Timeout
    real = lowering.lower

    def lower(*args: Any) -> Any:
        try:
            if interruption == "handler":
                from_function(SIG, None)  # as the interpreter calls it, between two bytecodes
            raise KeyboardInterrupt
        except BaseException:
            raise TypeError("'NoneType' object cannot be interpreted as an integer") from None

    x_np = np.arange(5.0, dtype=np.float32)
    y = ml.exp(ml.asarray(x_np) * 2.0)
    monkeypatch.setattr(lowering, "lower", lower)
    with pytest.raises(Timeout if interruption == "handler" else KeyboardInterrupt):
        y.numpy()
    monkeypatch.setattr(lowering, "lower", real)
    np.testing.assert_allclose(y.numpy(), np.exp(x_np * 2.0), rtol=1e-6)  # pending, not failed


def test_held_signals_come_back_even_when_one_interrupts_their_putting_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A handler that raises while the held handlers are put back (its own was put back
    first) must not leave another signal held for good: that one is passed on."""
    signal.signal(SIG, from_function)  # raises Timeout
    real = signals._C

    class Interrupted:  # the signal module, where a handler raises after the first is back
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def signal(self, signum: int, handler: Any) -> Any:
            old = real.signal(signum, handler)
            if handler is signal.default_int_handler:  # SIGINT's is back: now, a timeout
                raise Timeout("while the handlers are put back")
            return old

    monkeypatch.setattr(signals, "_C", Interrupted())
    with pytest.raises(Timeout, match="put back"):
        with signals.held(True):
            pass
    monkeypatch.undo()
    with pytest.raises(Timeout, match="from a function"):  # SIGUSR1: passed on to its handler
        os.kill(os.getpid(), SIG)
        time.sleep(5)
