"""MLX: float32 ``exp`` is up to ~60 ulp off for large arguments.

``exp`` of a float32 argument above ~40 in magnitude differs from the correctly rounded
result (NumPy's) by tens of units in the last place: ``exp(65.84015)`` is 3.9265564e+28
where it is 3.9265705e+28 (60 ulp). Small arguments are accurate.

Breaks LZ-NUM-001 (``exp`` is in the ``ulp`` tolerance class: at most 8 ulp).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

x = np.array([0.5, 10.0, 50.0, 65.84015, 74.0, 88.0, -62.0, -80.0], np.float32)
got = np.array(mx.exp(mx.array(x)))
want = np.exp(x)
ulps = np.abs(got.astype(np.float64) - want) / np.spacing(want).astype(np.float64)
for xi, g, w, u in zip(x, got, want, ulps):
    print(f"exp({xi!r}) float32: MLX {g!r}, NumPy {w!r}: {u:.0f} ulp")
print("bug present" if (ulps > 8).any() else "fixed")
sys.exit(1 if (ulps > 8).any() else 0)
