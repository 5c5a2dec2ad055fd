"""A small data set the package makes itself: seven-segment digits, 28 x 28, with noise.

For the training demo and tutorials (no download). Each image draws a digit's lit segments as
bars, shifted, thickened and dimmed at random, plus Gaussian noise; an MLP learns it in a few
hundred steps, so the demo shows learning, not just timing. NumPy only.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

# Segments a..g of a seven-segment display: (row0, col0, row1, col1) in a 20 x 12 box.
_SEGMENTS: Final = {
    "a": (0, 0, 2, 12), "b": (0, 10, 10, 12), "c": (10, 10, 20, 12), "d": (18, 0, 20, 12),
    "e": (10, 0, 20, 2), "f": (0, 0, 10, 2), "g": (9, 0, 11, 12),
}
_DIGITS: Final = ["abcdef", "bc", "abged", "abgcd", "fgbc", "afgcd", "afgedc", "abc", "abcdefg",
                  "abcdfg"]


def digits(n: int, seed: int = 0) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``n`` noisy seven-segment digit images (float32, ``(n, 784)``) and labels (int32).

    Example:
        >>> x, y = digits(4)
        >>> x.shape, x.dtype, y.tolist()
        ((4, 784), dtype('float32'), [8, 6, 5, 2])
    """
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n).astype(np.int32)
    images = np.zeros((n, 28, 28), np.float32)
    for i, label in enumerate(labels):
        dy, dx = rng.integers(-3, 4, 2)
        grow = int(rng.integers(0, 2))
        shade = rng.uniform(0.6, 1.0)
        for seg in _DIGITS[label]:
            r0, c0, r1, c1 = _SEGMENTS[seg]
            images[i, 4 + dy + r0: 4 + dy + r1 + grow, 8 + dx + c0: 8 + dx + c1 + grow] = shade
    images += rng.normal(0.0, 0.25, images.shape).astype(np.float32)
    return images.reshape(n, 784), labels
