"""Mutants for the corners of the rules: the spec tests the first catalogue never failed.

The adequacy table (:mod:`.adequacy`) listed spec tests that no mutant failed. Each mutant here
is one realistic slip at a corner one of those tests exists for: an in-place operator that
forgets to cast back, a key that sums its nodes (losing the wiring), NaN-skipping reductions,
a mask read in column-major order, an ellipsis of no axes dropped, a gradient taken with
respect to an argument after ``f`` rebound it.

Example:
    >>> callable(inplace_uncast)
    True
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import jax.numpy as jnp
import numpy as np

import minilazy as ml
from minilazy.api import indexing, scalars, searching
from minilazy.api import tensor as surface
from minilazy.api.tensor import Tensor
from minilazy.autodiff import tape as autodiff
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.conformance.mutate.engine import _set, _set_table
from minilazy.conformance.mutate.seams import restructured
from minilazy.core import barrier, dtypes, infer, lowering, state
from minilazy.core import cut as cutting
from minilazy.core.attrs import Reduce, mismatch
from minilazy.core.dtypes import DType
from minilazy.core.ir import Node, Op
from minilazy.ops.elementwise import COMPARISONS
from minilazy.ops.index_keys import Gap, Take

_BINARY = {"__iadd__": "__add__", "__isub__": "__sub__", "__imul__": "__mul__",
           "__itruediv__": "__truediv__", "__ifloordiv__": "__floordiv__",
           "__imod__": "__mod__", "__ipow__": "__pow__", "__iand__": "__and__",
           "__ior__": "__or__", "__ixor__": "__xor__", "__ilshift__": "__lshift__",
           "__irshift__": "__rshift__"}


# -- in-place operators ---------------------------------------------------------------------------
def inplace_uncast() -> MinilazyAdapter:
    """``x op= y`` rebinds ``x`` to ``x op y`` as it comes: no same-kind check, no cast back.

    ``int8 += int16`` then gives int16, ``int8 /= 2`` float64, where NumPy keeps int8 or raises.
    """
    def rebind(self: Tensor, op: Op, result: Tensor) -> Tensor:
        if result.shape != self.shape:
            raise ValueError(f"{op.value} (in place): the result does not fit the target")
        self._node = result._node
        return self

    _set(Tensor, "_rebind", rebind)
    return cpu()


def inplace_operands_swapped() -> MinilazyAdapter:
    """``x op= y`` computes ``y op x`` (the reflected operator's order): ``x -= y`` is ``y - x``."""
    for name, binary in _BINARY.items():
        reflected = binary.replace("__", "__r", 1)
        _set(Tensor, name, lambda self, o, r=reflected: self._rebind(
            Op.ADD, getattr(self, r)(o)))
    _set(Tensor, "__imatmul__", lambda self, o: self._rebind(Op.MATMUL, self.__rmatmul__(o)))
    return cpu()


# -- autodiff --------------------------------------------------------------------------------------
def grad_follows_rebound_arguments() -> MinilazyAdapter:
    """``grad`` differentiates with respect to what an argument names *after* ``f`` ran.

    ``x *= 2`` inside ``f`` rebinds the argument: the gradient is then taken at the doubled
    value's node, as if the update were an input.
    """
    watched: list[Tensor] = []
    real_watch, real_backward = autodiff._watch, autodiff._backward

    def watch(t: Tensor, where: str) -> Tensor:
        fresh = real_watch(t, where)
        watched.append(fresh)
        return fresh

    def backward(out: Tensor, wrt: Sequence[Node], origins: dict[Node, Node]) -> list[Tensor]:
        now = [t._node for t in watched[-len(wrt):]] if len(watched) >= len(wrt) else wrt
        watched.clear()
        return real_backward(out, now, origins)

    _set(autodiff, "_watch", watch)
    _set(autodiff, "_backward", backward)
    return cpu()


# -- reductions ------------------------------------------------------------------------------
def reductions_skip_nan() -> MinilazyAdapter:
    """``sum``, ``prod``, ``max``, ``min`` lower to NumPy's NaN-skipping twins (``nansum``...)."""
    def skipping(fn: Callable[..., Any]) -> Callable[[Sequence[Any], Node], Any]:
        def rule(xs: Sequence[Any], n: Node) -> Any:
            match n.attrs:
                case Reduce(axes, keepdims):
                    x = lowering.astype(xs[0], n.dtype)
                    return lowering.astype(fn(x, axis=axes, keepdims=keepdims), n.dtype)
            raise mismatch(n.op, n.attrs)

        return rule

    for op, fn in ((Op.SUM, jnp.nansum), (Op.PROD, jnp.nanprod), (Op.MAX, jnp.nanmax),
                   (Op.MIN, jnp.nanmin)):
        _set_table(lowering.LOWER, op, skipping(fn))
    return cpu()


# -- the cache key ---------------------------------------------------------------------------------
def key_sums_its_nodes() -> MinilazyAdapter:
    """The key sums its nodes' descriptions (a commutative hash): the wiring is lost.

    Which operand each op reads, and in which order the nodes come, no longer count.
    ``x * y + y`` and ``x * x + y`` (parameters of one shape and dtype) then share a program.
    """
    return restructured(lambda c: (sum(n.digest for n in c.order), (), *c.structure[2:]))


def key_includes_scalar_values() -> MinilazyAdapter:
    """The key hashes each Python scalar's value: a new learning rate is a new program."""
    def structure(c: cutting.Cut) -> tuple[Any, ...]:
        values = tuple(repr(n.payload) for n in c.order if n.op is Op.SCALAR)
        return (*c.structure, values)

    return restructured(structure)


# -- indexing --------------------------------------------------------------------------------------
def ellipsis_of_no_axes_dropped() -> MinilazyAdapter:
    """An ``...`` that stands for no axes is dropped before the index arrays are placed.

    ``x[:, [0, 2], ..., 0]`` of a 3-D ``x`` then reads as ``x[:, [0, 2], 0]``: its array axes
    stay in place, where NumPy moves separated ones first.
    """
    real = indexing.index_spec

    def index_spec(shape: Any, key: Sequence[Any], *rest: Any) -> Any:
        used = sum(map(indexing._consumed, key))
        if used == len(shape):
            key = [k for k in key if k is not Ellipsis]
        return real(shape, key, *rest)

    _set(surface, "index_spec", index_spec)
    return cpu()


def empty_index_list_selects_all() -> MinilazyAdapter:
    """``x[[]]`` is read as no index (``if not key``): all of ``x``, not none of it."""
    real = indexing.index_spec

    def index_spec(shape: Any, key: Sequence[Any], *rest: Any) -> Any:
        key = [slice(None) if isinstance(k, np.ndarray) and k.size == 0 and k.ndim == 1
               else k for k in key]
        return real(shape, key, *rest)

    _set(surface, "index_spec", index_spec)
    return cpu()


def adjacent_index_arrays_moved_first() -> MinilazyAdapter:
    """Index arrays next to each other are taken as separated: their axes always go first."""
    real = indexing.index_spec
    gap = Gap()

    def index_spec(shape: Any, key: Sequence[Any], *rest: Any) -> Any:
        spec, arrays = real(shape, key, *rest)
        entries = list(spec.entries)
        takes = [i for i, e in enumerate(entries) if isinstance(e, Take)]
        if len(takes) > 1 and gap not in entries and takes[0] > 0:
            entries.insert(takes[0] + 1, gap)
        return type(spec)(tuple(entries)), arrays

    _set(surface, "index_spec", index_spec)
    return cpu()


def setitem_forgets_to_rebind() -> MinilazyAdapter:
    """``x[key] = v`` records the update but leaves ``x`` naming its old value."""
    real = Tensor.__setitem__

    def setitem(self: Tensor, key: Any, value: Any) -> None:
        real(Tensor(self._node, self._device), key, value)  # a fresh handle is rebound

    _set(Tensor, "__setitem__", setitem)
    return cpu()


def setitem_squeezes_values() -> MinilazyAdapter:
    """``x[i, j] = v`` takes a one-element ``v`` of any shape as a scalar (NumPy refuses it)."""
    real = Tensor.__setitem__

    def setitem(self: Tensor, key: Any, value: Any) -> None:
        if isinstance(value, Tensor) and value.size == 1:
            value = ml.reshape(value, ())
        real(self, key, value)

    _set(Tensor, "__setitem__", setitem)
    return cpu()


# -- host fallbacks --------------------------------------------------------------------------------
def nonzero_column_major() -> MinilazyAdapter:
    """The host fallback's ``nonzero`` lists a matrix's indices column by column (Fortran order).

    So ``x[mask]`` gathers, and ``x[mask] = v`` scatters, in the wrong order.
    """
    def nonzero(a: Any) -> tuple[Any, ...]:
        a = np.asarray(a)
        return np.nonzero(a.T)[::-1] if a.ndim > 1 else np.nonzero(a)

    shim = SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    shim.nonzero = nonzero
    for module in (indexing, searching):
        _set(module, "np", shim)
    return cpu()


def mask_assignment_falls_back() -> MinilazyAdapter:
    """``x[mask] = v`` always goes through the mask's True positions (a host fallback).

    Its result has ``x``'s shape, so it could have been recorded as ``where(mask, v, x)``.
    """
    _set(surface, "fill_mask", lambda *args: None)
    return cpu()


def unique_drops_last() -> MinilazyAdapter:
    """The ``unique_*`` functions never emit their last run of equal values (an off-by-one)."""
    real = searching._unique

    def unique(op: str, x: Any) -> Any:
        t, values, indices, inverse, counts = real(op, x)
        if values.shape[0] < 2:
            return t, values, indices, inverse, counts
        n = values.shape[0] - 1
        return t, values[:n], indices[:n], np.minimum(inverse, n - 1), counts[:n]

    _set(searching, "_unique", unique)
    return cpu()


# -- promotion and Python scalars ------------------------------------------------------------
def _signature(change: Any) -> MinilazyAdapter:
    """Minilazy whose type loops are ``change(types, loop)`` of the real ones."""
    real = infer.signature

    @functools.lru_cache(maxsize=4096)
    def signature(o: Op, *types: Any) -> tuple[DType, ...]:
        return tuple(change(types, real(o, *types)))

    for module in (infer, lowering, scalars):
        _set(module, "signature", signature)
    return cpu()


def default_float_is_float32() -> MinilazyAdapter:
    """Integers meeting a Python float, or divided, give float32 (JAX's default without x64).

    ``int16 + 2.5`` and ``int8 / 2`` are float64 in NumPy.
    """
    def change(types: tuple[Any, ...], loop: tuple[DType, ...]) -> tuple[DType, ...]:
        if loop[-1] == dtypes.float64 and not any(  # (np.dtype("float64") == float holds)
                isinstance(t, np.dtype) and t == dtypes.float64 for t in types):
            return tuple(dtypes.float32 if d == dtypes.float64 else d for d in loop)
        return loop

    return _signature(change)


def int_float_to_float64() -> MinilazyAdapter:
    """An integer array meeting a float array gives float64, whatever their sizes.

    NumPy: ``float16`` with ``int8`` is float16 (the float kind wins, at the float's size when
    it holds the integer's values).
    """
    def change(types: tuple[Any, ...], loop: tuple[DType, ...]) -> tuple[DType, ...]:
        kinds = {t.kind for t in types if isinstance(t, np.dtype)}
        if {"f"} < kinds <= {"f", "i", "u"} and "b" not in kinds:
            return tuple(dtypes.float64 if d.kind in "fiu" else d for d in loop)
        return loop

    return _signature(change)


def _weak(change: Any) -> MinilazyAdapter:
    real = scalars.weak_scalar

    def weak_scalar(o: Op, value: Any, other: DType, scalar_first: bool) -> Node:
        return change(o, value, other) or real(o, value, other, scalar_first)

    _set(surface, "weak_scalar", weak_scalar)
    return cpu()


def comparisons_refuse_out_of_range() -> MinilazyAdapter:
    """``uint8_array < 1000`` raises ``OverflowError`` (NumPy 2 compares exactly).

    NEP 50's range check for arithmetic, applied to comparisons too.
    """
    def change(o: Op, value: Any, other: DType) -> None:
        if o in COMPARISONS and type(value) is int and other in dtypes.INTEGER:
            scalars.check_scalar(value, other)

    return _weak(change)


def bools_are_ints() -> MinilazyAdapter:
    """A Python bool operand is a strong int64 (``True`` is an ``int`` in Python).

    ``uint8_array - True`` then gives int64, where NumPy keeps uint8.
    """
    return _weak(lambda o, value, other: scalars.scalar(int(value), dtypes.int64)
                 if type(value) is bool and other != dtypes.bool_ else None)


# -- observations and modes -----------------------------------------------------------------------
def bool_is_non_empty() -> MinilazyAdapter:
    """``bool(t)`` says whether ``t`` has elements (a container's truth), not its value."""
    _set(Tensor, "__bool__", lambda self: self.size > 0)
    return cpu()


def array_observation_unsynced() -> MinilazyAdapter:
    """``numpy()`` and ``np.asarray(t)`` of a pending tensor skip the barrier.

    They read a fresh buffer of the right shape and dtype, never written (zeros here).
    """
    real_numpy, real_array = Tensor.numpy, Tensor.__array__

    def numpy(self: Tensor) -> Any:
        return np.zeros(self.shape, self.dtype) if self.is_pending else real_numpy(self)

    def array(self: Tensor, dtype: Any = None, copy: Any = None) -> Any:
        return np.zeros(self.shape, dtype or self.dtype) if self.is_pending else real_array(
            self, dtype, copy)

    _set(Tensor, "numpy", numpy)
    _set(Tensor, "__array__", array)
    return cpu()


def policy_exit_restores_the_default() -> MinilazyAdapter:
    """A ``ml.policy(...)`` block ends by restoring the default policy, not the outer block's.

    One saved slot instead of a stack: an inner ``ml.eager()`` ends the outer one too.
    """
    @contextlib.contextmanager
    def policy(p: state.BarrierPolicy | None = None, **changes: Any
               ) -> Iterator[state.BarrierPolicy]:
        new = state.replaced(p, changes)
        state.OVERRIDE.set(new)
        try:
            yield new
        finally:
            state.OVERRIDE.set(None)

    _set(state, "policy", policy)
    _set(ml, "policy", policy)
    return cpu()


# -- auto-cuts ------------------------------------------------------------------------------------
def autocut_limit_grows() -> MinilazyAdapter:
    """Each auto-cut raises the limit by a tenth (an adaptive cut size).

    No two cuts of a loop then hold the same ops: every cut compiles a program of its own.
    """
    # as the barrier imported them
    real, cut = state.current_policy, barrier._attempt
    grown = [1.0]

    def policy() -> state.BarrierPolicy:
        p = real()
        return dataclasses.replace(p, max_pending_nodes=int(p.max_pending_nodes * grown[0]))

    def materialise(tensors: Sequence[Any], cause: str, donate: bool) -> Exception | None:
        if cause == "auto":
            grown[0] *= 1.1
        failure: Exception | None = cut(tensors, cause, donate)
        return failure

    _set(barrier, "current_policy", policy)
    _set(barrier, "_attempt", materialise)
    return cpu()
