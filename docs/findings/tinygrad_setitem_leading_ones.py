"""tinygrad: ``x[key] = v`` refuses a value with extra leading length-1 axes.

NumPy drops a value's leading length-1 axes before broadcasting it into the selection: ``x[1:] =
ones((1, 2))`` into a selection of shape (2,) sets both elements, as ``x[0] = ones((1, 1, 3))``
does a row. tinygrad raises ``ValueError: cannot broadcast tensor to fewer dimensions``. Found
by the oracle's test of setitem values with extra leading ones
(``test_setitem_of_a_value_with_extra_leading_ones_matches_numpy``, every profile).

Breaks LZ-NUM-014 (``__setitem__`` matches the oracle).
Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

CASES = [((3,), (slice(1, None),), (1, 2)), ((2, 3), (0,), (1, 1, 3)),
         ((2, 3), (slice(None), 1), (1, 2))]

wrong = 0
for shape, key, value_shape in CASES:
    want = np.zeros(shape, np.float32)
    want[key] = np.ones(value_shape, np.float32)
    try:
        x = Tensor(np.zeros(shape, np.float32), device="CPU").contiguous()
        x[key] = Tensor(np.ones(value_shape, np.float32), device="CPU")
        got: object = x.numpy()
        ok = np.array_equal(got, want)
    except ValueError as e:
        got, ok = f"ValueError: {e}", False
    wrong += not ok
    print(f"x = zeros({shape}); x[{key}] = ones({value_shape}): {'ok' if ok else got}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
