"""Reverse-mode autodiff as a graph-to-graph transform: gradients are lazy tensors.

``grad(f, argnums)(*xs)`` records ``f`` as usual, then walks its graph from the result back to
the arguments, recording for each op a ``"vjp"`` node (the op's vector-Jacobian product,
computed by ``jax.vjp`` of the op's JAX function when the program runs). Nothing runs: forward
and backward are cut together at the next barrier, and since ``"vjp"`` nodes are nodes like any
other, the backward graph can itself be differentiated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from tinylazy.graph import cut
from tinylazy.ir import In, Node
from tinylazy.tracer import Tensor, make


def _floating(node: Node) -> bool:
    return node.dtype is not None and node.dtype.kind == "f"


def vjp(node: Node, i: int, cotangent: Node) -> Node:
    """The cotangent of ``node``'s input ``i``, given ``node``'s: a new pending ``"vjp"`` node.

    Assignment 7, "Reverse-mode autodiff": LZ-AD-001, LZ-AD-005.

    Its inputs are ``node``'s inputs and then ``cotangent``; its template names the forward op
    (``node.op, node.template, node.dtype``) and ``i``, which is all
    :func:`~tinylazy.lowering.function` needs; shape and dtype are the input's.
    """
    x = node.inputs[i]
    assert x.dtype is not None
    return make("vjp", (*node.inputs, cotangent), (node.op, node.template, node.dtype, i),
                x.shape, x.dtype)


def backward(out: Node, wrt: list[Node]) -> list[Node]:
    """The gradients of 0-d ``out`` with respect to each node of ``wrt``, as pending nodes.

    Assignment 7, "Reverse-mode autodiff": LZ-AD-001, LZ-AD-002, LZ-AD-004.

    Linearise the graph below ``out`` (:func:`~tinylazy.graph.cut`), mark the nodes from which
    some ``wrt`` node is reachable, seed ``out``'s cotangent with ones, and go through the nodes
    users-first: each floating input of a pending, marked node gets a :func:`vjp` node, summed
    (an ``"add"`` node) where an input is used more than once. ``wrt`` nodes are not walked
    through (they are the variables); one that ``out`` does not depend on gets zeros.
    """
    targets = set(wrt)
    order = cut([out]).order
    reaches: set[Node] = set()
    for n in order:  # inputs come before their users
        if n in targets or any(i in reaches for i in n.inputs):
            reaches.add(n)
    grads = {out: make("ones", (), (((),), {"dtype": out.dtype}), (), out.dtype)}
    for n in reversed(order):
        g = grads.get(n)
        if g is None or n in targets or not n.pending or not _floating(n):
            continue
        for i, x in enumerate(n.inputs):
            if x in reaches and _floating(x):
                ct = vjp(n, i, g)
                old = grads.get(x)
                grads[x] = ct if old is None else make(
                    "add", (old, ct), ((In(0), In(1)), {}), x.shape, ct.dtype)
    return [grads.get(w) or make("zeros", (), ((w.shape,), {"dtype": w.dtype}), w.shape,
                                 w.dtype) for w in wrt]


def grad(f: Callable[..., Any], argnums: tuple[int, ...]) -> Callable[..., tuple[Any, ...]]:
    """The gradient of ``f``: a function giving one gradient per argument in ``argnums``.

    Assignment 7, "Reverse-mode autodiff": LZ-AD-003, LZ-AD-006, LZ-AD-007.

    Arguments may be lists, tuples and dicts of tensors (``jax.tree_util`` flattens them; a
    gradient has its argument's structure). Raise ``TypeError`` before anything runs for a
    non-floating argument or a result that is not a 0-d floating tensor.
    """
    def gradient(*args: Any) -> tuple[Any, ...]:
        flat = [jax.tree_util.tree_flatten(args[i]) for i in argnums]
        for leaves, _ in flat:
            for t in leaves:
                if not isinstance(t, Tensor) or t.dtype.kind != "f":
                    raise TypeError(f"gradients are for floating tensors, not {t!r}")
        out = f(*args)
        if not isinstance(out, Tensor) or out.shape != () or out.dtype.kind != "f":
            raise TypeError(f"grad needs a 0-d floating result, not {out!r}")
        grads = iter(backward(out.node, [t.node for leaves, _ in flat for t in leaves]))
        return tuple(jax.tree_util.tree_unflatten(tree, [Tensor(next(grads)) for _ in leaves])
                     for leaves, tree in flat)
    return gradient
