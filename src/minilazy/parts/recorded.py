"""What one call of a step recorded, for ``ml.capture`` (``minilazy.parts.capture``).

A recorded call of a captured step runs the step lazily and then ``mark_step``, as without
capture, and notes what decided its program: the arguments' structure and metadata, where each
parameter of the program came from (an argument, or a tensor held outside the step), which
tensors the barrier rebound and which the step returned. Two calls whose notes agree recorded
the same program from the same places: the capture part can then run it directly. What cannot
be noted (a barrier inside the step, device data it made, a tensor it keeps outside its result)
is :class:`Refused`, saying why.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from minilazy.core.barrier import mark_step
from minilazy.core.cut import Cut
from minilazy.core.dtypes import DType
from minilazy.core.ir import Failure, Node, Op, Shape
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import ENGINE, LIVE, current_policy
from minilazy.parts.refcounts import shared

NUMBERS = (bool, int, float, complex)
PLAIN = (str, bytes, type(None), *NUMBERS)  # compared by value; other objects by identity


class Refused(Exception):
    """Why a recording cannot become a captured program (the message says, for the user)."""


# -- pytrees: tuples, lists and dicts of leaves ------------------------------------------------
def flatten(tree: Any, leaves: list[Any]) -> object:
    """Append ``tree``'s leaves to ``leaves``; return its structure (compared by value).

    Example:
        >>> out = []
        >>> flatten({"a": (1, [2.0]), "b": None}, out), out
        (('dict', ('a', 'b'), (('tuple', 2, ('*', ('list', 1, ('*',)))), '*')), [1, 2.0, None])
    """
    if type(tree) in (tuple, list):
        return (type(tree).__name__, len(tree), tuple([flatten(x, leaves) for x in tree]))
    if type(tree) is dict:
        return ("dict", tuple(tree), tuple([flatten(v, leaves) for v in tree.values()]))
    leaves.append(tree)
    return "*"


def unflatten(structure: object, leaves: Sequence[Any], at: list[int]) -> Any:
    """The tree of ``structure`` (see :func:`flatten`) with ``leaves`` from ``at[0]`` on."""
    if structure == "*":
        at[0] += 1
        return leaves[at[0] - 1]
    assert isinstance(structure, tuple)
    kind, size, parts = structure
    items = [unflatten(s, leaves, at) for s in parts]
    if kind == "dict":
        return dict(zip(size, items))
    return tuple(items) if kind == "tuple" else items


def spec(leaf: Any) -> object:
    """What of an argument leaf decides the program (a tensor's metadata, a value's type)."""
    node = getattr(leaf, "_node", None)
    if isinstance(node, Node):
        return ("tensor", node.shape, node.dtype, leaf._device, node.attrs)
    if type(leaf) in NUMBERS:
        return ("number", type(leaf))
    return ("value", type(leaf), leaf) if type(leaf) in PLAIN else ("object", id(leaf))


def aliases(leaves: list[Any]) -> tuple[int, ...]:
    """For each tensor among ``leaves``, the position of the first one on the same node.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones(2)
        >>> aliases([x, 1.0, x, ml.ones(2)])
        (0, 0, 3)
    """
    first: dict[int, int] = {}
    return tuple([first.setdefault(id(leaf._node), k) for k, leaf in enumerate(leaves)
                  if hasattr(leaf, "_node")])


def ready(node: Node) -> bool:
    """Whether ``node`` holds a value: device data, not a failure."""
    return node.op is Op.DATA and type(node.payload) is not Failure


# -- a recording, and the program it captures ---------------------------------------------------
@dataclass
class Recording:
    """What one recorded call decided: compared with the next call's to capture the program."""

    structure: object  # the arguments' tree
    specs: tuple[object, ...]  # each argument leaf's spec
    aliases: tuple[int, ...]  # for each tensor argument, the first argument on the same node
    numbers: tuple[Any, ...]  # each argument leaf that is a Python number (else None)
    cut: Cut  # without its nodes but the scalars (it would keep old buffers alive)
    params: tuple[tuple[Shape, DType, object], ...]  # each parameter's shape, dtype, attributes
    roots: tuple[tuple[Shape, DType], ...]  # each output's shape and dtype
    donated: tuple[bool, ...]
    sources: tuple[object, ...]  # each parameter: ("arg", k) or ("held", tensor)
    sinks: tuple[tuple[object, int], ...]  # (("arg", k) or ("held", tensor), output)
    result: object  # the result's tree
    outputs: tuple[object, ...]  # each result leaf: ("new", n, output), ("arg", k), a value
    policy: object
    thread: int

    def same(self, other: Recording) -> bool:
        """Whether ``other`` recorded the same program from the same places."""
        return (self.cut.structure == other.cut.structure and self.donated == other.donated
                and self.structure == other.structure and self.specs == other.specs
                and self.aliases == other.aliases and self.sources == other.sources
                and self.sinks == other.sinks and self.result == other.result
                and self.outputs == other.outputs and self.policy == other.policy
                and self.thread == other.thread
                and [s.dtype for s in self.cut.scalars] == [s.dtype for s in other.cut.scalars])


class Held:
    """A tensor held outside the step: weakly (it may die), compared by identity.

    (A tensor's ``==`` is an op, and its truth an observation.)
    """

    __slots__ = ("ref",)

    def __init__(self, t: Any) -> None:
        self.ref = weakref.ref(t)

    def __call__(self) -> Any:
        return self.ref()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Held) and self.ref() is other.ref() is not None

    def __hash__(self) -> int:
        return id(self.ref())


def _held(t: Any) -> object:
    return ("held", Held(t))


def _leaves(roots: list[Node], args: list[Node | None], start: dict[int, tuple[Node, Any]]
            ) -> dict[int, object]:
    """Where each device-data leaf below ``roots`` comes from, by ``id``; else :class:`Refused`.

    An argument's node (``("arg", k)``) or a node a live tensor held at the call (``("held",
    ref)``). Nodes are compared by identity, with ``start`` holding them; nothing of this
    survives the call (the donor counts references to a barrier's nodes).
    """
    found: dict[int, object] = {}
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        stack.extend(n.operands)
        if n.op is not Op.DATA:
            continue
        k = next((k for k, a in enumerate(args) if a is n), None)
        if k is not None:
            found[id(n)] = ("arg", k)
        elif id(n) in start and start[id(n)][0] is n and start[id(n)][1]() is not None:
            found[id(n)] = ("held", start[id(n)][1])
        else:
            raise Refused("it reads device data it made (asarray of host data inside the "
                          "step?): pass the data as an argument")
    return found


def _occasion(leaves: list[Any]) -> str | None:
    """Why this call cannot show what the step records every time, if it cannot."""
    if ENGINE.pending:
        return "other work was pending when it was called"
    if shared():
        return "several threads make tensors"
    if current_policy().eager:
        return "eager mode is on"
    for k, leaf in enumerate(leaves):
        if hasattr(leaf, "_node") and not ready(leaf._node):
            return f"argument {k} is pending or failed (materialise it before the call)"
    return None


def record(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
           ) -> tuple[Any, Recording | None, str | None, bool]:
    """Call ``fn`` lazily, then ``mark_step``: its result, what it recorded, or why not usable.

    Why not, and whether the reason is this call's (:func:`_occasion`) or the step's.
    """
    leaves: list[Any] = []
    structure = flatten((args, kwargs), leaves)
    why = _occasion(leaves)
    occasional = why is not None
    live = LIVE.tensors()
    start = {id(t._node): (t._node, Held(t)) for t in live if t._node.op is Op.DATA}
    before = {id(t): Held(t) for t in live}
    del live  # (a tensor the step drops must die, as without capture: its buffer is donated)
    arg_nodes = [leaf._node if hasattr(leaf, "_node") else None for leaf in leaves]
    causes = dict(COUNTERS.barrier_causes)
    result = fn(*args, **kwargs)
    if why is None and COUNTERS.barrier_causes != causes:
        ran = {c for c, n in COUNTERS.barrier_causes.items() if n != causes.get(c, 0)}
        why = f"it runs a barrier inside ({', '.join(sorted(ran))})"
    pending = [t for t in LIVE.tensors() if t._node.op is not Op.DATA]
    roots = [id(t._node) for t in pending]
    sources: dict[int, object] = {}
    if why is None:
        try:
            sources = _leaves([t._node for t in pending], arg_nodes, start)
        except Refused as e:
            why = str(e)
    del start, arg_nodes  # no reference to a node of the barrier's cut but the engine's own
    seen: list[tuple[Cut, tuple[bool, ...], dict[int, int]]] = []

    def listen(cause: str, c: Cut, donated: tuple[bool, ...], compiled: bool, s: float) -> None:
        seen.append((c, donated, {id(c.order[i]): j for j, i in enumerate(c.outputs)}))

    ENGINE.listeners.append(listen)
    try:
        mark_step()
    finally:
        ENGINE.listeners.remove(listen)
    if why is not None:
        return result, None, why, occasional
    try:
        return result, _recording(leaves, structure, before, sources, pending, roots, seen,
                                  result), None, False
    except Refused as e:
        return result, None, str(e), False


def _recording(leaves: list[Any], structure: object, before: dict[int, Any],
               sources: dict[int, object], pending: list[Any], roots: list[int],
               seen: list[tuple[Cut, tuple[bool, ...], dict[int, int]]], result: Any
               ) -> Recording:
    """The :class:`Recording` of a call (see :func:`record`), or :class:`Refused`."""
    if len(seen) != 1:
        raise Refused(f"its barrier ran {len(seen)} programs, not one")
    c, donated, output = seen[0]
    found = tuple([sources[id(p)] for p in c.params])
    results: list[Any] = []
    tree = flatten(result, results)
    given = {id(leaf): k for k, leaf in enumerate(leaves) if hasattr(leaf, "_node")}
    returned = {id(r) for r in results}
    made: dict[int, int] = {}  # the result's new tensors, numbered
    sinks: list[tuple[object, int]] = []
    out_of: dict[int, int] = {}
    for t, root in zip(pending, roots):
        j = out_of[id(t)] = output[root]
        if id(t) in given:
            sinks.append((("arg", given[id(t)]), j))
        elif id(t) in before and before[id(t)]() is t:
            sinks.append((_held(t), j))
        elif id(t) in returned:
            made.setdefault(id(t), len(made))
        else:
            raise Refused("it keeps a tensor it made outside its result (a Python side "
                          "effect): return it instead")
    outputs: list[object] = []
    for r in results:
        if id(r) in made:
            outputs.append(("new", made[id(r)], out_of[id(r)]))
        elif id(r) in given:
            outputs.append(("arg", given[id(r)]))
        elif hasattr(r, "_node"):
            raise Refused("it returns a tensor it did not compute and was not given")
        elif type(r) in PLAIN:
            outputs.append(("value", type(r), r))
        else:
            raise Refused(f"it returns a {type(r).__name__}: return tensors and numbers")
    slim = dataclasses.replace(c, order=(), positions={}, params=())
    return Recording(structure, tuple(map(spec, leaves)), aliases(leaves),
                     tuple([x if type(x) in NUMBERS else None for x in leaves]), slim,
                     tuple([(p.shape, p.dtype, p.attrs) for p in c.params]),
                     tuple([(c.order[i].shape, c.order[i].dtype) for i in c.outputs]), donated,
                     found, tuple(sinks), tree, tuple(outputs), current_policy(),
                     threading.get_ident())


def holder(source: object, leaves: Sequence[Any]) -> Any:
    """The tensor a source names: an argument, or a held tensor (None once it is gone)."""
    assert isinstance(source, tuple)
    return leaves[source[1]] if source[0] == "arg" else source[1]()


def source_node(source: object, leaves: Sequence[Any]) -> Node | None:
    """The node a parameter's source holds now (an argument's, or a held tensor's), if alive."""
    t = holder(source, leaves)
    node: Node | None = None if t is None else t._node
    return node
