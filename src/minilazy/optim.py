"""Optimizers, optax-shaped: ``opt = ml.optim.adam(1e-3)``, ``opt.init``, ``opt.update``.

Built only from recorded ops: an update is recorded like the forward and backward passes, so
all three cut into one graph at the next barrier. Parameters and gradients are pytrees (dicts,
lists, tuples) of tensors; ``update`` returns new parameters in the same tree (rebind them: the
old buffers are then donated). Every hyperparameter is a Python number, so a parameter of the
program, and the step count is a tensor in the state: a new rate or step never recompiles.

An update is *multi-tensor*: the weights of one dtype and device are one group, laid end to end
in one vector (``ml.pack``), updated with a few ops on the vector and taken apart again
(``ml.unpack``), as ``torch._foreach_*`` and optax's ``flatten`` do; the state holds one vector
per group and moment. (A weight split over a mesh is a group of its own: a vector would not keep
its sharding.) Adam's update is replayed from its tape (``minilazy.parts.tapes``) after its first
step. Never imports jax.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from minilazy.api.creation import full, zeros, zeros_like
from minilazy.api.elementwise import astype, sqrt
from minilazy.api.everyday import pack, unpack
from minilazy.api.tensor import Tensor
from minilazy.core import dtypes
from minilazy.core.dtypes import DType
from minilazy.parts.tapes import templated

Tree: TypeAlias = Tensor | dict[str, "Tree"] | list["Tree"] | tuple["Tree", ...]
State: TypeAlias = dict[str, Tree]


def tree_map(fn: Callable[..., Tensor], tree: Tree, *rest: Tree) -> Tree:
    """``fn`` applied leaf by leaf to ``tree`` and the trees of the same structure in ``rest``.

    Example:
        >>> import minilazy as ml
        >>> tree_map(lambda a, b: a + b, {"w": ml.ones(2)}, {"w": ml.ones(2)})["w"].tolist()
        [2.0, 2.0]
    """
    if isinstance(tree, Tensor):
        for r in rest:
            if not isinstance(r, Tensor):
                raise TypeError(f"optim: the trees differ in structure (a tensor against a "
                                f"{type(r).__name__})")
        return fn(tree, *rest)
    if isinstance(tree, dict):
        if any(not isinstance(r, dict) or r.keys() != tree.keys() for r in rest):
            raise TypeError(f"optim: the trees differ in structure (keys {sorted(tree)})")
        # Keys in sorted order, as _flatten goes (the optimizer's state is laid out in that
        # order: a dict built in another order is the same tree); the result in tree's order.
        by_key = {k: tree_map(fn, tree[k], *(_at(r, k) for r in rest)) for k in sorted(tree)}
        return {k: by_key[k] for k in tree}
    if any(not isinstance(r, type(tree)) or len(r) != len(tree) for r in rest):
        raise TypeError(f"optim: the trees differ in structure (a {type(tree).__name__} of "
                        f"{len(tree)})")
    mapped = [tree_map(fn, v, *(_at(r, i) for r in rest)) for i, v in enumerate(tree)]
    return mapped if isinstance(tree, list) else tuple(mapped)


def _at(tree: Tree, key: str | int) -> Tree:
    """The child ``key`` of a container already checked to be one (for mypy's narrowing)."""
    if isinstance(tree, dict) and isinstance(key, str):
        return tree[key]
    if isinstance(tree, (list, tuple)) and isinstance(key, int):
        return tree[key]
    raise TypeError(f"optim: no child {key!r} in a {type(tree).__name__}")


class _Numbers:
    """An update's Python numbers as 0-d tensors, recorded once per dtype and shared.

    ``b1 * m`` per group would pass a scalar per group, past what the barrier packs into one
    argument (``cut.PACK_LIMIT``); shared, one per number and dtype. A 0-d tensor given for a
    number (a rate computed on the device) is cast to the weights' dtype, as a Python float is.
    """

    def __init__(self, **numbers: float | Tensor) -> None:
        self.numbers = numbers
        self.made: dict[tuple[str, dtypes.DType], Tensor] = {}

    def __call__(self, name: str, dtype: dtypes.DType) -> Tensor:
        if (name, dtype) not in self.made:
            number = self.numbers[name]
            self.made[name, dtype] = (astype(number, dtype, copy=False)
                                      if isinstance(number, Tensor) else
                                      full((), number, dtype=dtype))
        return self.made[name, dtype]


def _rate(lr: float | Tensor) -> float | Tensor:
    """``lr`` if it is a number or a 0-d tensor (a shaped one would broadcast over a group)."""
    if isinstance(lr, Tensor) and lr.shape != ():
        raise ValueError(f"optim: the learning rate is a number or a 0-d tensor, got a tensor of "
                         f"shape {lr.shape}")
    return lr


def _flatten(tree: Tree, leaves: list[Tensor]) -> object:
    """``tree``'s structure without its tensors, which go to ``leaves``, a dict's by sorted key.

    The structure is a key for the groups' layout (a dict built in another order is the same
    tree; a tuple and a list are not).
    """
    if isinstance(tree, Tensor):
        leaves.append(tree)
        return None
    if isinstance(tree, dict):
        keys = sorted(tree)
        return tuple(keys), tuple([_flatten(tree[k], leaves) for k in keys])
    if isinstance(tree, (list, tuple)):
        return isinstance(tree, list), tuple([_flatten(c, leaves) for c in tree])
    raise TypeError(f"optim: a tree holds tensors in dicts, lists and tuples, got a "
                    f"{type(tree).__name__}")


def _named(vectors: Sequence[tuple[tuple[int, ...], dtypes.DType]]) -> str:
    """Vectors' shapes and dtypes as errors name them: ``[(6,) float32, (3,) int32]``."""
    return "[" + ", ".join(f"{shape} {dtype}" for shape, dtype in vectors) + "]"


def _rebuild(tree: Tree, leaves: Iterator[Tensor]) -> Tree:
    """``tree`` with its tensors replaced, in :func:`_flatten`'s order, by ``leaves``."""
    if isinstance(tree, Tensor):
        return next(leaves)
    if isinstance(tree, dict):
        by_key = {k: _rebuild(tree[k], leaves) for k in sorted(tree)}
        return {k: by_key[k] for k in tree}
    mapped = [_rebuild(c, leaves) for c in tree]
    return mapped if isinstance(tree, list) else tuple(mapped)


@dataclass(frozen=True)
class _Layout:
    """How a structure of weights falls into groups: a pure function of :data:`_LAYOUTS`' key."""

    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[DType, ...]
    members: tuple[tuple[int, ...], ...]  # each group's weights, by their place in _flatten's order
    vectors: tuple[tuple[tuple[int, ...], DType], ...]  # each group's vector's shape, dtype
    kinds: tuple[DType, ...]  # the groups' dtypes, each once, in order


# (structure, each weight's shape, dtype, device, and whether it is split) -> its layout: worked
# out once, as a treedef is; a model's updates pass the same structure every step.
_LAYOUTS: dict[tuple[object, tuple[object, ...]], _Layout] = {}


def _layout(leaves: list[Tensor]) -> _Layout:
    for t in leaves:  # (a step on ints would round the rate to 0, or make NaN of them)
        if t.dtype.kind not in "fc":
            raise TypeError(f"optim: weights are floating-point or complex tensors, got one of "
                            f"dtype {t.dtype} and shape {t.shape}")
    found: dict[object, list[int]] = {}
    for i, t in enumerate(leaves):
        key = (t.dtype, t.device) if t.sharding is None else i  # a split weight: alone
        found.setdefault(key, []).append(i)
    members = tuple([tuple(m) for m in found.values()])
    shapes = tuple([t.shape for t in leaves])
    vectors = tuple([(shapes[m[0]] if len(m) == 1 else (sum(math.prod(shapes[i]) for i in m),),
                      leaves[m[0]].dtype) for m in members])
    return _Layout(shapes, tuple([t.dtype for t in leaves]), members, vectors,
                   tuple(dict.fromkeys([dtype for _, dtype in vectors])))


class _Groups:
    """A tree's tensors in groups of one dtype and device: each group is one vector.

    A group of several tensors is packed (``ml.pack``) into a vector; a group of one is its own
    vector, whatever its shape (so a weight split over a mesh, always alone, keeps its split).

    Example:
        >>> import minilazy as ml
        >>> g = _Groups({"w": ml.ones((2, 2)), "b": ml.ones(2), "h": ml.ones(3, dtype=ml.float32)})
        >>> g.layout.members, [v.shape for v in _packed(g.layout.members, g.leaves)]
        (((0, 2), (1,)), [(6,), (3,)])
    """

    def __init__(self, params: Tree) -> None:
        self.tree, self.leaves = params, list[Tensor]()
        self.structure = _flatten(params, self.leaves)
        key = (self.structure, tuple([(t.shape, t.dtype, t.device, t.sharding is None)
                                      for t in self.leaves]))
        layout = _LAYOUTS.get(key)
        if layout is None:
            layout = _layout(self.leaves)
            if len(_LAYOUTS) > 256:  # bounded: a program with many structures starts over
                _LAYOUTS.clear()
            _LAYOUTS[key] = layout
        self.layout = layout

    def flat(self, tree: Tree) -> list[Tensor]:
        """``tree``'s tensors, checked to be a tree of the parameters' structure and shapes."""
        if tree is self.tree:
            return self.leaves
        flat: list[Tensor] = []
        try:
            same = _flatten(tree, flat) == self.structure
        except TypeError:  # (a None for a gradient)
            same = False
        if not same:
            tree_map(lambda t, _: t, self.tree, tree)  # raises, saying where they differ
            raise TypeError("optim: the trees differ in structure")
        for t, shape, dtype in zip(flat, self.layout.shapes, self.layout.dtypes):
            if t.shape != shape:
                raise ValueError(f"optim: a tensor of shape {t.shape} where the parameter "
                                 f"has shape {shape}")
            if t.dtype != dtype:  # (else the update would promote the weight: a new dtype)
                raise TypeError(f"optim: a tensor of dtype {t.dtype} where the parameter "
                                f"has dtype {dtype}")
        return flat

    def zeros(self) -> tuple[Tensor, ...]:
        """A vector of zeros per group (an optimizer's initial moments)."""
        flat = self.leaves
        return tuple([zeros_like(flat[m[0]]) if len(m) == 1 else
                      zeros(shape, dtype=dtype, device=flat[m[0]].device)
                      for m, (shape, dtype) in zip(self.layout.members, self.layout.vectors)])

    def check(self, state: State, name: str) -> list[Tensor]:
        """The ``state``'s vectors of ``name``, checked against the groups (``ValueError``)."""
        if name not in state:
            raise ValueError(f"optim: the state has no {name!r} (it has {sorted(state)}): was it "
                             f"made by this optimizer's init()?")
        vectors: list[Tensor] = []
        _flatten(state[name], vectors)
        got = tuple([(v.shape, v.dtype) for v in vectors])
        if got != self.layout.vectors:
            raise ValueError(f"optim: the state's {name} has vectors {_named(got)}, the "
                             f"parameters' groups need {_named(self.layout.vectors)}: was the "
                             f"state made by init() for these parameters?")
        return vectors


def _packed(members: tuple[tuple[int, ...], ...], flat: Sequence[Tensor]) -> list[Tensor]:
    """The groups' vectors of ``flat`` (tensors in :func:`_flatten`'s order): one per group."""
    return [flat[m[0]] if len(m) == 1 else pack([flat[i] for i in m]) for m in members]


def _pieces(members: tuple[tuple[int, ...], ...], shapes: Sequence[tuple[int, ...]],
            vectors: Sequence[Tensor]) -> list[Tensor]:
    """The tensors of ``shapes`` the groups' ``vectors`` hold, in :func:`_flatten`'s order."""
    placed: list[Tensor | None] = [None] * len(shapes)
    for m, v in zip(members, vectors):
        for i, piece in zip(m, [v] if len(m) == 1 else unpack(v, [shapes[i] for i in m])):
            placed[i] = piece
    return [t for t in placed if t is not None]  # (every place is some group's)


@dataclass(frozen=True)
class Optimizer:
    """A pair of pure functions, as optax's ``GradientTransformation`` (but applying the step).

    ``init(params) -> state``; ``update(grads, state, params) -> (params, state)``.

    Example:
        >>> import minilazy as ml
        >>> opt = ml.optim.sgd(0.5)
        >>> params, state = opt.update({"w": ml.ones(2)}, opt.init({"w": ml.ones(2)}),
        ...                            {"w": ml.ones(2)})
        >>> params["w"].tolist()
        [0.5, 0.5]
    """

    init: Callable[[Tree], State]
    update: Callable[[Tree, State, Tree], tuple[Tree, State]]


def sgd(lr: float | Tensor, momentum: float = 0.0) -> Optimizer:
    """Stochastic gradient descent, with (heavy-ball) momentum as torch's ``SGD``.

    ``v = momentum * v + g; p = p - lr * v`` (no dampening, no Nesterov); with ``momentum=0``
    the state is empty and ``p = p - lr * g``.

    Example:
        >>> import minilazy as ml
        >>> opt = ml.optim.sgd(0.1, momentum=0.9)
        >>> p = {"w": ml.asarray([1.0])}
        >>> state = opt.init(p)
        >>> for _ in range(2):
        ...     p, state = opt.update({"w": ml.asarray([1.0])}, state, p)
        >>> [round(v, 6) for v in p["w"].tolist()]
        [0.71]
    """
    lr = _rate(lr)

    def init(params: Tree) -> State:
        return {"velocity": _Groups(params).zeros()} if momentum else {}

    def update(grads: Tree, state: State, params: Tree) -> tuple[Tree, State]:
        n, groups = _Numbers(lr=lr, momentum=momentum), _Groups(params)
        members, shapes = groups.layout.members, groups.layout.shapes
        gs = _packed(members, groups.flat(grads))
        velocity = [n("momentum", v.dtype) * v + g for v, g in
                    zip(groups.check(state, "velocity"), gs)] if momentum else gs
        new = [p - n("lr", p.dtype) * v for p, v in zip(_packed(members, groups.leaves), velocity)]
        return (_rebuild(groups.tree, iter(_pieces(members, shapes, new))),
                {"velocity": tuple(velocity)} if momentum else {})

    return Optimizer(init, update)


def _real_groups(params: Tree) -> _Groups:
    """Adam's groups, of real weights only.

    Its second moment squares each gradient entry; torch's updates a complex weight's parts apart.
    """
    groups = _Groups(params)
    for dtype, shape in zip(groups.layout.dtypes, groups.layout.shapes):
        if dtype.kind == "c":
            raise TypeError(f"adam: complex weights are not supported (got one of dtype {dtype} "
                            f"and shape {shape}): pass its real and imaginary parts as weights")
    return groups


def adam(lr: float | Tensor, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
         weight_decay: float = 0.0) -> Optimizer:
    """Adam, or AdamW (decoupled weight decay) when ``weight_decay`` > 0, as torch computes them.

    With ``t`` the step count (an int32 tensor in the state, starting at 0)::

        m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  t = t + 1
        p = p - lr (weight_decay p + (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps))

    The bias corrections ``1 - b^t`` are recorded from the count, never computed in Python.

    Example:
        >>> import minilazy as ml
        >>> opt = ml.optim.adam(0.1)
        >>> p = {"w": ml.asarray([1.0, 1.0])}
        >>> p, state = opt.update({"w": ml.asarray([3.0, -0.5])}, opt.init(p), p)
        >>> [round(v, 6) for v in p["w"].tolist()], state["count"].item()
        ([0.9, 1.1], 1)
    """
    lr = _rate(lr)

    def init(params: Tree) -> State:
        groups = _real_groups(params)
        return {"count": zeros((), dtype=dtypes.int32), "mu": groups.zeros(),
                "nu": groups.zeros()}

    def update(grads: Tree, state: State, params: Tree) -> tuple[Tree, State]:
        count = state.get("count")
        if not isinstance(count, Tensor):
            raise ValueError(f"adam: the state has no step count 'count' (it has {sorted(state)}):"
                             f" was it made by adam's init()?")
        groups = _real_groups(params)
        grads_flat = groups.flat(grads)
        mu, nu = groups.check(state, "mu"), groups.check(state, "nu")
        # The rate per dtype, made here: a new rate is a new number, not a new template.
        rates = [astype(lr, d, copy=False) if isinstance(lr, Tensor) else full((), lr, dtype=d)
                 for d in groups.layout.kinds]
        out = _adam(groups.layout.members, (b1, b2, eps, weight_decay), count, *rates,
                    *groups.leaves, *grads_flat, *mu, *nu)
        n, k = len(groups.leaves), len(mu)
        return _rebuild(groups.tree, iter(out[:n])), {"count": out[n], "mu": out[n + 1:n + 1 + k],
                                                      "nu": out[n + 1 + k:]}

    return Optimizer(init, update)


@templated
def _adam(members: tuple[tuple[int, ...], ...], hyper: tuple[float, float, float, float],
          count: Tensor, *tensors: Tensor) -> tuple[Tensor, ...]:
    """Adam's step on flat tensors; replayed from its tape after the first call of a signature.

    ``tensors``: the rates (one per group dtype), the weights and the gradients (in
    :func:`_flatten`'s order), the first moments, the second moments (a vector per group).
    Returns the new weights, the new count, the first moments, the second moments.
    """
    b1, b2, eps, weight_decay = hyper
    n, k = sum(len(m) for m in members), len(members)
    r = len(tensors) - 2 * n - 2 * k
    weights = tensors[r:r + n]
    ps, gs = _packed(members, weights), _packed(members, tensors[r + n:r + 2 * n])
    numbers = _Numbers(b1=b1, c1=1.0 - b1, b2=b2, c2=1.0 - b2, eps=eps, wd=weight_decay)
    numbers.made.update({("lr", rate.dtype): rate for rate in tensors[:r]})
    mu = [numbers("b1", m.dtype) * m + numbers("c1", m.dtype) * g
          for m, g in zip(tensors[r + 2 * n:r + 2 * n + k], gs)]
    nu = [numbers("b2", v.dtype) * v + numbers("c2", v.dtype) * (g * g)
          for v, g in zip(tensors[r + 2 * n + k:], gs)]
    count = count + 1
    corrections: dict[dtypes.DType, tuple[Tensor, Tensor]] = {}  # recorded once per dtype

    def step(p: Tensor, m: Tensor, v: Tensor) -> Tensor:
        if p.dtype not in corrections:  # 1 / (1 - b^t) in at least float32, then p's dtype
            t = astype(count, p.dtype if p.dtype.itemsize >= 4 else dtypes.float32)
            corrections[p.dtype] = (astype(1.0 / (1.0 - b1 ** t), p.dtype, copy=False),
                                    astype(1.0 / (1.0 - b2 ** t), p.dtype, copy=False))
        c1, c2 = corrections[p.dtype]
        direction = (m * c1) / (sqrt(v * c2) + numbers("eps", p.dtype))
        if weight_decay:
            direction = direction + numbers("wd", p.dtype) * p
        return p - numbers("lr", p.dtype) * direction

    new = [step(p, m, v) for p, m, v in zip(ps, mu, nu)]
    return (*_pieces(members, [w.shape for w in weights], new), count, *mu, *nu)
