"""MLX: ``floor_divide`` with an infinite operand differs from NumPy (and Python).

NumPy defines ``x // y`` so that ``x == (x // y) * y + x % y`` holds as Python's float ``//``
does: ``1.0 // -inf == -1.0`` (and ``1.0 % -inf == -inf``), ``inf // 2.0`` is NaN. MLX 0.32.4
returns ``floor(x / y)``: ``1.0 // -inf == -0.0`` and ``inf // 2.0 == inf``, in every float
dtype, while its ``remainder`` agrees with NumPy (``1.0 % -inf == -inf``).

Breaks LZ-NUM-001 (``floor_divide`` is ``exact``; its domain keeps infinite operands).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys
import warnings

import mlx.core as mx
import numpy as np

warnings.simplefilter("ignore")  # NumPy warns about the invalid values it defines
a = [1.0, -5.0, 1061.0, np.inf, -np.inf]
b = [-np.inf, np.inf, -np.inf, 2.0, 3.0]
wrong = 0
for dtype in ("float16", "float32", "float64"):
    x, y = np.array(a, dtype), np.array(b, dtype)
    got = np.array(mx.floor_divide(mx.array(x, dtype=getattr(mx, dtype)),
                                   mx.array(y, dtype=getattr(mx, dtype))))
    want = np.floor_divide(x, y)
    wrong += not np.array_equal(got, want, equal_nan=True)
    print(f"floor_divide({a}, {b}) {dtype}:\n  MLX   {got.tolist()}\n  NumPy {want.tolist()}")
print("Python:", [x // y for x, y in zip(a, b)])
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
