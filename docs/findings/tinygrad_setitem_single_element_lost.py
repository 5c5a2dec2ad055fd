"""``x[0] = v`` on a realized tensor of one element is silently lost.

On a realized tensor of shape (1,), ``x[0] = v`` (or ``x[0, ...] = v``) leaves x unchanged;
on shape (3,) the same assignment works, and so does it on an unrealized x. NumPy updates x.
Breaks LZ-NUM-014 (``__setitem__`` matches the oracle) and LZ-REC-004 (the update is seen by
every later use of x).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

bug = False
for shape in ((1,), (3,)):
    for value in (7, Tensor(np.array(7, np.int32), device="CPU")):
        t = Tensor(np.zeros(shape, np.int32), device="CPU").realize()
        t[0] = value
        got = t.numpy()
        want = np.zeros(shape, np.int32)
        want[0] = 7
        kind = "a Python int" if isinstance(value, int) else "a 0-d tensor"
        print(f"shape {shape}, x[0] = {kind}: tinygrad {got}, NumPy {want}")
        bug = bug or not np.array_equal(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
