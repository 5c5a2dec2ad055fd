"""Cut plans: a training step's graph, cut again without a walk (a part of the engine).

A training step records a new graph each time, node for node like the last one, and core's
:func:`~minilazy.core.cut.walk` visits every node of it to find the cut. The planner
(:data:`PLANS`, installed by ``import minilazy`` as core's ``CUTS.planner``) keeps the second
walk of a graph as a :class:`Plan` and follows it from then on, about three times faster. Speed
only: without it core walks every cut, and the cuts are the same (``tests/core/test_cut.py``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from operator import attrgetter
from typing import Final

from minilazy.core.cut import CUTS, Cut, Cuts, walk
from minilazy.core.ir import Device, Node

_exact: Final = attrgetter("exact")  # what decides a node's part of a program (by value)


class Plan:
    """How to find a cut's nodes again below new roots of the same structure, with no walk.

    A training step records a new graph each time, node for node like the last one. The plan
    keeps the last cut's shape as positions only (never a node: it holds no buffers): for each
    node but the roots, one user and which operand of it the node is (a spanning tree, read
    from the roots down), and every other operand reference. Following it fills the positions
    in one pass; the new graph is accepted only if it is the planned one exactly: each node's
    op, attributes, shape and dtype (by value: never by digest), each operand reference, every
    node distinct, the device. Anything else (another wiring, one tensor where there were two)
    makes :func:`cut` walk, as it would without a plan.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((3,))
        >>> from minilazy.core.cut import walk
        >>> old = walk([ml.exp(x + 1.0)._node], x.device)
        >>> new = ml.exp(x + 2.0)._node
        >>> Plan(old).follow([new], x.device).order[-1] is new
        True
    """

    __slots__ = ("outputs", "steps", "extra", "exact", "params", "scalars", "groups", "key",
                 "edges", "structure")

    def __init__(self, c: Cut) -> None:
        p, roots = c.positions, set(c.outputs)
        tree: dict[int, tuple[int, int]] = {}  # a node's position -> (a user's, operand index)
        extra = []  # the other operand references: (user, operand index, operand)
        for j, n in enumerate(c.order):
            for k, o in enumerate(n.operands):
                i = p[o]
                if i in roots or i in tree:
                    extra.append((j, k, i))
                else:
                    tree[i] = (j, k)
        # Users come after their operands: filled from the last position down, each node's
        # user is there before the node.
        self.steps = tuple([(i, *tree[i]) for i in sorted(tree, reverse=True)])
        self.extra = tuple(extra)
        self.outputs, self.exact = c.outputs, tuple(map(_exact, c.order))
        self.params = tuple([p[n] for n in c.params])
        self.scalars = tuple([p[n] for n in c.scalars])
        self.groups, self.key, self.edges, self.structure = c.groups, c.key, c.edges, c.structure

    def follow(self, roots: Sequence[Node], device: Device) -> Cut | None:
        """The cut of ``roots`` if their graph is the planned one (else ``None``: walk it)."""
        if device is not self.structure[3] and device != self.structure[3]:
            return None  # (plans are found by the device's code: a CRC, not the device)
        new = [roots[0]] * len(self.exact)  # every position is filled below
        for r, i in zip(roots, self.outputs):
            new[i] = r
        try:
            for i, j, k in self.steps:
                new[i] = new[j].operands[k]
            for j, k, i in self.extra:
                if new[j].operands[k] is not new[i]:
                    return None
        except IndexError:  # an op of another arity, under a colliding digest
            return None
        if tuple(map(_exact, new)) != self.exact:
            return None
        positions = dict(zip(new, range(len(new))))
        if len(positions) != len(new):  # one node where the plan has two
            return None
        order = tuple(new)
        return Cut(order, positions, tuple([order[i] for i in self.params]),
                   tuple([order[i] for i in self.scalars]), self.groups, self.outputs, device,
                   self.key, self.edges, self.structure)


class Plans:
    """The plans of the graphs cut more than once (one per roots' digests and device).

    A graph's plan is made the second time it is cut: a graph cut once (op by op in eager
    mode, a one-off observation) never pays for one. Bounded: least recently used goes first.

    Example:
        >>> plans = Plans(capacity=8)
        >>> len(plans), plans.hits
        (0, 0)
    """

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self.hits = 0  # cuts found by a plan (no walk)
        self._plans: OrderedDict[tuple[tuple[int, ...], int], Plan | None] = OrderedDict()
        # Barriers cut under the engine lock, but a backward pass cuts its forward graph in the
        # caller's thread: the table's own lock (a plan, once made, is only read).
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return sum(p is not None for p in self._plans.values())

    def cut(self, roots: Sequence[Node], device: Device) -> Cut:
        """The cut of ``roots``: by their plan if they have one, else walked (and noted).

        Example:
            >>> import minilazy as ml
            >>> plans, x = Plans(), ml.ones((3,))
            >>> for _ in range(3):
            ...     c = plans.cut([ml.exp(x + 1.0)._node], x.device)
            >>> plans.hits  # walked, walked and planned, followed
            1
        """
        known = (tuple([r.digest for r in roots]), device.code)
        found = self.follow(known, roots, device)
        if found is None:
            found = walk(roots, device)
            self.learn(known, found)
        return found

    def follow(self, known: tuple[tuple[int, ...], int], roots: Sequence[Node],
               device: Device) -> Cut | None:
        """The cut of ``roots`` by their plan, if there is one and their graph is its graph."""
        plan = self._plans.get(known)
        found = None if plan is None else plan.follow(roots, device)
        if found is not None:
            with self._lock:
                self.hits += 1
                if known in self._plans:
                    self._plans.move_to_end(known)
        return found

    def learn(self, known: tuple[tuple[int, ...], int], c: Cut) -> None:
        """Note that ``c`` was walked; plan it if its roots were met before."""
        # Not roots given twice (run(a, a)): the plan would map [a, b] to one node, a's to b's.
        plan = Plan(c) if known in self._plans and len(set(c.outputs)) == len(c.outputs) else None
        with self._lock:
            self._plans[known] = plan
            self._plans.move_to_end(known)
            if len(self._plans) > self.capacity:
                self._plans.popitem(last=False)

    def reset(self) -> None:
        """Forget every plan (as in a new process)."""
        with self._lock:
            self._plans.clear()
            self.hits = 0


PLANS: Final = Plans()


def install(cuts: Cuts = CUTS, planner: Plans = PLANS) -> None:
    """Make ``planner`` find ``cuts``' graphs (what ``import minilazy`` does, once).

    Example:
        >>> from minilazy.core.cut import Cuts
        >>> cuts = Cuts()
        >>> install(cuts, Plans(capacity=8))
        >>> type(cuts.planner).__name__
        'Plans'
    """
    cuts.planner = planner
