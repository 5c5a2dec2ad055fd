"""MLX: ``all`` over every axis of an empty array of two or more dimensions is False.

The logical AND of no values is True (NumPy: ``np.all(np.zeros((2, 0))) -> True``). MLX 0.32.4
gives True for a 1-D empty array but False once the empty array has two or more dimensions
and every axis is reduced (``axis=None`` or all axes named). ``any`` of the same inputs is
False, as it should be (the conformance oracle once saw it return True, and could not make it
again: the output may not be initialised for an empty input). The 1-D case is left out here:
reductions of empty 1-D arrays can hang (``mlx_empty_reduction_hang.py``).

Breaks LZ-NUM-010 (reductions over any axes match the oracle in value).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import numpy as np

CASES = [((2, 0), None), ((0, 3), (0, 1)), ((4, 4, 0), (0, 1, 2)),
         ((3, 0, 1), None)]

wrong = 0
for shape, axis in CASES:
    host = np.zeros(shape, bool)
    for name in ("all", "any"):
        got = np.array(getattr(mx, name)(mx.array(host), axis=axis)).item()
        want = bool(getattr(np, name)(host, axis=axis))
        flag = "" if got == want else "   <-- wrong"
        wrong += got != want
        print(f"mx.{name}(zeros({shape}, bool), axis={axis}): MLX {got}, NumPy {want}{flag}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
