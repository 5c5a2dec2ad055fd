"""The engine's mutable state, in one place: policy, live tensors, pending count, lock, parts.

The barrier policy (a default, and ``with ml.policy(...)`` per thread and async task), the live
tensors (weak references: what ``mark_step`` materialises), the nodes recorded since the last
full barrier (the auto-cut's count), the engine lock, the barrier's listeners, and the parts
whose types live above (compile cache, tapes, debugger...), which ``import minilazy`` hands over
with :func:`install` and :func:`reset` resets. ``tests/core/test_state.py`` checks that nothing
else changes while the engine runs. Never imports jax.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, Final, Literal, Protocol

from minilazy.core.ir import LEAVES, Device, Node
from minilazy.core.metrics import COUNTERS


class Handle(Protocol):
    """What the state and the barriers see of a tensor: a node (rebound by a barrier), a device."""

    _node: Node
    _device: Device


@dataclass(frozen=True)
class BarrierPolicy:
    """When to cut and what to materialise.

    Attributes:
        max_pending_nodes: auto-cut (a ``mark_step``) once this many pending nodes are
            reachable from live tensors (dead graphs do not count), so a loop without barriers
            stays bounded in memory and time.
        observe_all: an observation (``item()``, ``numpy()``...) materialises every live
            pending tensor, as ``mark_step`` does, not only the observed one.
        eager: run every op as soon as it is recorded (op by op, for debugging).
        donate: let ``mark_step`` reuse the buffers nothing but the program reads any more.
        special_scalars: bake the Python numbers 0 and 1 into programs as constants, as
            PyTorch/XLA does (XLA simplifies ``x * 1``; each such scalar compiles once more).
        max_depth: the longest chain of ops one program may hold; a deeper graph runs in
            stages (XLA's compile time grows faster than linearly with depth).
        fallback: what an op whose result shape depends on data (``x[mask]``, ``nonzero``)
            does: ``"host"`` runs it on the host after a barrier on its inputs (counted in
            ``ml.metrics().fallbacks``); ``"error"`` raises ``RuntimeError``.

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
    max_depth: int = 512
    fallback: Literal["host", "error"] = "host"

    def __post_init__(self) -> None:
        if self.fallback not in ("host", "error"):
            raise ValueError(f"fallback must be 'host' or 'error', got {self.fallback!r}")
        for name in ("max_pending_nodes", "max_depth"):
            value = getattr(self, name)
            if type(value) is not int:
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")


class _Maker(threading.local):
    """Per thread: whether this thread has made a tensor (a new thread starts without)."""

    known = False


class Registry:
    """The live tensors, by weak reference: ``mark_step`` materialises the pending ones.

    A dict of weak references, not a ``WeakSet``: copying its keys is one C call, so a thread
    that iterates never sees another's insertion mid-way. It also notes which threads make
    tensors: while two or more run, nothing is donated (another may be about to read a buffer).

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2,))
        >>> any(t is x for t in LIVE.tensors())
        True
    """

    __slots__ = ("_refs", "_drop", "_maker", "threads")

    def __init__(self) -> None:
        # A weak reference per tensor (hashed as its tensor, even dead): its callback removes it.
        self._refs: dict[weakref.ref[Handle], None] = {}
        self._drop = self._remove  # one bound method, not one per tensor
        # The threads that made tensors, by ident (the donor's concern); a thread-local flag says
        # if one is known (an ended thread's ident goes to the next thread, which made none).
        self._maker = _Maker()
        self.threads: dict[int, threading.Thread] = {}

    def add(self, t: Handle) -> None:
        """Register ``t`` (once, when it is made)."""
        self._refs[weakref.ref(t, self._drop)] = None
        if not self._maker.known:  # this thread's first tensor
            self._maker.known = True
            self.threads[threading.get_ident()] = threading.current_thread()

    def _remove(self, ref: weakref.ref[Handle]) -> None:
        self._refs.pop(ref, None)

    def tensors(self) -> list[Handle]:
        """The live tensors now (strong references: they stay alive while the list does)."""
        found = [r() for r in list(self._refs)]
        return [t for t in found if t is not None]

    def __len__(self) -> int:
        return len(self._refs)


class Part(Protocol):
    """Engine state whose type lives above this module, handed over by :func:`install`."""

    def reset(self) -> None:
        """Forget what was learned, as in a new process."""


class _Engine:
    """The engine's state (see the module docstring)."""

    __slots__ = ("default", "pending", "sites", "lock", "failures", "forked", "started",
                 "listeners", "parts")

    def __init__(self) -> None:
        self.default = BarrierPolicy()  # the policy where no `with ml.policy(...)` is active
        self.pending = 0  # nodes recorded since the last full barrier (or the last live count)
        self.sites = False  # record the user's file:line on each node (debug info)
        # Barriers run one at a time; re-entrant, as a barrier's listener may observe.
        self.lock = threading.RLock()
        self.failures = 0  # failed tensors made so far: cuts check for them only when > 0
        self.started = False  # this process has started JAX (a transfer, a barrier)
        self.forked = False  # a fork() child of a process that had (the processes part says)
        # Called after every barrier (typed in the barrier module): the debugger is one.
        self.listeners: list[Callable[..., None]] = []
        self.parts: dict[str, Part] = {}


ENGINE: Final = _Engine()
LIVE: Final = Registry()
# The policy of `with ml.policy(...)` blocks, per thread and per async task (None: the default).
OVERRIDE: Final[contextvars.ContextVar[BarrierPolicy | None]] = contextvars.ContextVar(
    "minilazy_policy", default=None)
# The engine's own files: everything under minilazy/ but the conformance suite (user code).
_ENGINE_PREFIX: Final = os.path.dirname(os.path.dirname(__file__)) + os.sep
_USER_CODE: Final = "conformance" + os.sep


def current_policy() -> BarrierPolicy:
    """The barrier policy in force in this thread (or async task).

    Example:
        >>> import minilazy as ml
        >>> ml.current_policy().eager
        False
    """
    return OVERRIDE.get() or ENGINE.default


def set_policy(p: BarrierPolicy) -> None:
    """Make ``p`` the default barrier policy of every thread, from now on.

    A ``with ml.policy(...)`` block still overrides it where it is active.

    Example:
        >>> import minilazy as ml
        >>> ml.set_policy(ml.BarrierPolicy(max_pending_nodes=4096))
        >>> ml.set_policy(ml.BarrierPolicy())
    """
    if not isinstance(p, BarrierPolicy):
        raise TypeError(f"set_policy takes a BarrierPolicy, got {type(p).__name__}")
    ENGINE.default = p


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


def install(**parts: Part) -> None:
    """Hand the engine the state parts whose types live above core (``import minilazy`` does)."""
    ENGINE.parts.update(parts)


def reset() -> None:
    """The engine as in a new process: default policy, counters zero, every part reset.

    Forgets what was learned (programs, tapes, compile history, ``set_cache_dir``'s choice),
    never what is live: tensors, their pending work and the listeners stay.
    """
    with ENGINE.lock:
        ENGINE.default = BarrierPolicy()
        COUNTERS.reset()
        for part in ENGINE.parts.values():
            part.reset()


def replaced(p: BarrierPolicy | None, changes: dict[str, Any]) -> BarrierPolicy:
    """``p`` (or the current policy) with ``changes``; ``TypeError`` names an unknown field."""
    base = current_policy() if p is None else p
    unknown = set(changes) - {f.name for f in dataclasses.fields(BarrierPolicy)}
    if unknown:
        raise TypeError(f"BarrierPolicy has no field {', '.join(sorted(unknown))}")
    return dataclasses.replace(base, **changes)


@functools.lru_cache(maxsize=4096)  # a barrier's debugger asks for each of ~8 frames
def _in_engine(filename: str) -> bool:
    return filename.startswith(_ENGINE_PREFIX) and not filename[len(_ENGINE_PREFIX):].startswith(
        _USER_CODE)


def user_site() -> str | None:
    """``file:line`` of the innermost caller outside the engine's modules."""
    f: FrameType | None = sys._getframe(1)
    while f is not None and _in_engine(f.f_code.co_filename):
        f = f.f_back
    return None if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"


def live_pending_nodes(tensors: Sequence[Handle], stop: int) -> int:
    """How many distinct pending nodes the live ``tensors`` reach (counting stops at ``stop``).

    What the auto-cut limit compares with: dead graphs are never computed, so they do not count.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2,))
        >>> y = ml.exp(x) + 1.0
        >>> live_pending_nodes([y], 100)  # broadcast (of ones), exp, add
        3
    """
    seen: set[Node] = set()
    stack = [t._node for t in tensors if t._node.op not in LEAVES]
    while stack and len(seen) < stop:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend([o for o in n.operands if o.op not in LEAVES and o not in seen])
    return len(seen)
