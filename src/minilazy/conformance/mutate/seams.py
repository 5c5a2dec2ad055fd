"""Mutants at the engine's seams: the bugs an adversarial round found where no rule looked.

Like :mod:`.engine`, each factory patches one function of minilazy in this process and returns
the ordinary minilazy adapter. These are the fresh bugs that passed the whole oracle once (a
key missing one attribute of one op family, a policy block that leaks on an exception, a VJP
wrong for one option) and the silent wrong values of the adversarial round (gradients stopped
at a barrier, host memory aliased by a tensor): each now fails the rule named in the catalogue.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import numpy as np

import minilazy as ml
from minilazy.autodiff import tape as autodiff
from minilazy.autodiff import vjps
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.conformance.mutate.engine import _set, _set_table
from minilazy.core import barrier, lowering, runtime, state
from minilazy.core import cut as cutting
from minilazy.core.ir import Node, Op
from minilazy.core.state import BarrierPolicy
from minilazy.introspect import printers
from minilazy.ops.fft import Fft
from minilazy.ops.sort import Sort


def restructured(change: Callable[[cutting.Cut], tuple[Any, ...]]) -> MinilazyAdapter:
    """Minilazy whose cuts carry the structure ``change`` makes of them, keyed by its hash.

    Example:
        >>> restructured(lambda c: c.structure).name
        'minilazy-cpu'
    """
    real = cutting.cut

    def cut(roots: Sequence[Node], device: ml.Device) -> cutting.Cut:
        c = real(roots, device)
        structure = change(c)
        return dataclasses.replace(c, key=hash(structure), structure=structure)

    for module in (barrier, printers):
        _set(module, "cut", cut)
    return cpu()


def key_ignores_fft_norm() -> MinilazyAdapter:
    """The key and the structure check leave out one field of one op family: an FFT's ``norm``.

    A hit then runs the program of another scaling.
    """
    def digest(n: Node) -> int:
        if n.op is Op.FFT and isinstance(n.attrs, Fft):
            return hash((n.op.value, n.attrs._replace(norm=0), n.shape, str(n.dtype)))
        return n.digest

    return restructured(lambda c: (tuple(map(digest, c.order)), *c.structure[1:]))


def policy_leaks_on_exception() -> MinilazyAdapter:
    """``ml.policy(...)`` restores the outer policy only when its block ends normally.

    So ``ml.eager()`` (and a refusal of host fallbacks) outlives a block left by an exception.
    """
    @contextlib.contextmanager
    def policy(p: BarrierPolicy | None = None, **changes: Any) -> Iterator[BarrierPolicy]:
        new = state.replaced(p, changes)
        token = state.OVERRIDE.set(new)
        yield new
        state.OVERRIDE.reset(token)  # (not in a finally: skipped by an exception)

    _set(state, "policy", policy)
    _set(ml, "policy", policy)
    return cpu()


def grad_stops_at_barriers() -> MinilazyAdapter:
    """The backward pass ignores what barriers inside ``f`` computed: gradients stop there."""
    real = autodiff._backward

    def backward(out: ml.Tensor, wrt: Sequence[Node], origins: dict[Node, Node]
                 ) -> list[ml.Tensor]:
        return real(out, wrt, {})

    _set(autodiff, "_backward", backward)
    return cpu()


def vjp_sort_descending_ascending() -> MinilazyAdapter:
    """The VJP of ``sort(descending=True)`` scatters through the ascending permutation."""
    real = vjps.VJP[Op.SORT]

    def rule(g: ml.Tensor, y: ml.Tensor, xs: tuple[ml.Tensor, ...], n: Node) -> Any:
        if isinstance(n.attrs, Sort):
            n = Node(n.op, n.operands, n.attrs._replace(descending=False), n.shape, n.dtype)
        return real(g, y, xs, n)

    table = dict(vjps.VJP)
    table[Op.SORT] = rule
    _set(vjps, "VJP", table)
    return cpu()


def host_data_aliased() -> MinilazyAdapter:
    """Host arrays go to the device without a copy of their own: an aligned one is adopted.

    A later write to the array then changes the tensor made from it.
    """
    real = runtime.put

    def put(value: Any, target: Any) -> Any:
        if isinstance(value, np.ndarray) and value.ctypes.data % 64 == 0:
            with jax.enable_x64(True):
                return jax.device_put(value, target)
        return real(value, target)

    _set(runtime, "put", put)
    return cpu()


def pack_column_major() -> MinilazyAdapter:
    """``pack`` lays each tensor out column by column (Fortran's order), not row by row.

    ``unpack`` still reads rows: a round trip scrambles every weight of two or more axes.
    """
    _set_table(lowering.LOWER, Op.PACK, lambda xs, n: jax.numpy.concatenate(
        [jax.numpy.ravel(x, order="F") for x in xs]))
    return cpu()


def stop_gradient_passes_gradients() -> MinilazyAdapter:
    """``stop_gradient``'s VJP passes the cotangent on, as an identity would."""
    table = dict(vjps.VJP)
    table[Op.STOP_GRADIENT] = lambda g, y, xs, n: (g,)
    _set(vjps, "VJP", table)
    return cpu()
