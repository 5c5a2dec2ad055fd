"""Joining the other processes of a launch, installed into the runtime by ``import minilazy``.

A process started by ``python -m minilazy.launch`` (:mod:`minilazy.scaleout.cluster` says which)
joins the others through ``jax.distributed`` before JAX starts; then ``ml.devices()`` are every
process's, and a mesh can span them all. Without this part the runtime runs one process alone.
"""

from __future__ import annotations

from typing import Final

import jax

from minilazy.core import runtime
from minilazy.scaleout.cluster import env


class Joined:
    """Whether this process has joined its launch (once, before JAX starts).

    Example:
        >>> Joined().done
        False
    """

    def __init__(self) -> None:
        self.done = False


JOINED: Final = Joined()


def join() -> None:
    """Join the other processes of ``python -m minilazy.launch``, once, before JAX starts.

    Reads :func:`env`; does nothing in a process not launched so, or whose script already
    called ``jax.distributed.initialize``. Blocks until every process has joined.

    Example:
        >>> join()  # not launched: nothing to do
    """
    if JOINED.done:
        return
    c = env()
    if c is not None and not jax.distributed.is_initialized():
        try:
            jax.distributed.initialize(c.coordinator, c.num_processes, c.process_id)
        except RuntimeError as e:
            raise RuntimeError(
                f"minilazy: process {c.process_id} of {c.num_processes} cannot join the others: "
                "JAX had already started here (a JAX call before minilazy's first use)") from e
    JOINED.done = True


def install() -> None:
    """Have the runtime join a launch's processes before its first use of JAX.

    Example:
        >>> install()
        >>> runtime.PROCESSES.join is join
        True
    """
    runtime.PROCESSES.join = join
