"""MLX: ``x[key] = v`` into an empty selection refuses a value with extra leading length-1 axes.

NumPy drops a value's leading length-1 axes before broadcasting it into the selection, so
``x[[]] = [[1.0]]`` (a value of shape (1, 1) into a selection of shape (0,)) is a no-op, as is
``x[2:2] = [[1.0]]``. MLX 0.32.4 does the same for a non-empty selection (``x[[0, 2]] =
[[1.0]]`` sets both), but an empty one raises ``ValueError: [scatter] Updates with shape (0,1)
are too large for array with shape (0)``. Found by the oracle's test of setitem values with extra
leading ones (``test_setitem_of_a_value_with_extra_leading_ones_matches_numpy``).

Breaks LZ-NUM-014 (``__setitem__`` matches the oracle).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

CASES = [((0,), "index array", (1, 1)), ((3,), "index array", (1, 1)), ((0,), "slice", (1, 1)),
         ((2, 0), "index array", (1, 1, 1))]

wrong = 0
for shape, kind, value_shape in CASES:
    host, value = np.zeros(shape, np.float32), np.ones(value_shape, np.float32)
    key = np.arange(min(shape[0], 2), dtype=np.int32)[:0 if 0 in shape else 2]
    want = host.copy()
    try:
        x = mx.array(host)
        if kind == "slice":
            want[0:0] = value
            x[0:0] = mx.array(value)
        else:
            want[key] = value
            x[mx.array(key)] = mx.array(value)
        got: object = np.array(x)
        ok = np.array_equal(got, want)
    except ValueError as e:
        got, ok = f"ValueError: {e}", False
    wrong += not ok
    print(f"x = zeros({shape}); x[{kind} {key.tolist() if kind != 'slice' else '0:0'}] = "
          f"ones({value_shape}): {'ok' if ok else got}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
