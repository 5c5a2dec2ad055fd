"""Shapes and axes as users give them: an int or a sequence, normalised, with NumPy's errors.

Part of the surface: every public function that takes a shape or an axis reads it here, so
``zeros((2.5, 3))``, ``sum(x, axis=3)`` of a 2-D tensor and ``sort(x, axis=(0,))`` fail at the
call, as NumPy's do. Never imports jax.
"""

from __future__ import annotations

import operator
from typing import SupportsIndex

import numpy as np


def integers(what: str, value: object) -> tuple[int, ...]:
    """A shape or axes given as an int or a sequence of ints, as a tuple; NumPy's errors.

    Floats and bools are refused (``TypeError``), not truncated: ``zeros((2.5, True))`` is a bug.

    Example:
        >>> integers("zeros", 3), integers("zeros", (2, np.int64(3)))
        ((3,), (2, 3))
        >>> integers("zeros", (2.5, 3))
        Traceback (most recent call last):
        ...
        TypeError: zeros: expected a sequence of integers or a single integer, got (2.5, 3)
    """
    try:
        items = tuple(value) if isinstance(value, (tuple, list, range, np.ndarray)) else (value,)
        if any(type(v) is bool for v in items):  # an int to operator.index, not to NumPy
            raise TypeError
        return tuple([operator.index(v) for v in items])
    except TypeError:
        raise TypeError(f"{what}: expected a sequence of integers or a single integer, got "
                        f"{value!r}") from None


def normalize_axes(op_name: str, axes: object, ndim: int) -> tuple[int, ...]:
    """Axes as a sorted tuple of non-negative ints (``None``: all); errors like NumPy's.

    Example:
        >>> normalize_axes("sum", -1, 3)
        (2,)
    """
    if axes is None:
        return tuple(range(ndim))
    # an int or a tuple of ints (not bools): worked out once (a model reduces alike each step)
    known = type(axes) is int or type(axes) is tuple and all(type(a) is int for a in axes)
    found = _AXES.get((axes, ndim)) if known else None
    if found is None:
        found = _normalized(op_name, axes, ndim)
        if known:
            if len(_AXES) > 4096:
                _AXES.clear()
            _AXES[axes, ndim] = found
    return found


_AXES: dict[tuple[object, int], tuple[int, ...]] = {}


def _normalized(op_name: str, axes: object, ndim: int) -> tuple[int, ...]:
    out = []
    for a in integers(op_name, axes):
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(f"{op_name}: axis {a} is out of bounds for array of "
                                          f"dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{op_name}: duplicate value in axis {axes}")
    return tuple(sorted(out))


def normalize_axis(op_name: str, axis: object, ndim: int) -> int:
    """One axis (of sort, concat, take...), made non-negative.

    A tuple, float or bool is NumPy's ``TypeError`` ("an integer is required"); an int out of
    range, however large, ``AxisError``.

    Example:
        >>> normalize_axis("sort", -1, 3)
        2
    """
    try:
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, SupportsIndex):
            raise TypeError
        (a,) = normalize_axes(op_name, operator.index(axis), ndim)
    except TypeError:  # (operator.index refuses an array of more than one element)
        raise TypeError(f"{op_name}: an integer is required for the axis, got {axis!r}") from None
    return a
