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
    raise NotImplementedError("assignment 7: see chapter 7, Reverse-mode autodiff")


def backward(out: Node, wrt: list[Node]) -> list[Node]:
    """The gradients of 0-d ``out`` with respect to each node of ``wrt``, as pending nodes.

    Assignment 7, "Reverse-mode autodiff": LZ-AD-001, LZ-AD-002, LZ-AD-004.

    Linearise the graph below ``out`` (:func:`~tinylazy.graph.cut`), mark the nodes from which
    some ``wrt`` node is reachable, seed ``out``'s cotangent with ones, and go through the nodes
    users-first: each floating input of a pending, marked node gets a :func:`vjp` node, summed
    (an ``"add"`` node) where an input is used more than once. ``wrt`` nodes are not walked
    through (they are the variables); one that ``out`` does not depend on gets zeros.
    """
    raise NotImplementedError("assignment 7: see chapter 7, Reverse-mode autodiff")


def grad(f: Callable[..., Any], argnums: tuple[int, ...]) -> Callable[..., tuple[Any, ...]]:
    """The gradient of ``f``: a function giving one gradient per argument in ``argnums``.

    Assignment 7, "Reverse-mode autodiff": LZ-AD-003, LZ-AD-006, LZ-AD-007.

    Arguments may be lists, tuples and dicts of tensors (``jax.tree_util`` flattens them; a
    gradient has its argument's structure). Raise ``TypeError`` before anything runs for a
    non-floating argument or a result that is not a 0-d floating tensor.
    """
    raise NotImplementedError("assignment 7: see chapter 7, Reverse-mode autodiff")
