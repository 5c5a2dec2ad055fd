"""``tanh``, ``sinh``, ``asinh`` and ``atanh`` cancel catastrophically near 0.

At x = +-1e-5 each is off by about 1.5e4 ulp in float32 (relative error 1.4e-3) and by up to
9e4 ulp in float64 (relative error ~5e-12): they are computed from exp/log differences that
cancel.
Their tolerance classes allow 8 ulp (``tanh``, ``asinh``) and 512 (``sinh``, ``atanh``).
Breaks LZ-NUM-001.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

ALLOWED = {"tanh": 8, "asinh": 8, "sinh": 512, "atanh": 512}
REFERENCE = {"tanh": np.tanh, "sinh": np.sinh, "asinh": np.arcsinh, "atanh": np.arctanh}
bug = False
for dtype in (np.float32, np.float64):
    x = np.array([1e-5, -1e-5], dtype)
    for name, allowed in ALLOWED.items():
        got = getattr(Tensor(x, device="CPU"), name)().numpy()
        want = REFERENCE[name](x)
        ulps = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want))
        print(f"{name}({x.tolist()}) {np.dtype(dtype).name}: tinygrad {got}, NumPy {want}, "
              f"ulp {ulps.astype(np.int64).tolist()} (allowed {allowed})")
        bug = bug or bool(ulps.max() > allowed)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
