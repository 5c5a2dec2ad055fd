"""What barriers tell a gradient: the node each of their result leaves stands for.

A function being differentiated may run barriers (an observation, ``mark_step``): its graph then
holds result leaves where it had ops. The barrier tells :data:`ORIGINS` what each leaf stands
for (it is the barrier's ``PARTS.origins``, installed by ``import minilazy``); while a gradient
is taken the tape keeps those notes, and the backward pass walks back through the cuts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from minilazy.core import barrier
from minilazy.core.ir import Node


class Origins:
    """While a function is differentiated, the node each barrier's result leaf stands for.

    The barrier tells it (its ``PARTS.origins``: :func:`install`) after every program; only
    while a gradient is taken (``grads`` > 0) does it keep them, so the backward pass walks
    back through the barriers its function ran.

    Example:
        >>> import minilazy as ml
        >>> barrier.PARTS.origins is ORIGINS, ORIGINS.found is None
        (True, True)
    """

    def __init__(self) -> None:
        self.grads = 0  # gradients being taken now (in any thread)
        self.found: dict[Node, Node] | None = None  # result leaf -> the node it stands for

    def bound(self, roots: Sequence[Node], leaves: Sequence[Node]) -> None:
        """Note that ``leaves`` stand for ``roots``, while a gradient is taken."""
        if self.found is not None:
            self.found.update(zip(leaves, roots))


ORIGINS: Final = Origins()


def install() -> None:
    """Let barriers tell a gradient what their result leaves stand for (``import minilazy``).

    Example:
        >>> install()
    """
    barrier.PARTS.origins = ORIGINS
