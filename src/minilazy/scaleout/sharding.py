"""Sharding: split tensors over a mesh of devices and let XLA's GSPMD partition the programs.

Public as ``ml.mark_sharding``, in PyTorch/XLA's SPMD shape: a :class:`Mesh` of
devices with named axes, and :func:`mark_sharding` to say how a tensor is split over it. Data
are placed at once (each device receives its part); a pending tensor gets a ``SHARD`` node, an
annotation in the graph. Either way the sharding is an attribute, so it is in the cache key. A
program that reads a sharded tensor runs on the whole mesh: the lowering hands the shardings to
XLA, whose GSPMD partitioner splits it into one program per device and inserts the collectives.
Never imports jax.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from minilazy.core.ir import DeviceError, Failure, Node, Op, data_leaf
from minilazy.core.state import ENGINE, user_site
from minilazy.core.tracer import Tensor, record
from minilazy.scaleout.meshes import Mesh, Sharding, Spec
from minilazy.scaleout.placement import place

T = TypeVar("T", bound=Tensor)  # a tensor of any class with the tracer in it: itself back

def placement(x: Tensor | None, sharding: object, what: str) -> tuple[Mesh, Spec]:
    """Check a ``(mesh, partition spec)`` pair (and that ``x`` lives on the mesh).

    Example:
        >>> import minilazy as ml
        >>> mesh = ml.Mesh(ml.devices()[:1], ("data",))
        >>> placement(None, (mesh, ("data",)), "asarray")[1]
        ('data',)
    """
    if not isinstance(sharding, tuple) or len(sharding) != 2 or not isinstance(sharding[0], Mesh):
        raise TypeError(f"{what}: sharding must be a (Mesh, partition spec) pair, got "
                        f"{sharding!r}")
    mesh: Mesh = sharding[0]
    spec: Spec = sharding[1]
    if x is not None and x.device not in mesh.devices:
        raise DeviceError(f"{what}: the tensor is on {x.device}, not on the mesh's devices "
                          f"[{', '.join(map(str, mesh.devices))}]")
    return mesh, spec


def sharding_of(mesh: Mesh, spec: Spec, shape: tuple[int, ...], what: str = "mark_sharding"
                ) -> Sharding:
    """Check a user's partition spec for a tensor of ``shape``.

    One entry per dimension: a mesh axis name, a tuple of them, or ``None``.

    Raises:
        TypeError: ``mesh`` is not a Mesh, or an entry is not a name, tuple or ``None``.
        ValueError: the spec's length is not the tensor's rank, a name is not the mesh's,
            a mesh axis is used twice, or a dimension does not divide evenly.

    Example:
        >>> import minilazy as ml
        >>> mesh = ml.Mesh([ml.Device("cpu", 0), ml.Device("cpu", 1)], ("data",))
        >>> sharding_of(mesh, ("data", None), (4, 3)).dims
        ((0,), ())
        >>> sharding_of(mesh, ("data", None), (3, 3))
        Traceback (most recent call last):
        ...
        ValueError: mark_sharding: dimension of size 3 in shape (3, 3) does not split evenly ...
    """
    if not isinstance(mesh, Mesh):
        raise TypeError(f"{what}: mesh must be a minilazy Mesh, got {type(mesh).__name__}")
    if isinstance(spec, str) or not isinstance(spec, Sequence):
        raise TypeError(f"{what}: the partition spec must be a tuple with one entry per "
                        f"dimension, got {spec!r}")
    if len(spec) != len(shape):
        raise ValueError(f"{what}: partition spec {tuple(spec)} has {len(spec)} "
                         f"entr{'y' if len(spec) == 1 else 'ies'} for a tensor of shape {shape} "
                         f"(one per dimension)")
    dims: list[tuple[int, ...]] = []
    used: list[str] = []
    for size, entry in zip(shape, spec):
        names = () if entry is None else (entry,) if isinstance(entry, str) else entry
        if not isinstance(names, tuple | list) or not all(isinstance(n, str) for n in names):
            raise TypeError(f"{what}: a partition spec entry is a mesh axis name, a tuple "
                            f"of them or None, got {entry!r}")
        for n in names:
            if n not in mesh.axis_names:
                raise ValueError(f"{what}: {n!r} is not an axis of {mesh}")
            if n in used:
                raise ValueError(f"{what}: partition spec {tuple(spec)} uses mesh axis {n!r} "
                                 f"twice")
            used.append(n)
        parts = math.prod(mesh.size(n) for n in names)
        if size % parts:
            raise ValueError(f"{what}: dimension of size {size} in shape {shape} does not "
                             f"split evenly over {parts} devices ({entry!r})")
        # a split over a mesh axis of one device is no split: one key for both (XLA says so too)
        dims.append(tuple(mesh.axis_names.index(n) for n in names if mesh.size(n) > 1))
    return Sharding(mesh, tuple(dims))


def placed_data(array: np.ndarray[Any, Any], mesh: Mesh, spec: Spec) -> Node:
    """A ``DATA`` leaf of a host array split over ``mesh``: each device receives its part.

    Example:
        >>> import minilazy as ml
        >>> mesh = ml.Mesh(ml.devices("cpu")[:2], ("data",))  # two devices (a test session's)
        >>> placed_data(np.ones((2, 1)), mesh, ("data", None)).attrs.spec
        ('data', None)
    """
    s = sharding_of(mesh, spec, array.shape, "asarray")
    site = user_site() if ENGINE.sites else None
    return Node(Op.DATA, (), s, array.shape, array.dtype, place(array, s), site)


def mark_sharding(x: T, mesh: Mesh, spec: Spec) -> T:
    """Split ``x`` over ``mesh`` as ``spec`` says, in place (as PyTorch/XLA's); returns ``x``.

    ``spec`` has one entry per dimension: a mesh axis name, a tuple of them, or ``None``
    (replicated along it).

    Device data move at once, each device receiving its part. A pending tensor is annotated:
    the program computing it splits its value so, and XLA propagates the choice through the
    rest of the program. Handles that shared ``x``'s value before keep their placement.

    Raises:
        TypeError: ``x`` is not a tensor, or ``mesh``/``spec`` are not a Mesh and a spec.
        ValueError: the spec does not fit ``x``'s shape or the mesh (see :func:`sharding_of`);
            ``DeviceError`` when ``x`` is not on one of the mesh's devices.

    Example:
        >>> import numpy as np
        >>> import minilazy as ml
        >>> mesh = ml.Mesh(ml.devices(), ("data",))
        >>> x = ml.mark_sharding(ml.asarray(np.ones((8, 2))), mesh, ("data", None))
        >>> x.sharding.spec, ml.sum(x * 2).item()
        (('data', None), 32.0)
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"mark_sharding: expected a minilazy tensor, got {type(x).__name__}")
    s = sharding_of(*placement(x, (mesh, spec), "mark_sharding"), x.shape)
    node = x._node
    if node.attrs == s:
        return x
    if node.op is Op.DATA and type(node.payload) is not Failure:
        x._node = data_leaf(place(node.payload, s), node.shape, node.dtype, s)
    else:
        x._node = record(Op.SHARD, (node,), s, x.device)._node
    return x
