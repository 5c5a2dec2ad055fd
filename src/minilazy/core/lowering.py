"""XLA lowering: one rule per op to ``jax.lax``/``jax.numpy``, traced ahead of time.

With the runtime, the only part of core that imports jax. :func:`program` interprets a
:class:`~minilazy.core.cut.Cut` with one rule per op; :func:`lower` traces it once with
abstract parameters (on a device, or placed on a mesh) through ``jax.jit(...).lower(...)``.
Then the rules (:data:`LOWER`: core's ops here, a family's added by its module), with the casts
they need to match NumPy. Leaf data are parameters, never constants. 64-bit types are on only
inside minilazy's own jax calls (:func:`x64`), never in the user's global config.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, ParamSpec, Protocol, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from minilazy.core.attrs import (
    Attrs,
    Constant,
    Iota,
    Permute,
    Reduce,
    ToShape,
    mismatch,
)
from minilazy.core.cut import Cut
from minilazy.core.infer import signature
from minilazy.core.ir import Device, Node, Op

Array = jax.Array
Rule = Callable[[Sequence[Array], Node], Array]
_SPEC: Final = cast(Callable[..., jax.ShapeDtypeStruct], jax.ShapeDtypeStruct)  # untyped in jax
HIGHEST: Final = lax.Precision.HIGHEST  # exact f32 matmuls on GPU too (no TF32)
_X64: Final[Any] = jax.enable_x64  # a config State: get_local/set_local are its public face
P = ParamSpec("P")
R = TypeVar("R")


def x64(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with JAX's 64-bit mode on during each call, in this thread only.

    Not a ``with`` block, whose ``__exit__`` a signal handler's exception can stop before it
    restores anything: here the ``try`` holds the switch, and ``finally`` undoes it first thing.

    Example:
        >>> f64 = lambda: jax.numpy.zeros(1, "float64").dtype.name
        >>> x64(f64)(), f64()
        ('float64', 'float32')
    """
    @functools.wraps(fn)
    def in_x64(*args: P.args, **kwargs: P.kwargs) -> R:
        before = _X64.get_local()  # interrupted here, nothing was changed
        try:
            _X64.set_local(True)
            return fn(*args, **kwargs)
        finally:
            _X64.set_local(before)
    return in_x64


@functools.cache  # jax.devices() costs microseconds, and every transfer asks
def jax_device(device: Device) -> Any:
    """The JAX device object for a minilazy :class:`~minilazy.core.ir.Device`."""
    return jax.devices(device.platform)[device.index]


class Placement(Protocol):
    """Programs over a mesh of devices (``minilazy.scaleout.placement``): where values live.

    The lowering asks where each parameter is placed; the runtime, where a program's results
    are, before and after each run over a mesh. Without it, programs run on one device.
    """

    def params(self, c: Cut) -> list[Any] | None:
        """Each argument's JAX sharding (:func:`arguments`' order); ``None``: one device."""

    def compiled(self, executable: Any) -> tuple[tuple[Any, ...], tuple[Attrs, ...]] | None:
        """A program's parameter shardings and its results' placements; ``None``: one device."""

    def arguments(self, shardings: tuple[Any, ...], args: Sequence[Any]) -> Sequence[Any]:
        """``args`` placed as the program over a mesh takes them."""

    def ran(self, shardings: tuple[Any, ...], outs: Sequence[Any]) -> None:
        """What a program over a mesh returned (the next one may wait for it)."""


class Placements:
    """Where the lowering and the runtime find the installed :class:`Placement`."""

    def __init__(self) -> None:
        self.part: Placement | None = None


PLACEMENT: Final = Placements()


def program(c: Cut) -> Callable[..., tuple[Array, ...]]:
    """The cut as a function of its parameters: an interpreter over ``c.order`` with LOWER.

    The parameters: the ``DATA`` buffers, then one array per group of scalars (``Cut.groups``).

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.asarray(np.ones(2, np.float32))
        >>> fn = program(cut([(x + 1.0)._node], x.device))
        >>> [a.tolist() for a in fn(np.ones(2, np.float32), np.array([1.0], np.float32))]
        [[2.0, 2.0]]
    """
    order, operands, outputs = c.order, c.operands, c.outputs
    data = {p: i for i, p in enumerate(c.params)}
    scalars = c.slots()  # a scalar's (group, index), or (position, -1)

    def fn(*params: Array) -> tuple[Array, ...]:
        rest = params[len(data):]
        env: list[Array] = []
        for node, ins in zip(order, operands):
            if node.op is Op.DATA:
                args = [params[data[node]]]
            elif node.op is Op.SCALAR:
                if type(node.attrs) is Constant:  # its value is part of the program and the key
                    args = [jnp.asarray(node.payload, node.dtype)]
                else:
                    g, k = scalars[node]
                    args = [rest[g] if k < 0 else rest[g][k]]
            else:
                args = [env[i] for i in ins]
            env.append(LOWER[node.op](args, node))
        return tuple(env[i] for i in outputs)

    return fn


def arguments(c: Cut) -> list[tuple[tuple[int, ...], np.dtype[Any]]]:
    """The shape and dtype of each argument of ``c``'s program: its data, then its scalars."""
    scalars = [((n,), d) for d, n in c.groups] if c.groups else [((), s.dtype) for s in c.scalars]
    return [(p.shape, p.dtype) for p in c.params] + scalars


def abstract_params(c: Cut) -> list[jax.ShapeDtypeStruct]:
    """The arguments' shapes, dtypes and placements: on the cut's device, or as placed.

    Over a mesh, the :class:`Placement` says how each is split (XLA's GSPMD does the rest).
    """
    found = PLACEMENT.part.params(c) if PLACEMENT.part is not None else None
    args = arguments(c)
    placed = found or [jax.sharding.SingleDeviceSharding(jax_device(c.device))] * len(args)
    return [_SPEC(shape, dtype, sharding=s) for (shape, dtype), s in zip(args, placed)]


@x64
def lower(c: Cut, donated: tuple[bool, ...] = ()) -> Any:
    """Trace the cut's program into a ``jax.stages.Lowered`` (StableHLO, not yet compiled).

    Example:
        >>> import minilazy as ml
        >>> from minilazy.core.cut import cut
        >>> x = ml.ones((2,))
        >>> "stablehlo.add" in lower(cut([(x + 1.0)._node], x.device)).as_text()
        True
    """
    donate = tuple(i for i, d in enumerate(donated) if d)  # masks cover the DATA parameters
    jitted = jax.jit(program(c), keep_unused=True, donate_argnums=donate)
    return jitted.lower(*abstract_params(c))


# -- The rules: one per op, and the numerics they need to match NumPy ----------------------
def astype(x: Array, dtype: np.dtype[Any]) -> Array:
    """``x`` converted to ``dtype`` as NumPy's ``astype`` would: XLA's conversions, mended."""
    if x.dtype == dtype:
        return x
    if x.dtype.kind == "c" and dtype == np.bool_:
        return x != 0  # convert_element_type would drop the imaginary part (NumPy: either part)
    if x.dtype == np.bool_ and dtype.kind in "fc":
        # XLA rewrites convert(bool) * y into select(bool, y, 0), which turns False * inf into 0
        # where IEEE (and NumPy) give NaN; going through uint8 keeps the multiply honest.
        x = lax.convert_element_type(x, np.uint8)
    if x.dtype == np.float64 and dtype == np.float16:
        x = _to_f32_rounding_to_odd(x)  # XLA goes f64 -> f32 -> f16: two roundings, not one
    return lax.convert_element_type(x, dtype)


def _to_f32_rounding_to_odd(x: Array) -> Array:
    """f64 to f32 rounding to odd: a second rounding, to f16, is then correctly rounded."""
    r = lax.convert_element_type(x, np.float32)
    back = lax.convert_element_type(r, np.float64)
    inexact = back != x
    bits = lax.bitcast_convert_type(r, np.uint32)
    bits = jnp.where(inexact & (jnp.abs(back) > jnp.abs(x)), bits - 1, bits)  # toward zero
    return lax.bitcast_convert_type(jnp.where(inexact, bits | 1, bits), np.float32)


# A rule for any array namespace ``xp``: (xp, operand values, node) -> value. A family whose ops
# jax.numpy and NumPy compute alike writes one for the lowering and the reference interpreter.
Evaluate = Callable[[Any, Sequence[Any], Node], Any]


def with_namespace(evaluate: Evaluate) -> Rule:
    """The lowering rule: ``evaluate`` called with ``jax.numpy``, cast to the node's dtype."""
    return lambda xs, n: astype(evaluate(jnp, xs, n), n.dtype)


def _bcast(x: Array, shape: tuple[int, ...]) -> Array:
    if x.shape == shape:
        return x
    return lax.broadcast_in_dim(x, shape, tuple(range(len(shape) - x.ndim, len(shape))))


def elementwise(fn: Callable[..., Array]) -> Rule:
    """The rule of an elementwise op computed by ``fn``, typed as NumPy's loops type it.

    Operands are cast to NumPy's loop dtypes and broadcast; the result, to the node's dtype.
    """

    def rule(xs: Sequence[Array], n: Node) -> Array:
        sig = signature(n.op, *(o.dtype for o in n.operands))
        args = [_bcast(astype(x, d), n.shape) for x, d in zip(xs, sig)]
        return astype(fn(*args), n.dtype)

    return rule


# Core's elementwise ops; the others are the elementwise family's (minilazy/ops/elementwise.py).
_ARITHMETIC: Final[Mapping[Op, Callable[..., Array]]] = {
    Op.NEG: jnp.negative, Op.ADD: jnp.add, Op.SUB: jnp.subtract, Op.MUL: jnp.multiply,
    Op.DIV: jnp.true_divide,
}


def _param(xs: Sequence[Array], n: Node) -> Array:
    return xs[0]  # the interpreter feeds a leaf its parameter value


def _iota(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Iota(_, axis, _):
            return lax.broadcasted_iota(n.dtype, n.shape, axis)
    raise mismatch(n.op, n.attrs)


def _sum(xs: Sequence[Array], n: Node) -> Array:
    match n.attrs:
        case Reduce(axes, keepdims):  # cast first: sum(int8) accumulates in int64, as NumPy's
            return astype(jnp.sum(astype(xs[0], n.dtype), axis=axes, keepdims=keepdims), n.dtype)
    raise mismatch(n.op, n.attrs)


def _matmul(xs: Sequence[Array], n: Node) -> Array:
    sig = signature(n.op, *(o.dtype for o in n.operands))
    return astype(jnp.matmul(astype(xs[0], sig[0]), astype(xs[1], sig[1]), precision=HIGHEST),
                 n.dtype)


def _static(fn: Callable[[Array, tuple[int, ...]], Array]) -> Rule:
    """A rule whose one attribute (a shape, a permutation) is passed straight to ``fn``."""
    def rule(xs: Sequence[Array], n: Node) -> Array:
        match n.attrs:
            case ToShape(v) | Permute(v):
                return fn(xs[0], v)
        raise mismatch(n.op, n.attrs)

    return rule


LOWER: Final[dict[Op, Rule]] = {
    Op.DATA: _param, Op.SCALAR: _param, Op.IOTA: _iota,
    **{op: elementwise(fn) for op, fn in _ARITHMETIC.items()},
    Op.SUM: _sum, Op.MATMUL: _matmul,
    Op.RESHAPE: _static(jnp.reshape), Op.TRANSPOSE: _static(lax.transpose),
    Op.BROADCAST: _static(jnp.broadcast_to),
    Op.STOP_GRADIENT: lambda xs, n: xs[0],  # the forward value: itself
}
