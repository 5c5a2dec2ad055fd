"""A realize that fails leaves the other tensors it covered reading a buffer never written.

Realizing a good tensor (``exp(x)``) together with one too large to allocate (4 TiB of float32)
raises OSError. Afterwards the good tensor's UOp has been replaced by a BUFFER that the failed
schedule never wrote, so the tensor counts as unrealized and every observation of it returns
stale memory (here [0, 1, 2], not exp([0, 1, 2])), with no error. The spec's barrier is
failure-atomic: every other tensor it covers materialises to its correct value (LZ-ERR-009),
and after any error other pending tensors still give their correct values (LZ-ERR-003). (The
failing tensor itself raises OSError whenever it is observed, as the rule asks.)

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor

x = np.arange(3, dtype=np.float32)
good = Tensor(x, device="CPU").exp()
bad = Tensor.ones(2**20, 2**20, dtype="float32", device="CPU") * 2
try:
    Tensor.realize(good, bad)
    error = "nothing"
except Exception as e:
    error = f"{type(e).__name__}: {e}"
pending = not good.uop.is_realized
got = good.numpy()
want = np.exp(x)
print(f"tinygrad: realize(good, bad) raised {error}; good still pending: {pending}; "
      f"good observed = {got}")
print(f"NumPy: good = {want}; spec: good materialised by that barrier")
bug = pending or not np.allclose(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
