"""``max``/``min`` reductions and ``maximum``/``minimum`` drop NaN instead of propagating it.

NumPy's ``max``, ``min``, ``maximum`` and ``minimum`` return NaN wherever a NaN takes part.
tinygrad's reductions skip NaN, and its elementwise ``maximum``/``minimum`` return the other
operand when the NaN is the second one. Breaks LZ-NUM-010 (reductions match the oracle in
value) and LZ-NUM-001 (``maximum``/``minimum`` are exact, NaN where NaN).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([3.0, np.nan, 1.0], np.float32)
a = np.array([310.0, np.nan], np.float32)
b = np.array([np.nan, 1.0], np.float32)
tx, ta, tb = (Tensor(v, device="CPU") for v in (x, a, b))
cases = [("max(x)", tx.max().numpy(), np.max(x)), ("min(x)", tx.min().numpy(), np.min(x)),
         ("maximum(a, b)", ta.maximum(tb).numpy(), np.maximum(a, b)),
         ("minimum(a, b)", ta.minimum(tb).numpy(), np.minimum(a, b))]
bug = False
for name, got, want in cases:
    print(f"{name}: tinygrad {got}, NumPy {want}")
    bug = bug or not np.array_equal(got, want, equal_nan=True)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
