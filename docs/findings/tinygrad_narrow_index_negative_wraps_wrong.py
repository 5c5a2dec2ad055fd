"""A negative index in an int8 (or int16) index tensor on a longer axis reads the wrong element.

``x[i]`` with ``i`` an int8 tensor holding ``-1`` on an axis of 130 gives ``x[0]``, not
``x[129]``, silently: the negative index is wrapped in the index's own type (``-1 + 130``
overflows int8). NumPy reads the element from the end whatever the index's dtype. Breaks
LZ-NUM-013 (getitem matches NumPy); found by the oracle's narrow-index test.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.arange(130, dtype=np.int32)
i = np.array([127, 5, -128, -1], np.int8)
got = Tensor(x, device="CPU")[Tensor(i, device="CPU")].numpy()
want = x[i]
print(f"tinygrad: x[int8 {i.tolist()}] on an axis of 130 = {got.tolist()}; NumPy: "
      f"{want.tolist()}")
bug = not np.array_equal(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
