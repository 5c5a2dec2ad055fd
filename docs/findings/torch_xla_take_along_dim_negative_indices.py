"""``take_along_dim`` reads the last element for every negative index, and loses gradients.

NumPy's ``take_along_axis([1, 2, 3], [1, -1, -3, 2, -2], 0)`` is ``[2, 3, 1, 3, 2]`` (negative
indices count from the end), as torch documents and does on the CPU and torch._lazy.
PyTorch/XLA returns ``[2, 3, 3, 3, 3]`` (each negative index reads the last element), and the
gradient of the sum is ``[0, 1, 1]`` where NumPy's counts give ``[1, 2, 2]``: three of the five
cotangents are lost. Breaks LZ-AD-001 (``take_along_axis``'s gradient with
repeated indices) and LZ-NUM-016.

Seen on PyTorch/XLA 2.9.0 (torch 2.9.1, PJRT_DEVICE=CPU; argument ``xla``); torch._lazy
(torch 2.13.0, no argument) gives NumPy's answer.
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
x = np.array([1.0, 2.0, 3.0])
i = np.array([1, -1, -3, 2, -2])
want = np.take_along_axis(x, i, 0)
want_grad = np.bincount(i % 3, minlength=3).astype(float)  # d sum / dx: how often each is read
t = torch.from_numpy(x).to(dev).requires_grad_(True)
y = torch.take_along_dim(t, torch.from_numpy(i).to(dev), dim=0)
grad = torch.autograd.grad(y.sum(), t)[0].cpu().numpy()
got = y.detach().cpu().numpy()
print(f"take_along_dim(x, {i.tolist()}): torch {got.tolist()}; NumPy {want.tolist()}")
print(f"its gradient (of the sum): torch {grad.tolist()}; NumPy {want_grad.tolist()}")
bug = not (np.array_equal(got, want) and np.array_equal(grad, want_grad))
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
