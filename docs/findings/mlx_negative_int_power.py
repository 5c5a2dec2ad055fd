"""MLX: an integer array to a negative integer power gives 0 instead of raising.

NumPy raises ``ValueError: Integers to negative integer powers are not allowed.`` at the call
(the value is known on the host). MLX 0.32.4 raises nothing and returns 0 for every element,
even where the power is exactly representable (``1 ** -1`` is 1, ``(-1) ** -1`` is -1).

Breaks LZ-ERR-007 (an integer tensor raised to a negative host integer power raises
``ValueError`` at the call).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

x = np.array([1, -1, 2, 3], np.int32)
try:
    got = str(np.array(mx.power(mx.array(x), -1)).tolist())
except ValueError as e:
    got = f"ValueError: {e}"
try:
    want = str(np.power(x, -1).tolist())
except ValueError as e:
    want = f"ValueError: {e}"
print(f"power({x.tolist()} int32, -1): MLX {got}; NumPy {want}")
bug = not got.startswith("ValueError")
print("bug present" if bug else "fixed")
sys.exit(1 if bug else 0)
