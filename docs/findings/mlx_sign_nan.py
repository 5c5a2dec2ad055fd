"""MLX: ``sign(nan)`` is 0 instead of NaN.

NumPy (and the Array API) define ``sign(NaN) = NaN``; MLX 0.32.4 returns 0 for float16,
float32 and float64 alike.

Breaks LZ-NUM-001 (elementwise results equal the oracle's; NaN where NaN).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

wrong = 0
for dtype in ("float16", "float32", "float64"):
    x = np.array([np.nan, -2.0, 0.0, 3.0], dtype)
    got = np.array(mx.sign(mx.array(x, dtype=getattr(mx, dtype))))
    want = np.sign(x)
    bad = not np.array_equal(got, want, equal_nan=True)
    wrong += bad
    print(f"sign({x.tolist()}) {dtype}: MLX {got.tolist()}; NumPy {want.tolist()}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
