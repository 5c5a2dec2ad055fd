"""The recording state, and the one interface through which the tracer reaches upward.

Part of the tracer layer. Observations such as ``float(t)`` need values, which only the barrier
layer above can produce; it installs itself here as the :class:`Backend` when ``minilazy`` is
imported. The live-tensor registry and the pending-node count live here too, shared by the
tracer (which fills them) and the barrier (which empties them). Never imports jax.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np

from minilazy.ir import Device

if TYPE_CHECKING:  # the tracer imports this module: only the type checker looks back
    from minilazy.tracer import Tensor


class Backend(Protocol):
    """What the tracer needs from the layers above it (installed by ``minilazy.barrier``)."""

    def default_device(self) -> Device:
        """The device new tensors go to when none is named."""

    def to_device(self, array: np.ndarray[Any, Any], device: Device) -> object:
        """Copy a host array to ``device``; return the device buffer."""

    def to_host(self, tensor: Tensor, cause: str) -> np.ndarray[Any, Any]:
        """Materialise ``tensor`` (an observation barrier) and return a writable host copy."""

    def materialise(self, tensors: Sequence[Tensor], cause: str) -> None:
        """Run a barrier that materialises ``tensors``."""

    def copy_to(self, tensor: Tensor, device: Device) -> Tensor:
        """A copy of ``tensor`` on another device."""

    def after_record(self, tensor: Tensor) -> None:
        """Called when the pending-node limit is reached or eager mode is on."""


class _State:
    """Recording state shared with the barrier layer (which owns the policy)."""

    __slots__ = ("backend", "pending", "limit", "sites", "special_scalars")

    def __init__(self) -> None:
        self.backend: Backend | None = None
        self.pending = 0  # nodes recorded since the last barrier
        self.limit = 1 << 62  # after_record() is called when pending reaches this
        self.sites = False  # record the user's file:line on each node (debug info)
        self.special_scalars = False  # bake Python 0 and 1 into programs as constants


STATE: Final = _State()
# Every live tensor, weakly: mark_step() materialises the pending ones, and a buffer that no
# live tensor holds may be donated. Tensors hash by identity so they can live in this set; each
# is added once, at construction (a second add, `in` or `discard` would compare with __eq__,
# which is elementwise and lazy).
LIVE: Final[weakref.WeakSet[Tensor]] = weakref.WeakSet()
# The engine's own files: minilazy/*.py. Subpackages (the conformance suite) are user code.
_ENGINE_PREFIX: Final = os.path.dirname(__file__) + os.sep


def backend() -> Backend:
    """The installed backend (the barrier layer); importing ``minilazy`` installs it.

    Example:
        >>> import minilazy
        >>> backend().default_device().platform in ("cpu", "gpu", "tpu")
        True
    """
    b = STATE.backend
    if b is None:
        raise RuntimeError("no minilazy backend installed: import minilazy, not minilazy.tracer")
    return b


def _in_engine(filename: str) -> bool:
    return filename.startswith(_ENGINE_PREFIX) and os.sep not in filename[len(_ENGINE_PREFIX):]


def user_site() -> str | None:
    """``file:line`` of the innermost caller outside the engine's modules.

    Example:
        >>> user_site() is None or ":" in user_site()
        True
    """
    f: FrameType | None = sys._getframe(1)
    while f is not None and _in_engine(f.f_code.co_filename):
        f = f.f_back
    return None if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"
