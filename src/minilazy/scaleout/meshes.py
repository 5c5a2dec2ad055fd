"""Meshes and shardings: devices on a grid whose axes have names, and a tensor split over one.

``ml.Mesh`` (XLA GSPMD's device mesh, PyTorch/XLA's ``Mesh``) is a plain value, checked when it
is made and hashed as a stable CRC (never ``hash`` of a ``str``). A :class:`Sharding` says how a
tensor is split over a mesh: the attribute of a placed ``DATA`` leaf or of a ``SHARD``
annotation (:mod:`minilazy.scaleout.placement` registers both), so it is in the cache key, the
same in every process. Never imports jax.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeAlias

import numpy as np

from minilazy.core.attrs import Device


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


class Sharding(NamedTuple):
    """How a tensor is split over a mesh: ``DATA`` placed so, or a ``SHARD`` annotation.

    ``dims`` has one entry per tensor dimension: the positions of the mesh axes that dimension
    is split over, in order (empty: replicated along it). Positions, not names: a name is a
    ``str``, and ``str`` hashing differs from process to process.

    Example:
        >>> import minilazy as ml
        >>> s = Sharding(Mesh([ml.Device("cpu", 0)], ("data",)), ((0,), ()))
        >>> s.spec
        ('data', None)
    """

    mesh: Mesh
    dims: tuple[tuple[int, ...], ...]

    @property
    def spec(self) -> tuple[str | tuple[str, ...] | None, ...]:
        """The partition spec: per dimension a mesh axis name, a tuple of them, or ``None``."""
        names = self.mesh.axis_names
        return tuple(None if not d else names[d[0]] if len(d) == 1 else
                     tuple(names[i] for i in d) for d in self.dims)

# A user's partition spec: per dimension a mesh axis name, a tuple of them, or None.
Spec: TypeAlias = Sequence[str | tuple[str, ...] | None]
