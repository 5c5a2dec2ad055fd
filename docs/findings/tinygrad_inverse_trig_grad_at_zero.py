"""The gradients of ``acos``, ``asin`` and ``atan`` are 0 at x = 0.

The derivatives there are -1, 1 and 1. tinygrad's backward gives exactly 0 at x = 0 (elsewhere
the values are right, though only to about 1e-7 relative in float64). Breaks LZ-AD-001 (every
derivative equals the derivative of the NumPy definition). NumPy has no autodiff: the reference
is the analytic derivative, evaluated with NumPy.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.array([0.0, 0.5, -0.25])
derivatives = {"acos": -1 / np.sqrt(1 - x * x), "asin": 1 / np.sqrt(1 - x * x),
               "atan": 1 / (1 + x * x)}
bug = False
for name, want in derivatives.items():
    t = Tensor(x, device="CPU")
    (g,) = getattr(t, name)().sum().gradient(t)
    got = g.numpy()
    print(f"d/dx {name} at {x}: tinygrad {got}, NumPy (analytic) {want}")
    bug = bug or not np.allclose(got, want, rtol=1e-6)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
