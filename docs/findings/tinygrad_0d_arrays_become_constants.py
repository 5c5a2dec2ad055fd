"""A 0-d NumPy array becomes a constant of the graph, not device data.

``Tensor(np.array(2.5))`` is a CONST UOp holding 2.5 (a 1-element 1-d array is a COPY of a
buffer). Its value is baked into the compiled kernel (a new value is a new kernel), and the
graph rewriter then simplifies with it: ``x * zero`` for a 0-d ``zero`` is folded to 0, so
inf * 0 gives 0 where NumPy gives NaN. Breaks LZ-LOW-001 (device data enter a compiled program
as parameters, never as constants) and, through the folding, LZ-NUM-001.

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

scalar = Tensor(np.array(2.5, np.float32), device="CPU")
vector = Tensor(np.array([2.5], np.float32), device="CPU")
print(f"tinygrad: 0-d input is {scalar.uop.op} (arg {scalar.uop.arg!r}); 1-d input is "
      f"{vector.uop.op}")
x = np.array([np.inf, 1.0], np.float32)
got = (Tensor(x, device="CPU") * Tensor(np.array(0.0, np.float32), device="CPU")).numpy()
with np.errstate(all="ignore"):
    want = x * np.array(0.0, np.float32)
print(f"tinygrad: [inf, 1] * 0-d 0 = {got}; NumPy: {want}")
bug = scalar.uop.op is not vector.uop.op or not np.array_equal(got, want, equal_nan=True)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
