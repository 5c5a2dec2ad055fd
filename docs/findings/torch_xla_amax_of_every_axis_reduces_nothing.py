"""``torch.amax(x)`` and ``torch.amin(x)`` with no ``dim`` return ``x`` itself, unreduced.

torch documents ``dim=()`` (the default) as every axis, as on the CPU and torch._lazy: the
maximum of ``arange(16).reshape(4, 4)`` is ``15`` (NumPy ``max``). PyTorch/XLA returns the
``(4, 4)`` input unchanged, so its gradient is the cotangent everywhere instead of at the
maximum. Breaks LZ-AD-001 (the gradient of ``max``/``min`` over every axis; the oracle's forward
tests of the reductions fail on dtypes first).

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
x = np.arange(16.0).reshape(4, 4)
bug = False
for name, want in (("amax", x.max()), ("amin", x.min())):
    got = getattr(torch, name)(torch.from_numpy(x).to(dev)).cpu().numpy()
    bad = got.shape != () or got != want
    bug = bug or bad
    print(f"torch.{name}(x) of shape (4, 4): torch shape {got.shape}, "
          f"{got.tolist() if got.size < 2 else 'the input itself'}; NumPy {want} (shape ())")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
