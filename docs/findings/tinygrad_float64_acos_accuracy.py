"""float64 ``acos`` is off by about 1e8 units in the last place.

tinygrad's float64 ``acos`` agrees with NumPy only to about 1e-8 relative (roughly float32
accuracy): 2.5e7 to 1.2e8 ulp on ordinary arguments. The ``ulp`` tolerance class allows 8.
Breaks LZ-NUM-001 (and LZ-LOW-002: float64 data computed to float64 accuracy).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([0.3, -0.7, 0.9999, 0.5, 0.1])
got = Tensor(x, device="CPU").acos().numpy()
want = np.arccos(x)
ulps = np.abs(got - want) / np.spacing(np.abs(want))
np.set_printoptions(precision=17)
print("tinygrad:", got)
print("NumPy:   ", want)
print("ulp distance:", ulps.astype(np.int64).tolist())
bug = bool(ulps.max() > 8)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
