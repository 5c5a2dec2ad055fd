"""The oracle's convolution and pooling: sliding windows over NumPy arrays, in torch's layout.

Capability ``conv`` (LZ-NUM-017): an adapter's ``conv2d``, ``max_pool2d`` and ``avg_pool2d``
are checked against these. Inputs are (N, C, H, W), filters (O, C / groups, kH, kW); ``stride``,
``padding`` and ``dilation`` are an int or an (H, W) pair; padding is zeros for convolutions and
averages (padded zeros count in the mean, torch's ``count_include_pad=True``) and -inf for
maxima. Sums are taken in float64 and rounded once to the inputs' dtype; :func:`window_bound`
is their ``reduction``-class slack. Nothing here imports minilazy's engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

Array = np.ndarray[Any, Any]
Pair = int | tuple[int, int]


def pair(v: Pair) -> tuple[int, int]:
    """``v`` as an (H, W) pair.

    Example:
        >>> pair(2), pair((1, 3))
        ((2, 2), (1, 3))
    """
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _windows(x: Array, kernel: tuple[int, int], stride: Pair, padding: Pair, dilation: Pair,
             fill: float) -> Array:
    """(N, C, H', W', kH, kW): each output position's window of ``x`` padded with ``fill``."""
    (ph, pw), (sh, sw), (dh, dw) = pair(padding), pair(stride), pair(dilation)
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    span = ((kernel[0] - 1) * dh + 1, (kernel[1] - 1) * dw + 1)
    view = sliding_window_view(padded, span, axis=(2, 3))
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def conv2d(x: Array, w: Array, b: Array | None = None, *, stride: Pair = 1, padding: Pair = 0,
           dilation: Pair = 1, groups: int = 1) -> Array:
    """As torch's ``conv2d`` (a cross-correlation) of ``x`` with filters ``w``, plus bias ``b``.

    Example:
        >>> conv2d(np.ones((1, 1, 3, 3), np.float32), np.ones((2, 1, 2, 2), np.float32),
        ...        np.float32([0, 1])).tolist()
        [[[[4.0, 4.0], [4.0, 4.0]], [[5.0, 5.0], [5.0, 5.0]]]]
    """
    dtype = np.result_type(x, w, *([] if b is None else [b]))
    win = _windows(np.asarray(x, np.float64), w.shape[2:], stride, padding, dilation, 0.0)
    n, c, h, wd = win.shape[:4]
    grouped = win.reshape(n, groups, c // groups, h, wd, *w.shape[2:])
    filters = np.asarray(w, np.float64).reshape(groups, w.shape[0] // groups, *w.shape[1:])
    out = np.einsum("ngchwij,gocij->ngohw", grouped, filters).reshape(n, w.shape[0], h, wd)
    if b is not None:
        out = out + np.asarray(b, np.float64)[None, :, None, None]
    return np.asarray(out, dtype)


def max_pool2d(x: Array, kernel_size: Pair, stride: Pair | None = None,
               padding: Pair = 0) -> Array:
    """As torch's ``max_pool2d``: the maximum of each window (``stride`` defaults to the kernel).

    Example:
        >>> max_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    k = pair(kernel_size)
    win = _windows(x, k, k if stride is None else stride, padding, 1, -np.inf)
    return np.asarray(win.max(axis=(4, 5)), x.dtype)


def avg_pool2d(x: Array, kernel_size: Pair, stride: Pair | None = None,
               padding: Pair = 0) -> Array:
    """As torch's ``avg_pool2d``: the mean of each window, padded zeros counted.

    Example:
        >>> avg_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
        [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    k = pair(kernel_size)
    win = _windows(np.asarray(x, np.float64), k, k if stride is None else stride, padding, 1, 0.0)
    return np.asarray(win.mean(axis=(4, 5)), x.dtype)


def window_bound(expected: Array, magnitude: Array, terms: int) -> Array:
    """The ``reduction`` slack of a window sum: ``n * eps`` times the sum of the terms' sizes.

    ``magnitude`` is the same op on absolute values (``conv2d(|x|, |w|, |b|)``), ``terms`` the
    number of terms of each sum.

    Example:
        >>> float(window_bound(np.float32([4.0]), np.float64([4.0]), 4)[0]) > 0
        True
    """
    eps = float(np.finfo(expected.dtype).eps)
    return np.asarray(2 * (terms + 2) * eps * np.abs(magnitude)
                      + eps * np.abs(expected.astype(np.float64)))
