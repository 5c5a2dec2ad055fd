"""A lazy tensor from scratch: the whole LazyTensor idea in one module, with NumPy as the compiler.

Every op is *recorded* as a :class:`Node` (nothing runs); its shape and dtype come from running
the NumPy function on zero-strided dummies, so errors are raised at the call, exactly as NumPy
raises them. At a barrier the pending graph below the roots is *cut* into a post-order list,
*keyed* by its structure (ops, attributes, shapes, dtypes, wiring: never data), *compiled* into a
closure once per key, and *executed* with the leaves as parameters. Python scalars are parameters
too (weak, as NumPy 2 types them), so a new learning rate reuses the compiled closure.

It is also the oracle's test subject: :class:`Toy` passes the conformance suite for what it
declares (``--lazy-impl=minilazy.conformance.mutate.toy:toy``), and
:mod:`~minilazy.conformance.mutate.toy_mutants` breaks it in one place each, which the suite
must notice. Nothing here imports minilazy's engine.
"""

from __future__ import annotations

import contextlib
import hashlib
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from minilazy.conformance.adapter import Counters
from minilazy.conformance.registry import ops

Array = np.ndarray[Any, Any]
Program = Callable[[list[Any]], list[Array]]
SCALARS = (bool, int, float)


class In:
    """A placeholder for a node's ``i``-th input inside its argument template.

    Example:
        >>> In(2)
        In(2)
    """

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i

    def __repr__(self) -> str:
        return f"In({self.i})"


def fill(template: Any, values: list[Any]) -> Any:
    """``template`` with every :class:`In` replaced by its value (through tuples, lists, dicts).

    Example:
        >>> fill((In(0), [In(1), 5]), ["a", "b"])
        ('a', ['b', 5])
    """
    if isinstance(template, In):
        return values[template.i]
    if isinstance(template, (tuple, list)):
        return type(template)(fill(t, values) for t in template)
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    return template


class Node:
    """One recorded op; a leaf once ``value`` is set (data, a Python scalar, or a result).

    Example:
        >>> Node("data", (), None, (2,), np.dtype("float32"), np.zeros(2, "float32")).pending
        False
    """

    __slots__ = ("op", "inputs", "template", "shape", "dtype", "value")

    def __init__(self, op: str, inputs: tuple[Node, ...], template: Any, shape: tuple[int, ...],
                 dtype: np.dtype[Any] | None, value: Any = None) -> None:
        self.op, self.inputs, self.template = op, inputs, template
        self.shape, self.dtype, self.value = shape, dtype, value

    @property
    def pending(self) -> bool:
        """True while the node is only recorded."""
        return self.value is None


class Tensor:
    """A handle on a node; in-place ops rebind the handle (functional underneath).

    Example:
        >>> t = toy()
        >>> x = t.apply("add", t.from_numpy(np.ones(2)), 1.0)
        >>> x.shape, x.node.pending, float(x[0])
        ((2,), True, 2.0)
    """

    __slots__ = ("node", "owner", "serial", "__weakref__")

    def __init__(self, node: Node, owner: Toy) -> None:
        self.node, self.owner = node, owner
        self.serial = owner.serial = owner.serial + 1  # a stable order for mark_step's roots
        owner.live.add(self)

    shape = property(lambda self: self.node.shape)
    dtype = property(lambda self: self.node.dtype)

    def __repr__(self) -> str:  # metadata only: never a barrier
        return f"<toy {self.dtype}{list(self.shape)} {'pending' if self.node.pending else 'ready'}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return int(self.shape[0])

    def __getitem__(self, key: Any) -> Tensor:
        out: Tensor = self.owner.apply("getitem", self, key)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> Array:
        return self.owner.to_numpy(self)

    def _scalar(self) -> Any:
        if int(np.prod(self.shape)) != 1:  # checked before anything runs
            raise ValueError(f"only size-1 tensors convert to Python scalars, not {self!r}")
        return self.owner.to_numpy(self).item()

    def __float__(self) -> float: return float(self._scalar())
    def __int__(self) -> int: return int(self._scalar())
    def __bool__(self) -> bool: return bool(self._scalar())

    def __index__(self) -> int:
        if self.shape or self.dtype is None or self.dtype.kind not in "iu":
            raise TypeError(f"only 0-d integer tensors can be an index, not {self!r}")
        return int(self._scalar())


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """NumPy without its warnings (``1/0``, the mean of nothing): values say it all.

    Example:
        >>> with quiet():
        ...     float(np.mean(np.zeros(0)))
        nan
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _setitem(x: Array, key: Any, value: Any) -> Array:
    out = x.copy()  # functional underneath: the old value stays valid for whoever holds it
    out[key] = value
    return out


def _inplace(ufunc: Callable[..., Any]) -> Callable[[Array, Any], Array]:
    def run(x: Array, other: Any) -> Array:
        out = x.copy()
        ufunc(out, other, out=out)  # NumPy's x op= y: same_kind casting into x's dtype
        return out
    return run


def _function(op: str) -> Callable[..., Any]:
    if op == "setitem":
        return _setitem
    if op.endswith("="):
        return _inplace(ops()[op[:-1]].numpy_callable())
    return ops()[op].numpy_callable()


class Toy:
    """The toy lazy tensor implementation, as an adapter of the conformance protocol.

    Example:
        >>> t = toy()
        >>> y = t.apply("multiply", t.from_numpy(np.arange(3.0)), 2.0)
        >>> t.counters().executions, t.to_numpy(y).tolist(), t.counters().executions
        (0, [0.0, 2.0, 4.0], 1)
    """

    name = "toy"
    version = "1.0"
    capabilities = frozenset({"counters", "keys", "pending", "sync", "setitem", "metadata",
                              "float64", "reset", "eager"})

    def __init__(self) -> None:
        self.live: weakref.WeakSet[Tensor] = weakref.WeakSet()
        self.cache: dict[str, Program] = {}
        self.serial = 0
        self.eager_mode = False
        self.reset()

    def isolate(self) -> None:
        self.live = weakref.WeakSet()  # earlier tests' tensors: readable, never in a barrier

    def reset(self) -> None:
        self.cache.clear()
        self.count = {"ops_recorded": 0, "compiles": 0, "cache_hits": 0, "executions": 0}

    def counters(self) -> Counters:
        return Counters(**self.count)

    # -- recording -------------------------------------------------------------------------------
    def from_numpy(self, array: Array) -> Tensor:
        a = np.array(array)  # a copy: later changes to the caller's array must not leak in
        return Tensor(Node("data", (), None, a.shape, a.dtype, a), self)

    def scalar(self, value: bool | int | float) -> Any:
        """A Python scalar operand as a parameter: kept weak, so NumPy 2 types it (NEP 50)."""
        return value

    def _template(self, arg: Any, inputs: list[Node], weak: bool) -> Any:
        if isinstance(arg, Tensor):
            inputs.append(arg.node)
            return In(len(inputs) - 1)
        if weak and type(arg) in SCALARS:  # a host scalar parameter, not baked in
            inputs.append(Node("scalar", (), None, (), None, self.scalar(arg)))
            return In(len(inputs) - 1)
        if isinstance(arg, (tuple, list)):
            return type(arg)(self._template(a, inputs, False) for a in arg)
        if isinstance(arg, np.ndarray):  # host data inside an argument: a leaf too
            return self._template(self.from_numpy(arg), inputs, False)
        return arg

    def supports(self, op: str) -> bool:
        """Every registered op but the multi-tensor pair (no NumPy function is one of them)."""
        return op not in ops() or ops()[op].kind != "multitensor"

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        weak = ops()[op].kind in ("elementwise", "select")
        inputs: list[Node] = []
        template = (tuple(self._template(a, inputs, weak) for a in args),
                    {k: self._template(v, inputs, False) for k, v in sorted(kwargs.items())})
        node = self._record(op, tuple(inputs), template)
        if op == "setitem":
            args[0].node = node
            return args[0]
        return Tensor(node, self)

    def inplace(self, op: str, x: Tensor, other: Any) -> Tensor:
        inputs: list[Node] = []
        template: tuple[Any, dict[str, Any]] = (
            (self._template(x, inputs, True), self._template(other, inputs, True)), {})
        x.node = self._record(op + "=", tuple(inputs), template)
        return x

    def _record(self, op: str, inputs: tuple[Node, ...], template: Any) -> Node:
        dummies = [n.value if n.op == "scalar" else np.broadcast_to(np.zeros((), n.dtype), n.shape)
                   for n in inputs]
        try:  # NumPy's own shape and dtype rules, and its errors, at the call
            with quiet():
                out = np.asarray(_function(op)(*fill(template[0], dummies),
                                               **fill(template[1], dummies)))
        except (OverflowError, TypeError, IndexError, ValueError) as e:
            names = ", ".join(f"{n.dtype}{n.shape}" if n.dtype else type(n.value).__name__
                              for n in inputs)  # name the operands, as the spec asks
            kind = next(k for k in (OverflowError, TypeError, IndexError, ValueError)
                        if isinstance(e, k))
            raise kind(f"{op}: {e} (operands: {names})") from None
        node = Node(op, inputs, template, out.shape, out.dtype)
        self.count["ops_recorded"] += 1
        if self.eager_mode:
            self._run([node])
        return node

    # -- cut, key, compile, execute --------------------------------------------------------------
    def signature(self, n: Node) -> tuple[Any, ...]:
        """What the key sees of one node: structure, attributes, shape, dtype; never a value."""
        if n.op == "scalar":
            return ("scalar", type(n.value).__name__)
        if not n.pending:
            return ("data", n.shape, str(n.dtype))
        return (n.op, repr(n.template), n.shape, str(n.dtype))

    def cut(self, roots: list[Node]) -> tuple[list[Node], list[tuple[int, ...]], list[int], str]:
        """Post-order below ``roots``, its nodes' input positions, the roots' positions, key."""
        index: dict[Node, int] = {}
        stack: list[tuple[Node, bool]] = [(r, False) for r in reversed(roots)]
        while stack:  # iterative: a long chain must not hit Python's recursion limit
            n, expanded = stack.pop()
            if n in index:
                continue
            if expanded or not n.pending:
                index[n] = len(index)
            else:
                stack.append((n, True))
                stack.extend((i, False) for i in reversed(n.inputs))
        order = list(index)
        wiring = [tuple(index[i] for i in n.inputs) if n.pending else () for n in order]
        outputs = [index[r] for r in roots]
        structure = repr(([self.signature(n) for n in order], wiring, outputs))
        return order, wiring, outputs, hashlib.sha256(structure.encode()).hexdigest()[:16]

    def compile(self, order: list[Node], wiring: list[tuple[int, ...]],
                outputs: list[int]) -> Program:
        """A closure that runs the cut; like a compiled program, it has typed parameters."""
        steps: list[tuple[Callable[..., Any] | None, Any, tuple[int, ...]]] = [
            (_function(n.op), n.template, ins) if n.pending else (None, n.dtype, ())
            for n, ins in zip(order, wiring)]

        def program(params: list[Any]) -> list[Array]:
            env: list[Any] = []
            feed = iter(params)
            with quiet():
                for fn, template, ins in steps:
                    if fn is None:  # a parameter: data are cast to the compiled dtype, scalars
                        value = next(feed)  # (dtype None) stay weak Python numbers
                        env.append(value if template is None else value.astype(template))
                    else:
                        args = [env[i] for i in ins]
                        env.append(np.asarray(fn(*fill(template[0], args),
                                                 **fill(template[1], args))))
            return [env[i] for i in outputs]

        return program

    def _run(self, roots: list[Node]) -> None:
        roots = list(dict.fromkeys(r for r in roots if r.pending))
        if not roots:
            return
        order, wiring, outputs, key = self.cut(roots)
        program = self.cache.get(key)
        if program is None:
            program = self.cache[key] = self.compile(order, wiring, outputs)
            self.count["compiles"] += 1
        else:
            self.count["cache_hits"] += 1
        self.count["executions"] += 1
        results = program([n.value for n in order if not n.pending])
        for node, value in zip(roots, results):  # materialise: the recipe gives way to the value
            node.value, node.inputs, node.template = value, (), None

    # -- barriers and observations ---------------------------------------------------------------
    def pending_roots(self) -> list[Node]:
        """The nodes of live pending tensors, oldest tensor first (so keys are reproducible)."""
        return [t.node for t in sorted(self.live, key=lambda t: t.serial) if t.node.pending]

    def barrier(self) -> None:
        self._run(self.pending_roots())

    def sync(self, *xs: Tensor) -> None:
        self._run([x.node for x in xs])

    def to_numpy(self, x: Tensor) -> Array:
        self._run([x.node])
        return np.array(x.node.value)

    def key(self, *xs: Tensor) -> str:
        return self.cut([x.node for x in xs])[3]

    def is_pending(self, x: Tensor) -> bool:
        return x.node.pending

    def shape(self, x: Tensor) -> tuple[int, ...]:
        return x.node.shape

    def dtype(self, x: Tensor) -> np.dtype[Any]:
        assert x.node.dtype is not None
        return x.node.dtype

    @contextlib.contextmanager
    def eager(self) -> Iterator[None]:
        self.eager_mode, before = True, self.eager_mode
        try:
            yield
        finally:
            self.eager_mode = before


def toy() -> Toy:
    """The toy implementation (what ``--lazy-impl=minilazy.conformance.mutate.toy:toy`` names).

    Example:
        >>> toy().name
        'toy'
    """
    return Toy()
