"""``realize()`` skips a tensor of a weak dtype: an int tensor plus a Python float stays pending.

``Tensor([1, 2, 3]) + 0.5`` has dtype ``weakfloat`` (it materialises as float32). tinygrad's
``Tensor.realize`` filters out tensors of weak dtypes ("no width to store"), so after realizing
it the tensor is still unrealized, and every observation runs its kernel again. The spec wants
every live tensor materialised after a barrier (LZ-BAR-001). The values are right; NumPy's
dtype for them is float64 (tinygrad's float32 is its default float).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor
from tinygrad.helpers import GlobalCounters

x = np.array([1, 2, 3], np.int32)
w = Tensor(x, device="CPU") + 0.5
w.realize()
pending = not w.uop.is_realized
before = GlobalCounters.kernel_count
got = w.numpy()
ran = GlobalCounters.kernel_count - before
print(f"tinygrad: dtype {w.dtype}, pending after realize(): {pending}, kernels run by an "
      f"observation after realize(): {ran}, value {got}")
print(f"NumPy: value {x + 0.5}; spec: pending after a barrier: False")
bug = pending
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
