"""Measure how far minilazy's float results are from NumPy's, per op and dtype, in ulps.

The tolerance classes of ops.toml are justified by this table: run it on each backend
(``python spec/measure_tolerances.py [platform]``) and check that every class bounds what it
measures. Inputs: 20 000 values per dtype, spread log-uniformly over each op's input domain.
"""

from __future__ import annotations

import sys

import numpy as np

import minilazy as ml
from minilazy.conformance.registry import ops

FLOATS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]


def _sample(dtype: np.dtype, n: int, bound: float | None, rng: np.random.Generator) -> np.ndarray:
    top = np.log10(bound if bound else float(np.finfo(dtype).max) / 4)
    mags = 10 ** rng.uniform(-6, top, n)
    vals = np.where(rng.random(n) < 0.5, -mags, mags)
    return vals.astype(dtype)


def max_ulps(actual: np.ndarray, expected: np.ndarray) -> float:
    """Largest distance in ulps of ``expected`` over finite, normal values."""
    ok = np.isfinite(expected) & np.isfinite(actual)
    ok &= np.abs(expected) >= np.finfo(expected.dtype).smallest_normal
    if not ok.any():
        return 0.0
    a, e = actual[ok].astype(np.float64), expected[ok]
    ulp = np.spacing(np.abs(e)).astype(np.float64)  # in the expected dtype's own ulps
    return float(np.max(np.abs(a - e.astype(np.float64)) / ulp))


def main(platform: str = "cpu") -> None:
    """Print the worst ulp error of each elementwise op and float dtype on ``platform``."""
    device = ml.devices(platform)[0]
    rng = np.random.default_rng(0)
    print(f"max ulp error vs NumPy on {platform} ({device})")
    print(f"{'op':<14}{'class':<10}" + "".join(f"{str(d):>10}" for d in FLOATS))
    for spec in ops().values():
        if spec.kind != "elementwise" or spec.tolerance == "exact" and spec.numpy not in (
                "sqrt", "divide"):
            continue
        row = []
        for d in FLOATS:
            bound = 1e4 if spec.domain == "trig" else None
            args = [_sample(d, 20000, bound, rng) for _ in range(spec.arity)]
            with np.errstate(all="ignore"):
                expected = getattr(np, spec.numpy)(*args)
                actual = getattr(ml, spec.name)(*(ml.asarray(a, device=device) for a in args))
            row.append(max_ulps(actual.numpy(), expected))
        print(f"{spec.name:<14}{spec.tolerance:<10}" + "".join(f"{u:>10.1f}" for u in row))


if __name__ == "__main__":
    main(*sys.argv[1:])
