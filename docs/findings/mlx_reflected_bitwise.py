"""MLX: a Python scalar on the left of ``&``, ``|``, ``^``, ``<<`` or ``>>`` raises TypeError.

``1 & x``, ``1 | x``, ``1 ^ x``, ``1 << x`` and ``1 >> x`` work in NumPy (the scalar is weak
and takes ``x``'s dtype); MLX arrays do not handle a scalar on the left of these operators
(``__rand__``, ``__rxor__``, ``__rlshift__``, ``__rrshift__`` do not exist, and ``__ror__``
does not take it), so Python raises ``TypeError: unsupported operand type(s)``. The
arithmetic reflected operators (``1 + x``, ``1 // x``, ``1 % x``, ``1 ** x``) work.

Breaks LZ-NUM-003 (Python scalars are weak operands, on either side). The suite drives ops
through functions (``mx.bitwise_and(1, x)`` works), so it does not see this; found by hand.
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import operator
import sys

import mlx.core as mx
import numpy as np

wrong = 0
for symbol, f in (("&", operator.and_), ("|", operator.or_), ("^", operator.xor),
                  ("<<", operator.lshift), (">>", operator.rshift), ("+", operator.add)):
    want = f(1, np.array([2, 3], np.int32))
    try:
        got = str(np.array(f(1, mx.array([2, 3], dtype=mx.int32))).tolist())
    except TypeError as e:
        got, wrong = f"TypeError: {e}", wrong + 1
    print(f"1 {symbol} int32[2, 3]: MLX {got}; NumPy {want.tolist()} ({want.dtype})")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
