"""Ops NumPy refuses for their dtypes are accepted: ``-b``, ``b - b``, ``sign(b)``, ``i | 2.5``.

NumPy has no loop for negative, subtract or sign on booleans, nor for bitwise ops with a float
operand, and raises TypeError at the call. tinygrad records them: ``-b`` and ``sign(b)`` come out
as booleans, ``b - b`` as a boolean difference, and ``int16 | 2.5`` records fine but fails only
when run (RuntimeError "UOp verification failed"). Breaks LZ-ERR-002 (dtypes NumPy has no loop
for raise TypeError at the call).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

b = np.array([True, False])
CASES = [("-b", lambda t: -t, lambda a: -a), ("b - b", lambda t: t - t, lambda a: a - a),
         ("sign(b)", lambda t: t.sign(), np.sign)]
bug = False
for what, call, numpy_call in CASES:
    try:
        got = f"recorded, value {call(Tensor(b, device='CPU')).numpy()}"
        bug = True
    except TypeError as e:
        got = f"TypeError: {e}"
    try:
        numpy_got = repr(numpy_call(b))
    except TypeError as e:
        numpy_got = f"TypeError: {str(e)[:60]}"
    print(f"{what}: tinygrad {got}; NumPy {numpy_got}")
i = np.array([3], np.int16)
try:
    t = Tensor(i, device="CPU") | 2.5
    try:
        got = f"recorded ({t.dtype}); running it: {t.numpy()}"
    except Exception as e:
        got = f"recorded ({t.dtype}); running it: {type(e).__name__}: {str(e)[:50]}"
    bug = True
except TypeError as e:
    got = f"TypeError: {e}"
try:
    numpy_got = repr(i | 2.5)
except TypeError as e:
    numpy_got = f"TypeError: {str(e)[:60]}"
print(f"int16 | 2.5: tinygrad {got}; NumPy {numpy_got}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
