"""``x[key] = v`` raises when another recorded tensor already reads x.

The spec's in-place update rebinds x to a new recorded value, and tensors recorded before keep
the old one (LZ-REC-004). tinygrad refuses the assignment with RuntimeError "can't setitem on a
tensor with other uses" as soon as a live tensor (``before = x * 2`` here) depends on x.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

base = np.arange(6, dtype=np.int32).reshape(2, 3)
x = Tensor(base, device="CPU")
before = x * 2
want = base.copy()
want[0, 1:] = [70, 80]
try:
    x[0, 1:] = Tensor(np.array([70, 80], np.int32), device="CPU")
    got = f"x = {x.numpy().tolist()}, before = {before.numpy().tolist()}"
    bug = not (np.array_equal(x.numpy(), want) and np.array_equal(before.numpy(), base * 2))
except RuntimeError as e:
    got, bug = f"RuntimeError: {e}", True
print("tinygrad:", got)
print(f"NumPy:    x = {want.tolist()}, before = {(base * 2).tolist()}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
