"""The tracer: ``record`` makes a node and a tensor; a tensor's value is read by a barrier.

A :class:`Tensor` is a handle on one IR node: a pending op, or a ``DATA`` leaf once
materialised. :func:`record` checks an op (``infer.INFER``: a bad shape or dtype raises at the
call), makes its node, wraps it, and calls the barrier when the policy says so. What a tensor
can do beyond its metadata and observations is the surface, ``minilazy.api.tensor``, whose class
``import minilazy`` installs as the one :func:`record` makes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minilazy.core import barrier, runtime
from minilazy.core.attrs import Attrs
from minilazy.core.dtypes import DType, Number
from minilazy.core.infer import INFER, describe
from minilazy.core.ir import Device, Failure, Node, Op
from minilazy.core.metrics import COUNTERS
from minilazy.core.state import ENGINE, LIVE, OVERRIDE, Handle, current_policy, user_site


def record(op: Op, operands: tuple[Node, ...], attrs: Attrs, device: Device) -> Tensor:
    """Record one op: check it (errors raise here, at the call), make its node, wrap it.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.attrs import NONE
        >>> x = ml.ones((2,))
        >>> record(Op.EXP, (x._node,), NONE, x.device).shape
        (2,)
    """
    shape, dtype = INFER[op](op, operands, attrs)
    engine = ENGINE
    node = Node(op, operands, attrs, shape, dtype, None, user_site() if engine.sites else None)
    t = _made(node, device)
    COUNTERS.ops_recorded += 1
    engine.pending += 1
    p = OVERRIDE.get() or engine.default
    if engine.pending >= p.max_pending_nodes or p.eager:
        barrier.after_record(t)
    return t


def wrap(node: Node, device: Device) -> Tensor:
    """A tensor on ``node`` (of the installed class), with nothing recorded or checked."""
    return _made(node, device)


def install(cls: type[Tensor]) -> None:
    """Make :func:`record` make ``cls``: the tensor with its surface (``import minilazy``)."""
    global _made
    _made = cls


# -- observation: a barrier on one tensor, then its value ------------------------------------
def value(tensor: Handle, cause: str) -> Any:
    """Materialise ``tensor`` (an observation barrier named ``cause``); its device buffer.

    Example:
        >>> import minilazy as ml
        >>> value(ml.ones((2,)) * 2.0, "numpy").shape
        (2,)
    """
    if tensor._node.op is not Op.DATA:
        COUNTERS.observation_sites[f"{cause}() at {user_site()}"] += 1
        if current_policy().observe_all:
            barrier.mark_step(cause)
        else:
            barrier.materialise([tensor], cause)
    payload = tensor._node.payload
    if type(payload) is Failure:
        payload.throw()
    return payload


def to_host(tensor: Handle, cause: str) -> np.ndarray[Any, Any]:
    """Materialise ``tensor`` and return a writable host copy of its values."""
    return runtime.copy_to_host(value(tensor, cause))


class Tensor:
    """A lazy n-dimensional array: its node, device and metadata, and reading its value.

    Make tensors with ``ml.asarray`` and the creation functions, not with this constructor.
    ``ml.Tensor`` is this class with its surface (``minilazy.api.tensor``).

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.attrs import NONE
        >>> y = record(Op.EXP, (ml.zeros((2, 3))._node,), NONE, ml.default_device())
        >>> y.shape, y.dtype, y.is_pending      # metadata: never a barrier
        ((2, 3), dtype('float64'), True)
        >>> y.numpy()                           # an observation: a barrier runs here
        array([[1., 1., 1.],
               [1., 1., 1.]])
    """

    __slots__ = ("_node", "_device", "__weakref__")

    def __init__(self, node: Node, device: Device) -> None:
        self._node = node
        self._device = device
        LIVE.add(self)

    # -- metadata: never a barrier -------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints (known without running anything)."""
        return self._node.shape

    @property
    def dtype(self) -> DType:
        """The element dtype (a NumPy dtype)."""
        return self._node.dtype

    @property
    def device(self) -> Device:
        """The device the tensor lives on."""
        return self._device

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self._node.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for d in self._node.shape:
            n *= d
        return n

    @property
    def is_pending(self) -> bool:
        """True while the tensor's value is recorded but not yet materialised."""
        return self._node.op is not Op.DATA

    def __repr__(self) -> str:
        node = self._node
        state = "pending" if node.op is not Op.DATA else "ready"
        if type(node.payload) is Failure:
            state = f"failed ({type(node.payload.error).__name__})"
        return f"<Tensor {describe(node)} {self._device} {state}>"

    # -- observations: barriers ----------------------------------------------------------------
    def numpy(self) -> np.ndarray[Any, Any]:
        """Materialise and return a writable NumPy copy (an observation barrier)."""
        return to_host(self, "numpy")

    def item(self) -> Number:
        """The single element as a Python scalar (an observation barrier)."""
        if self.size != 1:  # NumPy's ValueError: item() takes size 1, whatever the rank
            raise ValueError(f"item() needs a tensor of size 1, got shape {self.shape} (size "
                             f"{self.size})")
        value: Number = to_host(self, "item").item()
        return value


# The class record() makes: this one until ``import minilazy`` installs the surface's.
_made: type[Tensor] = Tensor
