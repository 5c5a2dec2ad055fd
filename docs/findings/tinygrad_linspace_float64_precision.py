"""``Tensor.linspace(..., dtype=float64)`` has float32 precision.

Asked for float64 points, tinygrad's ``linspace`` computes them in float32 (its default float)
and casts: ``linspace(0, 1, 11)`` is off by up to 3.6e-8 (NumPy's points are within an ulp of
the exact ones), and the endpoint of ``linspace(-1.5, 0.115842576506207, 2)`` is off by 3e8 ulp.
Breaks LZ-NUM-015 (creation functions match the oracle within the op's tolerance class) and
LZ-LOW-002 (64-bit values are computed in 64 bits).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor, dtypes

np.set_printoptions(precision=17)
bug = False
for start, stop, num in ((0.0, 1.0, 11), (-1.5, 0.115842576506207, 2)):
    got = Tensor.linspace(start, stop, num, dtype=dtypes.float64).numpy()  # default device
    want = np.linspace(start, stop, num)
    ulps = np.abs(got - want) / np.spacing(np.abs(want))
    print(f"linspace({start}, {stop}, {num}) float64: tinygrad {got}")
    print(f"  NumPy {want}")
    print(f"  largest difference {np.abs(got - want).max():.2g} ({ulps.max():.3g} ulp)")
    bug = bug or bool(ulps.max() > 8)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
