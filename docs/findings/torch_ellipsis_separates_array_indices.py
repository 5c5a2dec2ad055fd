"""``x[:, [0, 2], ..., 0]`` has shape (5, 2) where NumPy gives (2, 5).

NumPy puts the broadcast index axes first when basic indices (here an ``...``, even one that
stands for no axes) separate the array indices (an integer counts as one); torch keeps them in
place, as if the indices were adjacent. Breaks LZ-NUM-013 (the same as tinygrad and MLX).

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
x = np.arange(5 * 4 * 4, dtype=np.float32).reshape(5, 4, 4)
bug = False
for key in ((slice(None), [0, 2], Ellipsis, 0), (slice(None), [0, 2], Ellipsis, [1, 3])):
    want = x[key]
    got = torch.from_numpy(x).to(dev)[key].cpu().numpy()
    print(f"x{list(key)} of a (5, 4, 4) array: torch shape {got.shape}; NumPy {want.shape}")
    bug = bug or got.shape != want.shape or not np.array_equal(got, want)
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
