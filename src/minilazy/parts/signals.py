"""Signal safety: a signal handler's exception is no program's failure, and never loses data.

A part of the engine (``import minilazy`` installs it as the barrier's ``PARTS.signals``). A
Python signal handler may raise (a timeout) anywhere in a barrier, also inside JAX, which may
wrap it. This part tells the barrier that such an exception, or one raised from or while
handling it, is an *interruption*: the tensors stay pending and the next barrier tries again,
where a program's own failure fails them for good. And it holds signals back while a donating
program runs: its inputs are gone once it runs, so a handler's exception before its results
are rebound would lose both. Without this part, every exception of a program but
``KeyboardInterrupt`` is its own, and signals are never held. Never imports jax.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final

from minilazy.core.barrier import PARTS, Parts

_SIGNALS: Final = tuple(signal.valid_signals())
# The C functions under the signal module's wrappers (which turn each handler into an enum):
# 15x faster, and the handlers are looked up on every donating barrier.
_C: Final[Any] = sys.modules.get("_signal", signal)


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


@contextlib.contextmanager
def held(active: bool) -> Iterator[None]:
    """Hold back signals (Ctrl-C, a timer's) while a donating program runs and is rebound.

    Its inputs are gone once it runs: a handler's exception before the rebinding would lose
    both inputs and results. Signals caught meanwhile are raised again at the end. (In the
    main thread only: Python runs handlers there.)

    Example:
        >>> with held(True):
        ...     pass  # a Ctrl-C here would be raised at the end of the block
    """
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    saved: dict[int, Callable[..., Any]] = {}
    holding = [True]

    def note(signum: int, frame: Any) -> None:
        if holding[0]:
            caught.append(signum)
        else:  # over, but a handler raised while the others were put back: pass it on
            saved[signum](signum, frame)

    try:
        try:
            for s, handler in _handlers().items():
                saved[s] = handler
                _C.signal(s, note)
        except (ValueError, TypeError, OSError):  # signals unavailable (an embedded interpreter)
            pass
        yield
    finally:
        holding[0] = False
        for s, handler in saved.items():
            _C.signal(s, handler)
        for s in dict.fromkeys(caught):
            signal.raise_signal(s)


class Guard:
    """The :class:`~minilazy.core.barrier.Signals` of this module.

    Example:
        >>> import minilazy as ml
        >>> type(PARTS.signals).__name__
        'Guard'
    """

    def interruption(self, error: BaseException) -> BaseException | None:
        """:func:`interruption`."""
        return interruption(error)

    def held(self, active: bool) -> contextlib.AbstractContextManager[None]:
        """:func:`held`."""
        return held(active)


def install(parts: Parts = PARTS) -> None:
    """Let the barrier tell interruptions apart and hold signals (what ``import minilazy`` does).

    Example:
        >>> p = Parts()
        >>> install(p)
        >>> type(p.signals).__name__
        'Guard'
    """
    parts.signals = Guard()
