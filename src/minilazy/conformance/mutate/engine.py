"""Mutants of minilazy's engine: one realistic bug each, patched in when the adapter is made.

Each factory here patches one function or table of minilazy (in this process only) and returns
the ordinary minilazy adapter, which keeps claiming every capability: a mutant claims to
conform. ``python -m minilazy.conformance.mutate`` runs the oracle against each in a fresh
process and checks that the oracle kills it, on the rules its :data:`~.catalogue.CATALOGUE`
entry says the bug breaks. The patches are deliberately small: the kind of slip a reviewer
misses (a field left out of a key, a branch that forgets to rebind, an off-by-one axis).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

import minilazy as ml
from minilazy import fft
from minilazy.api import axes as axes_module
from minilazy.api import fallback, reductions, scalars, shaping
from minilazy.api import tensor as surface
from minilazy.api.tensor import Tensor
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.core import barrier, infer, lowering, state
from minilazy.core import cut as cutting
from minilazy.core.dtypes import CODE, DType
from minilazy.core.ir import OP_CODE, Node, Op, data_leaf
from minilazy.core.metrics import COUNTERS
from minilazy.introspect import printers
from minilazy.ops.fft import Norm


def _set(owner: Any, name: str, value: Any) -> None:
    if not hasattr(owner, name):  # a renamed target would leave the engine unmutated, silently
        raise AttributeError(f"mutant: {getattr(owner, '__name__', owner)} has no {name!r}")
    setattr(owner, name, value)


# -- the cache key, one field left out ----------------------------------------------------------
def _rekey(leave_out: str) -> MinilazyAdapter:
    """Keys computed from the cut's fields but ``leave_out``."""
    real = cutting.cut

    def cut(roots: Sequence[Node], device: ml.Device) -> cutting.Cut:
        c = real(roots, device)
        parts: list[Any] = []
        for n in c.order:
            parts.append((OP_CODE[n.op], () if leave_out == "attrs" else n.attrs,
                          () if leave_out == "shape" else n.shape,
                          0 if leave_out == "dtype" else CODE[n.dtype]))
        if leave_out != "wiring":
            parts.append(tuple(len(n.operands) for n in c.order))
            parts.append(tuple(c.positions[o] for n in c.order for o in n.operands))
        if leave_out != "outputs":
            parts.append(c.outputs)
        if leave_out != "device":
            parts.append(device.code)
        return cutting.Cut(c.order, c.positions, c.params, c.scalars, c.groups, c.outputs,
                           c.device, hash(tuple(parts)), c.edges)

    for module in (barrier, printers):
        _set(module, "cut", cut)
    return cpu()


def key_ignores_shape() -> MinilazyAdapter:
    """The key leaves out shapes: a graph of new shapes runs a program compiled for others."""
    return _rekey("shape")


def key_ignores_dtype() -> MinilazyAdapter:
    """The key leaves out dtypes: float64 data run through a float32 program."""
    return _rekey("dtype")


def key_ignores_attrs() -> MinilazyAdapter:
    """The key leaves out attributes: ``sum(axis=0)`` hits the program of ``sum(axis=1)``."""
    return _rekey("attrs")


def key_ignores_wiring() -> MinilazyAdapter:
    """The key leaves out which operand an op reads (the peers' bug): ``x*x+y`` hits ``x*y+y``."""
    return _rekey("wiring")


def key_ignores_outputs() -> MinilazyAdapter:
    """The key leaves out which nodes are outputs: a program of one output serves two."""
    return _rekey("outputs")


def key_ignores_device() -> MinilazyAdapter:
    """The key leaves out the device: device 1's graph hits device 0's program."""
    return _rekey("device")


# -- Python scalars ----------------------------------------------------------------------------
def scalar_baked() -> MinilazyAdapter:
    """A Python scalar is baked into the program while the key treats it as a parameter.

    A cache hit silently reuses the old value.
    """
    real = lowering.LOWER[Op.SCALAR]

    def baked(xs: Sequence[Any], n: Node) -> Any:
        return real(xs, n) if n.attrs else jnp.asarray(n.payload, n.dtype)

    _set_table(lowering.LOWER, Op.SCALAR, baked)
    return cpu()


def scalar_strong() -> MinilazyAdapter:
    """Python scalars take NumPy 1's strong dtypes (float64, int64) instead of NEP 50's."""
    def strong(op: Op, value: Any, other: DType, scalar_first: bool) -> Node:
        return scalars.scalar(value, np.asarray(value).dtype)

    _set(surface, "weak_scalar", strong)
    return cpu()


def scalar_shared_slot() -> MinilazyAdapter:
    """Every scalar parameter of a program reads the first one's slot."""
    real = barrier.packed

    def packed(c: cutting.Cut, values: Sequence[Any]) -> list[np.ndarray[Any, Any]]:
        return [np.full_like(a, a.flat[0]) if a.size else a for a in real(c, values)]

    _set(barrier, "packed", packed)
    return cpu()


# -- donation and the barrier's root set --------------------------------------------------------
def donates_live_buffer() -> MinilazyAdapter:
    """``mark_step`` donates every input whose shape an output has.

    Even one a live tensor holds.
    """
    class Reckless:
        def mask(self, c: cutting.Cut, roots: Sequence[Node]) -> tuple[bool, ...]:
            shapes = {(r.shape, r.dtype) for r in roots}
            return tuple((p.shape, p.dtype) in shapes for p in c.params)

    _set(barrier.PARTS, "donor", Reckless())
    return cpu()


def misses_aliases() -> MinilazyAdapter:
    """A barrier rebinds only one tensor per result.

    Another handle on the same value (a no-op reshape, a copy) stays pending.
    """
    real = barrier._run

    def run(group: Sequence[Tensor], device: ml.Device, donate: bool, cause: str) -> None:
        firsts = list({id(t._node): t for t in reversed(group)}.values())
        real(firsts, device, donate, cause)

    _set(barrier, "_run", run)
    return cpu()


def misses_newest() -> MinilazyAdapter:
    """``mark_step`` forgets the newest live tensor."""
    real = state.Registry.tensors

    def tensors(self: state.Registry) -> list[state.Handle]:
        found = real(self)
        caller = sys._getframe(1).f_code.co_name
        return found[:-1] if caller == "mark_step" and found else found

    _set(state.Registry, "tensors", tensors)
    return cpu()


def misses_failed_region() -> MinilazyAdapter:
    """Tensors made while an exception is being handled are not registered as live.

    So ``mark_step`` never materialises them.
    """
    real = state.Registry.add

    def add(self: state.Registry, t: Tensor) -> None:
        if sys.exc_info()[0] is None:
            real(self, t)

    _set(state.Registry, "add", add)
    return cpu()


# -- rebinding ---------------------------------------------------------------------------------
def inplace_returns_new() -> MinilazyAdapter:
    """``x += y`` returns a new tensor and leaves ``x`` as it was."""
    def rebind(self: Tensor, op: Op, result: Tensor) -> Tensor:
        return result

    _set(Tensor, "_rebind", rebind)
    return cpu()


def setitem_scalar_lost() -> MinilazyAdapter:
    """``x[i] = 2.5`` (a Python number) records the update and forgets to rebind ``x``."""
    real = Tensor.__setitem__

    def setitem(self: Tensor, key: Any, value: Any) -> None:
        before = self._node
        real(self, key, value)
        if type(value) in (bool, int, float):
            self._node = before

    _set(Tensor, "__setitem__", setitem)
    return cpu()


# -- lowering ----------------------------------------------------------------------------------
def broadcast_rank_pair() -> MinilazyAdapter:
    """A vector broadcast against a square matrix is aligned with its rows, not its columns."""
    real = lowering._bcast

    def bcast(x: Any, shape: tuple[int, ...]) -> Any:
        if x.ndim == 1 and len(shape) == 2 and shape[0] == shape[1] == x.shape[0] > 1:
            return lax.broadcast_in_dim(x, shape, (0,))
        return real(x, shape)

    _set(lowering, "_bcast", bcast)
    return cpu()


def keepdims_dropped() -> MinilazyAdapter:
    """``max``/``min`` are lowered without ``keepdims``.

    Outputs are reshaped to their recorded shapes at the end.

    So only a consumer in the same program sees the wrong shape.
    """
    for op, fn in ((Op.MAX, jnp.max), (Op.MIN, jnp.min)):
        _set_table(lowering.LOWER, op, lambda xs, n, fn=fn: fn(xs[0], axis=n.attrs[0]))
    real = lowering.program

    def program(c: cutting.Cut) -> Callable[..., tuple[Any, ...]]:
        fn = real(c)
        shapes = [c.order[i].shape for i in c.outputs]
        return lambda *params: tuple(jnp.reshape(o, s) for o, s in zip(fn(*params), shapes))

    _set(lowering, "program", program)
    return cpu()


def negative_axes_off_by_one() -> MinilazyAdapter:
    """A negative axis counts from one too far: ``axis=-1`` of a 3-D tensor is axis 1."""
    real = axes_module.normalize_axes

    def normalize(op_name: str, axes: object, ndim: int) -> tuple[int, ...]:
        if isinstance(axes, int) and -ndim < axes < -1:
            axes = ndim + axes - 1
        elif isinstance(axes, int) and axes == -1 and ndim > 2:
            axes = ndim - 2
        return real(op_name, axes, ndim)

    for module in (axes_module, reductions, shaping):
        _set(module, "normalize_axes", normalize)
    return cpu()


def floor_divide_truncates() -> MinilazyAdapter:
    """Integer ``//`` rounds toward zero (C's division) instead of down (NumPy's)."""
    def truncating(a: Any, b: Any) -> Any:
        if a.dtype.kind in "biu":
            zero = b == 0
            return jnp.where(zero, 0, lax.div(a, jnp.where(zero, 1, b))).astype(a.dtype)
        return jnp.floor_divide(a, b)

    _set_table(lowering.LOWER, Op.FLOOR_DIV, lowering.elementwise(truncating))
    return cpu()


def hfft_scaled_as_irfft() -> MinilazyAdapter:
    """``hfft``/``ihfft`` keep ``norm``'s direction instead of swapping it (NumPy's definition).

    ``hfft`` of a default call is then ``n`` times too small, ``ihfft``'s ``n`` times too large.
    """
    fft._SWAPPED.update({n: n for n in Norm})
    return cpu()


def promotes_int8_uint8_to_int8() -> MinilazyAdapter:
    """``int8`` with ``uint8`` promotes to ``int8`` (NumPy: ``int16``), for arithmetic."""
    real = infer.signature
    i8, u8 = np.dtype(np.int8), np.dtype(np.uint8)

    @functools.lru_cache(maxsize=4096)
    def signature(op: Op, *types: Any) -> tuple[DType, ...]:
        if len(types) == 2 and set(types) == {i8, u8} and op in (Op.ADD, Op.SUB, Op.MUL):
            return (i8, i8, i8)
        return real(op, *types)

    for module in (infer, lowering, scalars):
        _set(module, "signature", signature)
    return cpu()


# -- observations and the auto-cut -------------------------------------------------------------
def _stale(name: str, convert: Callable[[Any], Any]) -> Callable[[Tensor], Any]:
    real = getattr(Tensor, name)

    def read(self: Tensor) -> Any:
        n = self._node
        if n.op is not Op.DATA and n.operands and n.operands[0].op is Op.DATA \
                and n.operands[0].shape == n.shape and self.size == 1:
            return convert(np.asarray(n.operands[0].payload).astype(n.dtype).item())
        return real(self)

    return read


def scalar_observation_stale() -> MinilazyAdapter:
    """Scalar observations of a pending tensor skip the barrier.

    ``item()``, ``float()``, ``int()``, ``bool()`` read the value the tensor's first input last
    had.
    """
    converts: dict[str, Callable[[Any], Any]] = {
        "item": lambda v: v, "__float__": float, "__int__": int, "__bool__": bool}
    for name, convert in converts.items():
        _set(Tensor, name, _stale(name, convert))
    return cpu()


def autocut_drops_pending() -> MinilazyAdapter:
    """The auto-cut materialises everything but the tensor whose op triggered it.

    Which it marks materialised with zeros.
    """
    real = barrier.after_record

    def after_record(t: Tensor) -> None:
        if state.current_policy().eager:
            real(t)
            return
        zeros = np.zeros(t.shape, t.dtype)
        t._node = data_leaf(ml.asarray(zeros, device=t.device)._node.payload, t.shape, t.dtype)
        barrier.mark_step("auto")

    _set(barrier, "after_record", after_record)
    return cpu()


def fallback_syncs_all() -> MinilazyAdapter:
    """A host fallback's barrier materialises every live tensor, not only the op's inputs."""
    real = state.current_policy  # the one the fallback module imported
    _set(fallback, "current_policy", lambda: state.replaced(real(), {"observe_all": True}))
    return cpu()


def fallback_counted_twice() -> MinilazyAdapter:
    """A host fallback of a pending input counts twice: its barrier counts as one too."""
    real = barrier.materialise  # as the fallback module imported it

    def materialise(tensors: Sequence[Tensor], cause: str) -> None:
        COUNTERS.fallbacks += 1
        real(tensors, cause)

    _set(fallback, "materialise", materialise)
    return cpu()


def _set_table(table: Any, op: Op, rule: Any) -> None:
    table[op] = rule  # the tables are dicts under their read-only Mapping type
