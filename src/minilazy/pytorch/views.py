"""The aten ops whose result is a *view* of their first argument, as :class:`View` steps.

A view shares its base's storage (:class:`minilazy.pytorch.tensor.Storage`); each step says how
to read the view from its parent (``get``) and how the parent changes when the view is written
(``put``), so writes through views are functional underneath, as PyTorch/XLA's
functionalization makes them.

Example:
    >>> step = VIEWS["t"](None, ml.zeros((2, 3)))
    >>> step.get(ml.zeros((2, 3))).shape, step.put(ml.zeros((2, 3)), ml.ones((3, 2))).shape
    ((3, 2), (2, 3))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import minilazy as ml
from minilazy.pytorch.calls import (
    Call,
    View,
    along,
    assign,
    span,
)


def _reshaped(c: Call, x: ml.Tensor, *rest: Any) -> View:
    """A view with the same elements in another shape (view, squeeze, unsqueeze, ...)."""
    shape, base = c.shape, x.shape
    return View(lambda x_: ml.reshape(x_, shape), lambda x_, y: ml.reshape(y, base))


def _permuted(axes: Sequence[int]) -> View:
    back = tuple(int(i) for i in np.argsort(axes))
    axes = tuple(axes)
    return View(lambda x: ml.permute_dims(x, axes), lambda x, y: ml.permute_dims(y, back))


def _transpose(c: Call, x: ml.Tensor, a: int = 0, b: int = 1) -> View:
    axes = list(range(x.ndim))
    if axes:
        axes[a % x.ndim], axes[b % x.ndim] = axes[b % x.ndim], axes[a % x.ndim]
    return _permuted(axes)


def _indexed(key: tuple[Any, ...]) -> View:
    return View(lambda x: x[key], lambda x, y: assign(x, key, y))


def _expanded(c: Call, x: ml.Tensor, size: Any, implicit: bool = False) -> View:
    shape = c.shape

    def put(x_: ml.Tensor, y: ml.Tensor) -> ml.Tensor:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    return View(lambda x_: ml.broadcast_to(x_, shape), put, expanded=True)


def _split(c: Call, x: ml.Tensor, sizes: Any, dim: int = 0) -> list[View]:
    dim %= x.ndim
    starts = np.cumsum([0] + [o.shape[dim] for o in c.out])
    return [_indexed(along(x.ndim, dim, slice(int(a), int(b))))
            for a, b in zip(starts[:-1], starts[1:])]


IDENTITY = View(lambda x: x, lambda x, y: y)

VIEWS: dict[str, Callable[..., View | list[View]]] = {
    "view": _reshaped, "_reshape_alias": _reshaped, "unsqueeze": _reshaped,
    "squeeze": _reshaped, "view_as": _reshaped,
    "t": _transpose, "transpose": _transpose, "permute": lambda c, x, dims: _permuted(dims),
    "expand": _expanded,
    "slice": lambda c, x, dim=0, start=None, end=None, step=1: _indexed(
        along(x.ndim, dim, span(x.shape[dim % x.ndim], start, end, step))),
    "select": lambda c, x, dim, index: _indexed(along(x.ndim, dim, index % x.shape[dim])),
    "split": _split, "split_with_sizes": _split,
    "unbind": lambda c, x, dim=0: [_indexed(along(x.ndim, dim, i))
                                   for i in range(x.shape[dim % x.ndim])],
    "alias": lambda c, x: IDENTITY, "detach": lambda c, x: IDENTITY,
}
