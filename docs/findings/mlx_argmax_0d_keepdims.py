"""MLX: ``argmax``/``argmin`` of a 0-d array with ``keepdims=True`` raises a C++ error.

NumPy gives 0 (``np.argmax(np.float32(3.0), keepdims=True) -> 0``); MLX 0.32.4
raises ``ValueError: cannot create std::vector larger than max_size()`` at the call. Without
``keepdims`` it works.

Breaks LZ-NUM-010 (reductions over any axes, with or without ``keepdims``, match the oracle).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

wrong = 0
for name in ("argmax", "argmin"):
    for keepdims in (False, True):
        want = getattr(np, name)(np.array(3.0, np.float32), keepdims=keepdims)
        try:
            got = repr(np.array(getattr(mx, name)(mx.array(3.0), keepdims=keepdims)))
        except Exception as e:
            got, wrong = f"{type(e).__name__}: {e}", wrong + 1
        print(f"{name}(0-d, keepdims={keepdims}): MLX {got}; NumPy {want!r}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
