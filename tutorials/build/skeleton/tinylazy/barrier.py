"""Live tensors and barriers: ``mark_step``, ``sync``, observations, auto-cut and eager mode.

What to compute is decided here: the *roots* of a barrier are the pending nodes of live tensors
(a dead tensor is never computed unless a live one needs it). How is decided below:
:func:`materialise` runs roots with the XLA runtime once assignment 4 has written it, and with
the given NumPy interpreter until then.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from tinylazy.ir import STATE, Node, fill, or_else
from tinylazy.ops import numpy_function, quiet
from tinylazy.tracer import Tensor

# Auto-cut: a pending graph that reaches this many nodes is materialised where it stands.
LIMIT = 1000


def live_roots() -> list[Node]:
    """The nodes of live pending tensors of this test, oldest tensor first, each once.

    Assignment 2, "Live tensors and barriers": LZ-BAR-001, LZ-BAR-003.

    Oldest first, so that the same program makes the same cut (and key) every time. Tensors with
    a serial below ``STATE.floor`` were made before :func:`isolate`: they are not roots.
    """
    raise NotImplementedError("assignment 2: see chapter 2, Live tensors and barriers")


def interpret(roots: list[Node]) -> None:
    """Compute ``roots`` with NumPy, node by node, and materialise them: one execution (given).

    The reference interpreter: barriers use it until assignment 4 compiles programs with XLA.
    It walks the graph below the roots iteratively (a chain of 100 000 ops must not hit
    Python's recursion limit) and evaluates each pending node once, with the NumPy function
    that defines its op.
    """
    values: dict[Node, Any] = {}
    stack = list(roots)
    with quiet():
        while stack:
            n = stack[-1]
            if n in values:
                stack.pop()
            elif not n.pending:
                values[n] = n.value
            elif all(i in values for i in n.inputs):
                args = [values[i] for i in n.inputs]
                values[n] = np.asarray(numpy_function(n.op)(*fill(n.template[0], args),
                                                            **fill(n.template[1], args)))
            else:
                stack.extend(i for i in n.inputs if i not in values)
    STATE.counts["executions"] += 1
    for r in roots:
        r.materialise(values[r])


def materialise(roots: list[Node], donate: bool = False) -> None:
    """Run ``roots``: on XLA (runtime.run, assignment 4), else with :func:`interpret` (given).

    ``donate``: only ``mark_step`` may donate buffers (every live graph is in its cut).
    """
    from tinylazy import runtime  # the layer above: imported when first needed
    roots = list(dict.fromkeys(r for r in roots if r.pending))
    if roots and or_else(runtime.run, roots, donate, otherwise=False) is False:
        interpret(roots)


def mark_step() -> None:
    """Materialise every live pending tensor, in one program.

    Assignment 2, "Live tensors and barriers": LZ-BAR-001, LZ-BAR-007, LZ-BAR-010.

    The roots are :func:`live_roots`; pass ``donate=True`` to :func:`materialise` (every live
    graph is in this cut, so a buffer no live tensor holds can be reused: assignment 5).
    """
    raise NotImplementedError("assignment 2: see chapter 2, Live tensors and barriers")


def sync(*xs: Tensor) -> None:
    """Materialise just ``xs``, in one program.

    Assignment 2, "Live tensors and barriers": LZ-BAR-006.
    """
    raise NotImplementedError("assignment 2: see chapter 2, Live tensors and barriers")


def observe(x: Tensor) -> np.ndarray[Any, Any]:
    """The value of ``x`` on the host: materialise it, then copy it out (given).

    An observation is a barrier on ``x`` alone (LZ-BAR-004). A node whose program failed raises
    its error again, at every observation (LZ-ERR-009).
    """
    materialise([x.node])
    if x.node.error is not None:
        raise x.node.error
    return np.array(x.node.value)


def to_scalar(x: Tensor) -> Any:
    """``x`` as a Python scalar, refusing tensors of more than one element before running.

    Assignment 2, "Live tensors and barriers": LZ-ERR-004.
    """
    raise NotImplementedError("assignment 2: see chapter 2, Live tensors and barriers")


def after_record(node: Node) -> None:
    """Called on every new node: in eager mode run it now; cut a graph grown too big.

    Assignment 6, "Observations, auto-cut, eager mode": LZ-BAR-008, LZ-BAR-009, LZ-BAR-011,
    LZ-REC-006.

    ``node.size`` counts the pending nodes below it (an upper bound, kept as each node is made,
    so checking it costs O(1) however big the graph). Only nodes that live tensors reach count:
    the new node is about to be a live tensor, and a loop whose results die makes small graphs.
    """
    raise NotImplementedError("assignment 6: see chapter 6, Observations, auto-cut, eager mode")


@contextlib.contextmanager
def eager() -> Iterator[None]:
    """A context in which every op runs as it is recorded.

    Assignment 6, "Observations, auto-cut, eager mode": LZ-BAR-009.
    """
    raise NotImplementedError("assignment 6: see chapter 6, Observations, auto-cut, eager mode")


def isolate() -> None:
    """Start a new test: tensors made before stay readable but never join a barrier (given)."""
    STATE.floor = STATE.serial + 1


STATE.after_record = lambda node: or_else(after_record, node)
