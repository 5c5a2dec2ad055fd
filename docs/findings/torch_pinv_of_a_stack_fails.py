"""``torch.linalg.pinv`` of a stack of matrices raises ``RuntimeError``.

NumPy's ``linalg.pinv`` of an array of shape ``(2, 1, 1)`` is the stack of the two inverses.
torch._lazy raises "The operator aten::as_strided appears to be a view operator, but it has no
implementation for the backend lazy:0"; PyTorch/XLA raises "Check failed: t->size(dim) ==
expected_size (1 vs. 2) ... for bmm". One matrix alone works. Breaks LZ-NUM-018.

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
bug = False
for a in (np.array([[[2.0]], [[-0.5]]]), np.arange(8.0).reshape(2, 2, 2) + np.eye(2)):
    want = np.linalg.pinv(a)
    try:
        got = torch.linalg.pinv(torch.from_numpy(a).to(dev)).cpu().numpy()
        bug = bug or not np.allclose(got, want)
        got = got.tolist()
    except RuntimeError as error:
        got, bug = f"RuntimeError: {str(error).splitlines()[0][:110]}", True
    print(f"pinv of shape {a.shape}: torch {got}; NumPy {want.tolist()}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
