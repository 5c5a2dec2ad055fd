"""Debugging: a line per barrier, and an answer to "why did this compile?".

Part of ``minilazy.introspect``. It listens to every barrier (``ENGINE.listeners``). Each
compile is explained by diffing the new graph against the nearest graph compiled before (the
most ops in common, then the longest common prefix of their linearisations) and naming an input
that differs, else the first node that differs: first sight, shape changed, dtype changed,
attribute changed, new op, rewired inputs. When compiles
keep coming in a loop, a :class:`RecompileWarning` says so once, with the cause. Debug levels
(``MINILAZY_DEBUG=1|2|3`` or ``with ml.debug(n):``) print one line per barrier, plus the IR,
plus StableHLO.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections import Counter, OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from minilazy.core.attrs import NONE, Attrs, NoAttrs
from minilazy.core.cut import Cut
from minilazy.core.dtypes import short_name, typed
from minilazy.core.infer import describe
from minilazy.core.ir import Device, Node, Op
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import ENGINE, user_site
from minilazy.introspect.printers import Graph, attrs_text

# (op, attrs, shape, dtype, operand positions, placement) per node: a compiled graph remembered
# without holding its nodes (or their buffers) alive. A sharding is kept apart from the other
# attributes so that the nearest graph is found by structure, then compared by placement.
Summary = tuple[tuple[str, Attrs, tuple[int, ...], str, tuple[int, ...], Attrs | None], ...]
# A compiled graph, its donation, its device, and which of its nodes were its results.
Seen = tuple[Summary, tuple[bool, ...], Device, tuple[int, ...]]


class RecompileWarning(UserWarning):
    """Compiles keep happening at barriers: the loop's graph is not stable.

    Example:
        >>> issubclass(RecompileWarning, UserWarning)
        True
    """


@dataclass(frozen=True)
class CompileRecord:
    """Why one compile happened.

    Attributes:
        key: the key of the graph compiled.
        kind: ``first``, ``new``, ``shape``, ``dtype``, ``attribute``, ``sharding``, ``op``,
            ``inputs``, ``size``, ``device``, ``donation``, ``outputs`` or ``evicted``.
        detail: a sentence naming the first node that differs from the nearest cached graph.
        site: the user's ``file:line`` that recorded that node (when debug info is on).
        barrier: what caused the barrier, and where: ``item at train.py:12``.
        hint: what usually fixes a compile of this kind when it repeats ("" if nothing does).
        loaded: the program came from the persistent cache on disk, not from XLA.

    Example:
        >>> import minilazy as ml
        >>> ml.sync(ml.ones((5,)) * 2.0)
        >>> isinstance(ml.compile_history()[-1], ml.CompileRecord)
        True
    """

    key: int
    kind: str
    detail: str
    site: str | None
    barrier: str
    hint: str = ""
    loaded: bool = False

    def __str__(self) -> str:
        where = f" (recorded at {self.site})" if self.site else ""
        how = "loaded from the persistent cache" if self.loaded else "compiled"
        return f"{self.barrier}: {how} ({self.kind}): {self.detail}{where}"


# What usually fixes a compile of each kind that repeats (the RecompileWarning quotes it).
HINTS: Final = {
    "size": "a graph that grows from one barrier to the next is pending work recorded again: a "
            "tensor updated in a loop is never materialised, only something computed from it "
            "is observed (while float(loss) > tol: ...). Call ml.mark_step() once per "
            "iteration, or observe inside `with ml.policy(observe_all=True):`, which "
            "materialises every live tensor at each observation",
    "shape": "a shape changes from step to step: pad or bucket it to a few sizes (tutorial 8, "
             "'a shape per step')",
    "dtype": "a dtype changes from step to step: cast to one dtype before the loop",
    "attribute": "an attribute (an axis, a Python int used as a size or index) changes from step "
                 "to step: pass it as a tensor, or keep it fixed",
    "op": "the program itself changes from step to step (a Python branch on a value, or a "
          "different code path): keep the step's code the same each time",
    "inputs": "the graph is wired differently from step to step: keep the step's code the same",
    "sharding": "a tensor is split differently from step to step: mark it the same way each time",
    "donation": "different buffers are donated from step to step: keep references alike each step",
    "outputs": "different tensors are live at the barrier from step to step (a program returns "
               "every live tensor it computes): keep the same references from step to step, "
               "and `del` those the next step does not need before it",
    "evicted": "the loop cycles through more programs than the compile cache holds",
    "device": "the same program runs on several devices: each device compiles its own",
}


def _summary(c: Cut) -> Summary:
    return tuple((n.op.value, NONE if _placed(n) else n.attrs, n.shape,
                  short_name(n.dtype), ins, n.attrs if _placed(n) else None)
                 for n, ins in zip(c.order, c.operands))


def _placed(n: Node) -> bool:
    """Whether ``n`` is placed over a mesh: a placed leaf, or a ``SHARD`` annotation."""
    return n.op is Op.SHARD or n.op is Op.DATA and type(n.attrs) is not NoAttrs


def _first_difference(a: Summary, b: Summary, field: slice = slice(0, 5)) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x[field] != y[field]:
            return i
    return min(len(a), len(b))


_INPUTS: Final = ("data", "scalar")  # a program's parameters (iota is structure)


def _leaves(s: Summary) -> Counter[tuple[str, tuple[int, ...], str]]:
    return Counter((x[0], x[2], x[3]) for x in s if x[0] in _INPUTS)


def _new_input(c: Cut, mine: Summary, other: Summary) -> tuple[str, str, Node] | None:
    """The first input (data or scalar) of ``c`` that the other graph has no copy of.

    Inputs are compared as multisets, apart from their positions: a barrier orders its roots
    by digest, so a new input shape may reorder the whole linearisation, but the inputs that
    changed still stand out (a batch of 16 where the cached graph read a batch of 32).
    """
    new, old = _leaves(mine) - _leaves(other), _leaves(other) - _leaves(mine)
    if not new:
        return None
    i = next(i for i, x in enumerate(mine) if x[0] in _INPUTS and (x[0], x[2], x[3]) in new)
    op, shape, dtype = mine[i][0], mine[i][2], mine[i][3]
    node = c.order[i]
    for kind, at, same in (("shape", 2, dtype), ("dtype", 1, shape)):  # the other part kept
        if was := next((o for o in old if o[0] == op and o[at] == same), None):
            return kind, (f"input %{i} {op} is {describe(node)}, was "
                          f"{typed(was[2], was[1])}"), node
    grew = f"the graph grew from {len(other)} to {len(mine)} nodes: " \
        if len(mine) > len(other) else ""
    what = "a Python number" if op == "scalar" else "a tensor's value on the device"
    return "size", f"{grew}it reads a new input, %{i}: {what}, {describe(node)}", node


def _results(c: Cut, outputs: tuple[int, ...]) -> str:
    return ", ".join(f"%{i} {c.order[i].op.value}" for i in outputs)


def _placement(attrs: Attrs | None) -> str:
    if attrs is None or type(attrs) is NoAttrs:
        return "on one device"
    return f"placed {attrs_text(attrs)}"


def explain(c: Cut, donated: tuple[bool, ...], seen: list[Seen]) -> tuple[str, str, Node | None]:
    """Why ``c`` needed a compile, given the graphs (and donation masks) compiled before.

    Returns (kind, detail, the first differing node of ``c`` or None).

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> old = cut([ml.exp(ml.ones((2,)))._node], ml.default_device())
        >>> new = cut([ml.exp(ml.ones((3,)))._node], ml.default_device())
        >>> explain(new, (), [(_summary(old), (), old.device, old.outputs)])[:2]
        ('shape', '%1 broadcast_to is f64[3], was f64[2]')
    """
    if not seen:
        return "first", "the first graph compiled", None
    mine = _summary(c)
    # The nearest graph: the most ops in common (a new shape changes every shape and digest,
    # so the linearisations may start apart), then the longest common prefix, then the latest.
    ops = Counter((x[0], x[3]) for x in mine)
    best = max(range(len(seen)), key=lambda k: (
        (ops & Counter((x[0], x[3]) for x in seen[k][0])).total(),
        _first_difference(mine, seen[k][0]), k))
    other, other_donated, device, outputs = seen[best]
    common = (Counter(x[0] for x in mine) & Counter(x[0] for x in other)).total()
    if common * 2 < min(len(mine), len(other)):  # not even its ops: nothing to compare it with
        return "new", f"a new program of {len(mine)} nodes, unlike the {len(seen)} compiled " \
                      f"before (the nearest, of {len(other)} nodes, shares {common} ops)", None
    i = _first_difference(mine, other)
    if i < max(len(mine), len(other)) and (changed := _new_input(c, mine, other)):
        return changed
    if i == len(mine) == len(other):
        j = _first_difference(mine, other, slice(5, 6))
        if j < len(mine):
            node = c.order[j]
            return "sharding", f"%{j} {node.op.value} is {_placement(node.attrs)}, was " \
                               f"{_placement(other[j][5])}", node
        if outputs != c.outputs:
            return "outputs", f"same graph, other results: {_results(c, c.outputs)}, was " \
                              f"{_results(c, outputs)}", None
        if device != c.device:
            return "device", f"same graph, on {c.device} (compiled before for {device})", None
        if donated != other_donated:
            return "donation", "same graph, other buffers donated", None
        return "evicted", "same graph as one compiled before: the cache no longer held it", None
    if i == len(other):
        node = c.order[i]
        return "size", f"the graph grew from {len(other)} to {len(mine)} nodes: %{i} " \
                       f"{node.op.value} and on are new", node
    if i == len(mine):
        return "size", f"the graph shrank from {len(other)} to {len(mine)} nodes", None
    node = c.order[i]
    op, attrs, shape, dtype, ins, _ = other[i]
    was = typed(dtype, shape)
    if op != node.op.value:
        return "op", f"%{i} is {node.op.value} where the cached graph has {op}", node
    if shape != node.shape:
        return "shape", f"%{i} {op} is {describe(node)}, was {was}", node
    if dtype != short_name(node.dtype):
        return "dtype", f"%{i} {op} is {describe(node)}, was {was}", node
    if attrs != mine[i][1]:
        return "attribute", f"%{i} {op} has attributes {node.attrs}, was {attrs}", node
    return "inputs", f"%{i} {op} reads {list(c.operands[i])}, was {list(ins)}", node


class _Debugger:
    """The barrier listener: compile causes, the recompile analyzer, and debug output."""

    def __init__(self) -> None:
        self.level = 0
        self.seen: deque[Seen] = deque(maxlen=256)
        self.loads = 0  # COUNTERS.disk_hits at the last barrier: a rise is a program loaded
        self.history: deque[CompileRecord] = deque(maxlen=100)
        # compiled? for the last 10 barriers at each user line: a loop is one line, repeated
        self.recent: OrderedDict[str | None, deque[bool]] = OrderedDict()
        self.warned: set[str | None] = set()

    def reset(self) -> None:
        """Forget the history, and take the level from ``MINILAZY_DEBUG`` (as a new process)."""
        self.seen.clear()
        self.history.clear()
        self.recent.clear()
        self.warned.clear()
        self.loads = COUNTERS.disk_hits
        value = os.environ.get("MINILAZY_DEBUG", "").strip()
        self.level = int(value) if value.isdigit() else 0  # anything else: off, never a crash
        ENGINE.sites = self.level > 0

    def __call__(self, cause: str, c: Cut, donated: tuple[bool, ...], compiled: bool,
                 seconds: float) -> None:
        site = user_site()
        recent: deque[bool] | None = None
        if cause not in ("eager", "stage"):  # op by op, every new op compiles once, and a
            # deep graph's bands differ: neither is a loop's fault
            recent = self.recent.get(site)
            if recent is None:  # (a hit, the common case, makes nothing: it runs every step)
                recent = self.recent[site] = deque(maxlen=10)
                if len(self.recent) > 64:
                    self.recent.popitem(last=False)
            else:
                self.recent.move_to_end(site)
            recent.append(compiled)
        loaded, self.loads = COUNTERS.disk_hits > self.loads, COUNTERS.disk_hits
        where = f"{cause} at {site}" if site else cause
        if compiled:
            kind, detail, node = explain(c, donated, list(self.seen))
            self.seen.append((_summary(c), donated, c.device, c.outputs))
            record = CompileRecord(c.key, kind, detail, node.site if node else None, where,
                                   HINTS.get(kind, ""), loaded)
            self.history.append(record)
            COUNTERS.compile_causes[kind] += 1
            if recent is not None and len(recent) == 10 and sum(recent) > 5 \
                    and site not in self.warned:
                self.warned.add(site)  # once per line: a warning per step would be noise
                file, _, line = (site or "?:0").rpartition(":")
                warnings.warn_explicit(RecompileWarning(
                    f"minilazy compiled at {sum(recent)} of the last 10 barriers on this line: "
                    f"the graph changes every step. Last: {record}. "
                    + (f"Fix: {record.hint}. " if record.hint else "")
                    + "See ml.compile_history()."), RecompileWarning, file, int(line))
        if self.level:
            self._print(where, c, compiled, seconds)

    def _print(self, where: str, c: Cut, compiled: bool, seconds: float) -> None:
        last = self.history[-1] if compiled else None
        what = "cache hit" if last is None else \
            f"{'loaded from disk' if last.loaded else 'compiled'} ({last.kind})"
        print(f"[minilazy] barrier {where}: key {c.key & 0xFFFFFFFF:08x}, {len(c.order)} nodes, "
              f"{what}, {seconds * 1e3:.2f} ms", file=sys.stderr)
        if last is not None and last.kind != "first":
            print(f"[minilazy]   why: {last.detail}", file=sys.stderr)
        if self.level >= 2:
            print(Graph(c).text(), file=sys.stderr)
        if self.level >= 3:
            print(Graph(c).stablehlo(), file=sys.stderr)


DEBUGGER: Final = _Debugger()


def install() -> None:
    """Listen to every barrier, at ``MINILAZY_DEBUG``'s level (``import minilazy`` calls it)."""
    if DEBUGGER not in ENGINE.listeners:
        ENGINE.listeners.append(DEBUGGER)
    DEBUGGER.reset()


def compile_history() -> list[CompileRecord]:
    """The last 100 compiles, each with its cause.

    Example:
        >>> import minilazy as ml
        >>> for n in (123, 124):
        ...     ml.sync(ml.ones((n,)) * 2.0)
        >>> [r.kind for r in ml.compile_history()[-1:]]
        ['shape']
    """
    return list(DEBUGGER.history)


@contextlib.contextmanager
def debug(level: int = 1) -> Iterator[None]:
    """Print a line per barrier (1), plus the IR (2), plus StableHLO (3), inside the block.

    Level 1 and up also records the user's ``file:line`` on every node, for the IR text and
    for compile causes.

    Example:
        >>> import minilazy as ml
        >>> with ml.debug(0):
        ...     ml.current_debug_level()
        0
    """
    old_level, old_sites = DEBUGGER.level, ENGINE.sites
    DEBUGGER.level, ENGINE.sites = level, level > 0
    try:
        yield
    finally:
        DEBUGGER.level, ENGINE.sites = old_level, old_sites


def current_debug_level() -> int:
    """The debug level in force (``MINILAZY_DEBUG`` or the innermost ``ml.debug``).

    Example:
        >>> import minilazy as ml
        >>> ml.current_debug_level() >= 0
        True
    """
    return DEBUGGER.level
