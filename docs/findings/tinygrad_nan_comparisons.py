"""``<=`` and ``>=`` return True when an operand is NaN.

tinygrad computes ``a <= b`` as ``not (a > b)`` and ``a >= b`` as ``not (a < b)``, which is
wrong for NaN: IEEE and NumPy give False for every ordered comparison with NaN. Breaks
LZ-NUM-001 (comparison results are exact).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

a = np.array([np.nan, 1.0, np.nan], np.float32)
b = np.array([1.0, np.nan, np.nan], np.float32)
ta, tb = Tensor(a, device="CPU"), Tensor(b, device="CPU")
bug = False
for name, got, want in (("a <= b", (ta <= tb).numpy(), a <= b),
                        ("a >= b", (ta >= tb).numpy(), a >= b),
                        ("a < b", (ta < tb).numpy(), a < b), ("a > b", (ta > tb).numpy(), a > b)):
    print(f"{name}: tinygrad {got}, NumPy {want}")
    bug = bug or not np.array_equal(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
