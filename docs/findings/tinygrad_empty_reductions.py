"""``min``/``max``/``argmin``/``argmax`` of an empty array return values instead of raising.

NumPy raises ValueError ("zero-size array to reduction operation ... which has no identity",
"attempt to get argmax of an empty sequence"). tinygrad returns inf / -inf for ``min`` / ``max``
and INT32_MIN for ``argmin``/``argmax`` (clang even warns about that constant overflowing). Breaks
LZ-NUM-010 (reductions match the oracle) and LZ-ERR-001.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.zeros(0, np.float32)
bug = False
for name in ("min", "max", "argmin", "argmax"):
    try:
        got = repr(getattr(Tensor(x, device="CPU"), name)().numpy())
        bug = True
    except Exception as e:  # the fix: an error, as NumPy raises
        got = f"{type(e).__name__}: {e}"
    try:
        want = repr(getattr(np, name)(x))
    except ValueError as e:
        want = f"ValueError: {e}"
    print(f"{name}(float32[0]): tinygrad {got}; NumPy {want}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
