"""``argmin``/``argmax`` skip NaN, and ``argmin`` along an axis can return an out-of-range index.

NumPy's ``argmin``/``argmax`` return the index of the first NaN. tinygrad ignores NaN, and for
a column [NaN, 0.5] its ``argmin(axis=0)`` returns 2, an index past the end of an axis of
length 2. Breaks LZ-NUM-010 (reductions match the oracle in value).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([[1.0, np.nan], [2.0, 0.5]], np.float32)
v = np.array([3.0, np.nan, 1.0], np.float32)
cases = [("argmin(x, axis=0)", Tensor(x, device="CPU").argmin(axis=0).numpy(),
          np.argmin(x, axis=0)),
         ("argmin(v)", Tensor(v, device="CPU").argmin().numpy(), np.argmin(v)),
         ("argmax(v)", Tensor(v, device="CPU").argmax().numpy(), np.argmax(v))]
bug = False
for name, got, want in cases:
    print(f"{name}: tinygrad {got}, NumPy {want}")
    bug = bug or not np.array_equal(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
