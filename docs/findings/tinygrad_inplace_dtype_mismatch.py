"""``x op= y`` raises RuntimeError whenever ``x op y`` has another dtype than x.

NumPy's in-place ops cast the result back to x's dtype under ``same_kind`` casting
(``int8 *= int64`` is fine) and raise TypeError (UFuncTypeError) for other casts
(``bool += 1``). tinygrad refuses both with RuntimeError "assign dtype mismatch". Breaks
LZ-NUM-014 (in-place arithmetic matches the oracle) and LZ-NUM-003 (TypeError where NumPy
raises one).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

bug = False
for what, x, y in (("int8 *= int64", np.array([1, 2], np.int8), np.array([3, 4], np.int64)),
                   ("float32 += float64", np.array([1.5], np.float32), np.array([0.25])),
                   ("bool += int 1", np.array([True, False]), 1)):
    t = Tensor(x, device="CPU")
    other = Tensor(y, device="CPU") if isinstance(y, np.ndarray) else y
    try:
        if "*=" in what:
            t *= other
        else:
            t += other
        got = repr(t.numpy())
    except Exception as e:
        got = f"{type(e).__name__}: {e}"
    out = x.copy()
    try:
        if "*=" in what:
            out *= y
        else:
            out += y
        want, ok = repr(out), got == repr(out)
    except TypeError as e:
        want, ok = f"TypeError ({type(e).__name__})", got.startswith("TypeError")
    bug = bug or not ok
    print(f"{what}: tinygrad {got}; NumPy {want}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
