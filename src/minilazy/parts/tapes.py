"""Tapes: the nodes a recording made above its inputs, made again without running its Python.

A training step records the same graph each step, and most of the time it takes is Python
deciding what to record (argument checks, axes, dtype promotion, one tensor per intermediate
result), not the recording. Two kinds of recording are therefore replayed from a tape: a
backward pass (``minilazy.autodiff.tape``, per forward structure), and a layer of ``ml.nn`` or
Adam's update (:func:`templated`, per call signature). A tape holds each node's op,
attributes, shape, dtype, payload (the numbers the recording chose: scalar leaves) and operand
references, never a buffer: a recording that reads a ``DATA`` leaf other than its inputs is not
taped. A replay makes the same nodes the recording would have made, so the same programs and
values; without tapes every call records (speed only).

Example:
    >>> import minilazy as ml
    >>> x = ml.ones((2, 3))
    >>> y = ml.exp(x) + 1.0
    >>> steps, results = take({x._node: 0}, [y._node])
    >>> [s[0][0].value for s in steps], results  # (ref 0: the input; 1 + i: step i)
    (['exp', 'scalar', 'add'], (3,))
    >>> again = replay(steps, [ml.zeros((2, 3))._node])
    >>> again[-1].digest == y._node.digest
    True
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, ParamSpec, TypeVar, cast

from minilazy.core import barrier
from minilazy.core.attrs import Attrs
from minilazy.core.dtypes import DType
from minilazy.core.ir import LEAVES, Device, Node, Op, Shape
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import ENGINE, OVERRIDE, user_site
from minilazy.core.tracer import Tensor, wrap

# One node of a tape: ((op, attrs, shape, dtype), payload, operand refs). A ref indexes the
# inputs, then the steps' nodes (ref k + i: step i's, for k inputs).
Step = tuple[tuple[Op, Attrs, Shape, DType], object, tuple[int, ...]]
P = ParamSpec("P")
T = TypeVar("T")  # a layer's result: a tensor, or a tuple of tensors


def take(inputs: dict[Node, int], results: Sequence[Node]
         ) -> tuple[tuple[Step, ...], tuple[int, ...]] | None:
    """The nodes below ``results`` down to ``inputs`` (node: position), as steps.

    Returns the steps and the results' refs; ``None`` when a ``DATA`` leaf other than an input
    is among the nodes (it holds a buffer: a tape holds none).

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([1.0, 2.0])  # data: a buffer
        >>> take({}, [(-x)._node]) is None, take({x._node: 0}, [(-x)._node])[1]
        (True, (1,))
    """
    index: dict[Node, int] = {}
    steps: list[Step] = []
    k = len(inputs)

    def ref(n: Node) -> int:
        return inputs[n] if n in inputs else k + index[n]

    for r in results:  # iterative post-order, stopping at the inputs (see cut.py)
        if r in inputs or r in index:
            continue
        stack = [(r, iter(r.operands))]
        while stack:
            n, operands = stack[-1]
            for o in operands:
                if o not in inputs and o not in index:
                    stack.append((o, iter(o.operands)))
                    break
            else:
                stack.pop()
                if n.op is Op.DATA:
                    return None
                steps.append((n.exact, n.payload, tuple([ref(o) for o in n.operands])))
                index[n] = len(index)
    return tuple(steps), tuple([ref(r) for r in results])


def replay(steps: Sequence[Step], inputs: Sequence[Node], digests: Sequence[int] | None = None
           ) -> list[Node]:
    """The ``steps``' nodes over ``inputs``, in order; nothing is counted or checked.

    ``digests``: each step's digest, from an earlier replay over inputs with the same digests
    (a digest is structural: the same steps over such inputs give the same ones). With them the
    nodes are cloned without ``Node()``'s family check and hash, done when first made.
    """
    site = user_site() if ENGINE.sites else None
    nodes = list(inputs)  # then each step's node: what the refs index
    get, new, add = nodes.__getitem__, Node.__new__, nodes.append
    for (exact, payload, refs), digest in zip(steps, digests or ()):
        n = new(Node)
        n.op, n.attrs, n.shape, n.dtype = n.exact = exact
        n.operands, n.payload, n.site, n.digest = tuple(map(get, refs)), payload, site, digest
        add(n)
    for (op, attrs, shape, dtype), payload, refs in () if digests is not None else steps:
        add(Node(op, tuple(map(get, refs)), attrs, shape, dtype, payload, site))
    return nodes[len(inputs):]


@dataclass(frozen=True)
class Template:
    """A layer's recording for one call signature (see :func:`templated`).

    Attributes:
        steps: the nodes it made, operands before users.
        results: the refs of its results (steps': a layer returning an input is not taped).
        devices: its results' devices.
        one: whether it returned one tensor (else a tuple of them).
        ops: how many of the steps ``record`` made (the rest are scalar leaves).
        digests: the steps' digests per tuple of the inputs' digests (a few per template: one
            per place in a model the layer is called from).
    """

    steps: tuple[Step, ...]
    results: tuple[int, ...]
    devices: tuple[Device, ...]
    one: bool
    ops: int
    digests: dict[tuple[int, ...], list[int]] = field(default_factory=dict, compare=False)


class Templates:
    """The layers' templates by call signature; a part of the engine's state (``reset``).

    Example:
        >>> import minilazy as ml
        >>> TEMPLATES.reset(); TEMPLATES.hits
        0
        >>> for _ in range(2):
        ...     y = ml.nn.softmax(ml.ones((2, 3)))
        >>> TEMPLATES.hits
        1
    """

    limit: Final = 1024  # signatures kept; more (a program of ever new shapes) start over

    def __init__(self) -> None:
        self.memo: dict[tuple[object, ...], Template | None] = {}
        self.hits = 0  # calls that replayed a template
        self._lock = threading.Lock()

    def put(self, key: tuple[object, ...], template: Template | None) -> None:
        """Keep ``template`` (``None``: this signature records every time) under ``key``."""
        with self._lock:
            if len(self.memo) >= self.limit:
                self.memo.clear()
            self.memo[key] = template

    def reset(self) -> None:
        """Forget every template: the next call of each signature records (and tapes) again."""
        with self._lock:
            self.memo.clear()
            self.hits = 0

    def __len__(self) -> int:
        return len(self.memo)


TEMPLATES: Final = Templates()


def _static(value: object) -> object:
    """A hashable stand-in for a non-tensor argument (``_NOT``: not a plain value).

    Plain: ``None``, a bool, an int, a string, a float (by its bits: ``-0.0`` is not ``0.0``, a
    NaN is itself), or a tuple or list of plain values.
    """
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return kind, value
    if isinstance(value, float) and kind is float:
        return kind, value.hex()
    if isinstance(value, (tuple, list)) and (kind is tuple or kind is list):
        items = tuple([_static(v) for v in value])
        return _NOT if any(i is _NOT for i in items) else (kind, items)
    return _NOT


_NOT: Final = object()
_FIRST: Final = Template((), (), (), True, 0)  # a signature not seen yet


def _signature(fn: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object],
               special: bool, inputs: list[Node]) -> tuple[object, ...] | None:
    """What decides the nodes ``fn(*args, **kwargs)`` records; ``None``: not only plain values.

    Per tensor: its shape, dtype, device and which earlier argument is the same node (a layer
    given one tensor as weight and bias must not replay over two, nor the reverse); its node
    goes into ``inputs``, once.
    """
    key: list[object] = [fn, special, *kwargs]
    seen: dict[Node, int] = {}
    for value in (*args, *kwargs.values()):
        if isinstance(value, Tensor):
            n = value._node
            i = seen.get(n)
            if i is None:
                seen[n] = len(inputs)
                inputs.append(n)
                d = value._device  # (by its fields: a dataclass's hash is Python code)
                key.append((n.shape, n.dtype, d.platform, d.index))
            else:
                key.append(i)
        else:
            static = _static(value)
            if static is _NOT:
                return None
            key.append(static)
    return tuple(key)


def templated(layer: Callable[P, T]) -> Callable[P, T]:
    """``layer``, replayed from its template when called again with the same signature.

    ``layer`` returns a tensor or a tuple of tensors. A signature is each tensor argument's
    shape, dtype and device, which arguments are one tensor, every other argument's value
    (ints, floats by their bits, strings, ``None``, tuples of those) and the policy's
    ``special_scalars``. The first call of a signature records as usual and keeps what it
    recorded as a :class:`Template`, if that is exactly the nodes below its results down to its
    tensor arguments (no barrier in between, no other thread's records, no data leaf); later
    calls make those nodes over the new arguments. Calls with another kind of argument (a NumPy
    array, an ``np.float64``), a layer that raised, and eager mode record as usual. For pure
    layers only: what ``layer`` records must follow from its signature alone.

    Example:
        >>> import minilazy as ml
        >>> double = templated(lambda x, k: x * float(k))
        >>> double(ml.ones(2), 3).tolist(), double(ml.full((2,), 2.0), 3).tolist()
        ([3.0, 3.0], [6.0, 6.0])
    """
    @functools.wraps(layer)
    def lean(*args: P.args, **kwargs: P.kwargs) -> T:
        inputs: list[Node] = []
        policy = OVERRIDE.get() or ENGINE.default
        key = _signature(layer, args, kwargs, policy.special_scalars, inputs)
        if key is None or policy.eager:
            return layer(*args, **kwargs)
        template = TEMPLATES.memo.get(key, _FIRST)
        if template is _FIRST:
            return _first(layer, args, kwargs, key, inputs)
        if template is None:
            return layer(*args, **kwargs)
        return cast(T, _again(template, inputs))  # (wrapped in the class the layer's are)

    return lean


def _first(layer: Callable[..., T], args: tuple[object, ...], kwargs: dict[str, object],
           key: tuple[object, ...], inputs: list[Node]) -> T:
    """``layer``'s call, recorded; its template kept (or ``None``: it is not one)."""
    ops = COUNTERS.ops_recorded
    out = layer(*args, **kwargs)
    template = None
    results: tuple[object, ...] = (out,) if isinstance(out, Tensor) else (
        out if isinstance(out, tuple) and type(out) is tuple else ())  # (not a named tuple)
    tensors = [t for t in results if isinstance(t, Tensor)]
    if tensors and len(tensors) == len(results):
        # (a barrier inside left data leaves: no tape)
        found = take({n: i for i, n in enumerate(inputs)}, [t._node for t in tensors])
        if found is not None:
            steps, refs = found
            made = sum([s[0][0] not in LEAVES for s in steps])
            # Every op it recorded, and only those: not another thread's, none left dead.
            if min(refs) >= len(inputs) and made == COUNTERS.ops_recorded - ops:
                template = Template(steps, refs, tuple([t._device for t in tensors]),
                                    isinstance(out, Tensor), made)
    TEMPLATES.put(key, template)
    return out


def _again(template: Template, inputs: list[Node]) -> Tensor | tuple[Tensor, ...]:
    """The template's nodes over ``inputs``, counted as ``record`` counts them; its results."""
    seen = tuple([n.digest for n in inputs])
    digests = template.digests.get(seen)
    made = replay(template.steps, inputs, digests)
    if digests is None and len(template.digests) < 16:
        template.digests[seen] = [n.digest for n in made]
    k = len(inputs)
    out = tuple([wrap(made[r - k], d) for r, d in zip(template.results, template.devices)])
    COUNTERS.ops_recorded += template.ops
    ENGINE.pending += template.ops
    TEMPLATES.hits += 1
    if ENGINE.pending >= (OVERRIDE.get() or ENGINE.default).max_pending_nodes:
        barrier.after_record(out[-1])  # the auto-cut its records would have run
    return out[0] if template.one else out
