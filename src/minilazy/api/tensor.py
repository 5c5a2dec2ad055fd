"""The tensor users hold: core's tracer with arithmetic, indexing, methods and NumPy's protocols.

``minilazy.Tensor`` is :class:`minilazy.core.tracer.Tensor` (its node, device, metadata and
observations) with the surface of an array: Python's operators (each :func:`binary` or
:func:`record`, in-place ones rebinding the handle), indexing (``indexing.py`` turns a key into
an ``Index`` attribute), NumPy's array methods (``methods.py``) and the Array API's and NumPy's
protocols (``interop.py``). ``import minilazy`` installs this class as the one core's
``record`` makes. Never imports jax.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeAlias, cast

import numpy as np

from minilazy.api.host import check_power, host_data
from minilazy.api.indexing import (
    Item,
    basic_index,
    fill_mask,
    index_spec,
    scalar_bools,
    warn_view_write,
)
from minilazy.api.interop import ArrayAPIMethods
from minilazy.api.methods import NumPyMethods
from minilazy.api.scalars import check_scalar, is_weak, scalar, weak_scalar
from minilazy.core import dtypes, tracer
from minilazy.core.attrs import NONE, Attrs, Cast, Permute, ToShape
from minilazy.core.dtypes import Number
from minilazy.core.infer import describe
from minilazy.core.ir import Device, DeviceError, Node, Op
from minilazy.ops.index_keys import Index
from minilazy.scaleout.meshes import Sharding

# What ops accept besides tensors: Python numbers (weak scalars), NumPy arrays/scalars, lists.
TensorLike: TypeAlias = "Tensor | Number | np.ndarray[Any, Any] | np.generic | list[Any]"


def _same_device(op: Op, a: Tensor, b: Tensor) -> Device:
    if a._device is not b._device and a._device != b._device:
        raise DeviceError(f"{op.value}: operands are on different devices: {describe(a._node)} on "
                          f"{a._device} and {describe(b._node)} on {b._device}")
    return a._device


def as_node(x: TensorLike, device: Device) -> Node:
    """The node of ``x``: a tensor's own, or a new ``DATA`` leaf for host data (strongly typed).

    Python scalars here are strong (``float`` is float64): use this where NEP 50 weak typing does
    not apply, and :func:`binary` where it does.

    Example:
        >>> import minilazy as ml
        >>> as_node(2.0, ml.default_device()).dtype
        dtype('float64')
    """
    if type(x) is Tensor:
        if x._device is not device and x._device != device:
            raise DeviceError(f"operands are on different devices: {describe(x._node)} is on "
                              f"{x._device}, the other operand on {device}")
        return x._node
    if isinstance(x, np.generic):  # a NumPy scalar: strongly typed, but no transfer needed
        return scalar(x.item(), dtypes.canonical(x.dtype))
    return host_data(x, None, device)


def _host_operand(op: Op, x: Any, device: Device) -> Node:
    """A non-tensor, non-Python-number operand of ``op``: host data, or a ``TypeError``."""
    if isinstance(x, (np.ndarray, np.generic, list, tuple)) or hasattr(x, "__array__"):
        return as_node(x, device)
    raise TypeError(f"{op.value}: unsupported operand type {type(x).__name__!r}")


def binary(op: Op, a: TensorLike, b: TensorLike) -> Tensor:
    """Record a binary elementwise op; Python scalars are weak parameters (NEP 50).

    Example:
        >>> import minilazy as ml
        >>> binary(Op.ADD, ml.ones((2,), dtype=ml.float32), 1).dtype
        dtype('float32')
    """
    if type(a) is Tensor:
        if type(b) is Tensor:
            return record(op, (a._node, b._node), NONE, _same_device(op, a, b))
        if is_weak(b):
            scalar_b = weak_scalar(op, b, a.dtype, False)
            if op is Op.POW:
                check_power(a.dtype, b)
            return record(op, (a._node, scalar_b), NONE, a._device)
        if op is Op.POW:
            check_power(a.dtype, b)
        return record(op, (a._node, _host_operand(op, b, a._device)), NONE, a._device)
    if type(b) is Tensor:
        if is_weak(a):
            return record(op, (weak_scalar(op, a, b.dtype, True), b._node), NONE, b._device)
        return record(op, (_host_operand(op, a, b._device), b._node), NONE, b._device)
    raise TypeError(f"{op.value}: expected at least one Tensor, got {type(a).__name__} and "
                    f"{type(b).__name__}")


class Tensor(tracer.Tensor, NumPyMethods):
    """A lazy n-dimensional array: ops on it are recorded, not run, until a barrier.

    Make tensors with ``ml.asarray`` and the creation functions, not with this constructor.

    Example:
        >>> import minilazy as ml
        >>> x = ml.asarray([[1.0, 2.0], [3.0, 4.0]])
        >>> y = (x * 2 + 1).T          # recorded, not run
        >>> y.shape, y.dtype
        ((2, 2), dtype('float64'))
        >>> y.tolist()                 # an observation: a barrier runs here
        [[3.0, 7.0], [5.0, 9.0]]
    """

    __slots__ = ()
    __hash__ = object.__hash__  # by identity: __eq__ is elementwise, as in NumPy
    to = ArrayAPIMethods.to_device  # the short name, as in torch: t.to(device)

    @property
    def sharding(self) -> Sharding | None:
        """How the tensor is split over a mesh (``ml.mark_sharding``), or ``None``.

        Known without running anything: a placed or annotated tensor's sharding, a result's
        once computed; ``None`` for one device (or while XLA has yet to choose).
        """
        attrs = self._node.attrs
        return attrs if type(attrs) is Sharding else None

    @property
    def T(self) -> Tensor:
        """The transpose (axes reversed), like NumPy's ``.T``."""
        return record(Op.TRANSPOSE, (self._node,), Permute(tuple(range(self.ndim))[::-1]),
                      self._device)

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped (a stack of matrix transposes)."""
        if self.ndim < 2:
            raise ValueError(f"mT needs at least 2 dimensions, got shape {self.shape}")
        perm = (*range(self.ndim - 2), self.ndim - 1, self.ndim - 2)
        return record(Op.TRANSPOSE, (self._node,), Permute(perm), self._device)

    def __iter__(self) -> Iterator[Tensor]:
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # -- elementwise dunders: recorded ---------------------------------------------------------
    def __add__(self, o: TensorLike) -> Tensor: return binary(Op.ADD, self, o)
    def __radd__(self, o: TensorLike) -> Tensor: return binary(Op.ADD, o, self)
    def __sub__(self, o: TensorLike) -> Tensor: return binary(Op.SUB, self, o)
    def __rsub__(self, o: TensorLike) -> Tensor: return binary(Op.SUB, o, self)
    def __mul__(self, o: TensorLike) -> Tensor: return binary(Op.MUL, self, o)
    def __rmul__(self, o: TensorLike) -> Tensor: return binary(Op.MUL, o, self)
    def __truediv__(self, o: TensorLike) -> Tensor: return binary(Op.DIV, self, o)
    def __rtruediv__(self, o: TensorLike) -> Tensor: return binary(Op.DIV, o, self)
    def __floordiv__(self, o: TensorLike) -> Tensor: return binary(Op.FLOOR_DIV, self, o)
    def __rfloordiv__(self, o: TensorLike) -> Tensor: return binary(Op.FLOOR_DIV, o, self)
    def __mod__(self, o: TensorLike) -> Tensor: return binary(Op.MOD, self, o)
    def __rmod__(self, o: TensorLike) -> Tensor: return binary(Op.MOD, o, self)
    def __pow__(self, o: TensorLike) -> Tensor: return binary(Op.POW, self, o)
    def __rpow__(self, o: TensorLike) -> Tensor: return binary(Op.POW, o, self)
    def __and__(self, o: TensorLike) -> Tensor: return binary(Op.BITWISE_AND, self, o)
    def __rand__(self, o: TensorLike) -> Tensor: return binary(Op.BITWISE_AND, o, self)
    def __or__(self, o: TensorLike) -> Tensor: return binary(Op.BITWISE_OR, self, o)
    def __ror__(self, o: TensorLike) -> Tensor: return binary(Op.BITWISE_OR, o, self)
    def __xor__(self, o: TensorLike) -> Tensor: return binary(Op.BITWISE_XOR, self, o)
    def __rxor__(self, o: TensorLike) -> Tensor: return binary(Op.BITWISE_XOR, o, self)
    def __lshift__(self, o: TensorLike) -> Tensor: return binary(Op.SHIFT_LEFT, self, o)
    def __rlshift__(self, o: TensorLike) -> Tensor: return binary(Op.SHIFT_LEFT, o, self)
    def __rshift__(self, o: TensorLike) -> Tensor: return binary(Op.SHIFT_RIGHT, self, o)
    def __rrshift__(self, o: TensorLike) -> Tensor: return binary(Op.SHIFT_RIGHT, o, self)
    def __lt__(self, o: TensorLike) -> Tensor: return binary(Op.LT, self, o)
    def __le__(self, o: TensorLike) -> Tensor: return binary(Op.LE, self, o)
    def __gt__(self, o: TensorLike) -> Tensor: return binary(Op.GT, self, o)
    def __ge__(self, o: TensorLike) -> Tensor: return binary(Op.GE, self, o)
    # Typed Any because object.__eq__ returns bool and mypy forbids narrowing that; it is a Tensor.
    def __eq__(self, o: object) -> Any: return binary(Op.EQ, self, _like(o))
    def __ne__(self, o: object) -> Any: return binary(Op.NE, self, _like(o))

    def __matmul__(self, o: TensorLike) -> Tensor:
        return record(Op.MATMUL, (self._node, as_node(o, self._device)), NONE, self._device)

    def __rmatmul__(self, o: TensorLike) -> Tensor:
        return record(Op.MATMUL, (as_node(o, self._device), self._node), NONE, self._device)

    def __neg__(self) -> Tensor: return record(Op.NEG, (self._node,), NONE, self._device)
    def __abs__(self) -> Tensor: return record(Op.ABS, (self._node,), NONE, self._device)

    def __invert__(self) -> Tensor:
        return record(Op.BITWISE_INVERT, (self._node,), NONE, self._device)

    # -- in-place: record the op, then rebind this handle to the result -----------------------
    def _rebind(self, op: Op, result: Tensor) -> Tensor:
        if result.shape != self.shape:
            raise ValueError(f"{op.value} (in place): the result {describe(result._node)} does "
                             f"not fit the target {describe(self._node)}")
        if result.dtype != self.dtype:
            if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
                raise TypeError(f"{op.value} (in place): cannot cast the result "
                                f"{result.dtype} to the target {self.dtype}")
            code = dtypes.CODE[self.dtype]
            result = record(Op.CONVERT, (result._node,), Cast(code), self._device)
        self._node = result._node
        return self

    def __iadd__(self, o: TensorLike) -> Tensor: return self._rebind(Op.ADD, self + o)
    def __isub__(self, o: TensorLike) -> Tensor: return self._rebind(Op.SUB, self - o)
    def __imul__(self, o: TensorLike) -> Tensor: return self._rebind(Op.MUL, self * o)
    def __itruediv__(self, o: TensorLike) -> Tensor: return self._rebind(Op.DIV, self / o)
    def __ifloordiv__(self, o: TensorLike) -> Tensor: return self._rebind(Op.FLOOR_DIV, self // o)
    def __imod__(self, o: TensorLike) -> Tensor: return self._rebind(Op.MOD, self % o)
    def __ipow__(self, o: TensorLike) -> Tensor: return self._rebind(Op.POW, self ** o)
    def __iand__(self, o: TensorLike) -> Tensor: return self._rebind(Op.BITWISE_AND, self & o)
    def __ior__(self, o: TensorLike) -> Tensor: return self._rebind(Op.BITWISE_OR, self | o)
    def __ixor__(self, o: TensorLike) -> Tensor: return self._rebind(Op.BITWISE_XOR, self ^ o)
    def __ilshift__(self, o: TensorLike) -> Tensor: return self._rebind(Op.SHIFT_LEFT, self << o)
    def __irshift__(self, o: TensorLike) -> Tensor: return self._rebind(Op.SHIFT_RIGHT, self >> o)

    def __imatmul__(self, o: TensorLike) -> Tensor: return self._rebind(Op.MATMUL, self @ o)

    # -- indexing ------------------------------------------------------------------------------
    def _index(self, key: Any, op: str = "getitem") -> tuple[Index, tuple[Node, ...]]:
        found = basic_index(self.shape, key, self._device)
        return self._spec(key, op) if found is None else found

    def _spec(self, key: Any, op: str) -> tuple[Index, tuple[Node, ...]]:
        items: list[Item] = []
        for k in key if isinstance(key, tuple) else (key,):
            if k is None or k is Ellipsis or isinstance(k, (slice, bool)):
                items.append(k)
            elif type(k) is Tensor:
                _same_device(Op.GETITEM, self, k)
                items.append(k if k.dtype == dtypes.bool_ else k._node)  # a mask: read on the host
            elif isinstance(k, (int, np.integer)):
                items.append(operator.index(k))
            else:  # lists and NumPy arrays of indices or masks: host data, checked, sent
                items.append(np.asarray(k))
        return index_spec(self.shape, items, self._device, op)

    def _with_bools(self, key: Any, op: str) -> tuple[Tensor, Any]:
        """``x[True]``: NumPy's new axis of a 0-d boolean index, made an explicit reshape."""
        shape, key = scalar_bools(self.shape, key, op)
        if shape is None:
            return self, key
        return record(Op.RESHAPE, (self._node,), ToShape(shape), self._device), key

    def __getitem__(self, key: Any) -> Tensor:
        found = basic_index(self.shape, key, self._device)  # ints, slices, None, ...: lean
        if found is not None:
            return record(Op.GETITEM, (self._node, *found[1]), found[0], self._device)
        x, key = self._with_bools(key, "getitem")
        spec, arrays = x._spec(key, "getitem")  # (any key: the general path)
        return record(Op.GETITEM, (x._node, *arrays), spec, self._device)

    def __setitem__(self, key: Any, value: TensorLike) -> None:
        warn_view_write(self._node)  # x[0][:] = 7 leaves x as it was: say so, unlike NumPy
        if is_weak(value):
            check_scalar(value, self.dtype)
            v = scalar(self.dtype.type(value).item(), self.dtype)
        else:
            v = as_node(value, self._device)
            if type(value) is Tensor:
                _same_device(Op.SETITEM, self, value)
        x, key = self._with_bools(key, "setitem")
        dev = self._device
        mask = fill_mask(x.shape, dev, key, v.shape)
        if mask is not None:  # x[mask] = v as where(mask, v, x): its shape is static
            m, to = mask
            if m.shape != to:  # length-1 axes where x has more, so that where() broadcasts it
                m = record(Op.RESHAPE, (m,), ToShape(to), dev)._node
            if v.dtype != x.dtype:  # setitem casts the value to x's dtype, as NumPy does
                v = record(Op.CONVERT, (v,), Cast(dtypes.CODE[x.dtype]), dev)._node
            x._node = record(Op.WHERE, (m, v, x._node), NONE, dev)._node
        else:
            spec, arrays = x._index(key, "setitem")
            x._node = record(Op.SETITEM, (x._node, v, *arrays), spec, dev)._node
        if x is not self:  # the axes x[True] added, taken out again
            self._node = record(Op.RESHAPE, (x._node,), ToShape(self.shape), self._device)._node


def _like(o: object) -> TensorLike:
    if isinstance(o, (Tensor, bool, int, float, complex, np.ndarray, np.generic, list)):
        return o
    raise TypeError(f"cannot compare a Tensor with {type(o).__name__}")


# Core's record, typed with this class: after ``import minilazy`` it is the class record makes.
record: Final[Callable[[Op, tuple[Node, ...], Attrs, Device], Tensor]] = cast(Any, tracer.record)
