"""MLX: an in-place operator changes the array's dtype instead of keeping it (or raising).

In NumPy ``x op= y`` writes the result into ``x``: ``x`` keeps its dtype when the result
casts to it under ``same_kind`` (``int8 *= int64`` stays int8, wrapping), and otherwise the
statement raises ``TypeError`` (``bool += 1.5``, ``uint8 &= int16``). MLX 0.32.4 rebinds the
array object to the promoted result: ``x *= y`` makes an int8 ``x`` int64, ``x += 1.5`` makes
a bool ``x`` float32, and no statement raises.

Breaks LZ-NUM-014 (in-place arithmetic matches the oracle exactly) and LZ-NUM-003 (Python
scalars in place are weak: NumPy's casting rules apply).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import operator
import sys

import mlx.core as mx
import numpy as np

CASES = [("int8 *= int64", "int8", np.array([100, 3], np.int64), operator.imul),
         ("bool += 1.5", "bool", 1.5, operator.iadd),
         ("uint8 &= int16", "uint8", np.array([3, 1], np.int16), operator.iand),
         ("int32 += 0.5", "int32", 0.5, operator.iadd)]


def outcome(x, other, op):
    """``x op= other`` and its dtype, or the TypeError it raises."""
    try:
        x = op(x, other)
        return f"{np.array(x).tolist()} ({np.array(x).dtype})"
    except TypeError as e:
        return f"TypeError: {str(e)[:60]}"


wrong = 0
for label, dtype, other, op in CASES:
    host = np.array([100, 2], np.int64).astype(dtype)
    mother = mx.array(other) if isinstance(other, np.ndarray) else other
    got = outcome(mx.array(host, dtype=getattr(mx, "bool_" if dtype == "bool" else dtype)),
                  mother, op)
    want = outcome(np.array(host), other, op)
    wrong += got != want
    print(f"{label} (x = {host.tolist()}): MLX {got}; NumPy {want}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
