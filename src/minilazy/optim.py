"""Optimizers, optax-shaped: ``opt = ml.optim.adam(1e-3)``, ``opt.init``, ``opt.update``.

Built only from recorded ops: an update is recorded
like the forward and backward passes, so all three cut into one graph at the next barrier.
Parameters, gradients and optimizer state are pytrees (dicts, lists, tuples) of tensors, and
``update`` returns new trees (rebind them: the old buffers are then donated at the barrier).
Every hyperparameter is a Python number, so a parameter of the program, and the step count is a
tensor in the state: a new learning rate or a new step never recompiles. Never imports jax.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from minilazy.api.creation import full, zeros, zeros_like
from minilazy.api.elementwise import astype, sqrt
from minilazy.core import dtypes
from minilazy.core.tensor import Tensor

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
        if not all(isinstance(r, Tensor) for r in rest):
            raise TypeError("optim: the trees differ in structure (a tensor against a container)")
        return fn(tree, *rest)
    if isinstance(tree, dict):
        if any(not isinstance(r, dict) or r.keys() != tree.keys() for r in rest):
            raise TypeError(f"optim: the trees differ in structure (keys {sorted(tree)})")
        return {k: tree_map(fn, v, *(_at(r, k) for r in rest)) for k, v in tree.items()}
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

    Written ``b1 * m`` per weight, each number would be a scalar parameter per weight: a model
    of 60 weight tensors passes some 300 scalars to its program, past what the barrier packs
    into one argument (``cut.PACK_LIMIT``). Shared, it passes one per number and dtype. The
    value is the same: a weak Python float next to a tensor takes the tensor's dtype too.
    """

    def __init__(self, **numbers: float | Tensor) -> None:
        self.numbers = numbers
        self.made: dict[tuple[str, dtypes.DType], Tensor] = {}

    def __call__(self, name: str, dtype: dtypes.DType) -> Tensor:
        number = self.numbers[name]
        if isinstance(number, Tensor):
            return number
        if (name, dtype) not in self.made:
            self.made[name, dtype] = full((), number, dtype=dtype)
        return self.made[name, dtype]


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
    def init(params: Tree) -> State:
        return {"velocity": tree_map(zeros_like, params)} if momentum else {}

    def update(grads: Tree, state: State, params: Tree) -> tuple[Tree, State]:
        n = _Numbers(lr=lr, momentum=momentum)
        if not momentum:
            return tree_map(lambda p, g: p - n("lr", p.dtype) * g, params, grads), {}
        velocity = tree_map(lambda v, g: n("momentum", v.dtype) * v + g, state["velocity"], grads)
        return (tree_map(lambda p, v: p - n("lr", p.dtype) * v, params, velocity),
                {"velocity": velocity})

    return Optimizer(init, update)


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
    def init(params: Tree) -> State:
        return {"count": zeros((), dtype=dtypes.int32), "mu": tree_map(zeros_like, params),
                "nu": tree_map(zeros_like, params)}

    def update(grads: Tree, state: State, params: Tree) -> tuple[Tree, State]:
        count = state["count"]
        assert isinstance(count, Tensor), "adam: the state's count is one tensor"
        count = count + 1
        corrections: dict[dtypes.DType, tuple[Tensor, Tensor]] = {}  # recorded once per dtype
        n = _Numbers(lr=lr, b1=b1, c1=1.0 - b1, b2=b2, c2=1.0 - b2, eps=eps, wd=weight_decay)
        mu = tree_map(lambda m, g: n("b1", m.dtype) * m + n("c1", m.dtype) * g, state["mu"], grads)
        nu = tree_map(lambda v, g: n("b2", v.dtype) * v + n("c2", v.dtype) * (g * g), state["nu"],
                      grads)

        def step(p: Tensor, m: Tensor, v: Tensor) -> Tensor:
            if p.dtype not in corrections:  # 1 / (1 - b^t) in at least float32, then p's dtype
                t = astype(count, p.dtype if p.dtype.itemsize >= 4 else dtypes.float32)
                corrections[p.dtype] = (astype(1.0 / (1.0 - b1 ** t), p.dtype, copy=False),
                                        astype(1.0 / (1.0 - b2 ** t), p.dtype, copy=False))
            c1, c2 = corrections[p.dtype]
            direction = (m * c1) / (sqrt(v * c2) + n("eps", p.dtype))
            if weight_decay:
                direction = direction + n("wd", p.dtype) * p
            return p - n("lr", p.dtype) * direction

        return tree_map(step, params, mu, nu), {"count": count, "mu": mu, "nu": nu}

    return Optimizer(init, update)
