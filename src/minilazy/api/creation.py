"""Creation functions: tensors from host data, and tensors recorded from nothing.

In the Array API namespace (``minilazy.api``). ``asarray`` copies host data to the device (a
``DATA`` leaf); ``zeros``, ``full``, ``arange``, ``eye`` and ``linspace`` are *recorded* (a
broadcast scalar, an iota), so they cost no transfer and fuse into what uses them. Their numbers
(fill values, starts, steps) are scalar parameters, like every Python number. Never imports jax.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from minilazy.api.axes import integers
from minilazy.api.host import checked, host_array, host_data
from minilazy.api.keywords import keywords
from minilazy.api.scalars import check_scalar, scalar
from minilazy.api.tensor import Tensor, TensorLike, record
from minilazy.core import dtypes, runtime
from minilazy.core.attrs import NONE, Cast, Iota, ToShape
from minilazy.core.dtypes import DType, DTypeLike, Number, Scalar, sized
from minilazy.core.ir import Device, DeviceError, Node, Op
from minilazy.scaleout.meshes import Mesh, Spec
from minilazy.scaleout.sharding import mark_sharding, placed_data, placement

ShapeLike = int | Sequence[int]


def _shape(shape: ShapeLike, what: str = "shape") -> tuple[int, ...]:
    out = integers(what, shape)
    if any(d < 0 for d in out):
        raise ValueError(f"negative dimensions are not allowed: {out}")
    return out


def _device(device: Device | None, where: str) -> Device:
    return runtime.default_device() if device is None else checked(device, where)


def _default_dtype(value: Scalar) -> DType:
    # NumPy's: bool, int64 (uint64 for ints beyond int64), float64; a NumPy scalar's own
    if type(value) is int and not -(1 << 63) <= value < 1 << 64:
        raise OverflowError(f"Python int {value} does not fit in int64 or uint64")
    return dtypes.canonical(np.asarray(value).dtype)


def _param(value: Number, dtype: DType) -> Node:
    """A scalar parameter holding ``value`` converted to ``dtype`` as NumPy would."""
    check_scalar(value, dtype)
    return scalar(dtype.type(value).item(), dtype)


@keywords
def asarray(obj: Any, /, *, dtype: DTypeLike | None = None, device: Device | None = None,
            copy: bool | None = None,
            sharding: tuple[Mesh, Spec] | None = None
            ) -> Tensor:
    """A tensor from a tensor, NumPy array, nested list or Python scalar (host -> device).

    ``sharding=(mesh, spec)`` splits it over a mesh (see :func:`minilazy.mark_sharding`): each
    device receives its part; the tensor's device is then the default device if it is on the
    mesh (in every process of a multi-process run, a device of its own), else the mesh's first.

    ``copy=False`` never copies, as NumPy 2 and the standard say: it takes a tensor as it is
    and raises ``ValueError`` where a copy is needed (host data, which a device buffer never
    shares; another ``dtype`` or ``device``).

    Example:
        >>> import minilazy as ml
        >>> ml.asarray([1, 2, 3]).dtype
        dtype('int64')
        >>> ml.asarray(np.ones(2, np.float32), dtype=ml.float16).tolist()
        [1.0, 1.0]
        >>> mesh = ml.Mesh(ml.devices(), ("data",))
        >>> ml.asarray(np.ones((8, 2)), sharding=(mesh, (None, None))).sharding.spec
        (None, None)
    """
    d = None if dtype is None else dtypes.canonical(dtype)
    if copy is False and not (isinstance(obj, Tensor) and d in (None, obj.dtype)
                              and device in (None, obj.device)):
        raise ValueError(f"asarray: copy=False, but {_what(obj, d, device)} needs a copy "
                         "(pass copy=None to copy only where needed)")
    if isinstance(obj, Tensor):
        t = obj if device is None else obj.to(device)
        if d is not None and d != t.dtype:
            t = record(Op.CONVERT, (t._node,), Cast(dtypes.CODE[d]), t.device)
        elif copy or sharding is not None:  # a new handle: marking it leaves ``obj`` as it was
            t = Tensor(t._node, t.device)
        return t if sharding is None else mark_sharding(t, *placement(t, sharding, "asarray"))
    if sharding is None:
        dev = _device(device, "asarray")
        return Tensor(host_data(obj, d, dev), dev)
    mesh, spec = placement(None, sharding, "asarray")
    # a tensor's device on a mesh: ours if on it (each process has one)
    here = _device(device, "asarray")
    dev = here if here in mesh.devices or device is not None else mesh.devices[0]
    if dev not in mesh.devices:
        raise DeviceError(f"asarray: device {dev} is not one of the mesh's devices "
                          f"[{', '.join(map(str, mesh.devices))}]")
    return Tensor(placed_data(host_array(obj, d), mesh, spec), dev)


def _what(obj: Any, dtype: DType | None, device: Device | None) -> str:
    if not isinstance(obj, Tensor):
        return f"host data ({type(obj).__name__}), copied to the device,"
    return f"a {obj.dtype} tensor " + (f"made {dtype}" if dtype not in (None, obj.dtype)
                                        else f"moved to {device}")


def device_of(*xs: object) -> Device | None:
    """The device of the first tensor among ``xs``; None (the default device) if none is one.

    Example:
        >>> import minilazy as ml
        >>> device_of([1.0], ml.ones(2)) == ml.default_device(), device_of([1.0])
        (True, None)
    """
    return next((x.device for x in xs if isinstance(x, Tensor)), None)


def tensor(x: TensorLike, device: Device | None = None) -> Tensor:
    """``x`` if it is a tensor, else host data (NumPy array, nested list, number) made one.

    Every public function passes its tensor arguments through here or :func:`tensors`, so each
    takes what ``asarray`` takes, as the elementwise functions do: host data is copied to
    ``device`` (None: the default device) at the call, so later writes to it are not seen. A
    tensor is left where it is: the op that uses it refuses a mix of devices.

    Example:
        >>> import numpy as np
        >>> tensor(np.array([1, 2])).tolist(), tensor([[1.5]]).shape
        ([1, 2], (1, 1))
    """
    return x if isinstance(x, Tensor) else asarray(x, device=device)


def tensors(*xs: TensorLike) -> tuple[Tensor, ...]:
    """``xs`` as tensors (:func:`tensor`), host data on the device of the first tensor there.

    Example:
        >>> import numpy as np
        >>> import minilazy as ml
        >>> [t.device for t in tensors(np.ones(2), ml.ones(2))] == [ml.default_device()] * 2
        True
    """
    device = device_of(*xs)
    return tuple(tensor(x, device) for x in xs)


@keywords
def full(shape: ShapeLike, fill_value: Scalar, *, dtype: DTypeLike | None = None,
         device: Device | None = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (a parameter: new values reuse the program).

    Example:
        >>> import minilazy as ml
        >>> ml.full((2,), 7).tolist()
        [7, 7]
    """
    d = _default_dtype(fill_value) if dtype is None else dtypes.canonical(dtype)
    dims = sized("full", _shape(shape, "full"), d)
    return record(Op.BROADCAST, (_param(fill_value, d),), ToShape(dims), _device(device, "full"))


@keywords
def zeros(shape: ShapeLike, *, dtype: DTypeLike | None = None,
          device: Device | None = None) -> Tensor:
    """A tensor of zeros (float64 unless ``dtype`` says otherwise).

    Example:
        >>> import minilazy as ml
        >>> ml.zeros((2, 2), dtype=ml.int32).tolist()
        [[0, 0], [0, 0]]
    """
    return full(_shape(shape, "zeros"), 0, dtype=dtype or dtypes.DEFAULT_FLOAT, device=device)


@keywords
def ones(shape: ShapeLike, *, dtype: DTypeLike | None = None,
         device: Device | None = None) -> Tensor:
    """A tensor of ones (float64 unless ``dtype`` says otherwise).

    Example:
        >>> import minilazy as ml
        >>> ml.ones(3).tolist()
        [1.0, 1.0, 1.0]
    """
    return full(_shape(shape, "ones"), 1, dtype=dtype or dtypes.DEFAULT_FLOAT, device=device)


@keywords
def empty(shape: ShapeLike, *, dtype: DTypeLike | None = None,
          device: Device | None = None) -> Tensor:
    """An uninitialised tensor; minilazy gives zeros.

    Example:
        >>> import minilazy as ml
        >>> ml.empty((1,)).shape
        (1,)
    """
    return zeros(_shape(shape, "empty"), dtype=dtype, device=device)


@keywords
def full_like(x: TensorLike, /, fill_value: Scalar, *, dtype: DTypeLike | None = None,
              device: Device | None = None) -> Tensor:
    """A tensor like ``x`` (shape, dtype, device) filled with ``fill_value``.

    Example:
        >>> import minilazy as ml
        >>> ml.full_like(ml.ones((2,), dtype=ml.int8), 5).tolist()
        [5, 5]
    """
    if not isinstance(x, Tensor):  # host data: its shape and dtype are all it takes
        like = host_array(x, None)
        return full(like.shape, fill_value, dtype=dtype or like.dtype, device=device)
    return full(x.shape, fill_value, dtype=dtype or x.dtype,
                device=x.device if device is None else device)


@keywords
def zeros_like(x: TensorLike, /, *, dtype: DTypeLike | None = None,
               device: Device | None = None) -> Tensor:
    """Zeros shaped like ``x``.

    Example:
        >>> import minilazy as ml
        >>> ml.zeros_like(ml.ones((2,))).tolist()
        [0.0, 0.0]
    """
    return full_like(x, 0, dtype=dtype, device=device)


@keywords
def ones_like(x: TensorLike, /, *, dtype: DTypeLike | None = None,
              device: Device | None = None) -> Tensor:
    """Ones shaped like ``x``.

    Example:
        >>> import minilazy as ml
        >>> ml.ones_like(ml.zeros((2,), dtype=ml.bool)).tolist()
        [True, True]
    """
    return full_like(x, 1, dtype=dtype, device=device)


@keywords
def empty_like(x: TensorLike, /, *, dtype: DTypeLike | None = None,
               device: Device | None = None) -> Tensor:
    """An uninitialised tensor like ``x``; minilazy gives zeros.

    Example:
        >>> import minilazy as ml
        >>> ml.empty_like(ml.ones((3,))).shape
        (3,)
    """
    return full_like(x, 0, dtype=dtype, device=device)


def _iota(n: tuple[int, ...], axis: int, dtype: DType, device: Device) -> Tensor:
    return record(Op.IOTA, (), Iota(n, axis, dtypes.CODE[dtype]), device)


def arange(start: Scalar, /, stop: Scalar | None = None, step: Scalar = 1, *,
           dtype: DTypeLike | None = None, device: Device | None = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``, like ``np.arange``.

    NumPy's recipe, for every dtype: the first two values are ``start`` and ``start + step``
    converted to ``dtype`` (with NumPy's errors), the rest ``start + i * delta`` with ``delta``
    their difference in ``dtype``: ``arange(5, 1, -0.5, dtype=int64)`` counts 5, 4, 3, ...

    Example:
        >>> import minilazy as ml
        >>> ml.arange(5).tolist()
        [0, 1, 2, 3, 4]
        >>> ml.arange(1.0, 2.0, 0.5).tolist()
        [1.0, 1.5]
    """
    if stop is None:
        start, stop = 0, start
    key = (start, stop, step, dtype)
    # ints (not bools, not floats: -0.0 == 0.0) key a table of the numbers: a model's arange(n)
    known = type(start) is type(stop) is type(step) is int and (
        dtype is None or isinstance(dtype, np.dtype | type | str))
    numbers = _ARANGE.get(key) if known else None
    if numbers is None:
        numbers = _arange_numbers(start, stop, step, dtype)
        if known:
            if len(_ARANGE) > 1024:
                _ARANGE.clear()
            _ARANGE[key] = numbers
    n, work, d, start0, delta = numbers
    dev = _device(device, "arange")
    i = _iota((n,), 0, work, dev)
    scaled = record(Op.MUL, (i._node, scalar(delta, work)), NONE, dev)
    out = record(Op.ADD, (scaled._node, scalar(start0, work)), NONE, dev)
    return out if work == d else record(Op.CONVERT, (out._node,), Cast(dtypes.CODE[d]), dev)


_ARANGE: dict[tuple[Any, ...], tuple[int, DType, DType, Number, Number]] = {}


def _arange_numbers(start: Scalar, stop: Scalar, step: Scalar, dtype: DTypeLike | None
                    ) -> tuple[int, DType, DType, Number, Number]:
    """``arange``'s length, working and result dtypes, first value and step (in ``work``)."""
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")  # NumPy's error
    if dtype is None:  # NumPy's: the values' own dtypes, at least int64 or float64
        d = dtypes.canonical(np.result_type(*map(_default_dtype, (start, stop, step)), np.int64))
    else:
        d = dtypes.canonical(dtype)
    q = (stop - start) / step
    if q == 0 and stop != start:  # underflow, or a step of inf: NumPy's one value (or none)
        q = math.copysign(1, q)
    elif math.isinf(q):
        raise ValueError(f"arange: Maximum allowed size exceeded ({start}, {stop}, {step})")
    n = max(0, math.ceil(q))
    if d == dtypes.bool_ and n > 2:
        raise TypeError("arange() is only supported for booleans when the result has at most "
                        "length 2.")
    # XLA has no bool iota; NumPy fills float16 in float32
    work = {dtypes.bool_: dtypes.int64, dtypes.float16: dtypes.float32}.get(d, d)
    first = np.zeros(2, d)  # NumPy's own conversion, its errors (OverflowError) included
    if n:
        first[0] = start
        first[1] = start + step if n > 1 else first[0]  # one value: 0 * inf would be nan
    start0, delta = first[:1].astype(work), np.diff(first.astype(work))  # (integers wrap)
    return n, work, d, start0.item(), delta.item()


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: DTypeLike | None = None,
        device: Device | None = None) -> Tensor:
    """A 2-D tensor with ones on the ``k``-th diagonal and zeros elsewhere.

    Example:
        >>> import minilazy as ml
        >>> ml.eye(2, dtype=ml.int8).tolist()
        [[1, 0], [0, 1]]
    """
    d = dtypes.DEFAULT_FLOAT if dtype is None else dtypes.canonical(dtype)
    m, n = sized("eye", _shape((n_rows, n_rows if n_cols is None else n_cols)), d)
    # A diagonal beyond the matrix is no diagonal: clamped, any int k fits the int64 parameter
    k = max(-m, min(operator.index(k), n))
    dev = _device(device, "eye")
    if not m * n:  # no int64 positions for an empty one: (0, 2**62) of int8 exists
        return full((m, n), 0, dtype=d, device=dev)
    rows = _iota((m, 1), 0, dtypes.int64, dev)  # a column and a row of positions, compared by
    cols = _iota((1, n), 1, dtypes.int64, dev)  # broadcasting: no int64 matrix beside the result
    shifted = record(Op.ADD, (rows._node, _param(k, dtypes.int64)), NONE, dev)
    diag = record(Op.EQ, (shifted._node, cols._node), NONE, dev)
    return record(Op.CONVERT, (diag._node,), Cast(dtypes.CODE[d]), dev)


def linspace(start: Number, stop: Number, /, num: int, *, dtype: DTypeLike | None = None,
             device: Device | None = None, endpoint: bool = True) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``, like ``np.linspace``.

    A complex ``start``, ``stop`` or ``dtype`` spaces complex values (complex128 by default).

    Example:
        >>> import minilazy as ml
        >>> ml.linspace(0, 1, 5).tolist()
        [0.0, 0.25, 0.5, 0.75, 1.0]
        >>> ml.linspace(0, 2j, 3).tolist()
        [0j, 1j, 2j]
    """
    num = operator.index(num)  # True is 1, 2.0 a TypeError: NumPy's
    if num < 0:
        raise ValueError(f"linspace: num must be >= 0, got {num}")
    d = None if dtype is None else dtypes.canonical(dtype)
    complex_ = isinstance(start, complex) or isinstance(stop, complex) or d in dtypes.COMPLEX
    wide = dtypes.complex128 if complex_ else dtypes.float64  # the values are made in this
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else stop - start  # num <= 1: i * step is 0
    dev = _device(device, "linspace")
    i = _iota((num,), 0, dtypes.float64, dev)
    scaled = record(Op.MUL, (i._node, _param(step, wide)), NONE, dev)
    y = record(Op.ADD, (scaled._node, _param(start, wide)), NONE, dev)
    if endpoint and num > 1:
        y[-1] = stop  # as NumPy: the last value is exactly stop
    d = wide if d is None else d
    if d in dtypes.INTEGER:
        y = record(Op.FLOOR, (y._node,), NONE, dev)  # NumPy floors before casting to integers
    return y if d == wide else record(Op.CONVERT, (y._node,), Cast(dtypes.CODE[d]), dev)
