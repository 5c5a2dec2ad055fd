"""A Python int outside the tensor's dtype wraps silently instead of raising OverflowError.

NumPy 2 (NEP 50) treats Python scalars as weak: ``int8_array + 300`` raises OverflowError
("Python integer 300 out of bounds for int8"). tinygrad also keeps the int8 dtype but adds 300
modulo 256, without a word (1 + 300 gives 45). Breaks LZ-NUM-003 (a Python int out of the
dtype's range raises OverflowError at the call).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([1, 2], np.int8)
try:
    got = f"{(Tensor(x, device='CPU') + 300).numpy()!r}"
    bug = True
except OverflowError as e:
    got, bug = f"OverflowError: {e}", False
try:
    want = repr(x + 300)
except OverflowError as e:
    want = f"OverflowError: {e}"
print(f"int8 [1, 2] + 300: tinygrad {got}; NumPy {want}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
