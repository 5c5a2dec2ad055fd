"""``x - x``, ``x * 0``, ``x / x``, ``x % x`` and ``x // x`` are folded to constants.

tinygrad's graph rewriter simplifies these algebraically (to 0, 0, 1, 0, 1) without regard to
IEEE special values, so for x = inf or NaN it returns finite numbers where NumPy returns NaN.
The same rewrite makes ``x * zero`` 0 when ``zero`` is a Python 0 or a 0-d array (0-d NumPy
inputs become constants in tinygrad). Breaks LZ-NUM-001 (elementwise results equal the oracle's,
NaN where NaN).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([np.inf, -np.inf, np.nan, 3.0], np.float32)
t = Tensor(x, device="CPU")
np.seterr(all="ignore")  # NumPy's own warnings for inf - inf and the like
cases = {
    "x - x": (lambda a: a - a, x - x),
    "x * 0": (lambda a: a * 0, x * np.float32(0)),
    "x / x": (lambda a: a / a, x / x),
    "x % x": (lambda a: a % a, np.remainder(x, x)),
    "x // x": (lambda a: a // a, np.floor_divide(x, x)),
}
bug = False
for name, (fn, want) in cases.items():
    got = fn(t).numpy()
    print(f"{name}: tinygrad {got}, NumPy {want}")
    bug = bug or not np.array_equal(got, want, equal_nan=True)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
