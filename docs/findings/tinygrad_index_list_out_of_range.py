"""An out-of-range entry of an index list (known on the host) selects 0 instead of raising.

``x[[0, 5]]`` on a tensor of 3 elements returns [x[0], 0], and ``x[:, [-4]]`` on a (2, 3)
tensor returns zeros; NumPy raises IndexError at the call. Breaks LZ-ERR-007 (index lists
known at the call are checked there, IndexError). (What an out-of-range *device* index array
selects is implementation-defined, LZ-NUM-005; a Python list is not one.)

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

i = np.arange(1, 4)
x = np.arange(6, dtype=np.float32).reshape(2, 3)
bug = False
for what, call, numpy_call in (("i[[0, 5]]", lambda: Tensor(i, device="CPU")[[0, 5]],
                                lambda: i[[0, 5]]),
                               ("x[:, [-4]]", lambda: Tensor(x, device="CPU")[:, [-4]],
                                lambda: x[:, [-4]])):
    try:
        got = f"{call().numpy().tolist()}"
        bug = True
    except IndexError as e:
        got = f"IndexError: {e}"
    try:
        numpy_got = repr(numpy_call())
    except IndexError as e:
        numpy_got = f"IndexError: {e}"
    print(f"{what}: tinygrad {got}; NumPy {numpy_got}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
