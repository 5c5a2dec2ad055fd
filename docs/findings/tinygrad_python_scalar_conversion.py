"""``float(t)``, ``int(t)`` and ``bool(t)`` do not work on tensors, even 0-d ones.

tinygrad's Tensor defines no ``__float__`` or ``__int__`` (Python raises TypeError) and its
``__bool__`` raises TypeError; only ``item()`` and ``tolist()`` read a value. NumPy converts a
0-d (or one-element) array, and raises ValueError for larger ones. Breaks LZ-BAR-004 (these
conversions are observations that give the oracle's value) and LZ-ERR-004 (ValueError for a
tensor of several elements).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array(2.5, np.float32)
t = Tensor(x, device="CPU") * 3.0
bug = False
for convert in (float, int, bool):
    try:
        got = repr(convert(t))
    except Exception as e:
        got, bug = f"{type(e).__name__}: {e}", True
    print(f"{convert.__name__}(0-d tensor 7.5): tinygrad {got}; NumPy {convert(x * 3)!r}")
print(f"item(): tinygrad {t.item()!r}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
