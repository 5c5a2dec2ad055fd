"""Observing a tensor (``numpy()``) does not materialise it: each observation runs it again.

``Tensor.numpy()`` realizes a contiguous copy of the tensor, not the tensor: afterwards the
tensor is still unrealized, and a second ``numpy()`` launches the kernel again. The spec makes
an observation a barrier for the observed tensor (LZ-BAR-004: it materialises the observed
tensor). NumPy has nothing to compare here: the check is tinygrad's own state and kernel count.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor
from tinygrad.helpers import GlobalCounters

x = Tensor(np.linspace(-2, 2, 12, dtype=np.float32), device="CPU").realize()
y = (x * 0.5).tanh() + 3
first = y.numpy()
pending = not y.uop.is_realized
before = GlobalCounters.kernel_count
second = y.numpy()
again = GlobalCounters.kernel_count - before
want = np.tanh(np.linspace(-2, 2, 12, dtype=np.float32) * np.float32(0.5)) + np.float32(3)
print(f"tinygrad: pending after numpy(): {pending}; kernels run by a second numpy(): {again}")
print(f"values equal NumPy's (ulp-close): {np.allclose(first, want) and np.allclose(second, want)}")
print("spec: pending after an observation: False; kernels run by a second one: 0")
bug = pending or again > 0
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
