"""Operands of incompatible shapes are not refused at the call; ``cat`` refuses without a message.

``x + y`` for shapes (2, 3) and (4, 5) records without error; the IndexError naming the shapes
comes later, when the shape is read or the tensor is realized. ``Tensor.cat`` of (2, 3) and
(2, 4) along axis 0 fails at the call, but with a bare AssertionError that names nothing. NumPy
raises at the call, naming the shapes. Breaks LZ-ERR-001 (an error at the call that recorded
it, naming the shapes) and LZ-REC-002 (the shape is known when the op is recorded).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

a, b, c = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32), np.ones((2, 4), np.float32)
try:
    Tensor(a, device="CPU") + Tensor(b, device="CPU")
    add = "no error at the call"
except Exception as e:
    add = f"{type(e).__name__}: {e}"
try:
    Tensor(a, device="CPU").cat(Tensor(c, device="CPU"), dim=0)
    cat = "no error at the call"
except Exception as e:
    cat = f"{type(e).__name__}: {e!r}"
try:
    np.add(a, b)
except ValueError as e:
    numpy_add = f"ValueError: {e}"
try:
    np.concatenate([a, c], axis=0)
except ValueError as e:
    numpy_cat = f"ValueError: {e}"
print(f"(2,3) + (4,5): tinygrad {add}; NumPy {numpy_add}")
print(f"concat((2,3), (2,4)): tinygrad {cat}; NumPy {numpy_cat}")
bug = add == "no error at the call" or "(2, 3)" not in cat
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
