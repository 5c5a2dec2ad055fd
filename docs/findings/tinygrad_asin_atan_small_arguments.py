"""``asin`` and ``atan`` lose most of their precision for small arguments.

At x = 1e-5 tinygrad's ``asin`` and ``atan`` are off by 1.3 % relative in float32 (1.4e5 ulp)
and by 0.2 % in float64 (1.3e13 ulp), where asin(x) ~ atan(x) ~ x is easy to get right. The
``ulp`` tolerance class allows 8. Breaks LZ-NUM-001.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

bug = False
for dtype in (np.float32, np.float64):
    x = np.array([1e-5, 1e-3, 0.1], dtype)
    for name, reference in (("asin", np.arcsin), ("atan", np.arctan)):
        got = getattr(Tensor(x, device="CPU"), name)().numpy()
        want = reference(x)
        rel = np.abs(got.astype(np.float64) - want) / np.abs(want)
        ulps = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want))
        print(f"{name}({x.tolist()}) {np.dtype(dtype).name}: tinygrad {got}, NumPy {want}, "
              f"relative error {rel.max():.2g}, ulp {ulps.astype(np.int64).tolist()}")
        bug = bug or bool(ulps.max() > 8)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
