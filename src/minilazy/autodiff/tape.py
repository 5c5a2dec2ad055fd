"""Autodiff: reverse mode as a graph-to-graph transform on the recorded IR.

Above core and the namespace. ``grad(f)`` runs ``f`` (ordinary Python: loops, branches,
recursion) on tensors, which records its graph; then walks that graph from the output back to
the inputs, applying one VJP rule per op from ``vjps.VJP``, a table keyed by ``Op``. The rules
*record* ops too, so gradients are lazy tensors: forward, backward and an optimizer update cut
into one graph at the next barrier. A backward pass is recorded once per forward structure
(and taped): the next forward graph of that structure replays the tape, node for node, without
running the rules. Never imports jax.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Final

from minilazy.api.creation import full_like, zeros_like
from minilazy.api.tensor import Tensor, record
from minilazy.autodiff import vjps
from minilazy.autodiff.origins import ORIGINS
from minilazy.core import barrier, dtypes
from minilazy.core.attrs import ToShape
from minilazy.core.cache import CACHE
from minilazy.core.cut import cut
from minilazy.core.ir import Device, Node, Op
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import ENGINE, current_policy
from minilazy.parts import tapes


@dataclass(frozen=True)
class Tape:
    """The backward graph of one forward structure, with what it was recorded for.

    Attributes:
        structure: the forward graph's structure (each node's op, attributes, shape and dtype,
            the wiring, the device: :attr:`minilazy.core.cut.Cut.structure`), the targets, and
            whether 0 and 1 are baked in (``special_scalars``); compared by value on a hit, so
            two structures whose keys collide never share a tape.
        steps: the backward nodes in post-order, operands before users.
        results: the ref of each gradient.
    """

    structure: tuple[object, ...]
    steps: tuple[tapes.Step, ...]
    results: tuple[int, ...]
    # Noted at the first replay; later ones clone nodes with them (a digest is structural)
    digests: list[int] = field(default_factory=list, compare=False, repr=False)


class Tapes:
    """The taped backward passes by structure key, least recently used first (at most 64).

    One of the engine's parts (:func:`minilazy.core.state.install`): ``reset`` forgets them.
    Threads differentiate concurrently, and an LRU's reorder is not atomic: a lock guards it.

    Example:
        >>> import minilazy as ml
        >>> TAPES.reset(); len(TAPES)
        0
    """

    limit: Final = 64

    def __init__(self) -> None:
        self._tapes: OrderedDict[int, Tape] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: int) -> Tape | None:
        """The tape under ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            tape = self._tapes.get(key)
            if tape is not None:
                self._tapes.move_to_end(key)
            return tape

    def put(self, key: int, tape: Tape) -> None:
        """Keep ``tape`` under ``key``, forgetting the least recently used beyond the limit."""
        with self._lock:
            self._tapes[key] = tape
            if len(self._tapes) > self.limit:
                self._tapes.popitem(last=False)

    def reset(self) -> None:
        """Forget every tape (the next gradient runs the VJP rules)."""
        with self._lock:
            self._tapes.clear()

    def __len__(self) -> int:
        return len(self._tapes)


TAPES: Final = Tapes()


def clear_cache() -> None:
    """Forget every compiled program: the next barrier of each structure compiles again.

    Taped backward passes and layers are forgotten too (the next gradient runs the VJP rules,
    the next layer its Python). For measurements and tests that must start cold (the
    conformance oracle does, before each spec test); a program in use keeps running. The
    persistent cache keeps its entries: with it on, the next barrier may read the program from
    disk (``disk_hits``, not ``compiles``).

    Example:
        >>> import minilazy as ml
        >>> ml.sync(ml.ones((3,)) * 2.0)
        >>> ml.clear_cache(); ml.reset_metrics()
        >>> ml.sync(ml.ones((3,)) * 2.0)
        >>> ml.metrics().compiles
        1
    """
    CACHE.reset()
    TAPES.reset()  # so that the rules run again (the oracle's mutants patch them)
    tapes.TEMPLATES.reset()  # and the layers' Python


def handle(node: Node, device: Device) -> Tensor:
    """A tensor for an existing node, not registered as live: a short-lived internal view.

    The backward pass wraps the forward graph's nodes in these; one must never reach the user,
    whose tensors ``mark_step`` finds through the live registry.

    Example:
        >>> import minilazy as ml
        >>> x = ml.ones((2,))
        >>> handle(x._node, x.device).shape
        (2,)
    """
    t = Tensor.__new__(Tensor)
    t._node, t._device = node, device
    return t


def _backward(out: Tensor, wrt: Sequence[Node], origins: dict[Node, Node]) -> list[Tensor]:
    """The gradients of scalar ``out`` with respect to the nodes ``wrt``, recorded (lazy).

    Replayed from a tape when a forward graph of the same structure was differentiated before;
    else the VJP rules run, and what they recorded becomes the tape for the next time. A
    forward pass that ran a barrier (``mark_step``, an observation, an auto-cut, eager mode)
    holds result leaves where it had ops: ``origins`` maps each such leaf to the node it stands
    for, and the rules walk through it (taking values from the leaf), with no tape.
    """
    forward = cut([out._node], out.device)  # a step's forward graph again: its cut's plan
    index, order = forward.positions, forward.order
    if origins and any(n in origins for n in order if n.op is Op.DATA):
        return _run_rules(out, wrt, _through(out._node, origins), origins)
    policy = current_policy()
    targets = tuple([index.get(t, -1) for t in wrt])
    structure = (forward.structure, targets, policy.special_scalars)  # (changes the records)
    key = hash((forward.key, targets, policy.special_scalars))  # finds; `structure` decides
    tape = TAPES.get(key)
    if tape is not None and tape.structure == structure and not policy.eager:
        return _replay(tape, order, out.device)
    barriers = COUNTERS.barriers
    grads = _run_rules(out, wrt, order, {})
    if not policy.eager and COUNTERS.barriers == barriers:  # no auto-cut rebound a node midway
        found = _tape(structure, index, [g._node for g in grads])
        if found is not None:
            TAPES.put(key, found)
    return grads


def _through(root: Node, origins: dict[Node, Node]) -> tuple[Node, ...]:
    """The nodes below ``root`` in post-order, each barrier's result leaf replaced by its node."""
    seen: set[Node] = set()
    order: list[Node] = []
    root = origins.get(root, root)
    stack = [(root, iter(root.operands))]
    while stack:  # iterative post-order, as the cut's walk
        n, operands = stack[-1]
        for o in operands:
            o = origins.get(o, o)
            if o not in seen:
                seen.add(o)
                stack.append((o, iter(o.operands)))
                break
        else:
            stack.pop()
            order.append(n)
    return tuple(order)


def _run_rules(out: Tensor, wrt: Sequence[Node], order: Sequence[Node],
               origins: dict[Node, Node]) -> list[Tensor]:
    """The backward pass by the VJP rules, node by node from ``out`` back to ``wrt``.

    With ``origins`` (see ``_backward``), a node's cotangent flows to the node a result leaf
    stands for, and a node already computed by a barrier gives its value from its leaf.
    """
    targets = {t: i for i, t in enumerate(wrt)}
    values = {n: leaf for leaf, n in origins.items()}
    # Only nodes that depend on a target carry cotangents worth computing.
    reaches = set(targets)
    for node in order:
        if any(origins.get(o, o) in reaches for o in node.operands):
            reaches.add(node)
    device = out.device
    cotangents: dict[Node, Tensor] = {origins.get(out._node, out._node): full_like(out, 1)}
    grads: dict[int, Tensor] = {}
    for node in reversed(order):
        g = cotangents.pop(node, None)
        if g is None:
            continue
        if node in targets:
            grads[targets[node]] = g
            continue
        operands = tuple(handle(values.get(o, o), device) for o in node.operands)
        value = handle(values.get(node, node), device)
        contributions = vjps.VJP[node.op](g, value, operands, node)
        for o, ct in zip(node.operands, contributions):
            o = origins.get(o, o)
            if ct is None or o not in reaches or o.dtype not in dtypes.INEXACT:
                continue
            ct = vjps.fit(ct, o.shape, o.dtype)
            cotangents[o] = cotangents[o] + ct if o in cotangents else ct
    # (no `grads.get(i) or ...`: truth-testing a tensor would be an observation barrier)
    return [grads[i] if i in grads else zeros_like(handle(t, device))
            for i, t in enumerate(wrt)]


def _tape(structure: tuple[object, ...], forward: dict[Node, int], results: list[Node]
          ) -> Tape | None:
    """What the rules recorded below ``results``, as a tape; ``None`` if it cannot replay.

    It cannot when the rules read data from outside the forward graph (a ``DATA`` leaf): a
    tape holds structure and the numbers the rules chose (scalar leaves), never buffers.
    """
    found = tapes.take(forward, results)
    return None if found is None else Tape(structure, *found)


def _replay(tape: Tape, order: tuple[Node, ...], device: Device) -> list[Tensor]:
    """The tape's nodes over a new forward graph: what the rules would record, without them."""
    known = tape.digests if len(tape.digests) == len(tape.steps) else None
    made = tapes.replay(tape.steps, order, known)  # (the forward's structure is the tape's)
    if known is None:
        tape.digests[:] = [n.digest for n in made]
    COUNTERS.ops_recorded += len(made)
    COUNTERS.backward_replays += 1
    ENGINE.pending += len(made)
    grads = [Tensor(made[r - len(order)] if r >= len(order) else order[r], device)
             for r in tape.results]
    if grads and ENGINE.pending >= current_policy().max_pending_nodes:
        barrier.after_record(grads[-1])  # the auto-cut the rules' records would have run
    return grads


def _flatten(tree: Any, where: str) -> tuple[list[Tensor], Callable[[list[Tensor]], Any]]:
    """The tensors of a pytree (tensor, list, tuple, dict) and a function rebuilding it."""
    if isinstance(tree, Tensor):
        return [tree], lambda leaves: leaves[0]
    if isinstance(tree, (list, tuple)):
        parts = [_flatten(x, f"{where}[{i}]") for i, x in enumerate(tree)]
        kind = type(tree)
    elif isinstance(tree, dict):
        parts = [_flatten(v, f"{where}[{k!r}]") for k, v in tree.items()]
        keys = list(tree)
    else:
        raise TypeError(f"grad: {where} is a {type(tree).__name__}; differentiable arguments "
                        "must be tensors or lists, tuples and dicts of tensors")
    leaves = [t for ts, _ in parts for t in ts]
    sizes = [len(ts) for ts, _ in parts]

    def rebuild(flat: list[Tensor]) -> Any:
        starts = accumulate(sizes, initial=0)
        out = [build(flat[i:i + n]) for (_, build), n, i in zip(parts, sizes, starts)]
        return dict(zip(keys, out)) if isinstance(tree, dict) else kind(out)

    return leaves, rebuild


def value_and_grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0
                   ) -> Callable[..., tuple[Tensor, Any]]:
    """``f`` and its gradient with respect to the arguments ``argnums``, both lazy.

    ``f`` is ordinary Python (loops, branches on Python values, recursion) returning a 0-d
    floating tensor. Differentiated arguments are float tensors or lists/tuples/dicts of them;
    the gradient has the same structure (a tuple of such when ``argnums`` is a tuple, which
    names each argument once: ``ValueError`` otherwise).

    A complex argument's gradient is JAX's: ``df/dx - i df/dy`` for ``z = x + iy`` (the
    conjugate of the steepest-ascent direction), so ``grad(lambda z: abs(z)**2)`` is ``2 conj(z)``.
    Each VJP rule multiplies by the derivative, never its conjugate (JAX's convention).

    ``f`` may run barriers (``mark_step``, observations, ``ml.eager()``, automatic cuts): the
    gradient walks through the values they computed, as if they were pending. An in-place
    update of an argument inside ``f`` (``x *= 2``) is differentiated through; gradients are
    with respect to the arguments as passed.

    Example:
        >>> import minilazy as ml
        >>> f = lambda w: ml.sum(w * w)
        >>> value, g = ml.value_and_grad(f)(ml.asarray([1.0, 2.0]))
        >>> value.item(), g.tolist()
        (5.0, [2.0, 4.0])
    """
    single = isinstance(argnums, int)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def wrapped(*given: Any) -> tuple[Tensor, Any]:
        with ENGINE.lock:  # from here to the backward pass, barriers note what they cut
            ORIGINS.grads += 1
            if ORIGINS.found is None:
                ORIGINS.found = {}
            origins = ORIGINS.found
        try:
            args, wrt, rebuilds = list(given), list[Node](), list[tuple[int, Any]]()
            for k, i in enumerate(nums):
                if not -len(args) <= i < len(args):
                    raise ValueError(f"grad: argnums {i} is out of range for {len(args)} "
                                     "arguments")
                if i % len(args) in [j % len(args) for j in nums[:k]]:  # (watched twice)
                    raise ValueError(f"grad: argnums {nums} names argument {i % len(args)} "
                                     "twice")
                leaves, rebuild = _flatten(args[i], f"argument {i}")
                fresh = [_watch(t, f"argument {i}") for t in leaves]
                args[i] = rebuild(fresh)
                # The nodes, not the tensors: `x *= 2` in f rebinds the tensor, not the input.
                wrt += [origins.get(t._node, t._node) for t in fresh]
                rebuilds.append((len(fresh), rebuild))
            out = f(*args)
            if not isinstance(out, Tensor) or out.shape != () or out.dtype not in dtypes.FLOATING:
                shown = f"{out.dtype}{list(out.shape)}" if isinstance(out, Tensor) else type(out)
                hint = " (differentiate real(), imag() or abs() of a complex result)" if (
                    isinstance(out, Tensor) and out.dtype in dtypes.COMPLEX) else ""
                raise TypeError(f"grad: f must return a 0-d floating tensor, got {shown}{hint}")
            with ENGINE.lock:  # a snapshot: other threads' barriers may add to it meanwhile
                seen = dict(origins)
                root = out._node  # (read with it: a barrier after it leaves the graph intact)
            grads = _backward(handle(root, out.device), wrt, seen)
        finally:
            with ENGINE.lock:
                ORIGINS.grads -= 1
                if ORIGINS.grads == 0:
                    ORIGINS.found = None
        starts = accumulate([n for n, _ in rebuilds], initial=0)
        trees = [rebuild(grads[k:k + n]) for (n, rebuild), k in zip(rebuilds, starts)]
        return out, trees[0] if single else tuple(trees)

    return wrapped


def _watch(t: Tensor, where: str) -> Tensor:
    """A fresh node standing for ``t``: gradients stop here, even if ``t`` is passed twice."""
    if t.dtype not in dtypes.INEXACT:
        raise TypeError(f"grad: {where} has dtype {t.dtype}; only floating and complex tensors "
                        "have gradients")
    return record(Op.RESHAPE, (t._node,), ToShape(t.shape), t.device)


def grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The gradient of ``f`` with respect to the arguments ``argnums`` (see value_and_grad).

    Example:
        >>> import minilazy as ml
        >>> df = ml.grad(lambda x: ml.sum(ml.sin(x)))
        >>> df(ml.asarray([0.0])).tolist()
        [1.0]
    """
    vg = value_and_grad(f, argnums)
    return lambda *args: vg(*args)[1]
