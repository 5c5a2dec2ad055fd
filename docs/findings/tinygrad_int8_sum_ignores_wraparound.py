"""A sum of an overflowing int8 expression adds the unwrapped values.

``(x * x).sum()`` for int8 x must sum the int8 products, which wrap (NumPy: int8 arithmetic is
modular). tinygrad fuses the product into the reduction, which accumulates in int32, and the
products are never wrapped to int8: for x = [100, 50, -7] it gives 12549 where NumPy gives 5.
Observing ``x * x`` first (a barrier in between) gives the wrapped products and the right sum, so
this also breaks LZ-BAR-007 (barriers change no value), besides LZ-NUM-010.

Seen on tinygrad 0.14.0, CPU device (clang). (The result dtype differs as well, int32 against
NumPy's int64: tinygrad's default integer; that part is not the bug.)
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([100, 50, -7], np.int8)
t = Tensor(x, device="CPU")
fused = int((t * t).sum().numpy())
cut = int((t * t).realize().sum().numpy())
want = int(np.sum(x * x))
print("tinygrad, fused:", fused)
print("tinygrad, x*x realized first:", cut)
print("NumPy:", want, "(products", (x * x).tolist(), ")")
bug = fused != want
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
