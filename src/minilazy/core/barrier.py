"""The barrier: *when* the pending graph is cut, *what* is materialised, and nothing lost.

A barrier is explicit (``mark_step``, ``sync``), an observation (``float(t)``, ``t.numpy()``),
an auto-cut (too many pending nodes live), or every op in eager mode. Each drives cut -> compile
cache -> lowering -> runtime and rebinds what it materialised to ``DATA`` leaves of the results.

Failure-atomic: a tensor is rebound only to a value that exists. When a program fails, the
failing tensors are found (the group split until each failure stands alone) and hold their
error, raised when observed; the rest is materialised. An interruption (Ctrl-C) leaves every
tensor pending. Barriers run one at a time (the engine lock), from any thread, re-entrant (a
signal handler's). The parts ``import minilazy`` installs (:data:`PARTS`) say which buffers a
program may consume, run a graph too deep for one program in stages, tell a signal handler's
exception apart, and tell a gradient about each cut; without them, the same values.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol, TypeVar

import numpy as np

from minilazy.core import runtime
from minilazy.core.cache import CACHE
from minilazy.core.cut import Cut, cut, roots_of
from minilazy.core.ir import Device, Failure, Node, Op, data_leaf, failed_leaf
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import (
    ENGINE,
    LIVE,
    Handle,
    current_policy,
    live_pending_nodes,
)

# What ENGINE.listeners hold (the debugger is one): called after every barrier with (cause, cut,
# donation mask, compiled (not a cache hit), seconds).
BarrierListener = Callable[[str, Cut, tuple[bool, ...], bool, float], None]
Bind = Callable[[list[Node]], None]  # what receives a program's result leaves
T = TypeVar("T")


class Donor(Protocol):
    """Which input buffers a program may consume (``minilazy.parts.refcounts``)."""

    def mask(self, c: Cut, roots: Sequence[Node]) -> tuple[bool, ...]:
        """For each of ``c``'s parameters, whether its buffer may become an output's."""


class Stager(Protocol):
    """What runs a graph too deep for one program in stages (``minilazy.parts.staging``)."""

    def staged(self, roots: Sequence[Node], c: Cut, cause: str, bind: Bind) -> bool:
        """Run ``c`` in stages if it is too deep for one program; whether it did."""


class Signals(Protocol):
    """Signal safety (``minilazy.parts.signals``): interruptions told apart, signals held."""

    def interruption(self, error: BaseException) -> BaseException | None:
        """The exception that interrupted a program, if ``error`` is one or came of one."""

    def held(self, active: bool) -> contextlib.AbstractContextManager[None]:
        """Hold back signals inside the block (when ``active``)."""


class Origins(Protocol):
    """What learns which node each result leaf stands for (``minilazy.autodiff``'s tape)."""

    def bound(self, roots: Sequence[Node], leaves: Sequence[Node]) -> None:
        """``leaves`` now stand for ``roots`` (a gradient walks back through the cut)."""


class Parts:
    """The parts the barrier asks (``minilazy.parts``, ``minilazy.autodiff.origins``).

    Without them: nothing is donated, a deep graph compiles in one piece, a program's every
    exception but ``KeyboardInterrupt`` is its own, and no gradient learns of a cut.
    """

    def __init__(self) -> None:
        self.donor: Donor | None = None
        self.stager: Stager | None = None
        self.signals: Signals | None = None
        self.origins: Origins | None = None


PARTS: Final = Parts()


class ProgramFailed(Exception):
    """A program's own failure, ``error``: the one exception that fails tensors for good."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def interruption(error: BaseException) -> BaseException | None:
    """The exception that interrupted a program, if ``error`` is (or came of) one, else None.

    ``KeyboardInterrupt``, or a signal handler's exception (the installed :class:`Signals`).
    """
    if PARTS.signals is not None:
        return PARTS.signals.interruption(error)
    return None if isinstance(error, Exception) else error


def own(step: Callable[..., T], *args: Any) -> T:
    """``step(*args)``, a program's compile or run: what it raises is :class:`ProgramFailed`.

    But an :func:`interruption`, raised as it is: the program may well run next time.
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


# -- one program: cut, compile or hit, execute -------------------------------------------------
def execute(roots: Sequence[Node], device: Device, donate: bool, cause: str, bind: Bind) -> None:
    """Run the program of ``roots`` on ``device`` and hand their result leaves to ``bind``.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2,)) * 3.0
        >>> execute([x._node], x.device, False, "sync", lambda leaves: print(leaves))
        [<Node data f64[2]>]
    """
    c = cut(roots, device)
    if ENGINE.failures:
        own(_check_inputs, c)
    donated = PARTS.donor.mask(c, roots) if donate and PARTS.donor else (False,) * len(c.params)
    start = time.perf_counter()
    entry = CACHE.lookup(c, donated)
    hit = entry is not None
    if entry is None:
        if PARTS.stager is not None and PARTS.stager.staged(roots, c, cause, bind):
            return  # too deep for one program: run in stages (a cached key never is)
        entry = own(CACHE.compile, c, donated)
    else:
        COUNTERS.cache_hits += 1
    args = [*(p.payload for p in c.params), *packed(c, [s.payload for s in c.scalars])]
    held = PARTS.signals.held(any(donated) and entry.ran) if PARTS.signals else None
    with held or contextlib.nullcontext():
        try:
            outs = own(runtime.execute, entry, args)
            if entry.placements is None:
                bind([data_leaf(b, r.shape, r.dtype) for r, b in zip(roots, outs)])
            else:  # results over a mesh: their leaves say how they are split
                bind([data_leaf(b, r.shape, r.dtype, s)
                      for r, b, s in zip(roots, outs, entry.placements)])
        except Exception as e:  # the tensors are as they were, unless donated inputs are gone
            _mark_lost(c, donated, e.error if isinstance(e, ProgramFailed) else e)
            raise
    seconds = time.perf_counter() - start
    for listener in ENGINE.listeners:
        listener(cause, c, donated, not hit, seconds)


def _check_inputs(c: Cut) -> None:
    """An input that failed before fails this program too, with its error."""
    for p in c.params:
        if type(p.payload) is Failure:
            p.payload.throw()


def _mark_lost(c: Cut, donated: tuple[bool, ...], error: Exception) -> None:
    """Donated inputs of a program that failed are gone: reading them raises its error."""
    for p, d in zip(c.params, donated):
        if d and runtime.is_deleted(p.payload):
            p.payload = Failure(error)  # the one payload change a leaf sees: lost data
            ENGINE.failures += 1


def packed(c: Cut, values: Sequence[Any]) -> list[np.ndarray[Any, Any]]:
    """The scalar parameters' ``values``, one array per dtype group (see ``Cut.scalars``)."""
    if not c.groups:  # too many to pack (see cut.PACK_LIMIT): one argument each
        return [s.dtype.type(v) for s, v in zip(c.scalars, values)]
    if len(c.groups) == 1:
        return [np.array(values, c.groups[0][0])]
    out, start = [], 0
    for dtype, n in c.groups:
        out.append(np.array(values[start:start + n], dtype))
        start += n
    return out


# -- a group of tensors on one device ----------------------------------------------------------
def _run(group: Sequence[Handle], device: Device, donate: bool, cause: str) -> None:
    """Materialise ``group`` in one program (a few for a very deep graph), then rebind it."""
    roots = roots_of([t._node for t in group])

    def bind(leaves: list[Node]) -> None:
        results = dict(zip(roots, leaves))
        if PARTS.origins is not None:
            PARTS.origins.bound(roots, leaves)
        for t in group:  # each tensor still on its root (an inner barrier may have rebound it)
            t._node = results.get(t._node, t._node)

    execute(roots, device, donate, cause, bind)


def _fail(t: Handle, error: Exception) -> None:
    """``t`` cannot be computed: from now on it holds ``error``, raised when it is observed."""
    t._node = failed_leaf(t._node, error)
    ENGINE.failures += 1


def _settle(group: Sequence[Handle], device: Device, donate: bool, cause: str
            ) -> Exception | None:
    """Materialise ``group`` in one program; if it fails, what can be, and fail the rest.

    A failed group is split in halves until each failure stands alone (a few programs more for
    one bad tensor among many); the parts run without donating. Returns the first failing
    tensor's error; any other exception is raised at once (the rest stays pending).
    """
    first: Exception | None = None
    parts = [list(group)]
    while parts:
        part = [t for t in parts.pop() if t._node.op is not Op.DATA]  # failed leaves are DATA
        if not part:
            continue
        try:
            _run(part, device, donate, cause)
        except ProgramFailed as failed:
            e = failed.error
            if len(part) == 1:
                _fail(part[0], e)
                first = first or e
            else:
                mid = len(part) // 2
                parts += [part[mid:], part[:mid]]
        donate = False
    return first


def materialise(tensors: Sequence[Handle], cause: str, donate: bool = False) -> None:
    """A barrier named ``cause``: materialise the pending ``tensors``; raise the first failure."""
    with ENGINE.lock:
        failure = _attempt(tensors, cause, donate)
    if failure is not None:
        try:
            raise failure
        finally:
            del failure  # the frame must not hold its own exception: a cycle


def _attempt(tensors: Sequence[Handle], cause: str, donate: bool) -> Exception | None:
    """Materialise the pending ``tensors``: one program per device, nothing lost on failure."""
    COUNTERS.barriers += 1
    COUNTERS.barrier_causes[cause] += 1
    by_device: dict[Device, list[Handle]] = {}
    for t in tensors:
        if t._node.op is not Op.DATA:
            by_device.setdefault(t._device, []).append(t)
    if not by_device:
        return None
    runtime.check_usable()
    failure: Exception | None = None
    for device, group in by_device.items():
        error = _settle(group, device, donate, cause)  # every device's group runs
        failure = failure or error
    return failure


def mark_step(cause: str = "mark_step") -> None:
    """Barrier: materialise every live tensor with pending ops, in one execution per device.

    Tensors no longer referenced are never computed; buffers nothing reads any more are donated
    (``BarrierPolicy.donate``). A tensor that cannot be computed raises its error here, once,
    after everything else is materialised, and again whenever it is observed.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2,)) + 1.0
        >>> ml.mark_step()
        >>> x.is_pending
        False
    """
    with ENGINE.lock:
        try:
            materialise(LIVE.tensors(), cause, current_policy().donate)
        finally:
            ENGINE.pending = 0


def sync(*tensors: Handle) -> None:
    """Barrier: materialise just ``tensors`` (and what they depend on), nothing else.

    Example:
        >>> import minilazy as ml
        >>> a, b = ml.ones((2,)) * 2.0, ml.ones((2,)) * 3.0
        >>> ml.sync(a)
        >>> a.is_pending, b.is_pending
        (False, True)
    """
    for t in tensors:
        if not isinstance(getattr(t, "_node", None), Node):
            raise TypeError(f"sync() takes tensors, got {type(t).__name__}")
    materialise(tensors, "sync")


def wait(*tensors: Handle) -> None:
    """Barrier: materialise ``tensors`` like :func:`sync`, then wait until their values exist.

    Execution is asynchronous; use this to time a computation, not to get its result.

    Example:
        >>> import minilazy as ml
        >>> y = ml.ones((2,)) * 2.0
        >>> ml.wait(y)
        >>> y.is_pending
        False
    """
    sync(*tensors)
    for t in tensors:
        payload = t._node.payload
        if type(payload) is Failure:
            payload.throw()
        runtime.block_until_ready(payload)


# -- what recording calls: eager mode and the auto-cut ----------------------------------------
def after_record(tensor: Handle) -> None:
    """What ``record`` calls in eager mode (run ``tensor`` now), or at the pending limit.

    At the limit the live graph is counted, and cut if still over (the rest was dead).

    Example:
        >>> import minilazy as ml
        >>> with ml.eager():
        ...     (ml.ones((2,)) + 1.0).is_pending
        False
    """
    p = current_policy()
    if p.eager:
        materialise([tensor], "eager")
        return
    with ENGINE.lock:
        live = LIVE.tensors()
        n = live_pending_nodes(live, p.max_pending_nodes)
        if n < p.max_pending_nodes:  # the rest is dead: no cut; count again in a while
            ENGINE.pending = min(n, p.max_pending_nodes // 2)
            return
        try:  # a program's failure is not raised here: the failing tensors hold it
            e = _attempt(live, "auto", p.donate)
        finally:
            ENGINE.pending = 0
        if e is not None:
            warnings.warn(f"minilazy: a tensor failed at an auto-cut and holds its error, "
                          f"raised when it is observed: {type(e).__name__}: {e}",
                          RuntimeWarning, stacklevel=3)
