"""Donation: which input buffers a program may consume; signals, which must not lose them.

Beside the cut; the barrier asks it before each run. A buffer is *donated* when the program writes
its output into it (an in-place parameter update then needs no new memory). That destroys the input,
so it may be done only when nothing else can read it again; which buffers those are is the
installed :class:`Donor`'s to say (``minilazy.parts.refcounts``: no live tensor, no other graph,
no other thread). The barrier asks :data:`DONATION` before compiling (the mask is part of the
program's cache key); with no donor, nothing is donated and the engine computes the same values.

A signal handler may raise (a timeout) anywhere in a barrier: signals are held while a donating
program runs, and a handler's exception is never taken for the program's own failure, the one
that fails tensors for good (:func:`own`). Never imports jax.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Protocol, TypeVar

from minilazy.core.cut import Cut
from minilazy.core.ir import Node


class Donor(Protocol):
    """What chooses the buffers a program may consume (``minilazy.parts.refcounts``)."""

    def mask(self, c: Cut, roots: Sequence[Node]) -> tuple[bool, ...]:
        """For each of ``c``'s parameters, whether its buffer may become an output's."""


class Donation:
    """Where the barrier finds the installed :class:`Donor`: without one, nothing is donated.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.asarray([1.0, 2.0])
        >>> c = cut([(x + 1.0)._node], x.device)
        >>> Donation().mask(c, c.order[-1:])  # no donor: every buffer is kept
        (False,)
    """

    def __init__(self) -> None:
        self.donor: Donor | None = None

    def mask(self, c: Cut, roots: Sequence[Node]) -> tuple[bool, ...]:
        """Which of ``c``'s parameters' buffers to give to the outputs ``roots``."""
        if self.donor is None:
            return (False,) * len(c.params)
        return self.donor.mask(c, roots)


DONATION: Final = Donation()


# -- signals: a Python handler may run anywhere in a barrier -----------------------------------
_SIGNALS: Final = tuple(signal.valid_signals())
# The C functions under the signal module's wrappers (which turn each handler into an enum):
# 15x faster, and the handlers are looked up on every donating barrier.
_C: Final[Any] = sys.modules.get("_signal", signal)
T = TypeVar("T")


def _handlers() -> dict[int, Callable[..., Any]]:
    """The signals that run Python code when they arrive (Ctrl-C's too), and their handlers."""
    return {s: h for s in _SIGNALS if callable(h := _C.getsignal(s))}


def _code(handler: object) -> object:
    """The code a Python handler runs (a function, a method, a partial, a callable object)."""
    while isinstance(handler, functools.partial):
        handler = handler.func
    handler = getattr(handler, "__func__", handler)
    return getattr(handler, "__code__", None) or getattr(type(handler).__call__, "__code__", None)


def _interruption(error: BaseException) -> BaseException | None:
    """The exception that interrupted the program, if ``error`` is one or came of one.

    A signal handler's exception, or one that is no ``Exception`` (``KeyboardInterrupt``):
    ``error`` itself, one it was raised from (a library that wraps errors), or one it was raised
    while handling (a library that failed unwinding it: JAX's traceback filter raised
    ``TypeError`` on a frame a handler interrupted).
    """
    codes = {_code(h) for h in _handlers().values()} - {None}
    todo: list[BaseException] = [error]
    seen: set[int] = set()
    while todo and len(seen) < 16:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if not isinstance(e, Exception):
            return e
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code in codes:
                return e
            tb = tb.tb_next
        todo += [c for c in (e.__context__, e.__cause__) if c is not None]
    return None


def raised_by_signal_handler(error: BaseException) -> bool:
    """Whether a signal handler's code raised ``error`` (or one it came of: see :func:`own`).

    Example:
        >>> raised_by_signal_handler(ValueError("raised by the program itself"))
        False
    """
    return _interruption(error) is not None


class ProgramFailed(Exception):
    """A program's own failure, ``error`` (lowering, compiling, running it, a failed input).

    The one exception that fails tensors for good (the barrier unwraps it).
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def own(step: Callable[..., T], *args: Any) -> T:
    """``step(*args)``: it makes or runs a program, so what it raises is :class:`ProgramFailed`.

    Unless a signal handler raised it meanwhile (a timeout, say: the same program may well run
    next time), or it is no ``Exception`` (``KeyboardInterrupt``): then that exception is
    raised, also where a library failed while unwinding it (the caller gets the handler's).

    Example:
        >>> try:
        ...     own(int, "x")
        ... except ProgramFailed as e:
        ...     type(e.error).__name__
        'ValueError'
    """
    try:
        return step(*args)
    except Exception as e:
        interruption = _interruption(e)
        if interruption is e:
            raise
        if interruption is not None:
            raise interruption from None
        raise ProgramFailed(e) from e


@contextlib.contextmanager
def interrupts_deferred(active: bool) -> Iterator[None]:
    """Hold back signals (Ctrl-C, a timer's) while a donating program runs and is rebound.

    Its inputs are gone once it runs: a handler's exception before the rebinding would lose
    both inputs and results. Signals caught meanwhile are raised again at the end. (In the
    main thread only: Python runs handlers there.)
    """
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held: dict[int, Callable[..., Any]] = {}
    holding = [True]

    def note(signum: int, frame: Any) -> None:
        if holding[0]:
            caught.append(signum)
        else:  # over, but a handler raised while the others were put back: pass it on
            held[signum](signum, frame)

    try:
        try:
            for s, handler in _handlers().items():
                held[s] = handler
                _C.signal(s, note)
        except (ValueError, TypeError, OSError):  # signals unavailable (an embedded interpreter)
            pass
        yield
    finally:
        holding[0] = False
        for s, handler in held.items():
            _C.signal(s, handler)
        for s in dict.fromkeys(caught):
            signal.raise_signal(s)
