"""The runtime: move data to the device, run the compiled program, write results back.

A barrier's program reads device buffers and writes new ones. A buffer that nothing can read
any more (its tensor died, only the graph being run still reads it) is *donated*: XLA may write
an output into it, so an in-place parameter update needs no new memory.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import jax
import numpy as np

from tinylazy.graph import Cut, cut
from tinylazy.ir import STATE, Node, or_else
from tinylazy.lowering import compile, x64

MEMORY = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def to_device(node: Node) -> Any:
    """The value of leaf ``node`` on the device, transferred once (call within ``x64()``).

    Assignment 5, "Run, transfer, donate": LZ-CACHE-004 (a buffer is donated once it is on the
    device, and the node keeps the device buffer so it is never transferred again).
    """
    if not isinstance(node.value, jax.Array):
        node.value = jax.device_put(node.value)
    return node.value


def _number(value: Any) -> Any:
    """A scalar parameter as JAX takes it.

    An int past 64 bits (NumPy refuses it anywhere but in a comparison, which it makes exactly)
    is an infinity of its sign: it compares with every integer alike.
    """
    if type(value) is not int or -2**63 <= value < 2**64:
        return value
    return math.inf if value > 0 else -math.inf


def params(c: Cut) -> list[Any]:
    """The parameters of ``c``: scalars as Python numbers (weak), data on the device (given)."""
    return [_number(n.value) if n.op == "scalar" else or_else(to_device, n, otherwise=n.value)
            for n in c.params]


def donatable(c: Cut) -> tuple[bool, ...]:
    """For each parameter of ``c``: whether its buffer may be donated at ``mark_step``.

    Assignment 5, "Run, transfer, donate": LZ-CACHE-004, LZ-CACHE-006.

    A data buffer may be donated when no live tensor holds its node: at ``mark_step`` every live
    pending graph is in the cut, so nothing outside the program reads it again. Scalars are
    never donated.
    """
    held = {t.node for t in STATE.live}
    return tuple(n.op != "scalar" and n not in held for n in c.params)


def fail_alone(roots: list[Node], error: Exception) -> None:
    """After the program of ``roots`` raised ``error``: run each root alone; then raise.

    Assignment 5, "Run, transfer, donate": LZ-ERR-003, LZ-ERR-009.

    A barrier is failure-atomic: every root that can be computed is, a root whose own program
    fails keeps its error (``Node.error``: raised at every observation), and the barrier raises.
    """
    if len(roots) == 1:
        roots[0].error = error
    else:
        for r in roots:
            try:
                run([r])
            except Exception:  # kept in r.error: raised when r is observed
                pass
    raise error


def run(roots: list[Node], donate: bool = False) -> None:
    """Materialise ``roots`` (pending, distinct) with one XLA program: cut, compile, execute.

    Assignment 4, "Lower to XLA and cache": LZ-CACHE-003, LZ-LOW-002 (and assignment 5's
    ``donate``: set at ``mark_step``, where every live graph is in the cut).

    Cut and key the roots, get the program (:func:`~tinylazy.lowering.compile`), call it on the
    parameters, count one execution, and materialise each root with its output. Everything runs
    within :func:`~tinylazy.lowering.x64`. Also, in this order:

    - the donation mask: ``or_else(donatable, c, otherwise=None)`` when ``donate``, else all
      ``False``; add its number of ``True`` to ``STATE.counts["donations"]``;
    - a value bigger than ``MEMORY`` bytes (any node of the cut) raises ``MemoryError`` before
      XLA runs: XLA would abort the whole process;
    - an error from compiling or running goes to ``or_else(fail_alone, roots, error,
      otherwise=False)``; re-raise it when that returns ``False``.
    """
    c = cut(roots)
    need = max((int(np.prod(n.shape)) * n.dtype.itemsize for n in c.order
                if n.dtype is not None), default=0)
    mask = (or_else(donatable, c, otherwise=None) if donate else None) or (False,) * len(
        c.params)
    try:
        if need > MEMORY:  # XLA would abort the process: refuse, as a failing program
            raise MemoryError(f"a value of {need} bytes does not fit in {MEMORY} of memory")
        with x64(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "donated buffers were not usable": fine
            args = params(c)
            outputs = compile(c, args, mask)(*args)
    except Exception as e:
        if or_else(fail_alone, roots, e, otherwise=False) is False:
            raise
    STATE.counts["executions"] += 1
    STATE.counts["donations"] += sum(mask)
    for r, value in zip(roots, outputs):
        r.materialise(value)
