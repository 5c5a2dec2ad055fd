"""Linalg functions of a stack of thin matrices return the wrong batch.

NumPy: the nuclear norm of an array of shape ``(2, 1, 1)`` has shape ``(2,)``, one per matrix;
``matrix_rank`` of shape ``(3, 1, 1, 3)`` has shape ``(3, 1)``; ``svd`` of shape ``(3, 1, 2, 1)``
gives ``Vh`` of shape ``(3, 1, 1, 1)``. PyTorch/XLA returns shapes ``(1,)`` and ``(1, 1)`` (the
stack is reduced as if it were one matrix: wrong values) and ``Vh`` of shape ``(1, 3, 1, 1)`` (the
batch axes swapped). Breaks LZ-NUM-018.

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
bug = False
a = np.array([[[2.0]], [[-0.5]]])
b = np.array([[[[1.0, 0, 2]]], [[[0.0, 0, 0]]], [[[3.0, 1, 0]]]])
c = np.array([[[[1.0], [0.0]]], [[[0.0], [-2.0]]], [[[3.0], [4.0]]]])
for label, got, want in (
        ("matrix_norm(nuc) of shape (2, 1, 1)",
         lambda: torch.linalg.matrix_norm(torch.from_numpy(a).to(dev), ord="nuc"),
         np.linalg.matrix_norm(a, ord="nuc")),
        ("matrix_rank of shape (3, 1, 1, 3)",
         lambda: torch.linalg.matrix_rank(torch.from_numpy(b).to(dev)),
         np.linalg.matrix_rank(b)),
        ("svd(full_matrices=False)[2] of shape (3, 1, 2, 1)",
         lambda: torch.linalg.svd(torch.from_numpy(c).to(dev), full_matrices=False)[2],
         np.linalg.svd(c, full_matrices=False)[2])):
    out = got().cpu().numpy()
    bug = bug or out.shape != want.shape or not np.allclose(np.abs(out), np.abs(want))
    print(f"{label}: torch {out.tolist()} (shape {out.shape}); NumPy {want.tolist()} "
          f"(shape {want.shape})")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
