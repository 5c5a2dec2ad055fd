"""A cache hit runs another program: ``x * x + y`` after ``x * y + y`` gives ``x * y + y``.

The graph hash leaves out which parameter an op reads, and the compile cache is keyed by it:
once ``x * y + y`` is compiled, ``x * x + y`` on new data has the same hash, hits the cache and
runs the first program. NumPy: ``[14, 22]``; torch: ``[20, 30]``, silently. Breaks LZ-HASH-002
(the key distinguishes which parameters an op reads) and so LZ-HASH-005 and LZ-CACHE-003.

Seen on torch 2.13.0 (torch._lazy, TorchScript backend) and PyTorch/XLA 2.9.0 (torch 2.9.1,
PJRT_DEVICE=CPU). Run with no argument for torch._lazy, with ``xla`` for PyTorch/XLA.
"""

import os
import sys

import numpy as np
import torch


def device():
    """torch._lazy's device, or PyTorch/XLA's (on the CPU) when the argument is ``xla``."""
    if sys.argv[1:] == ["xla"]:
        os.environ.setdefault("PJRT_DEVICE", "CPU")
        import torch_xla
        return torch_xla.device()
    import torch._lazy.ts_backend
    torch._lazy.ts_backend.init()
    return torch.device("lazy")


dev = device()


def hashes_and_value(f, x, y):
    """The graph hash of ``f(x, y)`` on the device, and its value."""
    tx, ty = (torch.tensor(v, device=dev) for v in (x, y))
    out = f(tx, ty)
    if dev.type == "lazy":
        key = torch._C._lazy._get_graph_hash([out])
    else:
        key = sys.modules["torch_xla"]._XLAC._get_graph_hash([out])
    return key, out.cpu().numpy()


x0, y0 = np.array([1.0, 2.0]), np.array([10.0, 20.0])
x1, y1 = np.array([3.0, 4.0]), np.array([5.0, 6.0])
key0, first = hashes_and_value(lambda x, y: x * y + y, x0, y0)
key1, got = hashes_and_value(lambda x, y: x * x + y, x1, y1)
want = x1 * x1 + y1
print(f"x * y + y: torch {first}; NumPy {x0 * y0 + y0}")
print(f"then x * x + y on new data: torch {got}; NumPy {want}")
print(f"same graph hash: {key0 == key1}")
bug = key0 == key1 or not np.array_equal(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
