"""Donation: which input buffers a program may consume; signals, which must not lose them.

Beside the cut; the barrier asks it before each run. A buffer is *donated* when the program writes
its output into it (an in-place parameter update then needs no new memory). That destroys the input,
so it is done only when nothing else can read it again: no live tensor holds it, no node outside the
program's cut reaches it (reference counts tell: another graph, an autodiff walk, a printed graph,
another thread's op in progress), and no second running thread makes tensors. The barrier asks
:func:`mask` before compiling (the mask is part of the program's cache key).

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
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TypeVar

import numpy as np

from minilazy.core.attrs import NONE
from minilazy.core.cut import Cut, cut
from minilazy.core.ir import Device, Node, Op
from minilazy.core.state import LIVE, Handle


def _reference_count(order: Sequence[Node]) -> int:
    return sum(map(sys.getrefcount, order))


@functools.cache
def _own_references() -> int:
    """How many references per node counting itself adds (measured on first use: Pythons differ).

    Example:
        >>> _own_references() >= 0
        True
    """
    roots = [Node(Op.NEG, (Node(Op.DATA, (), NONE, (), np.dtype("f4"), None),), NONE, (),
                  np.dtype("f4"))]
    c = cut(roots, Device("cpu", 0))
    # each node: order, positions; the leaf: params and one operand; the root: roots
    extra = _reference_count(c.order) - 2 * 2 - 2 - 1
    assert extra % 2 == 0, extra
    return extra // 2


def _outside(c: Cut, roots: Sequence[Node], live: Sequence[Handle], total: int) -> set[Node]:
    """The nodes of ``c`` that something outside the barrier references, and all below them.

    Their buffers must survive the program. A pending node is referenced from outside when
    another graph, an autodiff walk, a printed graph or another thread's op in progress holds
    it; reference counts tell (PyTorch/XLA checks its buffers' use counts for the same reason).
    ``total`` is the nodes' reference count, taken before anything of this barrier's
    bookkeeping held them. Fast path: the total is what the cut, the roots and the live tensors
    account for.
    """
    position, each = c.positions, 2 + _own_references()
    held = sum(1 for t in live if t._node in position)
    expected = (len(c.order) * each + len(c.params) + len(c.scalars) + len(roots) + c.edges
                + held)
    if total == expected:
        return set()
    counts = list(map(sys.getrefcount, c.order))  # each + its own, as in _reference_count
    holders = Counter([t._node for t in live if t._node in position])
    users = Counter([o for n in c.order for o in n.operands])
    params = set(c.params) | set(c.scalars)
    root_set = set(roots)
    blocked: set[Node] = set()
    for i in range(len(c.order) - 1, -1, -1):  # users before their operands
        n = c.order[i]
        own = each + users[n] + (n in params) + (n in root_set) + holders[n]
        if n in blocked or counts[i] > own:
            blocked.add(n)
            blocked.update(n.operands)
    return blocked


def mask(c: Cut, roots: Sequence[Node]) -> tuple[bool, ...]:
    """Which parameters' buffers to give to the outputs.

    Those that no live tensor holds and nothing outside the cut reads, and only as many per
    shape and dtype as there are outputs to reuse them (XLA aliases like for like, and warns
    about the rest). None while several running threads make tensors: another thread could
    take a pending node from a tensor between this check and the program, and read the buffer
    after it is gone.
    """
    if LIVE.shared():  # another thread may be about to read any buffer: keep them all
        return (False,) * len(c.params)
    live = LIVE.tensors()  # (tensors, ids and shapes: no new reference to any node)
    held = {id(t._node) for t in live}
    wanted = Counter([(r.shape, r.dtype) for r in roots])
    mask = [id(p) not in held and wanted[p.shape, p.dtype] > 0 for p in c.params]
    if not any(mask):  # nothing to give (a step's inputs all held): no counting
        return tuple(mask)
    total = _reference_count(c.order)  # before the sets of _outside hold nodes too
    blocked = _outside(c, roots, live, total)
    for i, p in enumerate(c.params):
        mask[i] = mask[i] and p not in blocked and wanted[p.shape, p.dtype] > 0
        if mask[i]:
            wanted[p.shape, p.dtype] -= 1
    return tuple(mask)


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


def raised_by_signal_handler(error: BaseException) -> bool:
    """Whether a signal handler's code raised ``error`` (or the error it was raised from).

    Example:
        >>> raised_by_signal_handler(ValueError("raised by the program itself"))
        False
    """
    codes = {_code(h) for h in _handlers().values()} - {None}
    e: BaseException | None = error
    for _ in range(8):  # through a few ``raise ... from`` (a library that wraps errors)
        tb = None if e is None else e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code in codes:
                return True
            tb = tb.tb_next
        e = None if e is None else e.__cause__
    return False


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
    next time), or it is no ``Exception`` (``KeyboardInterrupt``): then it is raised as it is.

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
        if raised_by_signal_handler(e):
            raise
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
