"""MLX: out-of-range indices read (and write) outside the array instead of raising.

``x[5]`` of a (2, 3) array, an index list ``x[[0, 5]]`` or ``x[:, [-4]]`` raise ``IndexError``
in NumPy at the call. MLX 0.32.4 raises nothing: the result holds whatever memory lies past
the buffer (garbage integers, NaNs), or the process dies of a segmentation fault
(``x[-3]`` of a (2, 3) array, every run here). ``x[5] = 7`` and ``x[[0, 9]] = 1`` raise
nothing either and silently drop (or misplace) the update.

Breaks LZ-ERR-001 (out-of-range static indices raise at the call) and LZ-ERR-007 (an
out-of-range entry of an index list raises ``IndexError`` at the call).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64). Each case runs in a child process, since a read
past the buffer can crash the interpreter.
"""

import subprocess
import sys

import numpy as np

CASES = {
    "x[5]": "x[5]",
    "x[-3]": "x[-3]",
    "x[[0, 5]]": "x[[0, 5]]",
    "x[:, [-4]]": "x[:, [-4]]",
    "x[5] = 7": "x.__setitem__(5, 7)",
    "x[[0, 9]] = 1": "x.__setitem__([0, 9], 1)",
}
CHILD = """
import mlx.core as mx, numpy as np, sys
x = mx.array(np.arange(6, dtype=np.int32).reshape(2, 3))
try:
    out = {expr}
except IndexError as e:
    print("IndexError:", e); sys.exit(0)
except Exception as e:
    print(type(e).__name__ + ":", e); sys.exit(2)
out = x if out is None else out
print("no error, value", np.array(out).tolist()); sys.exit(3)
"""

wrong = 0
for label, expr in CASES.items():
    host = np.arange(6, dtype=np.int32).reshape(2, 3)
    try:
        exec(expr, {"x": host})
        numpy = "no error"
    except IndexError as e:
        numpy = f"IndexError: {e}"
    done = subprocess.run([sys.executable, "-c", CHILD.format(expr=expr)], capture_output=True,
                          text=True, timeout=60)
    mlx = done.stdout.strip() or f"process died (exit {done.returncode})"
    wrong += done.returncode != 0
    print(f"{label} on a (2, 3) array: MLX {mlx}; NumPy {numpy}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
