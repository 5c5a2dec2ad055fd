"""Refcount donation: a program may consume an input buffer that nothing else can read again.

A part of the engine (``import minilazy`` installs it as the barrier's ``PARTS.donor``):
without it nothing is donated, and the values are the same. A buffer is *donated* when the
program writes its output into it, so an in-place parameter update needs no new memory; that
destroys the input, so this part allows it only when no live tensor holds the buffer, no node
outside the program's cut reaches it (reference counts tell: another graph, an autodiff walk, a
printed graph, another thread's op in progress), and no second running thread makes tensors.
PyTorch/XLA checks its buffers' use counts for the same reason.
"""

from __future__ import annotations

import functools
import sys
from collections import Counter
from collections.abc import Sequence

import numpy as np

from minilazy.core.attrs import NONE
from minilazy.core.barrier import PARTS, Parts
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


def shared() -> bool:
    """Whether two or more threads that are still running have made tensors.

    Example:
        >>> shared()
        False
    """
    threads = LIVE.threads
    if len(threads) < 2:
        return False
    alive = list(threads.values())  # a copy: other threads may add
    if len(alive) > 64:  # ended threads' entries, kept until now (a pool reuses idents)
        for ident, thread in list(threads.items()):
            if not thread.is_alive() and threads.get(ident) is thread:
                threads.pop(ident, None)
    return sum(thread.is_alive() for thread in alive) > 1


def mask(c: Cut, roots: Sequence[Node]) -> tuple[bool, ...]:
    """Which parameters' buffers to give to the outputs (this module's :class:`Donor` rule).

    Those that no live tensor holds and nothing outside the cut reads, and only as many per
    shape and dtype as there are outputs to reuse them (XLA aliases like for like, and warns
    about the rest). None while several running threads make tensors: another thread could
    take a pending node from a tensor between this check and the program, and read the buffer
    after it is gone.
    """
    if shared():  # another thread may be about to read any buffer: keep them all
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


class RefcountDonor:
    """The :class:`~minilazy.core.barrier.Donor` of this module: :func:`mask`.

    Example:
        >>> import minilazy as ml
        >>> type(PARTS.donor).__name__
        'RefcountDonor'
    """

    def mask(self, c: Cut, roots: Sequence[Node]) -> tuple[bool, ...]:
        """Which of ``c``'s parameters' buffers to give to the outputs ``roots``."""
        return mask(c, roots)


def install(parts: Parts = PARTS) -> None:
    """Let the barrier donate the buffers :func:`mask` allows (what ``import minilazy`` does).

    Example:
        >>> p = Parts()
        >>> install(p)
        >>> type(p.donor).__name__
        'RefcountDonor'
    """
    parts.donor = RefcountDonor()
