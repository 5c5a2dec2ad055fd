"""Autodiff: reverse mode as a graph-to-graph transform on the recorded IR.

The layer above the barrier. ``grad(f)`` runs ``f`` (ordinary Python: loops, branches,
recursion) on tensors, which records its graph; then walks that graph from the output back to
the inputs, applying one VJP rule per op from ``vjps.VJP``, a table keyed by ``Op``. The rules
*record* ops too, so gradients are lazy tensors: forward, backward and an optimizer update cut
into one graph at the next barrier. Never imports jax.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from minilazy import dtypes, vjps
from minilazy.attrs import ToShape
from minilazy.creation import full_like, zeros_like
from minilazy.cut import linearize
from minilazy.ir import Node, Op
from minilazy.tracer import Tensor, handle, record


def _backward(out: Tensor, wrt: Sequence[Tensor]) -> list[Tensor]:
    """The gradients of scalar ``out`` with respect to ``wrt``, recorded (lazy)."""
    targets = {t._node: i for i, t in enumerate(wrt)}
    order = linearize([out._node])
    # Only nodes that depend on a target carry cotangents worth computing.
    reaches = set(targets)
    for node in order:
        if any(o in reaches for o in node.operands):
            reaches.add(node)
    device = out.device
    cotangents: dict[Node, Tensor] = {out._node: full_like(out, 1)}
    grads: dict[int, Tensor] = {}
    for node in reversed(order):
        g = cotangents.pop(node, None)
        if g is None:
            continue
        if node in targets:
            grads[targets[node]] = g
            continue
        operands = tuple(handle(o, device) for o in node.operands)
        contributions = vjps.VJP[node.op](g, handle(node, device), operands, node)
        for o, ct in zip(node.operands, contributions):
            if ct is None or o not in reaches or o.dtype not in dtypes.FLOATING:
                continue
            ct = vjps.fit(ct, o.shape, o.dtype)
            cotangents[o] = cotangents[o] + ct if o in cotangents else ct
    # (no `grads.get(i) or ...`: truth-testing a tensor would be an observation barrier)
    return [grads[i] if i in grads else zeros_like(t) for i, t in enumerate(wrt)]


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
        out, i = [], 0
        for (_, build), n in zip(parts, sizes):
            out.append(build(flat[i:i + n]))
            i += n
        return dict(zip(keys, out)) if isinstance(tree, dict) else kind(out)

    return leaves, rebuild


def value_and_grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0
                   ) -> Callable[..., tuple[Tensor, Any]]:
    """``f`` and its gradient with respect to the arguments ``argnums``, both lazy.

    ``f`` is ordinary Python (loops, branches on Python values, recursion) returning a 0-d
    floating tensor. Differentiated arguments are float tensors or lists/tuples/dicts of them;
    the gradient has the same structure (a tuple of such when ``argnums`` is a tuple).

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
        args = list(given)
        wrt: list[Tensor] = []
        rebuilds = []
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"grad: argnums {i} is out of range for {len(args)} arguments")
            leaves, rebuild = _flatten(args[i], f"argument {i}")
            fresh = [_watch(t, f"argument {i}") for t in leaves]
            args[i] = rebuild(fresh)
            wrt += fresh
            rebuilds.append((len(fresh), rebuild))
        out = f(*args)
        if not isinstance(out, Tensor) or out.shape != () or out.dtype not in dtypes.FLOATING:
            shown = f"{out.dtype}{list(out.shape)}" if isinstance(out, Tensor) else type(out)
            raise TypeError(f"grad: f must return a 0-d floating tensor, got {shown}")
        grads = _backward(out, wrt)
        trees, k = [], 0
        for n, rebuild in rebuilds:
            trees.append(rebuild(grads[k:k + n]))
            k += n
        return out, trees[0] if single else tuple(trees)

    return wrapped


def _watch(t: Tensor, where: str) -> Tensor:
    """A fresh node standing for ``t``: gradients stop here, even if ``t`` is passed twice."""
    if t.dtype not in dtypes.FLOATING:
        raise TypeError(f"grad: {where} has dtype {t.dtype}; only floating tensors have "
                        "gradients")
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
