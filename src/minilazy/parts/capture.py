"""A captured step (``ml.capture``): after two identical recordings, the program is called directly.

Every call of a lazily recorded step pays Python for each op it records, then for the cut, the
key and the cache lookup, to find the program it found the step before. ``ml.capture(step)``
records ``step`` as usual, with a ``mark_step`` after it; when two calls in a row record the
same program from the same places (the same arguments' positions, the same tensors held outside
it, the same tensors rebound and returned), the next calls skip the recording: they check that
nothing that decided the program changed, call the compiled program with the new buffers and
Python numbers, and rebind the results as the barrier would. It is torch_xla's graph-capture
bridge, tinygrad's ``TinyJit`` and MLX's ``mx.compile`` in minilazy's terms.

What a call checks before it skips the recording (any difference: the step is recorded again):
the thread, the barrier policy, no other pending work, the arguments' structure, each tensor
argument's shape, dtype, device, placement and readiness (materialised, not failed), which
arguments are the same tensor, each tensor held outside the step (still alive, same metadata),
every Python number argument that did not reach the program as a parameter, and for each
buffer the program consumes (donation) that nothing else holds it now.

What it gives up, as the peers' captures do: Python side effects inside the step (a print, an
append, a counter) run only when it is recorded, and so do the values the step reads that are
not its arguments and not tensors (a global number, a closure's float, a tensor attribute
replaced by a new tensor). A number that differed between the two recordings must be an
argument, or capture is refused, saying which; a number argument must only flow into tensor
ops (not into a Python ``if``). ``recheck=k`` records every k-th call again and compares.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, TypeVar, cast

import numpy as np

from minilazy.core import runtime, tracer
from minilazy.core.attrs import NONE
from minilazy.core.barrier import PARTS, ProgramFailed, own, packed
from minilazy.core.cache import CACHE
from minilazy.core.ir import Failure, Node, Op, data_leaf
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import ENGINE, current_policy
from minilazy.parts.recorded import (
    Recording,
    Refused,
    aliases,
    flatten,
    holder,
    ready,
    record,
    source_node,
    spec,
    unflatten,
)
from minilazy.parts.refcounts import shared

P = ParamSpec("P")
R = TypeVar("R")


class CaptureWarning(UserWarning):
    """A step given to :func:`capture` is not captured (it runs lazily, as if not given): why.

    Example:
        >>> issubclass(CaptureWarning, UserWarning)
        True
    """


@dataclass
class Plan:
    """A captured program: how a call's arguments become its parameters, and its results."""

    recording: Recording
    entry: runtime.Compiled
    scalars: list[Any]  # each scalar parameter's value: a constant, or replaced from `bound`
    bound: tuple[tuple[int, int], ...]  # (scalar slot, argument leaf) for numbers passed in
    guarded: tuple[tuple[int, Any], ...]  # (argument leaf, value): numbers that must not change


def _same_in(dtype: Any, x: Any, value: Any) -> bool:
    """Whether the number ``x`` is ``value`` as a parameter of ``dtype``.

    As the program gets it: ``full((), lr, dtype=float32)`` records ``lr`` rounded to float32.
    """
    if isinstance(x, bool) != isinstance(value, bool):
        return False
    try:
        with np.errstate(all="ignore"):
            return bool(dtype.type(x) == dtype.type(value))
    except (OverflowError, ValueError, TypeError):
        return False


def plan(before: Recording, now: Recording) -> Plan:
    """Capture ``now``'s program, the scalars that differ from ``before`` bound to arguments.

    A scalar parameter whose value differs between the recordings must be a number argument
    whose values, as the parameter's dtype, are the two values; else :class:`Refused`.
    """
    entry = CACHE.lookup(now.cut, now.donated)
    if entry is None:
        raise Refused("its program left the compile cache")
    scalars = [s.payload for s in now.cut.scalars]
    bound: list[tuple[int, int]] = []
    for slot, (s, a, b) in enumerate(zip(now.cut.scalars, [s.payload for s in before.cut.scalars],
                                         scalars)):
        if type(a) is type(b) and a == b:
            continue
        k = next((k for k, (x, y) in enumerate(zip(before.numbers, now.numbers))
                  if x is not None and y is not None and not _same_in(s.dtype, x, y)
                  and _same_in(s.dtype, x, a) and _same_in(s.dtype, y, b)), None)
        if k is None:
            raise Refused(f"a Python number changed between calls ({a!r}, then {b!r}) and is "
                          "not an argument: pass it as one")
        bound.append((slot, k))
    used = {k for _, k in bound}
    guarded = tuple([(k, x) for k, x in enumerate(now.numbers) if x is not None and k not in used])
    return Plan(now, entry, scalars, tuple(bound), guarded)


def _references(nodes: list[Node]) -> list[int]:
    return [sys.getrefcount(n) for n in nodes]


# What _references counts for a node nothing else holds (the list, the loop, the call).
OWN = _references([Node(Op.DATA, (), NONE, (), np.dtype("f4"))])[0]


def _inputs(r: Recording, leaves: list[Any]) -> tuple[list[Any], list[Node]] | None:
    """This call's parameter buffers and the nodes the program consumes, if all still fit."""
    nodes = [source_node(s, leaves) for s in r.sources]
    for n, param in zip(nodes, r.params):
        if n is None or not ready(n) or (n.shape, n.dtype, n.attrs) != param:
            return None
    found = [n for n in nodes if n is not None]
    if len({id(n) for n in found}) != len(found):  # one buffer in two places: not this program
        return None
    return [n.payload for n in found], [n for n, d in zip(found, r.donated) if d]


def _consumable(given: list[Node], rebound: list[Any]) -> bool:
    """Whether only tensors the call rebinds hold the nodes whose buffers the program consumes.

    Reference counts tell (as the donor's do): another tensor on the node, a pending graph
    over it, a printed graph holding it, and the buffer must survive the program.
    """
    counts = _references(given)
    return all(count - OWN == sum(t._node is n for t in rebound)
               for n, count in zip(given, counts))


def replay(p: Plan, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, Any]:
    """Run the captured program for this call if nothing that decided it changed: (ran, result)."""
    r = p.recording
    if (ENGINE.pending or threading.get_ident() != r.thread or current_policy() != r.policy
            or shared()):
        return False, None
    leaves: list[Any] = []
    if flatten((args, kwargs), leaves) != r.structure or tuple(map(spec, leaves)) != r.specs:
        return False, None
    if any(leaves[k] != value for k, value in p.guarded):
        return False, None
    if aliases(leaves) != r.aliases:
        return False, None
    found = _inputs(r, leaves)
    if found is None:
        return False, None
    buffers, given = found
    del found
    rebound = [holder(s, leaves) for s, _ in r.sinks]
    if given and not _consumable(given, rebound):
        return False, None
    values = list(p.scalars)
    for slot, k in p.bound:
        values[slot] = leaves[k]
    buffers += packed(p.recording.cut, values)
    runtime.check_usable()  # (a fork child refuses, as at any barrier)
    with ENGINE.lock:
        held = PARTS.signals.held(any(r.donated) and p.entry.ran) if PARTS.signals else None
        try:
            with held or contextlib.nullcontext():  # (a signal must not fall between the two)
                outs = own(runtime.execute, p.entry, buffers)
                result = _bind(p, leaves, rebound, outs)
        except ProgramFailed as e:
            if _lost(given, e.error):
                raise e.error from None
            return False, None  # nothing consumed: the recorded path says what failed
        COUNTERS.barriers += 1
        COUNTERS.barrier_causes["capture"] += 1
        COUNTERS.cache_hits += 1
        return True, result


def _lost(given: list[Node], error: Exception) -> bool:
    """Donated inputs of a failed run are gone: reading them raises its error (as the barrier)."""
    lost = False
    for node in given:
        if runtime.is_deleted(node.payload):
            node.payload = Failure(error)
            ENGINE.failures += 1
            lost = True
    return lost


def _bind(p: Plan, leaves: list[Any], rebound: list[Any], outs: Sequence[Any]) -> Any:
    """Rebind the tensors the step rebinds, make the ones it returns; the result's tree."""
    r, places = p.recording, p.entry.placements
    made = [data_leaf(b, shape, dtype) if places is None else
            data_leaf(b, shape, dtype, places[j])
            for j, ((shape, dtype), b) in enumerate(zip(r.roots, outs))]
    for t, (_, j) in zip(rebound, r.sinks):
        if t is not None:
            t._node = made[j]
    new: dict[int, Any] = {}
    results = []
    for out in r.outputs:
        assert isinstance(out, tuple)
        if out[0] == "new":
            if out[1] not in new:
                new[out[1]] = tracer.wrap(made[out[2]], r.cut.device)
            results.append(new[out[1]])
        elif out[0] == "arg":
            results.append(leaves[out[1]])
        else:
            results.append(out[2])
    return unflatten(r.result, results, [0])


@dataclass
class Captured(Generic[P, R]):
    """A step function under :func:`capture`: call it as the step itself.

    Attributes:
        fn: the step.
        recheck: record every ``recheck``-th captured call again and compare (0: never).
        plan: the captured program, once there is one.
        refused: why the last recording could not be captured, if it could not.
        replays: the calls that ran the captured program.
    """

    fn: Callable[P, R]
    recheck: int = 0
    plan: Plan | None = None
    refused: str | None = None
    replays: int = 0
    calls: int = field(default=0, repr=False)  # since the plan was made (for `recheck`)
    last: Recording | None = field(default=None, repr=False)
    warned: set[str] = field(default_factory=set, repr=False)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.plan is not None:
            self.calls += 1
            if not (self.recheck and self.calls % self.recheck == 0):
                ran, result = replay(self.plan, args, kwargs)
                if ran:
                    self.replays += 1
                    return cast(R, result)
        result, now, why, occasional = record(self.fn, args, kwargs)
        if now is not None:
            self._capture(now)
        elif not occasional:
            self._refuse(why or "")
        elif self.plan is None:  # (a captured program stays: this one call was recorded)
            self._warn(why or "")
        return cast(R, result)

    def _capture(self, now: Recording) -> None:
        before, self.last, self.plan = self.last, now, None
        if before is None or not before.same(now):
            return  # a first recording of this program: capture it when the next agrees
        try:
            self.plan, self.refused, self.calls = plan(before, now), None, 0
        except Refused as e:
            self._refuse(str(e))

    def _refuse(self, why: str) -> None:
        self.refused, self.plan, self.last = why, None, None
        self._warn(why)

    def _warn(self, why: str) -> None:
        kind = why.split(" (")[0]  # (once per kind of reason, whatever numbers it names)
        if kind not in self.warned:
            self.warned.add(kind)
            warnings.warn(f"minilazy: {getattr(self.fn, '__name__', 'the step')} is not "
                          f"captured: {why}; it runs lazily, recorded each call",
                          CaptureWarning, stacklevel=3)


def capture(fn: Callable[P, R] | None = None, *, recheck: int = 0
            ) -> Captured[P, R] | Callable[[Callable[P, R]], Captured[P, R]]:
    """A step function that, once two calls record the same program, calls it directly.

    Each call runs ``fn`` lazily and then ``ml.mark_step()``, as a training loop's step does,
    until two calls in a row record the same program from the same places; later calls skip
    the recording and run that compiled program on their new arguments, rebinding what ``fn``
    rebinds and returning what it returns (see the module docstring for what each call checks,
    and what capture gives up: Python side effects and values read inside ``fn`` other than
    its arguments and tensors). A step that runs a barrier inside, reads device data it made,
    or keeps a tensor it made outside its result is not captured: it warns
    (:class:`CaptureWarning`, saying why) and runs lazily every call.

    Args:
        fn: the step: takes tensors, Python numbers and tuples, lists and dicts of them; returns
            the same kinds.
        recheck: record every ``recheck``-th captured call again, and capture anew if its
            program differs (0: never).

    Example:
        >>> import minilazy as ml
        >>> w = ml.asarray([1.0, 2.0])
        >>> ml.mark_step()  # (capture starts from nothing pending)
        >>> @ml.capture
        ... def step(x, lr):
        ...     global w
        ...     loss = ml.sum((w * x) ** 2)
        ...     w -= lr * (2.0 * w * x * x)
        ...     return loss
        >>> for i in range(4):
        ...     loss = step(ml.asarray([1.0, 1.0]), 0.1 / (i + 1))
        >>> step.replays, round(float(loss), 4)
        (2, 2.2579)
    """
    if fn is not None:
        return Captured(fn, recheck)

    def given(f: Callable[P, R]) -> Captured[P, R]:
        return Captured(f, recheck)
    return given
