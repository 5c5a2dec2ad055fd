"""Where data lives: a :class:`Device`, and a :class:`Mesh` of devices with named axes.

At the bottom of core, beside dtypes. Plain values, not JAX objects, so that every module before
the runtime can carry them; the runtime maps them to JAX's devices and meshes. A mesh is what a
sharding splits a tensor over (XLA GSPMD's device mesh, PyTorch/XLA's ``Mesh``). Both hash
the same in every process (a stable CRC, never ``hash`` of a ``str``): they are in cache keys.
Never imports jax.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Device:
    """A device by name: a JAX platform (``cpu``, ``gpu``, ``tpu``) and an index on it.

    A plain value (not a JAX object) so that the modules before the runtime can carry it.

    Example:
        >>> str(Device("cpu", 0))
        'cpu:0'
    """

    platform: str
    index: int
    code: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", zlib.crc32(f"{self.platform}:{self.index}".encode()))

    def __str__(self) -> str:
        return f"{self.platform}:{self.index}"


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


class Mesh:
    """Devices laid out on a grid whose axes have names: what a sharding splits tensors over.

    ``devices`` is a flat sequence (for a one-axis mesh) or a nested sequence or object array
    whose number of dimensions is the number of ``axis_names``.

    Raises:
        ValueError: no devices, a device twice, devices of several platforms, or axis names
            that are not one distinct, non-empty ``str`` per dimension of ``devices``.
        TypeError: an element of ``devices`` that is not a :class:`Device`.

    Example:
        >>> import minilazy as ml
        >>> mesh = ml.Mesh([ml.Device("cpu", 0)], ("data",))
        >>> mesh.shape, mesh.axis_names, mesh.size("data")
        ((1,), ('data',), 1)
        >>> mesh
        Mesh({'data': 1}, devices=[cpu:0])
    """

    __slots__ = ("devices", "shape", "axis_names", "_code")

    devices: tuple[Device, ...]  # row-major over ``shape``
    shape: tuple[int, ...]
    axis_names: tuple[str, ...]

    def __init__(self, devices: Sequence[Any] | np.ndarray[Any, Any],
                 axis_names: Sequence[str]) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        grid = np.empty(np.shape(np.asarray(devices, dtype=object)), dtype=object)
        grid[...] = np.asarray(devices, dtype=object)  # Devices stay objects, never tuples
        if grid.size == 0:
            raise ValueError("Mesh: no devices")
        if grid.ndim != len(names):
            raise ValueError(f"Mesh: devices laid out as {grid.shape} need {grid.ndim} axis "
                             f"names, got {names}")
        if any(not isinstance(n, str) or not n for n in names) or len(set(names)) < len(names):
            raise ValueError(f"Mesh: axis names must be distinct non-empty strings, got {names}")
        flat = tuple(grid.reshape(-1))
        for d in flat:
            if not isinstance(d, Device):
                raise TypeError(f"Mesh: {d!r} is a {type(d).__name__}, not a minilazy Device "
                                f"(take them from ml.devices())")
        if len(set(flat)) < len(flat):
            raise ValueError(f"Mesh: a device appears twice in {[str(d) for d in flat]}")
        if len({d.platform for d in flat}) > 1:
            raise ValueError(f"Mesh: devices of several platforms: {[str(d) for d in flat]}")
        self.devices, self.shape, self.axis_names = flat, tuple(grid.shape), names
        self._code = zlib.crc32(repr((self.shape, names, [str(d) for d in flat])).encode())

    def size(self, axis_name: str) -> int:
        """How many devices the mesh has along ``axis_name``."""
        return self.shape[self.axis_names.index(axis_name)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and (self.devices, self.shape, self.axis_names) == (
            other.devices, other.shape, other.axis_names)

    def __hash__(self) -> int:
        return self._code

    def __repr__(self) -> str:
        axes = dict(zip(self.axis_names, self.shape))
        return f"Mesh({axes}, devices=[{', '.join(map(str, self.devices))}])"
