"""Mutants of one public function each: an argument read the way a hurried implementer would.

The ``slip`` family of :mod:`.families`: ``reshape`` in Fortran order, a permutation inverted,
``flip`` of every axis, ``squeeze`` of every unit axis, ``arange``'s length floored, ``clip``'s
bounds in the other order, ``where`` in its first operand's dtype, ``astype`` rounding where it
truncates... One entry of :data:`SLIPS` per site, named by the registry name of the function
(or ``<function>_<what>`` for a second slip of one function).

Example:
    >>> sorted(SLIPS)[:2]
    ['arange', 'arange_cast']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

import minilazy as ml
from minilazy.conformance.adapters.minilazy_adapter import MinilazyAdapter, cpu
from minilazy.conformance.mutate.engine import _set, _set_table
from minilazy.core import lowering
from minilazy.core.ir import Node, Op


# -- one function's own slip: an argument read the other way -----------------------------------
def _fields(n: Node) -> tuple[Any, ...]:
    return tuple(n.attrs)


def _lowered(op: Op, rule: Callable[[Any, Node], Any]) -> None:
    _set_table(lowering.LOWER, op, lambda xs, n: rule(xs[0], n))


def _wrapped(name: str, change: Callable[..., Any]) -> None:
    real = getattr(ml, name)
    _set(ml, name, lambda *a, **k: change(real, *a, **k))


def _arange(real: Any, start: Any, stop: Any = None, step: Any = 1, **k: Any) -> Any:
    out = real(start, stop, step, **k)  # the length floored, not ceiled: one short
    first, last = (0, start) if stop is None else (start, stop)
    return out[:-1] if out.shape[0] and (last - first) % step else out


def _squeeze(real: Any, x: Any, axis: Any = None) -> Any:
    return real(x)  # every axis of size 1, not the ones asked for


def _expand(real: Any, x: Any, axis: Any = 0) -> Any:
    return real(x, axis=axis + x.ndim if isinstance(axis, int) and axis < 0 else axis)


def _stack(real: Any, arrays: Any, axis: int = 0) -> Any:
    return real(arrays, axis=axis + arrays[0].ndim if axis < 0 else axis)


def _concat(real: Any, arrays: Any, axis: Any = 0) -> Any:
    first = ml.asarray(arrays[0])
    return real([ml.astype(ml.asarray(a), first.dtype) for a in arrays], axis=axis)


def _full(real: Any, shape: Any, fill: Any, **k: Any) -> Any:
    return real(shape, float(fill) if type(fill) is int else fill, **k)


def _linspace(real: Any, start: Any, stop: Any, num: int, **k: Any) -> Any:
    k.pop("endpoint", None)
    return real(start, stop, num, **k)


def _take_along(real: Any, x: Any, indices: Any, axis: int = -1) -> Any:
    return real(x, indices, axis=-1)


def _cumsum(real: Any, x: Any, axis: Any = None, **k: Any) -> Any:
    k.pop("include_initial", None)
    return real(x, axis=axis, **k)


def _where(real: Any, condition: Any, x1: Any, x2: Any) -> Any:
    if isinstance(x1, (ml.Tensor, np.ndarray)) and isinstance(x2, (ml.Tensor, np.ndarray)):
        x2 = ml.astype(ml.asarray(x2), ml.asarray(x1).dtype)  # x1's dtype, not the promoted one
    return real(condition, x1, x2)


def _clip(real: Any, x: Any, min: Any = None, max: Any = None) -> Any:
    if min is None or max is None:
        return real(x, min, max)
    return ml.maximum(ml.minimum(x, max), min)  # the bounds in the other order: min wins


def _astype(real: Any, x: Any, dtype: Any, **k: Any) -> Any:
    t = ml.asarray(x)
    if np.dtype(t.dtype).kind == "f" and np.dtype(dtype).kind in "iu":
        t = ml.round(t)  # rounded to the nearest, not truncated toward zero
    return real(t, dtype, **k)


def _full_like(real: Any, x: Any, fill: Any, *, dtype: Any = None, **k: Any) -> Any:
    return ml.full(ml.asarray(x).shape, fill, dtype=dtype, **k)  # the fill's dtype, not x's


def _cumsum_dtype(real: Any, x: Any, dtype: Any = None, **k: Any) -> Any:
    return real(x, dtype=ml.asarray(x).dtype if dtype is None else dtype, **k)  # int8 in int8


def _arange_dtype(real: Any, start: Any, stop: Any = None, step: Any = 1, *, dtype: Any = None,
                  **k: Any) -> Any:
    if dtype is None and stop is not None and type(start) is int:
        dtype = ml.int64  # the dtype of `start` alone, not of all three
    return real(start, stop, step, dtype=dtype, **k)


def _linspace_truncated(real: Any, start: Any, stop: Any, num: int, *, dtype: Any = None,
                        **k: Any) -> Any:
    if dtype is not None and np.dtype(dtype).kind in "iu":  # cast, not floored
        return ml.astype(real(start, stop, num, **k), dtype)
    return real(start, stop, num, dtype=dtype, **k)


def _arange_cast(real: Any, start: Any, stop: Any = None, step: Any = 1, *, dtype: Any = None,
                 **k: Any) -> Any:
    if dtype is not None:  # the arguments converted to the dtype first: 2 is True, -1 wraps
        kind = np.dtype(dtype).type
        start, step = kind(start).item(), kind(step).item()
        stop = None if stop is None else kind(stop).item()
    return real(start, stop, step, dtype=dtype, **k)


def _arange_count(real: Any, start: Any, stop: Any = None, step: Any = 1, **k: Any) -> Any:
    if stop is None:  # one argument read as a count, as range() does: arange(5.0) of ints
        start = int(start)
    return real(start, stop, step, **k)


def _squeeze_to_one(real: Any, x: Any, axis: Any = None) -> Any:
    out = real(x, axis=axis)  # never 0-d: one axis kept, as "at least 1-d" code does
    return ml.reshape(out, (1,)) if out.ndim == 0 and ml.asarray(x).ndim else out


SLIPS: dict[str, Callable[[], None]] = {
    "reshape": lambda: _lowered(Op.RESHAPE, lambda x, n: jnp.reshape(x, n.shape, order="F")),
    "permute_dims": lambda: _lowered(Op.TRANSPOSE, lambda x, n: jnp.transpose(
        x, [int(i) for i in np.argsort(_fields(n)[0])])),
    "flip": lambda: _lowered(Op.FLIP, lambda x, n: jnp.flip(x)),
    "broadcast_to": lambda: _lowered(Op.BROADCAST, lambda x, n: jnp.broadcast_to(
        x.reshape(x.shape + (1,) * (len(n.shape) - x.ndim)), n.shape)),
    "squeeze": lambda: _wrapped("squeeze", _squeeze),
    "expand_dims": lambda: _wrapped("expand_dims", _expand),
    "stack": lambda: _wrapped("stack", _stack),
    "concat": lambda: _wrapped("concat", _concat),
    "arange": lambda: _wrapped("arange", _arange),
    "full": lambda: _wrapped("full", _full),
    "linspace": lambda: _wrapped("linspace", _linspace),
    "eye": lambda: _wrapped("eye", lambda real, *a, k=0, **kw: real(*a, k=-k, **kw)),
    "asarray": lambda: _wrapped("asarray", lambda real, obj, **kw: real(
        obj, **({"dtype": ml.float32} if kw.get("dtype") is None and isinstance(
            obj, (float, list)) else {}), **kw)),
    "take_along_axis": lambda: _wrapped("take_along_axis", _take_along),
    "cumulative_sum": lambda: _wrapped("cumulative_sum", _cumsum),
    "take": lambda: _wrapped("take", lambda real, x, i, axis=None: real(x, i, axis=None)),
    "where": lambda: _wrapped("where", _where), "clip": lambda: _wrapped("clip", _clip),
    "astype": lambda: _wrapped("astype", _astype),
    "full_like": lambda: _wrapped("full_like", _full_like),
    "searchsorted": lambda: _wrapped("searchsorted", lambda real, x1, x2, side="left", **k: real(
        x1, x2, **k)),
    "arange_dtype": lambda: _wrapped("arange", _arange_dtype),
    "linspace_truncated": lambda: _wrapped("linspace", _linspace_truncated),
    "squeeze_to_one": lambda: _wrapped("squeeze", _squeeze_to_one),
    "arange_cast": lambda: _wrapped("arange", _arange_cast),
    "arange_count": lambda: _wrapped("arange", _arange_count),
    "cumulative_sum_dtype": lambda: _wrapped("cumulative_sum", _cumsum_dtype),
}


def slip(site: str) -> MinilazyAdapter:
    """``site`` reads one of its arguments the way a hurried implementer would (:data:`SLIPS`).

    ``reshape`` in Fortran order, a permutation inverted, ``flip`` of every axis, a new axis
    counted from the front, ``squeeze`` of every unit axis, ``arange``'s length floored,
    ``linspace`` always with its endpoint, ``eye``'s diagonal on the other side...
    """
    SLIPS[site]()
    return cpu()
