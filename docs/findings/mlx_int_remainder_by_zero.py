"""MLX: the integer remainder ``x % 0`` is ``x`` instead of 0.

NumPy defines the remainder of an integer division by zero as 0 (with a RuntimeWarning), as
it defines ``x // 0`` as 0; MLX 0.32.4 agrees for ``floor_divide`` but returns the dividend
for ``remainder``, in every integer dtype.

Breaks LZ-NUM-001 (integer results are exact; ``remainder``'s domain is every value).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys
import warnings

import mlx.core as mx
import numpy as np

warnings.simplefilter("ignore")  # NumPy warns about the division by zero it defines
wrong = 0
for dtype in ("int8", "int32", "int64", "uint8", "uint64"):
    x, y = np.array([7, 100, 5], dtype), np.array([0, 0, 3], dtype)
    mxd = getattr(mx, dtype)
    got = np.array(mx.remainder(mx.array(x, dtype=mxd), mx.array(y, dtype=mxd)))
    want = np.remainder(x, y)
    wrong += not np.array_equal(got, want)
    print(f"remainder({x.tolist()}, {y.tolist()}) {dtype}: MLX {got.tolist()}; "
          f"NumPy {want.tolist()}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
