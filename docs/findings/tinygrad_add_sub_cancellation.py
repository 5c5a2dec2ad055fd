"""``(x + 1e-10) - x`` is rewritten to ``1e-10``: float64 rounding of the sum is skipped.

For x = 1 the float64 sum x + 1e-10 rounds, so NumPy gives 1.00000008e-10, and for x = 1e8 it
gives 0. tinygrad's graph rewriter simplifies ``(x + c) - x`` to ``c`` before compiling, so it
returns exactly 1e-10 for every x. Breaks LZ-LOW-002 (64-bit data are computed in 64 bits) and
LZ-NUM-001 (``add``/``subtract`` are exact, correctly rounded).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([1.0, 1e8, 3.0])
t = Tensor(x, device="CPU")
got = ((t + 1e-10) - t).numpy()
want = (x + 1e-10) - x
print("tinygrad:", got)
print("NumPy:   ", want)
bug = not np.array_equal(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
