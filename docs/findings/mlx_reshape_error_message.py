"""MLX: the error of an impossible ``reshape`` does not name the array's shape.

``reshape`` of a (2, 3) array into (4,) raises at the call, as it should, but the message is
``[reshape] Cannot reshape array of size 6 into shape (4).``: it names the size, not the shape
(2, 3) the caller has to find. NumPy: ``cannot reshape array of size 6 into shape (4,)`` names
neither, so this is a (minor) departure from the spec, not from NumPy.

Breaks LZ-ERR-001 (an op given incompatible shapes raises at the call, naming the shapes
involved).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import re
import sys

import mlx.core as mx
import numpy as np

try:
    mx.reshape(mx.zeros((2, 3)), (4,))
    message = "no error"
except Exception as e:
    message = f"{type(e).__name__}: {e}"
try:
    np.reshape(np.zeros((2, 3)), (4,))
    numpy = "no error"
except Exception as e:
    numpy = f"{type(e).__name__}: {e}"
names = re.search(r"[\[(]?\b2\s*[,x]\s*3\b", message) is not None
print(f"reshape((2, 3) array, (4,)): MLX {message}; NumPy {numpy}")
print(f"MLX's message names the shape (2, 3): {names}")
print("fixed" if names else "bug present")
sys.exit(0 if names else 1)
