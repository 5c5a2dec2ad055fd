"""Concatenating a bool tensor with a float tensor fails inside tinygrad's compiler.

``Tensor.cat`` of a (here empty) bool tensor and a float32 one, NumPy's ``concat(..., axis=None)``
of ``bool[0]`` and ``float32[]``, raises ``RuntimeError: UOp verification failed ... Ops.OR``:
the bool operand is combined with an OR after being cast to float. NumPy gives ``float32[1]``.
Breaks LZ-NUM-012 (shape functions match the oracle). Found by the oracle's concat test, which
draws operands of mixed dtypes.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

a, b = np.zeros(0, np.bool_), np.zeros(1, np.float32)
want = np.concat([a, b])
try:
    got = Tensor(a, device="CPU").cat(Tensor(b, device="CPU")).numpy()
    bug = got.dtype != want.dtype or not np.array_equal(got, want)
    print(f"tinygrad: {got!r}; NumPy: {want!r}")
except Exception as e:  # noqa: BLE001 -- what tinygrad raises is the finding
    print(f"tinygrad: {type(e).__name__}: {str(e)[:120]}; NumPy: {want!r}")
    bug = True
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
