"""A negative base to a large integral power gives NaN.

(-0.5) ** 1e10 is 0 and (-2) ** (1e10 + 1) is -inf in NumPy (the exponents are integers, even
and odd); tinygrad returns NaN for both, and for (-4.4e-83) ** 1.17e16 (NumPy: 0). Small
integral exponents work. Breaks LZ-NUM-001 (``pow`` within 8 ulp, NaN where NaN).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

base = np.array([-0.5, -2.0, -4.4e-83, -2.0])
exponent = np.array([1e10, 1e10 + 1, 1.17e16, 3.0])
got = (Tensor(base, device="CPU") ** Tensor(exponent, device="CPU")).numpy()
with np.errstate(all="ignore"):
    want = base ** exponent
print("tinygrad:", got)
print("NumPy:   ", want)
bug = not np.array_equal(got, want, equal_nan=True)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
