"""``isfinite`` of a 0-d NaN is True (a 1-d NaN gives the right False).

A 0-d NumPy array becomes a constant in tinygrad's graph (its UOp is a CONST, not a buffer),
and ``isfinite`` of that constant NaN comes out True. NumPy says False. Breaks LZ-NUM-001
(``isfinite`` is exact).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

bug = False
for x in (np.array(np.nan, np.float32), np.array([np.nan], np.float32)):
    got = Tensor(x, device="CPU").isfinite().numpy()
    want = np.isfinite(x)
    print(f"isfinite({x!r}): tinygrad {got!r}, NumPy {want!r}")
    bug = bug or not np.array_equal(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
