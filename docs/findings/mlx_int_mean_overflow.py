"""MLX: ``mean`` (and ``var``) of integers wrap around in an int32 sum.

NumPy accumulates the mean of integers in float64: ``mean([2**31 - 1, 2**31 - 1])`` (int32)
is 2147483647.0. MLX 0.32.4 sums in the integer dtype first, which wraps, and gives -1.0.
``var`` of large integers goes wrong the same way. (That MLX returns float32 where NumPy
returns float64 is a declared dtype difference; the wrong value is not.)

Breaks LZ-NUM-010 (reductions match the oracle in value).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

wrong = 0
for name, values in (("mean", [2**31 - 1, 2**31 - 1]), ("mean", [2**30, 2**30, 2**30]),
                     ("var", [-(2**31)] * 3)):
    x = np.array(values, np.int32)
    got = np.array(getattr(mx, name)(mx.array(x))).item()
    want = float(getattr(np, name)(x))
    bad = abs(got - want) > 1e-6 * max(1.0, abs(want))
    wrong += bad
    print(f"{name}({values}) int32: MLX {got!r}; NumPy {want!r}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
