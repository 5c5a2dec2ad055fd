"""Calls NumPy refuses with TypeError or ValueError raise RuntimeError or AssertionError.

Each call below fails in tinygrad too, at the call, but with another exception type than the
spec asks for: an operand that is neither a tensor nor a number (LZ-ERR-008: TypeError), a float
shape (LZ-ERR-006: TypeError), an op on dtypes NumPy has no loop for (LZ-ERR-002: TypeError), an
integer tensor to a negative power (LZ-ERR-007: ValueError), the gradient of a non-scalar or
with respect to an integer tensor (LZ-AD-006: TypeError).

Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

import numpy as np
from tinygrad import Tensor


def f32() -> Tensor:
    """A fresh float32 tensor of shape (2, 3)."""
    return Tensor(np.ones((2, 3), np.float32), device="CPU")


def i64() -> Tensor:
    """A fresh int64 tensor [1, 2, 3]."""
    return Tensor(np.arange(1, 4), device="CPU")


CASES = [  # (what, the tinygrad call, the NumPy call, the type the spec wants)
    ("x + None", lambda: f32() + None, lambda: np.ones(3) + None, TypeError),
    ("zeros((2.5, 3))", lambda: Tensor.zeros((2.5, 3)), lambda: np.zeros((2.5, 3)), TypeError),
    ("float16 << float16", lambda: f32().half() << f32().half(),
     lambda: np.ones(2, np.float16) << np.ones(2, np.float16), TypeError),
    ("int ** -1", lambda: i64() ** -1, lambda: np.arange(1, 4) ** -1, ValueError),
    ("grad of a non-scalar", lambda: (f32() * 2).gradient(f32()), None, TypeError),
    ("grad wrt an int tensor", lambda: (i64() * 1.0).sum().gradient(i64()), None, TypeError),
]
bug = False
for what, call, numpy_call, want in CASES:
    try:
        call()
        got = "no error"
    except Exception as e:
        got = f"{type(e).__name__}: {str(e)[:70]}"
        bug = bug or not isinstance(e, want)
    if numpy_call is None:
        numpy_got = "(no NumPy equivalent)"
    else:
        try:
            numpy_call()
            numpy_got = "no error"
        except Exception as e:
            numpy_got = type(e).__name__
    print(f"{what}: tinygrad {got}; NumPy {numpy_got}; spec {want.__name__}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
