"""MLX: calls NumPy refuses with TypeError/OverflowError/ValueError raise other types, or pass.

The spec asks for NumPy's exception type at the call. MLX 0.32.4 raises:

* bitwise ops on floats: ``RuntimeError`` or ``ValueError`` (NumPy ``TypeError``), and
  ``negative`` of bool ``ValueError``; ``subtract`` of two bools and ``sign`` of bool
  succeed (NumPy ``TypeError``) -- LZ-ERR-002;
* a float shape or size (``zeros((2.5, 3))``, ``zeros(2.0)``): ``RuntimeError:
  std::bad_cast`` (NumPy ``TypeError``); a shape too big to exist: ``OverflowError`` (NumPy
  ``ValueError``) -- LZ-ERR-006;
* ``asarray([1, 2**70], dtype=int64)``: ``RuntimeError: std::bad_cast`` (NumPy
  ``OverflowError``) -- LZ-ERR-007;
* a string operand: ``ValueError`` (NumPy ``TypeError``) -- LZ-ERR-008.

Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

F16 = np.ones(2, np.float16)
B = np.array([True, False])
CASES = [
    ("LZ-ERR-002", "bitwise_and(float16, bool)", lambda m, a: m.bitwise_and(a(F16), a(B))),
    ("LZ-ERR-002", "bitwise_invert(float16)",
     lambda m, a: getattr(m, "bitwise_invert", getattr(m, "invert", None))(a(F16))),
    ("LZ-ERR-002", "left_shift(float16, float16)", lambda m, a: m.left_shift(a(F16), a(F16))),
    ("LZ-ERR-002", "negative(bool)", lambda m, a: m.negative(a(B))),
    ("LZ-ERR-002", "subtract(bool, bool)", lambda m, a: m.subtract(a(B), a(B))),
    ("LZ-ERR-002", "sign(bool)", lambda m, a: m.sign(a(B))),
    ("LZ-ERR-006", "zeros((2.5, 3))", lambda m, a: m.zeros((2.5, 3))),
    ("LZ-ERR-006", "zeros(2.0)", lambda m, a: m.zeros(2.0)),
    ("LZ-ERR-006", "zeros((10**10, 10**10))", lambda m, a: m.zeros((10**10, 10**10))),
    ("LZ-ERR-007", "asarray([1, 2**70], int64)", lambda m, a: m.asarray([1, 2**70],
                                                                         dtype=m.int64)),
    ("LZ-ERR-008", "multiply('a', float16)", lambda m, a: m.multiply("a", a(F16))),
]


def kind(call, *args):
    """The built-in exception type ``call(*args)`` raises, with its message, or "no error"."""
    try:
        call(*args)
        return "no error"
    except Exception as e:
        base = next(k for k in type(e).__mro__ if k.__module__ == "builtins")
        return f"{base.__name__} ({str(e).splitlines()[0][:70]})"


wrong = 0
for rule, label, call in CASES:
    got = kind(lambda m, c: mx.eval(c(m, mx.array)), mx, call)
    want = kind(call, np, np.asarray)
    bad = got.split(" ")[0] != want.split(" ")[0]
    wrong += bad
    print(f"{rule} {label}: MLX {got}; NumPy {want}{'   <-- differs' if bad else ''}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
