"""The cut: the pending graph below a barrier's roots, as a post-order list with a key.

The key is what the compile cache looks programs up by. It must see everything that changes
the compiled program (ops, attributes, shapes, dtypes, *which input each op reads*, which nodes
are outputs, the platform) and nothing that does not (the values of data and of scalars), and it
must be the same in every process (no ``id()``, no ``hash()`` of strings: they are salted).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import jax

from tinylazy.ir import Node


@dataclass(frozen=True)
class Cut:
    """A linearised graph.

    Attributes:
        order: every node below the roots, inputs before users; leaves are the parameters.
        wiring: for each node of ``order``, the positions in ``order`` of its inputs.
        outputs: the positions of the roots.
        key: the structural key (hex digest).
    """

    order: list[Node]
    wiring: list[tuple[int, ...]]
    outputs: list[int]
    key: str

    @property
    def params(self) -> list[Node]:
        """The leaves of the cut, in order: the program's parameters."""
        return [n for n in self.order if not n.pending]


def signature(node: Node) -> tuple[Any, ...]:
    """What the key sees of one node: never a value, only structure.

    Assignment 3, "Linearise and hash": LZ-HASH-003, LZ-HASH-004.

    A scalar leaf is its Python type (``2.0`` and ``3.0`` share a program; ``2`` and ``2.0``
    do not: NEP 50 types them differently); a data leaf is its shape and dtype; a pending node is
    its op, its template's ``repr`` (attributes and placeholders), shape and dtype.
    """
    raise NotImplementedError("assignment 3: see chapter 3, Linearise and hash")


def cut(roots: list[Node]) -> Cut:
    """Linearise the pending graph below ``roots`` in post-order, and key it.

    Assignment 3, "Linearise and hash": LZ-HASH-001, LZ-HASH-002, LZ-HASH-005.

    Iterative post-order (a long chain must not hit the recursion limit); each node once. The
    key hashes (SHA-256, stable across processes) the signatures, the wiring (positions, so
    ``x * y + y`` and ``x * x + y`` differ: the bug torch._lazy and PyTorch/XLA's caches had),
    the outputs' positions and the platform.
    """
    raise NotImplementedError("assignment 3: see chapter 3, Linearise and hash")
