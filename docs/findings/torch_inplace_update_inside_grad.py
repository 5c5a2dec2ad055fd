"""Differentiating a function that updates its argument in place raises ``RuntimeError``.

``def f(x): x *= 3.0; return (x * x).sum()`` has the gradient ``18 x`` (NumPy, by hand), and
the caller's ``x`` keeps its value. torch refuses it, through ``torch.autograd.grad`` and
``torch.func.grad`` alike: ``a leaf Variable that requires grad is being used in an in-place
operation``. Breaks LZ-AD-009 (an in-place update of an argument inside the differentiated
function is differentiated through).

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


def f(t):
    """``sum((3 t)^2)``, scaling its argument in place."""
    t *= 3.0
    return (t * t).sum()


x = np.array([1.0, 2.0])
want = 18 * x
bug = False
for label, gradient in (
        ("torch.autograd.grad", lambda t: torch.autograd.grad(f(t), t)[0]),
        ("torch.func.grad", lambda t: torch.func.grad(f)(t))):
    t = torch.from_numpy(x.copy()).to(dev).detach().requires_grad_(label.endswith("autograd.grad"))
    try:
        got = gradient(t).cpu().numpy()
        bug = bug or not np.allclose(got, want)
    except RuntimeError as error:
        got, bug = f"RuntimeError: {error}", True
    print(f"{label}: torch {got}; NumPy {want}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
