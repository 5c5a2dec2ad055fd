"""MLX: a Python int out of the array's range raises ValueError, also in comparisons.

NEP 50 (NumPy 2): ``int8_array + 300`` raises ``OverflowError`` at the call, and a comparison
with an out-of-range Python int is evaluated exactly (``uint8_array < 1000`` is all True).
MLX 0.32.4 raises ``ValueError: Converting 300 to int8 would result in overflow.`` for the
arithmetic (the wrong exception type) and for the comparison (which should not raise).

Breaks LZ-NUM-003 (a Python int out of the dtype's range raises ``OverflowError`` at the call,
comparisons excepted, which NumPy 2 evaluates exactly).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np


def outcome(call, lib, x):
    """``call(lib, x)`` as a list, or the error it raises."""
    try:
        return f"{np.array(call(lib, x)).tolist()}"
    except Exception as e:
        return f"{type(e).__name__}: {e}"


wrong = 0
cases = [("int8[1, 2] + 300", "int8", lambda m, x: m.add(x, 300)),
         ("uint8[1, 2] - (-1)", "uint8", lambda m, x: m.subtract(x, -1)),
         ("uint8[1, 2] < 1000", "uint8", lambda m, x: m.less(x, 1000)),
         ("int8[1, 2] == -200", "int8", lambda m, x: m.equal(x, -200))]
for label, dtype, call in cases:
    host = np.array([1, 2], dtype)
    got = outcome(call, mx, mx.array(host, dtype=getattr(mx, dtype)))
    want = outcome(call, np, host)
    same_kind = got.split(":")[0] == want.split(":")[0] if ":" in want else got == want
    wrong += not same_kind
    print(f"{label}: MLX {got}; NumPy {want}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
