"""Host arrays in the IR: NumPy arrays and (nested) Python lists become device data leaves.

Part of the tensor, beside ``scalars.py`` (Python numbers). ``ml.asarray(x)`` and a host
operand of an op (``t + np.ones(3)``) copy the data to the device once, as a ``DATA`` leaf, and
raise NumPy's error where NumPy's conversion would. The copy is made at the call: a tensor never
sees later writes to the host array. Never imports jax.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minilazy.api.scalars import is_weak, result_type
from minilazy.core import dtypes, runtime
from minilazy.core.attrs import NONE
from minilazy.core.dtypes import DType
from minilazy.core.ir import Device, Node, Op
from minilazy.core.state import ENGINE, user_site


def host_data(x: Any, dtype: DType | None, device: Device) -> Node:
    """A ``DATA`` leaf holding ``x`` (converted as ``np.asarray(x, dtype)``) on ``device``.

    Example:
        >>> import minilazy as ml
        >>> host_data([1, 2], None, ml.default_device())
        <Node data i64[2]>
    """
    array = host_array(x, dtype)
    buffer = runtime.to_device(array, device)
    site = user_site() if ENGINE.sites else None
    return Node(Op.DATA, (), NONE, array.shape, array.dtype, buffer, site)


def host_array(x: Any, dtype: DType | None) -> np.ndarray[Any, Any]:
    """``np.asarray(x, dtype)``, with NumPy's errors, of a dtype minilazy has, in native byte order.

    Example:
        >>> host_array([1, 2], None).dtype
        dtype('int64')
        >>> host_array(np.array([1, 2], ">f4"), None).dtype
        dtype('float32')
    """
    try:
        array = np.asarray(x, dtype=dtype)
    except OverflowError:
        raise OverflowError(f"a Python int in {_short(x)} does not fit in {dtype}") from None
    if not array.dtype.isnative:  # big-endian data (read from a file, say): NumPy's ops accept it
        array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype not in dtypes.CODE:
        _unsupported(x, array)
    return array


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _unsupported(x: Any, array: np.ndarray[Any, Any]) -> None:
    """Raise the error NumPy's conversion of ``x`` calls for.

    A Python int too big for 64 bits is an ``OverflowError`` naming it; ``None``, strings and
    other objects are ``TypeError``s.
    """
    if array.dtype == object:
        for v in array.flat:
            if type(v) is int and not -2**63 <= v < 2**64:  # (a small one: the others' fault)
                raise OverflowError(f"Python int {v} does not fit in int64 or uint64")
            if not isinstance(v, (bool, int, float, complex, np.generic)):
                raise TypeError(f"cannot make a tensor from {type(v).__name__} ({_short(x)})")
    dtypes.canonical(array.dtype)  # str, datetime...: TypeError naming the supported dtypes


def check_power(base: DType, exponent: Any) -> None:
    """``int ** negative int`` with the exponent on the host: NumPy's ``ValueError``, at the call.

    Where the power is computed in an integer dtype, as NumPy's loop (``bool ** int8`` too,
    not ``uint64 ** int8``, which is float64).

    Example:
        >>> check_power(dtypes.int64, -1)
        Traceback (most recent call last):
        ...
        ValueError: Integers to negative integer powers are not allowed.
    """
    e = np.asarray(exponent)
    power = result_type(base, exponent if is_weak(exponent) else e.dtype)
    if power in dtypes.INTEGER and e.dtype.kind in "iu" and e.size and e.min() < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")


def checked(device: object, where: str) -> Device:
    """``device`` if it is a :class:`Device`; else ``TypeError`` at the call that passed it.

    (A string such as ``"cpu"`` taken as a device would fail every later barrier.)

    Example:
        >>> checked("cpu", "zeros")
        Traceback (most recent call last):
        ...
        TypeError: zeros: device must be a minilazy Device (...), got str 'cpu'
    """
    if isinstance(device, Device):
        return device
    raise TypeError(f"{where}: device must be a minilazy Device (ml.devices(), "
                    f"ml.default_device()), got {type(device).__name__} {device!r}")
