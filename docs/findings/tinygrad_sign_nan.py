"""``sign(NaN)`` is 1 instead of NaN.

NumPy's ``sign`` returns NaN for NaN; tinygrad returns 1.0 (in float16, float32 and float64).
Breaks LZ-NUM-001 (``sign`` is exact, NaN where NaN).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

bug = False
for dtype in (np.float16, np.float32, np.float64):
    x = np.array([np.nan, -2.0, 0.0], dtype)
    got = Tensor(x, device="CPU").sign().numpy()
    want = np.sign(x)
    print(f"sign({x.tolist()}) {np.dtype(dtype).name}: tinygrad {got}, NumPy {want}")
    bug = bug or not np.array_equal(got, want, equal_nan=True)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
