"""Calls of each op family once per value of each of its attributes, on fixed operands.

The oracle's tables for LZ-CACHE-003 (a cache hit across every attribute: the calls share their
structure but for one field) and LZ-AD-001 (a gradient for every option of every differentiable
op). :func:`vary` builds the calls from each field's values, so a new field is one more list.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle import matrices, windows

Array = np.ndarray[Any, Any]
Call = tuple[tuple[Any, ...], dict[str, Any]]
RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4)).astype(np.float32)
SQUARE = RNG.standard_normal((4, 4)).astype(np.float32)
ONE_OFF = np.zeros((4, 4), np.float32)
ONE_OFF[1, 3] = 1.0
TIES = np.array([[2, 1, 2, 0], [1, 1, 0, 2], [0, 2, 1, 1], [1, 0, 2, 2]], np.float32)


def vary(*args: Any, **fields: list[Any]) -> list[Call]:
    """The base call (each field's first value), then each field's other values, one at a time.

    ``args`` are positional attributes, given as one list of alternatives each.

    Example:
        >>> vary(axis=[None, 0], keepdims=[False, True])
        [((), {'axis': None, 'keepdims': False}), ((), {'axis': 0, 'keepdims': False}), \
((), {'axis': None, 'keepdims': True})]
    """
    base_args, base = tuple(a[0] for a in args), {k: v[0] for k, v in fields.items()}
    calls: list[Call] = [(base_args, base)]
    for i, alternatives in enumerate(args):
        calls += [(base_args[:i] + (a,) + base_args[i + 1:], base) for a in alternatives[1:]]
    for name, values in fields.items():
        calls += [(base_args, {**base, name: v}) for v in values[1:]]
    return calls


AXES = [None, 0, 1, -1, (0, 1)]
# op -> (its tensor operands, the calls). Square operands where an attribute picks an axis: two
# axes then give results of one shape, which only the attribute tells apart.
ATTRIBUTES: dict[str, tuple[tuple[Array, ...], list[Call]]] = {
    **{name: ((SQUARE,), vary(axis=AXES, keepdims=[False, True]))
       for name in ("sum", "prod", "mean", "max", "min")},
    # one zero (one one) off the diagonal: each axis of all (any) gives other values
    "all": ((ONE_OFF == 0,), vary(axis=AXES, keepdims=[False, True])),
    "any": ((ONE_OFF,), vary(axis=AXES, keepdims=[False, True])),
    **{name: ((SQUARE,), vary(axis=AXES, correction=[0.0, 1.0], keepdims=[False, True]))
       for name in ("var", "std")},
    **{name: ((TIES,), vary(axis=[None, 0, 1, -1], keepdims=[False, True]))
       for name in ("argmax", "argmin")},
    "cumulative_sum": ((SQUARE,), vary(axis=[1, 0, -1], include_initial=[False, True])),
    "tensordot": ((SQUARE, SQUARE), vary(axes=[2, 1, 0, ([0], [1]), ([1, 0], [0, 1])])),
    "reshape": ((X,), vary([(4, 3), (2, 6), (12,), (-1, 2), (2, 2, 3)])),
    "permute_dims": ((X.reshape(3, 2, 2),), vary([(0, 1, 2), (2, 1, 0), (1, 0, 2), (0, 2, 1)])),
    "expand_dims": ((X,), vary(axis=[0, 1, 2, -1, -2])),
    "squeeze": ((X.reshape(1, 12, 1),), vary([0, 2, (0, 2), -1])),
    "broadcast_to": ((X[:, :1],), vary([(3, 4), (2, 3, 4), (3, 5)])),
    "flip": ((X,), vary(axis=AXES)),
    "tril": ((SQUARE,), vary(k=[0, 1, -1, 2])),
    "triu": ((SQUARE,), vary(k=[0, 1, -1, 2])),
    "concat": ((), vary([[X, X * 2]], axis=[0, 1, -1, None])),
    "stack": ((), vary([[X, X * 2]], axis=[0, 1, 2, -1])),
    "take": ((SQUARE, np.array([2, 0, 1, 3])), vary(axis=[0, 1, None])),
    "take_along_axis": ((SQUARE, np.array([[2, 0, 1, 1]] * 4)), vary(axis=[-1, 0])),
    "getitem": ((X,), vary([(slice(None, None, 2),), (slice(1, None),), (slice(None, None, -1),),
                            (0,), (..., 1), (slice(None), slice(1, 3)), (None, 1),
                            (slice(None, None, -2), slice(3, 0, -1))])),
    "setitem": ((X,), vary([(slice(None, None, 2),), (slice(1, None),), (0,), (..., 1),
                            (slice(None, None, -1), slice(1, 3))], [7.0])),
    "searchsorted": ((np.sort(TIES.ravel()), TIES), vary(side=["left", "right"])),
    "clip": ((X,), vary(min=[-0.5, None, 0.0], max=[0.5, None, 1.0])),
    "astype": ((np.abs(X) * 3,), vary([np.float32, np.int32, np.bool_, np.int8, np.uint8])),
    "eye": ((), vary([3], [None, 4, 2], k=[0, 1, -1])),
    "arange": ((), vary([0, 1], [6, 7], [1, 2])),
    "linspace": ((), vary([0.0], [1.0], [5], endpoint=[True, False])),
    "full": ((), vary([(2, 3)], [1.5, -2.0])),
    "full_like": ((X,), vary([1.5, -2.0])),
}


# The extensions' ops, through the adapter's own methods: (capability, call, oracle, calls).
Method = Callable[..., Any]
EXTENSIONS: dict[str, tuple[str, Callable[[OptionalAdapter], Method], Method, tuple[Array, ...],
                            list[Call]]] = {
    "sort": ("linalg", lambda a: a.sort, matrices.sort, (TIES,),
             vary(axis=[-1, 0], descending=[False, True])),
    "argsort": ("linalg", lambda a: a.argsort, matrices.argsort, (TIES,),
                vary(axis=[-1, 0], descending=[False, True])),
    "vector_norm": ("linalg", lambda a: lambda *x, **k: a.linalg("vector_norm", *x, **k),
                    np.linalg.vector_norm, (X,),
                    vary(ord=[2, 1, math.inf, -math.inf, 3], axis=[None, 0, -1, (0, 1)],
                         keepdims=[False, True])),
    "matrix_norm": ("linalg", lambda a: lambda *x, **k: a.linalg("matrix_norm", *x, **k),
                    np.linalg.matrix_norm, (X,),
                    vary(ord=["fro", 1, -1, math.inf, -math.inf, "nuc", 2],
                         keepdims=[False, True])),
    "diagonal": ("linalg", lambda a: lambda *x, **k: a.linalg("diagonal", *x, **k),
                 np.linalg.diagonal, (SQUARE,), vary(offset=[0, 1, -1, 2])),
    "matrix_power": ("linalg", lambda a: lambda *x, **k: a.linalg("matrix_power", *x, **k),
                     np.linalg.matrix_power, (SQUARE,), vary([2, 3, 1, 0])),
    "cholesky": ("linalg", lambda a: lambda *x, **k: a.linalg("cholesky", *x, **k),
                 lambda x, upper: np.linalg.cholesky(x, upper=upper),
                 (SQUARE @ SQUARE.T + 4 * np.eye(4, dtype=np.float32),), vary(upper=[False, True])),
    "rfft": ("fft", lambda a: lambda *x, **k: a.fft("rfft", *x, **k), np.fft.rfft, (X,),
             vary(n=[None, 3, 6], axis=[-1, 0], norm=["backward", "ortho", "forward"])),
    "irfft": ("fft", lambda a: lambda *x, **k: a.fft("irfft", *x, **k), np.fft.irfft,
              (np.fft.rfft(X).astype(np.complex64),),
              vary(n=[None, 4, 7], norm=["backward", "ortho", "forward"])),
    "max_pool2d": ("conv", lambda a: a.max_pool2d, windows.max_pool2d, (X.reshape(1, 1, 3, 4),),
                   vary([2, 3, (2, 1)], [None, 1, (1, 2)], [0, 1])),
    "avg_pool2d": ("conv", lambda a: a.avg_pool2d, windows.avg_pool2d, (X.reshape(1, 1, 3, 4),),
                   vary([2, 3, (2, 1)], [None, 1, (1, 2)], [0, 1])),
    "conv2d": ("conv", lambda a: a.conv2d, windows.conv2d,
               (RNG.standard_normal((1, 2, 5, 5)).astype(np.float32),
                RNG.standard_normal((2, 2, 2, 2)).astype(np.float32)),
               vary(stride=[1, 2, (1, 2)], padding=[0, 1, (1, 0)], dilation=[1, 2])),
}


def _linalg(name: str) -> Callable[[OptionalAdapter], Method]:
    """The adapter's ``linalg.<name>``."""
    return lambda a: lambda *x, **k: a.linalg(name, *x, **k)


def _symmetric_lazy(a: OptionalAdapter) -> Callable[[Any], Any]:
    return lambda x: a.apply("multiply", a.apply("add", x, a.apply("matrix_transpose", x)), 0.5)


WELL_POSED = SQUARE + 4 * np.eye(4, dtype=np.float32)  # far from singular
# The linalg functions with a gradient, checked by LZ-AD-001 only (their values and attributes
# are LZ-NUM-018's): (capability, call, oracle, operands, calls), as in EXTENSIONS. A function
# of a symmetric matrix reads one triangle: it gets (x + x^T) / 2, so each entry counts.
GRADIENTS: dict[str, tuple[str, Callable[[OptionalAdapter], Method], Method, tuple[Array, ...],
                           list[Call]]] = {
    "inv": ("linalg", _linalg("inv"), np.linalg.inv, (WELL_POSED,), vary()),
    "det": ("linalg", _linalg("det"), np.linalg.det, (WELL_POSED,), vary()),
    "slogdet": ("linalg", lambda a: lambda x: a.linalg("slogdet", x)[1],
                lambda x: np.linalg.slogdet(x)[1], (WELL_POSED,), vary()),
    "solve": ("linalg", _linalg("solve"), np.linalg.solve, (WELL_POSED, X.T),
              vary()),
    "eigvalsh": ("linalg", lambda a: lambda x: a.linalg("eigvalsh", _symmetric_lazy(a)(x)),
                 lambda x: np.linalg.eigvalsh((x + x.T) / 2), (SQUARE,), vary()),
    "svdvals": ("linalg", _linalg("svdvals"), np.linalg.svdvals, (X,), vary()),
    "trace": ("linalg", _linalg("trace"), np.linalg.trace, (SQUARE,),
              vary(offset=[0, 1, -2])),
    "cross": ("linalg", _linalg("cross"), np.linalg.cross, (X[:, :3], X[:, 1:]),
              vary(axis=[-1, 0])),
    "vecdot": ("linalg", _linalg("vecdot"), np.linalg.vecdot, (X, X[::-1]),
               vary(axis=[-1, 0])),
    "outer": ("linalg", _linalg("outer"), np.linalg.outer, (X[0], X[1]), vary()),
}

