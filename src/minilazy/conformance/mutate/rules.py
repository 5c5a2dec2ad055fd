"""Mutants of minilazy's engine for the rules the first catalogue left without one.

Each is one realistic slip that breaks one rule (named in its :data:`~.CATALOGUE` entry), so that
every rule's tests are shown able to fail: a barrier that runs a program per tensor, a registry
that keeps dead tensors alive, a cache that forgets, keys salted per process, data baked into
the program, a sort that is not stable, an observation of the first element of many.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import jax.numpy as jnp
import numpy as np

import minilazy as ml
from minilazy.api import searching
from minilazy.api import tensor as surface
from minilazy.api.tensor import Tensor
from minilazy.autodiff import tape as autodiff
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.conformance.mutate.engine import _set, _set_table
from minilazy.conformance.mutate.seams import restructured
from minilazy.conformance.registry import ops
from minilazy.core import barrier, lowering, state
from minilazy.core.cache import CACHE
from minilazy.core.ir import Node, Op
from minilazy.ops import sort as sort_family
from minilazy.ops.sort import Sort


# -- barriers ------------------------------------------------------------------------------------
def program_per_tensor() -> MinilazyAdapter:
    """``mark_step`` runs one program per live tensor instead of one for them all."""
    def mark_step(cause: str = "mark_step") -> None:
        for t in state.LIVE.tensors():
            barrier.sync(t)

    _set(barrier, "mark_step", mark_step)
    _set(ml, "mark_step", mark_step)
    return cpu()


def keeps_dead_tensors() -> MinilazyAdapter:
    """The registry of live tensors holds strong references: ``mark_step`` computes dead ones."""
    real = state.Registry.add
    kept: list[Tensor] = []

    def add(self: state.Registry, t: Tensor) -> None:
        kept.append(t)
        real(self, t)

    _set(state.Registry, "add", add)
    return cpu()


def sync_first_only() -> MinilazyAdapter:
    """``sync(a, b, ...)`` materialises only its first tensor."""
    real = barrier.sync

    def sync(*tensors: Tensor) -> None:
        real(*tensors[:1])

    _set(barrier, "sync", sync)
    _set(ml, "sync", sync)
    return cpu()


def eager_is_lazy() -> MinilazyAdapter:
    """``ml.eager()`` changes nothing: its block records and runs at the next barrier."""
    _set(ml, "eager", lambda: contextlib.nullcontext(state.current_policy()))
    _set(state, "eager", lambda: contextlib.nullcontext(state.current_policy()))
    return cpu()


def eager_by_default() -> MinilazyAdapter:
    """Every op runs as it is recorded (``ml.eager()`` always on): nothing is lazy."""
    state.ENGINE.default = state.replaced(state.ENGINE.default, {"eager": True})
    return cpu()


def observing_shape_runs() -> MinilazyAdapter:
    """Reading ``.shape`` of a pending tensor materialises it first (a metadata barrier)."""
    def shape(self: Tensor) -> tuple[int, ...]:
        if self.is_pending:
            barrier.sync(self)
        return self._node.shape

    _set(Tensor, "shape", property(shape))
    return cpu()


# -- the cache -----------------------------------------------------------------------------------
def never_donates() -> MinilazyAdapter:
    """No input buffer is ever donated: an update in place allocates a new buffer each step."""
    _set(barrier.PARTS, "donor", None)  # (core's own rule: nothing donated)
    return cpu()


def cache_of_one() -> MinilazyAdapter:
    """The compile cache holds one program: alternating two graphs compiles every time."""
    CACHE.capacity = 1
    return cpu()


def key_salted_per_process() -> MinilazyAdapter:
    """The key hashes the op names with Python's ``hash`` of a ``str``: salted per process."""
    return restructured(lambda c: (*c.structure, tuple(n.op.value for n in c.order)))


def key_includes_buffers() -> MinilazyAdapter:
    """The key includes which buffers the program reads: new data compiles a new program."""
    return restructured(lambda c: (*c.structure, tuple(id(p.payload) for p in c.params)))


# -- lowering ------------------------------------------------------------------------------------
def data_baked() -> MinilazyAdapter:
    """Device data are lowered as constants of the program, not as its parameters."""
    real = lowering.LOWER[Op.DATA]

    def baked(xs: Sequence[Any], n: Node) -> Any:
        return jnp.asarray(np.asarray(n.payload)) if n.op is Op.DATA else real(xs, n)

    _set_table(lowering.LOWER, Op.DATA, baked)
    return cpu()


def no_64_bits() -> MinilazyAdapter:
    """Programs are lowered and run without JAX's 64-bit mode: 64-bit values become 32-bit."""
    _set(lowering, "_X64", SimpleNamespace(get_local=lambda: False, set_local=lambda v: None))
    return cpu()


def negative_indices_clamped() -> MinilazyAdapter:
    """Negative entries of an integer index array read element 0, not from the end."""
    real = lowering.LOWER[Op.GETITEM]

    def getitem(xs: Sequence[Any], n: Node) -> Any:
        return real([xs[0], *(jnp.maximum(a, 0) for a in xs[1:])], n)

    _set_table(lowering.LOWER, Op.GETITEM, getitem)
    return cpu()


def setitem_rounds_twice() -> MinilazyAdapter:
    """A float64 value written into float16 goes through float32 first: rounded twice."""
    real = lowering.LOWER[Op.SETITEM]

    def setitem(xs: Sequence[Any], n: Node) -> Any:
        x, v, *rest = xs
        if x.dtype == jnp.float16 and v.dtype == jnp.float64:
            v = v.astype(jnp.float32)
        return real([x, v, *rest], n)

    _set_table(lowering.LOWER, Op.SETITEM, setitem)
    return cpu()


def sort_unstable() -> MinilazyAdapter:
    """``argsort(descending=True)`` is the ascending order reversed: ties come out backwards."""
    def evaluate(xp: Any, xs: Sequence[Any], n: Node) -> Any:
        match n.attrs:
            case Sort(axis, True):
                ascending = Node(n.op, n.operands, Sort(axis, False), n.shape, n.dtype)
                return xp.flip(sort_family.evaluate(xp, xs, ascending), axis=axis)
        return sort_family.evaluate(xp, xs, n)

    _set_table(lowering.LOWER, Op.ARGSORT, lowering.with_namespace(evaluate))
    return cpu()


# -- autodiff ------------------------------------------------------------------------------------
def grad_runs_its_result() -> MinilazyAdapter:
    """``ml.grad``'s result is materialised before it is returned (a barrier per call).

    So a gradient is data: nothing records through it (no gradient of a gradient).
    """
    real = autodiff.value_and_grad

    def value_and_grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0
                       ) -> Callable[..., Any]:
        vg = real(f, argnums)

        def run(*args: Any) -> Any:
            value, grads = vg(*args)
            leaves = [g for g in (grads if isinstance(grads, tuple) else (grads,))
                      if isinstance(g, Tensor)]
            barrier.sync(value, *leaves)
            for g in leaves:
                g._node = ml.asarray(g.numpy(), device=g.device)._node
            return value, grads

        return run

    _set(autodiff, "value_and_grad", value_and_grad)
    _set(ml, "value_and_grad", value_and_grad)
    _set(ml, "grad", lambda f, argnums=0: lambda *a: value_and_grad(f, argnums)(*a)[1])
    return cpu()


def pytree_rebuilt_loosely() -> MinilazyAdapter:
    """Gradients of structured arguments come back in a looser structure.

    A dict's values are handed out in sorted-key order (its leaves were taken in insertion
    order), and a tuple comes back as a list.
    """
    real = autodiff._flatten

    def flatten(tree: Any, where: str) -> tuple[list[Tensor], Callable[[list[Tensor]], Any]]:
        leaves, rebuild = real(tree, where)
        if isinstance(tree, dict):
            return leaves, lambda flat: dict(zip(sorted(tree), rebuild(flat).values()))
        if isinstance(tree, tuple):
            return leaves, lambda flat: list(rebuild(flat))
        return leaves, rebuild

    _set(autodiff, "_flatten", flatten)
    return cpu()


def grad_sums_its_result() -> MinilazyAdapter:
    """``grad(f)`` of an ``f`` whose result is not 0-d differentiates its sum, with no error."""
    real = autodiff.value_and_grad

    def value_and_grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0
                       ) -> Callable[..., Any]:
        def summed(*args: Any) -> Tensor:
            out = f(*args)
            return ml.sum(out) if isinstance(out, Tensor) and out.ndim else out

        return real(summed, argnums)

    _set(autodiff, "value_and_grad", value_and_grad)
    _set(ml, "value_and_grad", value_and_grad)
    _set(ml, "grad", lambda f, argnums=0: lambda *a: value_and_grad(f, argnums)(*a)[1])
    return cpu()


def autocut_counts_dead_nodes() -> MinilazyAdapter:
    """The auto-cut counts every node recorded since the last barrier, dead ones too."""
    _set(barrier, "live_pending_nodes", lambda live, limit: limit)
    return cpu()


# -- shapes: corners refused -------------------------------------------------------------------
class _Refusing(MinilazyAdapter):
    """minilazy, but its shape functions refuse operands ``refused`` says no to."""

    def refused(self, x: Tensor) -> bool:
        raise NotImplementedError

    def apply(self, op: str, *args: Any, **kwargs: Any) -> Any:
        spec = ops()[op]
        tensors = [a for a in (args[0] if op in ("concat", "stack") else args[:1])
                   if isinstance(a, Tensor)] if args else []
        if spec.kind == "shape" and any(self.refused(t) for t in tensors):
            raise ValueError(f"{op}: operand shape not supported")
        return super().apply(op, *args, **kwargs)


class _NoZeroD(_Refusing):
    def refused(self, x: Tensor) -> bool:
        return x.ndim == 0


class _NoEmpty(_Refusing):
    def refused(self, x: Tensor) -> bool:
        return x.size == 0


def zero_d_refused() -> MinilazyAdapter:
    """Shape functions refuse 0-d operands (``flip``, ``stack``, ``concat(axis=None)``...)."""
    return _NoZeroD("cpu")


def empty_refused() -> MinilazyAdapter:
    """Shape functions refuse operands with no elements (``reshape`` of a (0, 3) array...)."""
    return _NoEmpty("cpu")


def transpose_of_vectors() -> MinilazyAdapter:
    """``matrix_transpose`` of a 0-d or 1-d tensor returns it (NumPy refuses: no matrix)."""
    real = ml.matrix_transpose
    _set(ml, "matrix_transpose", lambda x: x if x.ndim < 2 else real(x))
    return cpu()


def transpose_of_all_axes() -> MinilazyAdapter:
    """``matrix_transpose`` reverses every axis (NumPy's ``x.T``), not the last two."""
    _set(ml, "matrix_transpose", lambda x: ml.permute_dims(x, tuple(range(x.ndim))[::-1]))
    return cpu()


# -- host fallbacks ------------------------------------------------------------------------------
def _unique_all(change: Callable[[Any, Any], Any]) -> MinilazyAdapter:
    """The ``unique_*`` functions, with NumPy's ``unique_all`` result changed by ``change``."""
    class NumPy:  # the module's view of NumPy: unique_all changed, the rest NumPy's
        def __getattr__(self, name: str) -> Any:
            return getattr(np, name)

        @staticmethod
        def unique_all(x: Any) -> Any:
            return change(x, np.unique_all(x))

    _set(searching, "np", NumPy())
    return cpu()


def unique_nans_equal() -> MinilazyAdapter:
    """The ``unique_*`` functions count every NaN as one value (``np.unique``'s default)."""
    def merged(x: Any, r: Any) -> Any:
        values, indices, inverse, counts = np.unique(
            x, return_index=True, return_inverse=True, return_counts=True, equal_nan=True)
        return SimpleNamespace(values=values, indices=indices, counts=counts,
                               inverse_indices=inverse.reshape(np.shape(x)))

    return _unique_all(merged)


def unique_first_seen() -> MinilazyAdapter:
    """The ``unique_*`` functions give the values in the order first met, not sorted."""
    real = searching._unique

    def unique(op: str, x: Any) -> Any:
        t, values, indices, inverse, counts = real(op, x)
        order = np.argsort(indices, kind="stable")
        return (t, ml.take(values, ml.asarray(order, device=values.device)), indices[order],
                np.argsort(order)[inverse], counts[order])

    _set(searching, "_unique", unique)
    return cpu()


# -- errors --------------------------------------------------------------------------------------
def first_element_observed() -> MinilazyAdapter:
    """``float()``, ``int()``, ``bool()`` of a tensor of many elements read its first one."""
    for name, convert in (("__float__", float), ("__int__", int), ("__bool__", bool),
                          ("__index__", int)):
        _set(Tensor, name, lambda self, c=convert: c(self.numpy().flat[0]))
    return cpu()


def devices_mixed_silently() -> MinilazyAdapter:
    """A binary op on tensors of two devices runs on the first one's, with no error."""
    _set(surface, "_same_device", lambda op, a, b: a._device)
    return cpu()


def failed_group_fails_all() -> MinilazyAdapter:
    """A program that fails fails every tensor of its group (no search for the one at fault)."""
    def settle(group: Sequence[Tensor], device: ml.Device, donate: bool, cause: str
               ) -> Exception | None:
        part = [t for t in group if t._node.op is not Op.DATA]
        try:
            if part:
                barrier._run(part, device, donate, cause)
        except barrier.ProgramFailed as failed:
            for t in part:
                barrier._fail(t, failed.error)
            return failed.error
        return None

    _set(barrier, "_settle", settle)
    return cpu()
