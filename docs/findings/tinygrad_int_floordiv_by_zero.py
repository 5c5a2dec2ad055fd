"""Integer floor division (and remainder) by zero kills the process with SIGFPE.

NumPy defines ``x // 0`` and ``x % 0`` for integers as 0 (with a RuntimeWarning); tinygrad's CPU
backend emits a C division by zero, and the process dies with SIGFPE at the barrier. Where the
divisor is known to the compiler the result is garbage instead: ``int32 // bool`` with a False
divisor returns x, and 0-d ``0 // 0`` (0-d arrays become constants) returns 1. The op's
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
from tinygrad import Tensor

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
a, b = np.array([679492406, 5666], np.int32), np.array([True, False])
got = (Tensor(a, device="CPU") // Tensor(b, device="CPU")).numpy().tolist()
zero = np.array(0, np.int8)
got0 = int((Tensor(zero, device="CPU") // Tensor(zero, device="CPU")).numpy())
with np.errstate(all="ignore"):
    want, want0 = (a // b).tolist(), int(zero // zero)
print(f"int32 {a.tolist()} // bool {b.tolist()}: tinygrad {got}; NumPy {want}")
print(f"0-d int8 0 // 0: tinygrad {got0}; NumPy {want0}")
bug = bug or got != want or got0 != want0
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
