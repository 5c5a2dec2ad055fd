"""Depth staging: a graph too deep for one program runs in stages of ``max_depth`` levels.

A part of the engine (``import minilazy`` installs it as the barrier's ``PARTS.stager``). XLA's
compile time grows faster than linearly with a program's depth, and a very deep program exhausts
its stack: a loop of thousands of recorded ops without a barrier would never compile. On a
cache miss, a cut deeper than the policy's ``max_depth`` is split into bands of that many levels
(:func:`bands`); each band is a program of its own, whose results that later bands read become
their parameters. Without this part the barrier compiles any graph in one piece: the same
values, while XLA copes. Never imports jax.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from minilazy.core import barrier
from minilazy.core.barrier import PARTS, Bind, Parts
from minilazy.core.cut import Cut
from minilazy.core.ir import Node
from minilazy.core.state import current_policy


def bands(order: Sequence[Node], limit: int) -> list[list[Node]] | None:
    """The ops of ``order`` grouped by depth, ``limit`` levels a band; ``None`` if one band.

    A node's depth is the longest chain of ops from a leaf to it. Every chain inside one band
    is at most ``limit`` ops long.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import walk
        >>> x = ml.ones((2,))
        >>> for _ in range(4):
        ...     x = ml.exp(x)
        >>> [len(b) for b in bands(walk([x._node], x.device).order, 2)]  # broadcast, 4 x exp
        [2, 2, 1]
    """
    depth: dict[Node, int] = {}
    found: list[list[Node]] = []
    for n in order:
        d = depth[n] = 1 + max([depth[o] for o in n.operands], default=-1)
        if d:
            band = (d - 1) // limit
            while len(found) <= band:
                found.append([])
            found[band].append(n)
    return found if len(found) > 1 else None


def _store(into: dict[Node, Node], nodes: list[Node], leaves: list[Node]) -> None:
    into.update(zip(nodes, leaves))


def staged(roots: Sequence[Node], c: Cut, cause: str, bind: Bind) -> bool:
    """Run ``c`` band by band if it is deeper than the policy's ``max_depth``; whether it did.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.ones((2,))
        >>> for _ in range(4):
        ...     x = ml.exp(x)
        >>> with ml.policy(max_depth=2):
        ...     staged([x._node], cut([x._node], x.device), "sync", print)
        [<Node data f64[2]>]
        True
    """
    limit = current_policy().max_depth
    found = bands(c.order, limit) if len(c.order) > limit else None
    if found is None:
        return False
    band_of = {n: k for k, band in enumerate(found) for n in band}
    read_until = dict.fromkeys(roots, len(found) - 1)  # the last band that reads each node
    for n in c.order:
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
        barrier.execute(programs, c.device, False, "stage", functools.partial(_store, new, outs))
    rewrite(found[-1])
    barrier.execute([new.get(r, r) for r in roots], c.device, False, cause, bind)
    return True


class Stager:
    """The :class:`~minilazy.core.barrier.Stager` of this module: :func:`staged`.

    Example:
        >>> import minilazy as ml
        >>> type(PARTS.stager).__name__
        'Stager'
    """

    def staged(self, roots: Sequence[Node], c: Cut, cause: str, bind: Bind) -> bool:
        """:func:`staged`."""
        return staged(roots, c, cause, bind)


def install(parts: Parts = PARTS) -> None:
    """Let the barrier run a too-deep graph in stages (what ``import minilazy`` does).

    Example:
        >>> p = Parts()
        >>> install(p)
        >>> type(p.stager).__name__
        'Stager'
    """
    parts.stager = Stager()
