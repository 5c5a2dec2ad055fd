"""The barrier: *when* the pending graph is cut, *what* is materialised, and nothing lost.

A barrier is explicit (``mark_step``, ``sync``), an observation (``float(t)``, ``t.numpy()``),
an auto-cut (too many pending nodes live), or every op in eager mode. Each drives cut -> compile
cache -> lowering -> runtime and rebinds what it materialised to ``DATA`` leaves of the results.

Barriers are failure-atomic: a tensor is rebound only to a value that exists, so when a
program fails to compile or run, every tensor is as it was before. The failing tensors are then
found (the group is split until each failure stands alone), turned into failed leaves that
re-raise their error when observed, and everything else is materialised. Only a program's own
failure does that: any other exception (Ctrl-C, a signal handler's timeout) leaves every
tensor pending, and the next barrier tries again. Buffers are donated only when nothing outside
the program still reads them, and never to a program's first run. Barriers run one at a time
(the engine lock), from any thread: ``mark_step`` materialises the live tensors of every thread;
a signal handler may run one inside another (re-entrant: each rebinds what is still its own).
"""

from __future__ import annotations

import contextlib
import functools
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minilazy.core import donation, runtime
from minilazy.core.attrs import NONE
from minilazy.core.cache import CACHE
from minilazy.core.cut import Cut, bands, cut, roots_of
from minilazy.core.ir import Device, Failure, Node, Op, data_leaf, failed_leaf
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import (
    ENGINE,
    LIVE,
    OVERRIDE,
    BarrierPolicy,
    Handle,
    current_policy,
    live_pending_nodes,
    replaced,
    user_site,
)

# What ENGINE.listeners hold (the debugger is one, from minilazy.inspect): called with (cause,
# cut, donation mask, compiled (not a cache hit), seconds) after every barrier.
BarrierListener = Callable[[str, Cut, tuple[bool, ...], bool, float], None]


@contextlib.contextmanager
def policy(p: BarrierPolicy | None = None, **changes: Any) -> Iterator[BarrierPolicy]:
    """Use ``p`` (or the current policy with ``changes``) inside a ``with`` block.

    The block's policy holds in this thread (and async task) only.

    Example:
        >>> import minilazy as ml
        >>> with ml.policy(observe_all=True) as p:
        ...     p.observe_all
        True
    """
    new = replaced(p, changes)
    token = OVERRIDE.set(new)
    try:
        yield new
    finally:
        OVERRIDE.reset(token)


def eager() -> contextlib.AbstractContextManager[BarrierPolicy]:
    """Run every op as it is recorded (op by op), inside a ``with`` block: for debugging.

    Example:
        >>> import minilazy as ml
        >>> with ml.eager():
        ...     y = ml.ones((2,)) * 3.0
        ...     y.is_pending
        False
    """
    return policy(eager=True)


# -- one program: cut, compile or hit, execute -------------------------------------------------
Bind = Callable[[list[Node]], None]


def _execute(roots: Sequence[Node], device: Device, donate: bool, cause: str, bind: Bind) -> None:
    """Run the program of ``roots`` and hand their result leaves to ``bind``."""
    c = cut(roots, device)
    if ENGINE.failures:
        donation.own(_check_inputs, c)
    donated = donation.DONATION.mask(c, roots) if donate else (False,) * len(c.params)
    start = time.perf_counter()
    entry = CACHE.lookup(c, donated)
    hit = entry is not None
    if entry is None:
        limit = current_policy().max_depth
        found = bands(c.order, limit) if len(c.order) > limit else None
        if found is not None:  # too deep for one program (a cached key never is)
            _stages(roots, c.order, found, device, cause, bind)
            return
        entry = donation.own(CACHE.compile, c, donated)
    else:
        COUNTERS.cache_hits += 1
    args = [*(p.payload for p in c.params), *_packed(c)]
    with donation.interrupts_deferred(any(donated) and entry.ran):
        try:
            outs = donation.own(runtime.execute, entry, args)
            if entry.placements is None:
                bind([data_leaf(b, r.shape, r.dtype) for r, b in zip(roots, outs)])
            else:  # results on a mesh: their leaves say how they are split
                bind([data_leaf(b, r.shape, r.dtype, s or NONE)
                      for r, b, s in zip(roots, outs, entry.placements)])
        except Exception as e:  # the tensors are as they were, unless donated inputs are gone
            _mark_lost(c, donated, e.error if isinstance(e, donation.ProgramFailed) else e)
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


def _packed(c: Cut) -> list[np.ndarray[Any, Any]]:
    """The scalar parameters' values, one array per dtype group (see ``Cut.scalars``)."""
    if not c.groups:  # too many to pack (see cut.PACK_LIMIT): one argument each
        return [s.dtype.type(s.payload) for s in c.scalars]
    values = [s.payload for s in c.scalars]
    if len(c.groups) == 1:
        return [np.array(values, c.groups[0][0])]
    out, start = [], 0
    for dtype, n in c.groups:
        out.append(np.array(values[start:start + n], dtype))
        start += n
    return out


def _store(into: dict[Node, Node], nodes: list[Node], leaves: list[Node]) -> None:
    into.update(zip(nodes, leaves))


def _stages(roots: Sequence[Node], order: Sequence[Node], found: list[list[Node]],
            device: Device, cause: str, bind: Bind) -> None:
    """Run a graph too deep for one program band by band (``cut.bands``).

    Each band's results that later bands read become their parameters.
    """
    band_of = {n: k for k, band in enumerate(found) for n in band}
    read_until = dict.fromkeys(roots, len(found) - 1)  # the last band that reads each node
    for n in order:
        k = band_of.get(n, -1)
        for o in n.operands:
            if read_until.get(o, -1) < k:
                read_until[o] = k
    new: dict[Node, Node] = {}  # a node -> the node the next band reads in its place

    def rewrite(band: list[Node]) -> None:
        for n in band:
            operands = tuple([new.get(o, o) for o in n.operands])
            new[n] = n if operands == n.operands else Node(
                n.op, operands, n.attrs, n.shape, n.dtype, None, n.site)

    for k, band in enumerate(found[:-1]):
        rewrite(band)
        outs = [n for n in band if read_until.get(n, -1) > k]
        programs = [new[n] for n in outs]
        for n in band:  # what no later band reads is dropped as soon as it is computed
            del new[n]
        _execute(programs, device, False, "stage", functools.partial(_store, new, outs))
    rewrite(found[-1])
    _execute([new.get(r, r) for r in roots], device, False, cause, bind)


# -- a group of tensors on one device ----------------------------------------------------------
def _run(group: Sequence[Handle], device: Device, donate: bool, cause: str) -> None:
    """Materialise ``group`` in one program (a few for a very deep graph), then rebind it."""
    roots = roots_of([t._node for t in group])

    def bind(leaves: list[Node]) -> None:
        results = dict(zip(roots, leaves))
        if ENGINE.origins is not None:  # a gradient is being taken: it walks through the cut
            ENGINE.origins.update(zip(leaves, roots))
        for t in group:  # each tensor still on its root (an inner barrier may have rebound it)
            t._node = results.get(t._node, t._node)

    _execute(roots, device, donate, cause, bind)


def _fail(t: Handle, error: Exception) -> None:
    """``t`` cannot be computed: from now on it holds ``error``, raised when it is observed."""
    t._node = failed_leaf(t._node, error)
    ENGINE.failures += 1


def _settle(group: Sequence[Handle], device: Device, donate: bool, cause: str
            ) -> Exception | None:
    """Materialise ``group`` in one program; if it fails, what can be, and fail the rest.

    A failed group is split in halves until each failure stands alone (a few programs more for
    one bad tensor among many, not one per tensor); the parts run without donating. Returns
    the first failing tensor's error, if any. Any other exception is raised at once: the
    tensors not yet rebound stay pending.
    """
    first: Exception | None = None
    parts = [list(group)]
    while parts:
        part = [t for t in parts.pop() if t._node.op is not Op.DATA]  # failed leaves are DATA
        if not part:
            continue
        try:
            _run(part, device, donate, cause)
        except donation.ProgramFailed as failed:
            e = failed.error
            if len(part) == 1:
                _fail(part[0], e)
                first = first or e
            else:
                mid = len(part) // 2
                parts += [part[mid:], part[:mid]]
        donate = False
    return first


def _barrier(tensors: Sequence[Handle], cause: str, donate: bool) -> None:
    """Materialise the pending ``tensors``; raise the first failing tensor's error, if any."""
    failure = _materialise_or_failure(tensors, cause, donate)
    if failure is not None:
        try:
            raise failure
        finally:
            del failure  # the frame must not hold its own exception: a cycle


def _materialise_or_failure(tensors: Sequence[Handle], cause: str,
                            donate: bool) -> Exception | None:
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

    Tensors no longer referenced are never computed. Buffers that nothing reads any more are
    donated to the outputs (``BarrierPolicy.donate``). A tensor that cannot be computed raises
    its error here, once, after everything else is materialised; from then on it holds that
    error and raises it when observed.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2,)) + 1.0
        >>> ml.mark_step()
        >>> x.is_pending
        False
    """
    with ENGINE.lock:
        try:
            _barrier(LIVE.tensors(), cause, current_policy().donate)
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
    with ENGINE.lock:
        _barrier(tensors, "sync", donate=False)


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


# -- what the tensor calls: observations, host fallbacks, auto-cuts -----------------------------
def value(tensor: Handle, cause: str) -> Any:
    """Materialise ``tensor`` (an observation barrier named ``cause``); its device buffer.

    Example:
        >>> import minilazy as ml
        >>> value(ml.ones((2,)) * 2.0, "numpy").shape
        (2,)
    """
    if tensor._node.op is not Op.DATA:
        COUNTERS.observation_sites[f"{cause}() at {user_site()}"] += 1
        if current_policy().observe_all:
            mark_step(cause)
        else:
            with ENGINE.lock:
                _barrier([tensor], cause, donate=False)
    payload = tensor._node.payload
    if type(payload) is Failure:
        payload.throw()
    return payload


def to_host(tensor: Handle, cause: str) -> np.ndarray[Any, Any]:
    """Materialise ``tensor`` and return a writable host copy of its values.

    Example:
        >>> import minilazy as ml
        >>> to_host(ml.ones((2,)) * 2.0, "numpy").tolist()
        [2.0, 2.0]
    """
    return runtime.copy_to_host(value(tensor, cause))


def materialise(tensors: Sequence[Handle], cause: str) -> None:
    """A barrier named ``cause`` that materialises ``tensors`` (a host fallback's inputs).

    Example:
        >>> import minilazy as ml
        >>> materialise([ml.ones((2,)) * 2.0], "nonzero")
    """
    with ENGINE.lock:
        _barrier(tensors, cause, donate=False)


def after_record(tensor: Handle) -> None:
    """What ``record`` calls in eager mode (run ``tensor`` now), or at the pending limit.

    At the limit the live graph is counted, and cut if it is still over (the rest was dead).

    Example:
        >>> import minilazy as ml
        >>> with ml.eager():
        ...     (ml.ones((2,)) + 1.0).is_pending
        False
    """
    p = current_policy()
    if p.eager:
        with ENGINE.lock:
            _barrier([tensor], "eager", donate=False)
        return
    with ENGINE.lock:
        live = LIVE.tensors()
        n = live_pending_nodes(live, p.max_pending_nodes)
        if n < p.max_pending_nodes:  # the rest is dead: no cut; count again in a while
            ENGINE.pending = min(n, p.max_pending_nodes // 2)
            return
        try:  # a program's failure is not raised here: the failing tensors hold it
            e = _materialise_or_failure(live, "auto", p.donate)
        finally:
            ENGINE.pending = 0
        if e is not None:
            warnings.warn(f"minilazy: a tensor failed at an auto-cut and holds its error, "
                          f"raised when it is observed: {type(e).__name__}: {e}",
                          RuntimeWarning, stacklevel=3)
