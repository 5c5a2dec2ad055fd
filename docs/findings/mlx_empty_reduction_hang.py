"""MLX: a reduction of an empty 1-D array sometimes never returns (``mx.eval`` hangs).

``mx.eval(mx.sum(mx.array(np.zeros(0, np.int8))))`` usually returns at once, but run a few
hundred times in a row it hangs for good in about half of the processes tried, with ``sum``,
``prod``, ``any`` and ``all`` alike (an elementwise op on the same empty array never hung).
NumPy returns the identity of the reduction (0, 1, False, True).

Breaks LZ-NUM-010 (reductions over any axes match the oracle) and LZ-BAR-006 (``sync``
materialises the named tensors): the barrier never completes.
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64, 2 CPU cores). The check runs the loop in child
processes with a timeout, up to six times, because the hang is intermittent.
"""

import subprocess
import sys

import mlx.core as mx
import numpy as np

CHILD = """
import mlx.core as mx, numpy as np
for _ in range(300):
    for f in (mx.sum, mx.prod, mx.any, mx.all):
        mx.eval(f(mx.array(np.zeros((0,), np.int8))))
print("returned")
"""

print(f"MLX {mx.__version__}; NumPy: sum/prod/any/all of int8[0] =",
      [np.sum(np.zeros(0, np.int8)).item(), np.prod(np.zeros(0, np.int8)).item(),
       np.any(np.zeros(0, np.int8)).item(), np.all(np.zeros(0, np.int8)).item()])
hung = 0
for attempt in range(1, 7):  # the hang is intermittent: stop at the first one
    try:
        done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                              timeout=30)
        result = done.stdout.strip() or f"exit {done.returncode}"
    except subprocess.TimeoutExpired:
        result, hung = "hung (no return within 30 s)", attempt
    print(f"attempt {attempt}: 300 x (sum, prod, any, all) of int8[0] in MLX: {result}")
    if hung:
        break
print(f"bug present: hung at attempt {hung}" if hung else "fixed (no hang in 6 attempts)")
sys.exit(1 if hung else 0)
