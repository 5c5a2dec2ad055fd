"""Searching and set functions: ``nonzero``, ``unique_*`` (host fallbacks) and ``searchsorted``.

In the Array API namespace (``minilazy.api``), with Array API 2023.12 names and result types. The
result shape of ``nonzero`` and ``unique_*`` depends on the data, which a compiled program cannot
have: each is a counted host fallback (``fallback.host_values``: a barrier on its input only,
NumPy on the host, the results back as device data). The distinct values of a floating input
are recorded as a ``take`` of the input at the first index of each, which NumPy found: so a
gradient flows through them (to the first element holding each value, where several do), never
silently stopping. ``searchsorted``'s shape is static, so it is recorded like any op.
Never imports jax.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import numpy as np

from minilazy.api.creation import device_of, tensor
from minilazy.api.elementwise import astype, isnan
from minilazy.api.fallback import host_values
from minilazy.api.host import host_data
from minilazy.api.reductions import sum as reduce_sum
from minilazy.api.shaping import reshape, take
from minilazy.api.tensor import Tensor, TensorLike
from minilazy.core import dtypes


class UniqueAllResult(NamedTuple):
    """What :func:`unique_all` returns (the Array API's namedtuple).

    Example:
        >>> import minilazy as ml
        >>> ml.unique_all(ml.asarray([2, 1, 2])).counts.tolist()
        [1, 2]
    """

    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    """What :func:`unique_counts` returns.

    Example:
        >>> import minilazy as ml
        >>> ml.unique_counts(ml.asarray([2, 1, 2])).values.tolist()
        [1, 2]
    """

    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    """What :func:`unique_inverse` returns.

    Example:
        >>> import minilazy as ml
        >>> ml.unique_inverse(ml.asarray([2, 1, 2])).inverse_indices.tolist()
        [1, 0, 1]
    """

    values: Tensor
    inverse_indices: Tensor


def _on_device(results: Any, like: Tensor) -> list[Tensor]:
    """NumPy's results as device data on ``like``'s device (leaves: gradients stop here)."""
    return [Tensor(host_data(r, None, like.device), like.device) for r in results]


def nonzero(x: TensorLike, /) -> tuple[Tensor, ...]:
    """The indices of ``x``'s nonzero elements, one int64 tensor per axis (a host fallback).

    ``x`` is materialised (nothing else is), NumPy finds the indices, and they come back as
    device data; counted in ``ml.metrics().fallback_ops["nonzero"]``.

    Example:
        >>> import minilazy as ml
        >>> [i.tolist() for i in ml.nonzero(ml.asarray([[0, 7], [5, 0]]))]
        [[0, 1], [1, 0]]
    """
    t = tensor(x)
    if not t.ndim:  # NumPy 2 refuses it too: which axis would the indices be along?
        raise ValueError("nonzero: a 0-d tensor has no axes to index; use "
                         "ml.reshape(x, (1,)) first")
    (value,) = host_values("nonzero", [t])
    return tuple(_on_device(np.nonzero(value), t))


def _unique(op: str, x: TensorLike) -> tuple[Tensor, Tensor, np.ndarray[Any, Any],
                                              np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``x`` and its distinct values, sorted: each NaN distinct, as NumPy 2 says.

    With NumPy's first indices, inverse indices and counts, in the values' order.
    """
    t = tensor(x)
    (value,) = host_values(op, [t])
    r = np.unique_all(value)
    order = np.argsort(r.values, kind="stable")  # NumPy 2.3 leaves complex values unsorted
    indices = r.indices[order]
    if t.dtype in dtypes.INEXACT:  # picked from x, so that gradients flow (module docstring)
        values = take(reshape(t, (-1,)), _on_device([indices], t)[0])
    else:
        (values,) = _on_device([r.values[order]], t)
    return t, values, indices, np.argsort(order)[r.inverse_indices], r.counts[order]


def unique_values(x: TensorLike, /) -> Tensor:
    """The distinct values of ``x``, sorted, as a 1-D tensor (a host fallback).

    Each NaN is distinct (NaN != NaN), as the Array API and NumPy 2 say.

    Example:
        >>> import minilazy as ml
        >>> ml.unique_values(ml.asarray([3.0, 1.0, 3.0, float("nan"), float("nan")])).tolist()
        [1.0, 3.0, nan, nan]
    """
    return _unique("unique_values", x)[1]


def unique_counts(x: TensorLike, /) -> UniqueCountsResult:
    """The distinct values of ``x`` and how often each occurs (a host fallback).

    Example:
        >>> import minilazy as ml
        >>> ml.unique_counts(ml.asarray([3, 1, 3])).counts.tolist()
        [1, 2]
    """
    t, values, _, _, counts = _unique("unique_counts", x)
    return UniqueCountsResult(values, *_on_device([counts], t))


def unique_inverse(x: TensorLike, /) -> UniqueInverseResult:
    """The distinct values of ``x`` and, for each element, the index of its value among them.

    ``inverse_indices`` has ``x``'s shape, so ``values[inverse_indices]`` rebuilds ``x``. A host
    fallback.

    Example:
        >>> import minilazy as ml
        >>> r = ml.unique_inverse(ml.asarray([[3, 1], [1, 1]]))
        >>> r.values.tolist(), r.inverse_indices.tolist()
        ([1, 3], [[1, 0], [0, 0]])
    """
    t, values, _, inverse, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(values, *_on_device([inverse], t))


def unique_all(x: TensorLike, /) -> UniqueAllResult:
    """Values, first indices (in flattened ``x``), inverse indices and counts (a host fallback).

    Example:
        >>> import minilazy as ml
        >>> r = ml.unique_all(ml.asarray([3, 1, 3]))
        >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
        ([1, 3], [1, 0], [1, 0, 1], [1, 2])
    """
    t, values, indices, inverse, counts = _unique("unique_all", x)
    return UniqueAllResult(values, *_on_device([indices, inverse, counts], t))


def searchsorted(x1: TensorLike, x2: TensorLike, /, *, side: Literal["left", "right"] = "left",
                 sorter: TensorLike | None = None) -> Tensor:
    """Where to insert ``x2``'s values into sorted 1-D ``x1`` to keep it sorted (recorded).

    Its shape is ``x2``'s, known when recorded, so it is no fallback: it is recorded as a count
    of comparisons, ``sum(x1 < v)`` per value (``<=`` for ``side="right"``), with NaN sorting
    last as in NumPy. That is O(len(x1) * x2.size) work, fused by XLA into one reduction with
    no temporary; exact, differentiable nowhere (an integer result). ``sorter`` (indices that
    sort ``x1``) is applied with ``take``, so host indices out of range raise ``IndexError`` (NumPy
    reads past ``x1`` instead). Both inputs are first cast to their common dtype, as NumPy does.

    Example:
        >>> import minilazy as ml
        >>> x1 = ml.asarray([1.0, 2.0, 2.0, 5.0])
        >>> ml.searchsorted(x1, ml.asarray([2.0, 6.0])).tolist()
        [1, 4]
        >>> ml.searchsorted(x1, ml.asarray([2.0, 6.0]), side="right").tolist()
        [3, 4]
    """
    device = device_of(x1, x2, sorter)
    a, v = tensor(x1, device), tensor(x2, device)
    if a.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D, got shape {a.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = take(a, sorter)
    common = dtypes.promote(a.dtype, v.dtype)
    if common in dtypes.COMPLEX:  # the standard orders real numbers only
        raise TypeError(f"searchsorted: not defined for complex dtypes, got {common}")
    a = a if a.dtype == common else astype(a, common)
    v = v if v.dtype == common else astype(v, common)
    column = v[..., None]  # against every element of a: shape (*x2.shape, len(x1))
    if side == "left":
        before = a < column
        if common in dtypes.FLOATING:  # NaN sorts last: every number is before a NaN value
            before = before | (isnan(column) & ~isnan(a))
    else:
        before = a <= column
        if common in dtypes.FLOATING:  # and everything, NaN included, is at or before it
            before = before | isnan(column)
    return reduce_sum(before, axis=-1)
