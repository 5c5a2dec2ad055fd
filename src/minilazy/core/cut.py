"""Cut: the pending graph below some roots becomes a linear program with a cache key.

:func:`cut` walks the graph once, post-order from the roots, giving every node a position; the
leaves it meets are the program's *parameters*. The cache key hashes each node's structural
digest (made at record time), the operand positions and the device: never data, so new values
reuse the compiled program, while ``x + x`` and ``x + y`` differ. Python's ``hash`` of ints and
tuples is the same in every process, so keys are too. A key only finds a program: before one is
reused, the structure itself is compared, by value (``hash(-1) == hash(-2)``). Never imports jax.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Final, Protocol

from minilazy.core.attrs import NoAttrs
from minilazy.core.dtypes import CODE, DType
from minilazy.core.ir import Device, Node, Op

_digest: Final = attrgetter("digest")
_exact: Final = attrgetter("exact")  # what decides a node's part of a program (by value)
# Most scalar parameters that travel packed into arrays (measured: 100 packed scalars compile in
# 0.15 s against 0.07 s as separate arguments, 400 in 4.7 s against 0.7 s).
PACK_LIMIT: Final = 64


@dataclass(frozen=True)
class Cut:
    """What the barrier hands to the compiler: a linear program over parameters.

    Attributes:
        order: every node, operands before users (post-order from the roots).
        positions: each node's position in ``order``.
        params: the ``DATA`` leaves, in the order first met: one parameter each.
        scalars: the ``SCALAR`` parameters, grouped by dtype (in ``DTYPES`` order), then in the
            order first met.
        groups: the dtype and length of each group of ``scalars``, when they travel packed (one
            array per dtype: each argument of a call costs ~1.7 us); empty past
            :data:`PACK_LIMIT` (XLA's compile time grows quadratically with the unpacking).
        outputs: the position in ``order`` of each root.
        device: where the program runs.
        key: the cache key: structure, attributes, shapes, dtypes, wiring, device.
        structure: what decides the program, by value (each node's ``exact``, the wiring, the
            outputs, the device): a cache hit is checked against it, so keys that collide
            never share a program.
        edges: how many operand references the nodes of ``order`` hold: what tells whether
            anything outside the cut still references its nodes (before donating buffers).

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([1.0, 2.0, 3.0])
        >>> c = cut([(x + x)._node, (x * 2.0)._node], x.device)
        >>> len(c.params), len(c.scalars), c.outputs
        (1, 1, (1, 3))
    """

    order: tuple[Node, ...]
    positions: dict[Node, int]
    params: tuple[Node, ...]
    scalars: tuple[Node, ...]
    groups: tuple[tuple[DType, int], ...]
    outputs: tuple[int, ...]
    device: Device
    key: int
    edges: int
    structure: tuple[object, ...] = ()

    def slots(self) -> dict[Node, tuple[int, int]]:
        """Where each scalar parameter is read from: (group, index), or (argument, -1)."""
        if not self.groups:
            return {s: (k, -1) for k, s in enumerate(self.scalars)}
        out: dict[Node, tuple[int, int]] = {}
        for g, (_, count) in enumerate(self.groups):
            first = sum(n for _, n in self.groups[:g])
            out.update({s: (g, k) for k, s in enumerate(self.scalars[first:first + count])})
        return out

    @property
    def operands(self) -> tuple[tuple[int, ...], ...]:
        """For each node in ``order``, the positions of its operands.

        Built when asked: compiling and printing need it, a cache hit does not.
        """
        p = self.positions
        return tuple([tuple([p[o] for o in n.operands]) for n in self.order])


def roots_of(nodes: Iterable[Node]) -> list[Node]:
    """The distinct pending nodes among ``nodes``, in a canonical order (by digest).

    The same program then gets the same linearisation, hence the same key, every time.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2,))
        >>> a, b = x + 1.0, x * 2.0
        >>> roots_of([a._node, b._node, a._node]) == roots_of([b._node, a._node])
        True
    """
    return sorted({n: None for n in nodes if n.op is not Op.DATA}, key=_digest)


def _positions(roots: Sequence[Node], leaves: list[Node]) -> dict[Node, int]:
    """Each node below ``roots`` with its post-order position; the leaves appended to ``leaves``.

    Iterative: no recursion limit, and no recursive closure (a reference cycle that would keep
    the graph and its device buffers alive until the next gc run).
    """
    index: dict[Node, int] = {}  # nodes hash by identity: this dict is "visited" and "position"
    for r in roots:
        if r in index:
            continue
        stack = [(r, iter(r.operands))]
        while stack:
            n, operands = stack[-1]
            for o in operands:
                if o not in index:
                    stack.append((o, iter(o.operands)))
                    break
            else:
                stack.pop()
                if not n.operands:
                    leaves.append(n)
                index[n] = len(index)
    return index


def cut(roots: Sequence[Node], device: Device) -> Cut:
    """Linearise the graph below ``roots`` into a :class:`Cut` with its cache key.

    The installed :class:`Planner` finds a graph met before without walking it; else :func:`walk`.
    """
    planner = CUTS.planner
    return walk(roots, device) if planner is None else planner.cut(roots, device)


def walk(roots: Sequence[Node], device: Device) -> Cut:
    """:func:`cut` the long way: a post-order walk from ``roots``, with no plan.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((3,))
        >>> walk([(x + x)._node], x.device).outputs  # scalar 1, broadcast, add
        (2,)
    """
    leaves: list[Node] = []
    index = _positions(roots, leaves)
    order = tuple(index)
    # The wiring, flat: each node's digest fixes its arity, so the flat list reads back uniquely.
    edges = tuple([index[o] for n in order for o in n.operands])
    outputs = tuple([index[r] for r in roots])
    key = hash((tuple(map(_digest, order)), edges, outputs, device.code))
    structure = (tuple(map(_exact, order)), edges, outputs, device)
    params = tuple([n for n in leaves if n.op is Op.DATA])
    # (a SCALAR with Constant attrs is baked into the program: not a parameter)
    found = [n for n in leaves if n.op is Op.SCALAR and type(n.attrs) is NoAttrs]
    kinds = Counter([n.dtype for n in found])
    if len(kinds) > 1:  # usually one dtype; else group them (a stable sort keeps their order)
        found.sort(key=lambda n: CODE[n.dtype])
    scalars = tuple(found)
    ordered = sorted(kinds, key=CODE.__getitem__)
    groups = tuple([(d, kinds[d]) for d in ordered]) if len(scalars) <= PACK_LIMIT else ()
    return Cut(order, index, params, scalars, groups, outputs, device, key, len(edges),
               structure)


class Planner(Protocol):
    """What finds a cut again without walking its graph: speed only (``minilazy.parts.plans``).

    ``import minilazy`` installs one (``CUTS.planner``); without one, every cut walks.
    """

    def cut(self, roots: Sequence[Node], device: Device) -> Cut:
        """The cut of ``roots`` on ``device``: :func:`walk`'s, found faster when it can be."""


class Cuts:
    """Where :func:`cut` finds the installed :class:`Planner` (its state: a part, ``cuts``)."""

    def __init__(self) -> None:
        self.planner: Planner | None = None


CUTS: Final = Cuts()
