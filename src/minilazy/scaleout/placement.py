"""Programs over a mesh: placed data, the ``SHARD`` op, and where a program's values live.

A part of the engine (``import minilazy`` installs it into the lowering's ``PLACEMENT``). A
``DATA`` leaf may be placed over a mesh (its attribute a
:class:`~minilazy.scaleout.meshes.Sharding`), and ``SHARD`` annotates a pending value so; both
are in the cache key. A program that reads one runs on the whole mesh: its parameters are
traced with their JAX shardings (every other argument replicated), XLA's GSPMD partitioner
splits it into one program per device and inserts the collectives, and its results come back
with the shardings XLA chose, recorded on their leaves. This module registers ``SHARD``'s rules
(shape, lowering, reference, printers), as an op family does. Without it every program runs on
its cut's one device.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

import jax
import numpy as np
from jax import lax

from minilazy.core import infer, ir, lowering, runtime
from minilazy.core.attrs import NONE, Attrs, NoAttrs, mismatch
from minilazy.core.cut import Cut
from minilazy.core.dtypes import DType
from minilazy.core.ir import Node, Op, Shape
from minilazy.core.lowering import PLACEMENT, Placements, jax_device
from minilazy.introspect import printers, pycode, reference
from minilazy.scaleout.meshes import Mesh, Sharding

_PARTS: Final = cast(Callable[..., Any], jax.sharding.PartitionSpec)  # untyped in jax
_CONSTRAIN: Final = cast(Callable[[jax.Array, Any], jax.Array], lax.with_sharding_constraint)
# JAX's meshes -> ours: a result's sharding is read back as a minilazy Sharding (placed).
MESHES: Final[dict[Any, Mesh]] = {}
_ON_CPU_MESH: Final[list[Any]] = []  # the outputs of the last program run over CPU devices


@functools.cache
def jax_mesh(mesh: Mesh) -> jax.sharding.Mesh:
    """The JAX mesh of a minilazy :class:`~minilazy.scaleout.meshes.Mesh` (one per mesh).

    Example:
        >>> import minilazy as ml
        >>> jax_mesh(ml.Mesh([ml.Device("cpu", 0)], ("data",))).axis_names
        ('data',)
    """
    grid = np.empty(len(mesh.devices), dtype=object)
    grid[:] = [jax_device(d) for d in mesh.devices]
    found = jax.sharding.Mesh(grid.reshape(mesh.shape), mesh.axis_names)
    MESHES[found] = mesh
    return found


def named(s: Sharding) -> jax.sharding.NamedSharding:
    """The JAX ``NamedSharding`` of a minilazy :class:`~minilazy.scaleout.meshes.Sharding`.

    Example:
        >>> import minilazy as ml
        >>> tuple(named(Sharding(ml.Mesh([ml.Device("cpu", 0)], ("data",)), ((0,),))).spec)
        ('data',)
    """
    return jax.sharding.NamedSharding(jax_mesh(s.mesh), _PARTS(*s.spec))


def place(value: Any, s: Sharding) -> Any:
    """Place a host array or a device buffer over ``s``'s mesh, split as ``s`` says.

    Each device receives only its part of a host array (``make_array_from_callback``: in a
    multi-process run, a process places only its own devices' parts of the global value).

    Example:
        >>> import minilazy as ml
        >>> mesh = ml.Mesh(ml.devices("cpu")[:1], ("data",))
        >>> place(np.arange(4.0), Sharding(mesh, ((0,),))).shape
        (4,)
    """
    return runtime.put(value, named(s))


def mesh_of(c: Cut) -> Mesh | None:
    """The mesh ``c``'s program runs on: the one its shardings name (``None``: one device).

    Raises ``ValueError`` when they name several: a program runs on one set of devices.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.ones((2,))
        >>> mesh_of(cut([(x + 1.0)._node], x.device)) is None
        True
    """
    found = {n.attrs.mesh for n in c.order if type(n.attrs) is Sharding}
    if len(found) > 1:
        raise ValueError(f"one program cannot run on several meshes: "
                         f"{sorted(map(repr, found))}; mark the tensors it reads on one mesh")
    return found.pop() if found else None


def _placed(sharding: Any, ndim: int, mesh: Mesh) -> Attrs:
    """A result's JAX sharding as a minilazy Sharding over the program's ``mesh``."""
    if not isinstance(sharding, jax.sharding.NamedSharding) or sharding.mesh not in MESHES:
        # XLA may report a layout it did not name (on a 1-device mesh, say): replicated is
        # the one we can name; any other is moved where the next program wants it
        return Sharding(mesh, ((),) * ndim) if sharding.is_fully_replicated else NONE
    mesh = MESHES[sharding.mesh]
    spec = [*sharding.spec, *[None] * (ndim - len(sharding.spec))]
    names = [() if e is None else (e,) if isinstance(e, str) else tuple(e) for e in spec]
    return Sharding(mesh, tuple(tuple(mesh.axis_names.index(n) for n in d if mesh.size(n) > 1)
                                for d in names))


class MeshPlacement:
    """The :class:`~minilazy.core.lowering.Placement` of programs over meshes.

    Example:
        >>> import minilazy as ml
        >>> type(PLACEMENT.part).__name__
        'MeshPlacement'
    """

    def params(self, c: Cut) -> list[Any] | None:
        """A sharded leaf keeps its sharding; every other argument is replicated."""
        mesh = mesh_of(c)
        if mesh is None:
            return None
        whole = jax.sharding.NamedSharding(jax_mesh(mesh), _PARTS())
        data = [named(p.attrs) if type(p.attrs) is Sharding else whole for p in c.params]
        return data + [whole] * (len(lowering.arguments(c)) - len(data))

    def compiled(self, executable: Any) -> tuple[tuple[Any, ...], tuple[Attrs, ...]] | None:
        """The parameters' shardings and the results' placements of a program over a mesh."""
        ins = executable.input_shardings[0]
        named_in = [s for s in ins if isinstance(s, jax.sharding.NamedSharding)]
        if not named_in:
            return None
        mesh = MESHES[named_in[0].mesh]
        return tuple(ins), tuple([_placed(s, len(o.shape), mesh) for s, o in zip(
            executable.output_shardings, executable.out_info)])

    def arguments(self, shardings: tuple[Any, ...], args: Sequence[Any]) -> Sequence[Any]:
        """A parameter placed otherwise (one device's data) moves first.

        A program over CPU devices waits for the last one first: XLA:CPU starts devices' parts
        on a pool of as many threads as devices, in no fixed order; with two such programs in
        flight, the second's parts held every thread while the first's collective waited for a
        part still queued, and XLA aborted the process after 40 s (~1 run in 10 of
        ``--devices 8``, loaded).
        """
        for out in _ON_CPU_MESH:
            with contextlib.suppress(Exception):  # its failure is raised where it is read
                out.block_until_ready()
        return [runtime.put(a, s) if isinstance(a, jax.Array) and a.sharding != s else a
                for a, s in zip(args, shardings)]

    def ran(self, shardings: tuple[Any, ...], outs: Sequence[Any]) -> None:
        """Keep the results of a program over CPU devices: the next one waits for them."""
        _ON_CPU_MESH[:] = outs if shardings[0].mesh.devices.flat[0].platform == "cpu" else []


# -- SHARD, the annotation: the value unchanged, split as its attribute says ---------------------
def rule(op: Op, xs: tuple[Node, ...], attrs: Attrs) -> tuple[Shape, DType]:
    """``SHARD`` keeps its operand's shape and dtype.

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.ir import scalar_leaf
        >>> s = Sharding(ml.Mesh([ml.Device("cpu", 0)], ("data",)), ())
        >>> rule(Op.SHARD, (scalar_leaf(1.0, np.dtype("float32")),), s)
        ((), dtype('float32'))
    """
    return xs[0].shape, xs[0].dtype


def lower(xs: Sequence[jax.Array], n: Node) -> jax.Array:
    """An annotation GSPMD propagates from: a sharding constraint; the value is unchanged."""
    match n.attrs:
        case Sharding():
            return _CONSTRAIN(xs[0], named(n.attrs))
    raise mismatch(n.op, n.attrs)


def code(s: Sharding) -> str:
    """The ``(mesh, spec)`` pair that places a tensor as ``s`` says, as code.

    Example:
        >>> import minilazy as ml
        >>> print(code(Sharding(ml.Mesh([ml.Device("cpu", 0)], ("data",)), ((0,),))))
        ... # doctest: +NORMALIZE_WHITESPACE
        (ml.Mesh(np.array([ml.devices('cpu')[i] for i in [0]], dtype=object).reshape((1,)),
                 ('data',)), ('data',))
    """
    where = [d.index for d in s.mesh.devices]
    platform = s.mesh.devices[0].platform
    devices = f"np.array([ml.devices({platform!r})[i] for i in {where}], dtype=object)"
    return f"(ml.Mesh({devices}.reshape({s.mesh.shape}), {s.mesh.axis_names}), {s.spec!r})"


def python(name: str, n: Node, args: Sequence[str]) -> list[str]:
    """The line that records ``n`` again: a copy of the handle is marked (its operand stays).

    Example:
        >>> import minilazy as ml
        >>> x = ml.mark_sharding(ml.ones((2,)) * 2.0, ml.Mesh(ml.devices()[:1], ("data",)),
        ...                      ("data",))
        >>> python("v1", x._node, ["v0"])[0].startswith("v1 = ml.mark_sharding(ml.asarray(v0")
        True
    """
    match n.attrs:
        case Sharding():
            return [f"{name} = ml.mark_sharding(ml.asarray({args[0]}, copy=True), "
                    f"*{code(n.attrs)})"]
    raise mismatch(n.op, n.attrs)


def text(s: Sharding) -> str:
    """How the IR text shows a sharding.

    Example:
        >>> import minilazy as ml
        >>> text(Sharding(ml.Mesh([ml.Device("cpu", 0)], ("data",)), ((0,),)))
        "spec=('data',) mesh=[data=1]"
    """
    grid = ",".join(f"{n}={k}" for n, k in zip(s.mesh.axis_names, s.mesh.shape))
    return f"spec={s.spec} mesh=[{grid}]"


ir.FAMILY[Op.DATA] = (NoAttrs, Sharding)  # a placed leaf
ir.FAMILY[Op.SHARD] = (Sharding,)
printers.TEXT[Sharding] = text
pycode.PLACED[Sharding] = code
infer.INFER[Op.SHARD] = rule
lowering.LOWER[Op.SHARD] = lower
reference.REFERENCE[Op.SHARD] = lambda xs, n: xs[0]  # placement moves a value, never changes it
pycode.PYTHON[Op.SHARD] = python


def install(placements: Placements = PLACEMENT) -> None:
    """Let programs run over meshes (what ``import minilazy`` does).

    Example:
        >>> p = Placements()
        >>> install(p)
        >>> type(p.part).__name__
        'MeshPlacement'
    """
    placements.part = MeshPlacement()
