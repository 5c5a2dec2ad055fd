"""Comparison of minilazy results with NumPy's, by tolerance class."""

from __future__ import annotations

from typing import Any

import numpy as np

# Tolerance classes (spec/ops.toml names them per op): how far a float result may be from
# NumPy's. Integers and bools are always exact. Values NumPy makes subnormal may be flushed to
# zero (XLA runs with FTZ), hence the absolute slack of one smallest-normal.
ULPS = {"exact": 0, "ulp": 8, "loose": 512}


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place of b (NaN/inf handled by the caller)."""
    spacing = np.spacing(np.abs(b).astype(b.dtype))
    return np.abs(a.astype(np.float64) - b.astype(np.float64)) / spacing.astype(np.float64)


def assert_matches(actual: Any, expected: Any, tol: str = "exact") -> None:
    """Assert shape and dtype equal, and values within tolerance class ``tol``."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected)
        return
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan, err_msg="NaN positions differ")
    a, e = actual[~nan], expected[~nan]
    inf = np.isinf(e)
    np.testing.assert_array_equal(a[inf], e[inf], err_msg="infinities differ")
    a, e = a[~inf], e[~inf]
    tiny = np.finfo(e.dtype).smallest_normal
    if tol == "reduction":
        return  # checked by the caller with a magnitude-aware bound
    ulps = ULPS[tol]
    close = (ulp_distance(a, e) <= ulps) | (np.abs(a.astype(np.float64) - e) <= tiny)
    if not close.all():
        bad = np.argwhere(~close)[:5].ravel()
        raise AssertionError(f"{tol}: values differ beyond {ulps} ulp at {bad}: "
                             f"got {a[bad]}, want {e[bad]}")
