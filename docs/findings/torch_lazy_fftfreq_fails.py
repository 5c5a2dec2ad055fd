"""``torch.fft.fftfreq(n)`` on the lazy device raises ``RuntimeError`` for every ``n >= 2``.

NumPy's ``fft.fftfreq(5, d=0.1)`` is ``[0, 2, 4, -4, -2]``. torch._lazy raises "expected src to
have a size equal to the slice of self. src size = [2], slice size = [0]" (``rfftfreq`` works).
Breaks LZ-NUM-019.

Seen on torch 2.13.0 (torch._lazy, TorchScript backend; no argument); PyTorch/XLA 2.9.0
(argument ``xla``) gives NumPy's answer.
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
for n in (1, 2, 5):
    want = np.fft.fftfreq(n, d=0.1)
    try:
        got = torch.fft.fftfreq(n, d=0.1, dtype=torch.float64, device=dev).cpu().numpy()
        bug = bug or not np.allclose(got, want)
    except RuntimeError as error:
        got, bug = f"RuntimeError: {str(error).splitlines()[0]}", True
    print(f"fftfreq({n}, d=0.1): torch {got}; NumPy {want}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
