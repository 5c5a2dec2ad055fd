"""``linalg.eigh`` of ``float64`` matrices: eigenvectors 10^5 times less accurate than NumPy's.

NumPy's ``linalg.eigh`` of a random symmetric 3 x 3 ``float64`` matrix reconstructs it
(``V diag(w) V^T``) to about ``1e-15`` of its scale. PyTorch/XLA's eigenvalues are as accurate,
but its eigenvectors reconstruct the matrix only to about ``1e-10`` (float32 gives ``1e-7``, as
it should): outside LZ-NUM-018's bound of ``64 n eps`` of the scale.

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
rng = np.random.default_rng(0)
a = rng.standard_normal((4, 3, 3))
a = a + a.transpose(0, 2, 1)
w, v = (t.cpu().numpy() for t in torch.linalg.eigh(torch.from_numpy(a).to(dev)))
w_numpy, v_numpy = np.linalg.eigh(a)
scale = np.abs(a).max()
error = np.abs(v @ (w[..., None] * v.transpose(0, 2, 1)) - a).max() / scale
error_numpy = np.abs(v_numpy @ (w_numpy[..., None] * v_numpy.transpose(0, 2, 1)) - a).max() / scale
bound = 64 * 3 * np.finfo(np.float64).eps
print(f"eigh reconstruction error / scale: torch {error:.1e}; NumPy {error_numpy:.1e}; "
      f"bound {bound:.1e}")
print(f"eigenvalues, largest difference from NumPy's: {np.abs(w - w_numpy).max():.1e}")
bug = error > bound
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
