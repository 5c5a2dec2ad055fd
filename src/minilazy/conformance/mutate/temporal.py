"""Mutants of what decides a program besides its structure, and of capabilities without rules.

Issue 42's fresh mutants, each of a kind no catalogue entry had. Like :mod:`.engine`, each factory
patches minilazy in this process and returns the ordinary adapter. A reuse keyed by too little (the
donation mask left out of the compile cache's key or the disk's, a plan that ignores wiring, a weak
scalar's dtype remembered without its kind, a tape holding a scalar's value), a mode block made
from the default, a gradient wrong for the complex-to-real FFTs, a setitem value's leading ones
dropped once, an optimizer or a random key off its formula. Each fails the rule named in its
docstring (``oracle/temporal.py``'s rows, ``test_optim.py``, ``test_random.py``,
``test_modes.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any

import jax.numpy as jnp

import minilazy as ml
from minilazy import fft as mlfft
from minilazy import optim, random
from minilazy.api import scalars
from minilazy.api.tensor import Tensor
from minilazy.autodiff import vjps
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.conformance.mutate.engine import _set, _set_table
from minilazy.core import cut as cutting
from minilazy.core import lowering, state
from minilazy.core.attrs import Constant
from minilazy.core.cache import CompileCache
from minilazy.core.ir import Node, Op
from minilazy.core.runtime import Compiled
from minilazy.ops.fft import Fft, Kind, Norm
from minilazy.ops.index_keys import Index, index_shape
from minilazy.ops.linalg import Fn, Linalg
from minilazy.parts import plans


def structure_by_digests() -> MinilazyAdapter:
    """A cut's structure, and a plan's check, are the nodes' digests: hashes (LZ-CACHE-009).

    ``hash(-1) == hash(-2)``, and ints wrap modulo 2**61 - 1: an empty array with an axis of 3
    and one with an axis of 3 + 2**61 - 1 share a program, and the second gets the first's shape.
    """
    _set(cutting, "_exact", attrgetter("digest"))
    _set(plans, "_exact", attrgetter("digest"))
    return cpu()


def cache_ignores_donation_mask() -> MinilazyAdapter:
    """The compile cache finds a program by the cut's key alone (LZ-CACHE-007).

    A structure first run by a donating ``mark_step`` is served, observed later over a live
    input, the donating program: it consumes the live buffer.
    """
    real = CompileCache.lookup

    def lookup(self: CompileCache, c: cutting.Cut, donated: tuple[bool, ...]) -> Compiled | None:
        found = real(self, c, donated)
        for (key, _), entry in list(self._entries.items()):
            if found is None and key == c.key and entry.structure == c.structure:
                found = entry
        return found

    _set(CompileCache, "lookup", lookup)
    return cpu()


def disk_ignores_donation_mask() -> MinilazyAdapter:
    """The persistent cache names a program without its donation mask (LZ-CACHE-008).

    Another process reaching the structure over a live input loads the donating program.
    """
    import importlib

    from minilazy.persist import diskcache
    found = importlib.util.find_spec("minilazy.persist.keys")  # (where the text is written)
    module = importlib.import_module("minilazy.persist.keys") if found else diskcache
    real = module.program_text
    _set(module, "program_text", lambda c, donated: real(c, ()))
    return cpu()


def plan_ignores_wiring() -> MinilazyAdapter:
    """A cut's plan accepts a graph of the same nodes without checking its other wiring.

    ``x * x + y`` after ``x * y + y`` was planned is cut as the planned graph (LZ-CACHE-007).
    """
    real = plans.Plan.follow

    def follow(self: plans.Plan, roots: Sequence[Node], device: ml.Device
               ) -> cutting.Cut | None:
        saved, self.extra = self.extra, ()  # (the operand references off the spanning tree)
        try:
            return real(self, roots, device)
        finally:
            self.extra = saved

    _set(plans.Plan, "follow", follow)
    return cpu()


def weak_dtype_ignores_kind() -> MinilazyAdapter:
    """A weak scalar's dtype is remembered per op and operand dtype, not per Python type.

    ``int8 + 2.5`` after ``int8 + 3`` is int8 (LZ-CACHE-007's scalar kinds).
    """
    class Kindless(dict[tuple[Any, ...], Any]):
        def get(self, key: tuple[Any, ...], default: Any = None) -> Any:
            return super().get((key[0], *key[2:]), default)

        def __setitem__(self, key: tuple[Any, ...], value: Any) -> None:
            super().__setitem__((key[0], *key[2:]), value)

    _set(scalars, "_WEAK", Kindless())
    return cpu()


def vjp_folds_scalar_exponent() -> MinilazyAdapter:
    """The VJP of ``x ** c`` reads the Python scalar ``c``'s value into the backward graph.

    The tape of that structure then replays the first value: the gradient of ``sum(x ** 3.0)``
    after ``sum(x ** 2.0)`` is ``2 x`` (LZ-AD-011).
    """
    real = vjps.VJP[Op.POW]

    def pow_vjp(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Any:
        a, b = xs
        if b._node.op is Op.SCALAR and isinstance(b._node.payload, float):
            c = b._node.payload
            return (g * (c * a ** (c - 1.0)), None)
        return real(g, y, xs, n)

    _set_table(vjps.VJP, Op.POW, pow_vjp)
    return cpu()


def inner_mode_from_the_default() -> MinilazyAdapter:
    """A mode block nested in another is made from the default policy, not the one in force.

    ``eager()`` inside ``no_fallback()`` allows host fallbacks again (LZ-BAR-013).
    """
    @contextlib.contextmanager
    def policy(p: state.BarrierPolicy | None = None, **changes: Any
               ) -> Iterator[state.BarrierPolicy]:
        new = state.replaced(p or state.BarrierPolicy(), changes)
        token = state.OVERRIDE.set(new)
        try:
            yield new
        finally:
            state.OVERRIDE.reset(token)

    _set(state, "policy", policy)
    _set(ml, "policy", policy)
    return cpu()


def vjp_irfft_undoubled() -> MinilazyAdapter:
    """The VJP of a complex-to-real FFT forgets that most frequencies stand for two (LZ-AD-001).

    ``irfft``, ``hfft`` and ``irfftn`` get half the gradient of every frequency but the first
    and the last.
    """
    real = vjps.VJP[Op.FFT]

    def fft_vjp(ct: Tensor, out: Tensor, xs: tuple[Tensor, ...], n: Node) -> Any:
        if isinstance(n.attrs, Fft) and Kind(n.attrs.kind) not in (Kind.FFT, Kind.IFFT,
                                                                   Kind.RFFT):
            axes, lengths = n.attrs.axes, n.attrs.lengths
            g = ml.conj(mlfft._record(Kind.RFFT, ct, axes[-1:], lengths[-1:],
                                      mlfft._SWAPPED[Norm(n.attrs.norm)]))
            if len(axes) > 1:
                g = mlfft._record(Kind.IFFT, g, axes[:-1], lengths[:-1], Norm(n.attrs.norm))
            return (mlfft._resize(g, axes, [xs[0].shape[a] for a in axes]),)
        return real(ct, out, xs, n)

    _set_table(vjps.VJP, Op.FFT, fft_vjp)
    return cpu()


def setitem_drops_one_leading_one() -> MinilazyAdapter:
    """The lowering of ``x[key] = v`` drops one leading length-1 axis of ``v`` (LZ-NUM-014).

    Not all: a value of shape ``(1, 1, 3)`` into a target of ``(3,)`` fails at the barrier.
    """
    real = lowering.LOWER[Op.SETITEM]

    def setitem(xs: Sequence[Any], n: Node) -> Any:
        x, v, *arrays = xs
        assert isinstance(n.attrs, Index)
        target = index_shape(x.shape, n.attrs, [a.shape for a in arrays])
        if v.ndim > len(target) and v.shape[0] == 1:  # (once: `while` in the engine)
            v = v.reshape(v.shape[1:])
        if v.ndim > len(target):  # a second leading 1: broadcasting refuses it
            jnp.broadcast_to(v, target)
        return real([x, v, *arrays], n)

    _set_table(lowering.LOWER, Op.SETITEM, setitem)
    _set_table(lowering.LOWER, Op.SCATTER_ADD, setitem)
    return cpu()


def adam_without_bias_correction() -> MinilazyAdapter:
    """Adam forgets its bias corrections (MLX's default): ``m / (sqrt(v) + eps)`` (LZ-OPT-001)."""
    real = optim.adam

    def adam(lr: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
             weight_decay: float = 0.0) -> optim.Optimizer:
        inner = real(lr, b1, b2, eps, weight_decay)

        def update(grads: Any, state: Any, params: Any) -> Any:
            late = {**state, "count": state["count"] * 0 + 2**20}  # b ** t is 0: no correction
            new, out = inner.update(grads, late, params)
            return new, {**out, "count": state["count"] + 1}

        return optim.Optimizer(inner.init, update)

    _set(optim, "adam", adam)
    return cpu()


def optim_rate_widens() -> MinilazyAdapter:
    """An update multiplies by the learning rate as a float64 tensor: float32 weights widen.

    (LZ-OPT-002: hyperparameters keep each group's dtype.)
    """
    real = optim._Numbers.__call__

    def call(self: Any, name: str, dtype: Any) -> Tensor:
        if name == "lr":
            return ml.asarray(self.numbers[name], dtype=ml.float64)
        return real(self, name, dtype)

    _set(optim._Numbers, "__call__", call)
    return cpu()


def optim_rate_baked() -> MinilazyAdapter:
    """The learning rate is baked into the program as a constant: a new rate recompiles.

    (LZ-OPT-003: no recompile across learning-rate values.)
    """
    real = optim._Numbers.__call__

    def call(self: Any, name: str, dtype: Any) -> Tensor:
        number = self.numbers[name]
        if name != "lr" or isinstance(number, Tensor):
            return real(self, name, dtype)
        baked = Node(Op.SCALAR, (), Constant(int(number * 2**30)), (), dtype, number)
        return Tensor(baked, ml.default_device())

    _set(optim._Numbers, "__call__", call)
    return cpu()


def split_keys_alike() -> MinilazyAdapter:
    """``split`` gives every new key the same value (LZ-RNG-003: split keys independent)."""
    real = random.split

    def split(key: Tensor, num: int = 2) -> Tensor:
        first = real(key, num)[0]
        return ml.stack([first] * num)

    _set(random, "split", split)
    return cpu()


def seed_recompiles() -> MinilazyAdapter:
    """A key is made as a recorded constant of its seed, not as data: a new seed recompiles.

    (LZ-RNG-004.)
    """
    real = random.key

    def key(seed: int, device: ml.Device | None = None) -> Tensor:
        made = real(0, device)
        for _ in range(seed % 5 + 1):  # a structure per seed
            made = made + 0
        return made + ml.asarray([seed >> 32, seed & 0xFFFFFFFF], dtype=ml.uint32, device=device)

    _set(random, "key", key)
    return cpu()


def key_draws_advance() -> MinilazyAdapter:
    """Drawing from a key advances a hidden counter: the same key gives new numbers each time.

    (LZ-RNG-002: the same key, the same numbers.)
    """
    real = random.uniform
    count = [0]

    def uniform(key: Tensor, shape: Any = (), dtype: Any = ml.float32, **kw: Any) -> Tensor:
        count[0] += 1
        return real(random.fold_in(key, count[0]), shape, dtype, **kw)

    _set(random, "uniform", uniform)
    return cpu()


def vjp_inv_untransposed() -> MinilazyAdapter:
    """The VJP of ``linalg.inv`` forgets the transposes: ``-(A⁻¹ G A⁻¹)`` (LZ-AD-001).

    Right for symmetric matrices only; no oracle test differentiated ``inv`` before.
    """
    real = vjps.VJP[Op.LINALG]

    def linalg_vjp(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node) -> Any:
        if isinstance(n.attrs, Linalg) and Fn(n.attrs.fn) is Fn.INV:
            return (-(y @ g @ y),)
        return real(g, y, xs, n)

    _set_table(vjps.VJP, Op.LINALG, linalg_vjp)
    return cpu()
