"""The barrier policy: *when* the pending graph is cut, and *what* is materialised.

Ninth layer. A barrier is explicit (``mark_step``, ``sync``), an observation (a value is needed
on the host: ``float(t)``, ``t.numpy()``), an auto-cut (too many nodes pending), or every op in
eager mode. Each barrier drives hasher -> compile cache -> lowering -> runtime and rebinds the
tensors it materialised to ``DATA`` leaves holding their results. The policy is a frozen value
the user can swap. This module installs itself as the tracer's backend.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from minilazy import runtime
from minilazy.hashing import Cut, cut, roots_of
from minilazy.hooks import LIVE, STATE, user_site
from minilazy.ir import Device, Node, Op, data_leaf
from minilazy.metrics import COUNTERS
from minilazy.tracer import Tensor


@dataclass(frozen=True)
class BarrierPolicy:
    """When to cut and what to materialise.

    Attributes:
        max_pending_nodes: auto-cut (a ``mark_step``) once this many nodes were recorded since
            the last full barrier, so a loop without barriers stays bounded in memory and time.
        observe_all: an observation (``item()``, ``numpy()``...) materialises every live pending
            tensor, like ``mark_step``, instead of only the observed one.
        eager: run every op as soon as it is recorded (op by op, for debugging).
        donate: let ``mark_step`` reuse the buffers that no live tensor holds any more (an
            in-place parameter update then needs no new memory).
        special_scalars: bake the Python numbers 0 and 1 into programs as constants instead of
            passing them as parameters, as PyTorch/XLA does: XLA then simplifies ``x * 1``,
            ``x + 0``, ``maximum(x, 0)``, and fused kernels run faster; a scalar that sometimes
            is 0 or 1 compiles one program more for each.

    Example:
        >>> import minilazy as ml
        >>> with ml.policy(max_pending_nodes=100):
        ...     ml.current_policy().max_pending_nodes
        100
    """

    max_pending_nodes: int = 2048
    observe_all: bool = False
    eager: bool = False
    donate: bool = True
    special_scalars: bool = False


_POLICY: list[BarrierPolicy] = [BarrierPolicy()]
# Listeners the observability layer adds: called with (cause, cut, donation mask, compiled (not
# a cache hit), seconds).
BarrierListener = Callable[[str, Cut, tuple[bool, ...], bool, float], None]
LISTENERS: Final[list[BarrierListener]] = []


def current_policy() -> BarrierPolicy:
    """The barrier policy in force.

    Example:
        >>> import minilazy as ml
        >>> ml.current_policy().eager
        False
    """
    return _POLICY[-1]


def _apply(p: BarrierPolicy) -> None:
    if p.max_pending_nodes < 1:
        raise ValueError(f"max_pending_nodes must be >= 1, got {p.max_pending_nodes}")
    STATE.limit = 1 if p.eager else p.max_pending_nodes
    STATE.special_scalars = p.special_scalars


def set_policy(p: BarrierPolicy) -> None:
    """Make ``p`` the barrier policy from now on.

    Example:
        >>> import minilazy as ml
        >>> ml.set_policy(ml.BarrierPolicy(max_pending_nodes=4096))
        >>> ml.set_policy(ml.BarrierPolicy())
    """
    _apply(p)
    _POLICY[-1] = p


@contextlib.contextmanager
def policy(p: BarrierPolicy | None = None, **changes: Any) -> Iterator[BarrierPolicy]:
    """Use ``p`` (or the current policy with ``changes``) inside a ``with`` block.

    Example:
        >>> import minilazy as ml
        >>> with ml.policy(observe_all=True) as p:
        ...     p.observe_all
        True
    """
    new = dataclasses.replace(p or current_policy(), **changes)
    _apply(new)
    _POLICY.append(new)
    try:
        yield new
    finally:
        _POLICY.pop()
        _apply(_POLICY[-1])


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


def _rebind(tensors: Sequence[Tensor], donate: bool, cause: str) -> None:
    """Materialise ``tensors`` (all pending): one execution per device."""
    by_device: dict[Device, list[Tensor]] = {}
    for t in tensors:
        by_device.setdefault(t._device, []).append(t)
    for device, group in by_device.items():
        try:
            _run(group, device, donate, cause)
        except Exception:
            if len(group) == 1:
                raise
            # Nothing lost: materialise the tensors one by one, so that one that cannot be
            # computed does not take the others down with it; then report its error.
            failure: Exception | None = None
            for t in group:
                try:
                    _run([t], device, False, cause)
                except Exception as e:
                    failure = failure or e
            if failure is not None:
                try:
                    raise failure from None
                finally:
                    del failure  # the frame must not hold its own exception: a cycle


def _run(group: Sequence[Tensor], device: Device, donate: bool, cause: str) -> None:
    """Cut, look up or compile, execute, and rebind ``group`` to the results."""
    roots = roots_of([t._node for t in group])
    c = cut(roots, device)
    donated = _donations(c, roots) if donate else (False,) * len(c.params)
    start = time.perf_counter()
    entry = runtime.CACHE.lookup(c.key, donated)
    hit = entry is not None
    if entry is None:
        entry = runtime.CACHE.compile(c, donated)
    else:
        COUNTERS.cache_hits += 1
    outs = runtime.execute(entry, [*(p.payload for p in c.params), *_packed(c)])
    results: dict[Node, Node] = {r: data_leaf(b, r.shape, r.dtype) for r, b in zip(roots, outs)}
    for t in group:
        t._node = results[t._node]
    for listener in LISTENERS:
        listener(cause, c, donated, not hit, time.perf_counter() - start)


def _packed(c: Cut) -> list[np.ndarray[Any, Any]]:
    """The scalar parameters' values, one array per dtype group (see ``Cut.scalars``)."""
    if not c.groups:  # too many to pack (see hashing.PACK_LIMIT): one argument each
        return [s.dtype.type(s.payload) for s in c.scalars]
    values = [s.payload for s in c.scalars]
    if len(c.groups) == 1:
        return [np.array(values, c.groups[0][0])]
    out, start = [], 0
    for dtype, n in c.groups:
        out.append(np.array(values[start:start + n], dtype))
        start += n
    return out


def _donations(c: Cut, roots: Sequence[Node]) -> tuple[bool, ...]:
    """Which parameters' buffers to give to the outputs.

    Those that no live tensor holds, and only as many per shape and dtype as there are outputs
    to reuse them (XLA aliases like for like, and warns about the rest).
    """
    held = {t._node for t in LIVE}
    wanted = Counter((r.shape, r.dtype) for r in roots)
    mask = []
    for p in c.params:
        ok = p.op is Op.DATA and p not in held and wanted[p.shape, p.dtype] > 0
        if ok:
            wanted[p.shape, p.dtype] -= 1
        mask.append(ok)
    return tuple(mask)


def _barrier(tensors: Sequence[Tensor], cause: str, donate: bool) -> None:
    COUNTERS.barriers += 1
    COUNTERS.barrier_causes[cause] += 1
    pending = [t for t in tensors if t._node.op is not Op.DATA]
    if pending:
        _rebind(pending, donate, cause)


def mark_step(cause: str = "mark_step") -> None:
    """Barrier: materialise every live tensor with pending ops, in one execution per device.

    Tensors no longer referenced are never computed. Buffers that no live tensor holds any more
    are donated to the outputs (``BarrierPolicy.donate``).

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2,)) + 1.0
        >>> ml.mark_step()
        >>> x.is_pending
        False
    """
    live = list(LIVE)
    _barrier(live, cause, current_policy().donate)
    STATE.pending = 0


def sync(*tensors: Tensor) -> None:
    """Barrier: materialise just ``tensors`` (and what they depend on), nothing else.

    Example:
        >>> import minilazy as ml
        >>> a, b = ml.ones((2,)) * 2.0, ml.ones((2,)) * 3.0
        >>> ml.sync(a)
        >>> a.is_pending, b.is_pending
        (False, True)
    """
    for t in tensors:
        if type(t) is not Tensor:
            raise TypeError(f"sync() takes tensors, got {type(t).__name__}")
    _barrier(tensors, "sync", donate=False)


def wait(*tensors: Tensor) -> None:
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
        runtime.wait(t._node.payload)


class _Backend:
    """The tracer's view of the layers above it (see ``tracer.Backend``)."""

    def default_device(self) -> Device:
        return runtime.default_device()

    def to_device(self, array: np.ndarray[Any, Any], device: Device) -> object:
        return runtime.to_device(array, device)

    def to_host(self, tensor: Tensor, cause: str) -> np.ndarray[Any, Any]:
        if tensor._node.op is not Op.DATA:
            COUNTERS.observation_sites[f"{cause}() at {user_site()}"] += 1
            if current_policy().observe_all:
                mark_step(cause)
            else:
                _barrier([tensor], cause, donate=False)
        return runtime.to_host(tensor._node.payload)

    def materialise(self, tensors: Sequence[Tensor], cause: str) -> None:
        _barrier(tensors, cause, donate=False)

    def copy_to(self, tensor: Tensor, device: Device) -> Tensor:
        _barrier([tensor], "to", donate=False)
        node = tensor._node
        return Tensor(data_leaf(runtime.move(node.payload, device), node.shape, node.dtype),
                      device)

    def after_record(self, tensor: Tensor) -> None:
        if current_policy().eager:
            _barrier([tensor], "eager", donate=False)
        else:
            mark_step("auto")


STATE.backend = _BACKEND = _Backend()
_apply(current_policy())
