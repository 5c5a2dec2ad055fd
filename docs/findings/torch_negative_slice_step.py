"""A slice with a negative step raises ``ValueError`` instead of reversing.

NumPy: ``x[::-1]`` is ``x`` reversed, ``x[::-2]`` every other element from the end; torch
refuses every negative step (``ValueError: step must be greater than zero``), in indexing and
in ``x[::-1] = v``. Breaks LZ-NUM-013, LZ-NUM-014, LZ-REC-004 and the gradient tests of
getitem/setitem (LZ-AD-001, LZ-AD-002).

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
x = np.arange(5.0)
bug = False
for label, run, want in (
        ("x[::-1]", lambda t: t[::-1], x[::-1]),
        ("x[3::-2]", lambda t: t[3::-2], x[3::-2])):
    try:
        got = run(torch.from_numpy(x).to(dev)).cpu().numpy()
        bug = bug or not np.array_equal(got, want)
    except ValueError as error:
        got, bug = f"ValueError: {error}", True
    print(f"{label}: torch {got}; NumPy {want}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
