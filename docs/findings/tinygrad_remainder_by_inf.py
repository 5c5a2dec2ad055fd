"""``x % inf`` is NaN for finite x.

NumPy (like Python's float ``%``) gives x for finite x of the divisor's sign, 0 for 0, and inf
(the divisor) for finite x of the other sign. tinygrad computes ``x - floor(x / y) * y``, which
is NaN when y is infinite. Breaks LZ-NUM-001 (``remainder`` is exact, NaN where NaN).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([5.0, 0.0, -3.0], np.float32)
y = np.array([np.inf, np.inf, np.inf], np.float32)
got = (Tensor(x, device="CPU") % Tensor(y, device="CPU")).numpy()
with np.errstate(all="ignore"):
    want = np.remainder(x, y)
print("tinygrad:", got)
print("NumPy:   ", want)
bug = not np.array_equal(got, want, equal_nan=True)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
