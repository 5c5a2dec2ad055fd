"""The tracer: ``record`` makes a node and a tensor; a tensor's value is read by a barrier.

The top of core. A :class:`Tensor` is a handle on one IR node: a pending op, or a ``DATA``
leaf once it is materialised. :func:`record` checks an op (``infer.INFER``: a bad shape or
dtype raises at the call), makes its node, wraps it, and calls the barrier when the policy says
so. What a tensor is here: its node, device and metadata, and the observations (``float(t)``,
``t.numpy()``), which call the barrier. What it can do (arithmetic, indexing, methods, NumPy's
protocols) is the surface above core, ``minilazy.api.tensor``, whose class ``import minilazy``
installs here as the one that :func:`record` makes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minilazy.core import barrier, dtypes, runtime
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
    """A tensor on ``node`` (of the installed class), with nothing recorded or checked.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.ir import scalar_leaf
        >>> type(wrap(scalar_leaf(1.0, dtypes.float64), ml.default_device())) is ml.Tensor
        True
    """
    return _made(node, device)


def install(cls: type[Tensor]) -> None:
    """Make :func:`record` make ``cls``: the tensor with its surface (``import minilazy``).

    Example:
        >>> import minilazy as ml
        >>> install(ml.Tensor)
    """
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
    """Materialise ``tensor`` and return a writable host copy of its values.

    Example:
        >>> import minilazy as ml
        >>> to_host(ml.ones((2,)) * 2.0, "numpy").tolist()
        [2.0, 2.0]
    """
    return runtime.copy_to_host(value(tensor, cause))


def _check_size_one(t: Tensor, what: str) -> None:
    if t.size != 1:  # NumPy's ValueError: bool() and item() take size 1, whatever the rank
        raise ValueError(f"{what} needs a tensor of size 1, got shape {t.shape} (size {t.size})"
                         + (": use x.any() or x.all()" if what == "bool()" else ""))


def check_scalar(t: Any, what: str) -> None:
    """``float()``, ``int()`` and ``complex()`` take a 0-d tensor only, as NumPy 2's arrays.

    Example:
        >>> import minilazy as ml
        >>> check_scalar(ml.ones(()), "float()")
    """
    if t._node.shape:
        raise TypeError(f"{what} needs a 0-d tensor, got shape {t._node.shape}: take x.item() "
                        "of a size-1 tensor, or index one element first")


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
        >>> y.tolist()                          # an observation: a barrier runs here
        [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
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

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

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

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        if copy is False:  # NumPy 2's protocol: the values are on a device, a copy is needed
            raise ValueError("__array__: copy=False, but reading a Tensor's device values copies")
        return np.asarray(to_host(self, "__array__"), dtype=dtype)

    def item(self) -> Number:
        """The single element as a Python scalar (an observation barrier)."""
        _check_size_one(self, "item()")
        value: Number = to_host(self, "item").item()
        return value

    def tolist(self) -> Any:
        """The values as nested Python lists (an observation barrier)."""
        return to_host(self, "tolist").tolist()

    def __bool__(self) -> bool:
        _check_size_one(self, "bool()")
        return bool(to_host(self, "bool").item())

    def __int__(self) -> int:
        check_scalar(self, "int()")
        return int(to_host(self, "int").item())

    def __float__(self) -> float:
        check_scalar(self, "float()")
        return float(to_host(self, "float").item())

    def __index__(self) -> int:
        if self.ndim or self.dtype not in dtypes.INTEGER:
            raise TypeError(f"only 0-d integer tensors can be used as an index, got "
                            f"{describe(self._node)}")
        return int(to_host(self, "index").item())

    def __str__(self) -> str:
        return str(to_host(self, "str"))

    def __format__(self, spec: str) -> str:
        return str(self) if not spec else format(self.item(), spec)


# The class record() makes: this one until ``import minilazy`` installs the surface's.
_made: type[Tensor] = Tensor
