"""Integer floor division (and remainder) by zero kills the process with SIGFPE.

NumPy defines ``x // 0`` and ``x % 0`` for integers as 0 (with a RuntimeWarning); tinygrad's CPU
backend emits a C division by zero, and the process dies with SIGFPE at the barrier. The op's
domain (``ops.toml``: ``divisor``) restricts only float divisors, so this breaks LZ-NUM-001
(elementwise results equal the oracle's), and a crash rather than an exception also breaks
LZ-ERR-009 (a failing program must raise, and leave other tensors and later barriers intact).

Seen on tinygrad 0.14.0, CPU device (clang). Each op runs in a subprocess, whose signal is
reported.
"""

import signal
import subprocess
import sys

import numpy as np

CHILD = """
import numpy as np
from tinygrad import Tensor
a = Tensor(np.array([7, -7, 0], np.int32), device="CPU")
b = Tensor(np.array([0, 0, 0], np.int32), device="CPU")
print((a {op} b).numpy().tolist())
"""

bug = False
for op in ("//", "%"):
    with np.errstate(all="ignore"):
        want = eval(f"np.array([7, -7, 0], np.int32) {op} np.array([0, 0, 0], np.int32)")
    run = subprocess.run([sys.executable, "-c", CHILD.format(op=op)], capture_output=True,
                         text=True, timeout=300)
    if run.returncode < 0:
        got = f"killed by {signal.Signals(-run.returncode).name}"
        bug = True
    elif run.returncode != 0:
        got = f"exit status {run.returncode}: {run.stderr.strip().splitlines()[-1:]}"
        bug = True
    else:
        got = run.stdout.strip()
        bug = bug or got != str(want.tolist())
    print(f"int32 x {op} 0: tinygrad: {got}; NumPy: {want.tolist()}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
