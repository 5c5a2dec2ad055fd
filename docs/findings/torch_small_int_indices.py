"""Index tensors of ``int8`` or ``int16`` are refused by indexing, ``take`` and ``take_along_dim``.

NumPy (and the Array API) take integer index arrays of any integer dtype. torch indexing
(``x[i]``, what the Array API's ``take`` is) raises ``IndexError`` (torch._lazy) or
``RuntimeError`` (PyTorch/XLA): "tensors used as indices must be long, int, byte or bool
tensors"; ``torch.take_along_dim`` raises ``RuntimeError``: "dtype of indices should be Long".
Breaks LZ-NUM-013 and LZ-NUM-016.

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
x = np.array([10.0, 20.0, 30.0])
bug = False
for dtype in (np.int8, np.int16):
    i = np.array([2, 0, -1], dtype)
    for label, run, want in (
            ("x[i]", lambda t, j: t[j], x[i]),
            ("take_along_dim(x, i, 0)", lambda t, j: torch.take_along_dim(t, j, dim=0),
             np.take_along_axis(x, i, 0))):
        try:
            got = run(torch.from_numpy(x).to(dev), torch.from_numpy(i).to(dev)).cpu().numpy()
            bug = bug or not np.array_equal(got, want)
        except (IndexError, RuntimeError) as error:
            got, bug = f"{type(error).__name__}: {str(error).splitlines()[0]}", True
        print(f"{label} with {np.dtype(dtype).name} i: torch {got}; NumPy {want}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
