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
        return (False,) * len(c.params) if self.donor is None else self.donor.mask(c, roots)


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


def interruption(error: BaseException) -> BaseException | None:
    """The exception that interrupted a program, if ``error`` is one or came of one.

    A signal handler's exception, or one that is no ``Exception`` (``KeyboardInterrupt``):
    ``error``, one it was raised from (a library that wraps errors) or while handling (a library
    that failed unwinding it: JAX's traceback filter raised ``TypeError`` on such a frame).

    Example:
        >>> interruption(ValueError("raised by the program itself")) is None
        True
    """
    codes = {_code(h) for h in _handlers().values()} - {None}
    e: BaseException | None = error
    for _ in range(8):  # a few links of the chain
        if e is None or not isinstance(e, Exception):
            return e
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code in codes:
                return e
            tb = tb.tb_next
        e = e.__cause__ or e.__context__
    return None


class ProgramFailed(Exception):
    """A program's own failure, ``error`` (lowering, compiling, running it, a failed input).

    The one exception that fails tensors for good (the barrier unwraps it).
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def own(step: Callable[..., T], *args: Any) -> T:
    """``step(*args)``: it makes or runs a program, so what it raises is :class:`ProgramFailed`.

    Unless it is (or came of) an :func:`interruption`: a signal handler's timeout, say (the
    same program may well run next time), or ``KeyboardInterrupt``; that is raised as it is.

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
        cause = interruption(e)
        if cause is e:
            raise
        if cause is not None:
            raise cause from None
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
