"""MLX: float64 ``exp``, ``sin`` and ``cos`` are computed with float32 accuracy.

On the CPU, MLX keeps float64 arrays as float64, but ``exp``, ``sin`` and ``cos`` of them
are accurate only to float32 precision: ``sin(0.5)`` is off by ~3e-8 relative,
``exp(-89.4)`` underflows to 0 (the float64 result is 1.5e-39), ``sin(-3861.0175)`` is
0.000207 where it is 0.0000949. The other transcendental functions are float64-accurate.

Breaks LZ-LOW-002 (64-bit data are computed in 64 bits) and LZ-NUM-001 (within 8 ulp).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

CASES = [("exp", 0.5), ("exp", -89.41670020069179), ("sin", 0.5), ("sin", -3861.017466137855),
         ("cos", 0.5), ("cos", -7651.348437449065)]

wrong = 0
for name, value in CASES:
    x = np.array([value], np.float64)
    out = getattr(mx, name)(mx.array(x, dtype=mx.float64))
    got, want = np.array(out)[0], getattr(np, name)(x)[0]
    ulps = abs(got - want) / np.spacing(abs(want))
    wrong += ulps > 8
    print(f"{name}({value!r}) float64: MLX {got!r} ({out.dtype}), NumPy {want!r}: "
          f"{ulps:.3g} ulp")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
