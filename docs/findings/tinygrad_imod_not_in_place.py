"""``x %= y`` is not an in-place update: Tensor has ``__iadd__`` and friends but no ``__imod__``.

Python falls back to ``x = x % y``, which binds the name to a new tensor: another reference to
the tensor (an alias, a list entry, an attribute) keeps the old value. ``x += y`` on the same
tensor updates every reference. Breaks LZ-REC-004 (an in-place op rebinds x, and every later
use of x sees it). The value of ``x % y`` itself is right.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

results = {}
for op in ("+=", "%="):
    x = Tensor(np.array([5, 7], np.int32), device="CPU")
    alias = x
    if op == "+=":
        x += 3
    else:
        x %= 3
    results[op] = (alias is x, alias.numpy().tolist())
    print(f"x {op} 3: the alias is still x: {alias is x}; the alias reads {alias.numpy().tolist()}")
want = np.array([5, 7], np.int32)
want %= 3
print(f"NumPy: x %= 3 updates x in place: {want.tolist()}")
bug = not results["%="][0]
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
