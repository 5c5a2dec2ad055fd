"""The gradient of ``x // y`` raises ``RuntimeError`` instead of being zero.

NumPy's ``floor_divide`` is piecewise constant: its derivative is 0 in both arguments wherever
it is defined (what finite differences give away from the jumps). torch has no derivative for
``aten::floor_divide`` and raises ``RuntimeError: derivative for aten::floor_divide is not
implemented``. Breaks LZ-AD-001 (the gradient of every differentiable op).

Seen on torch 2.13.0 (torch._lazy, TorchScript backend) and PyTorch/XLA 2.9.0 (torch 2.9.1,
PJRT_DEVICE=CPU). Run with no argument for torch._lazy, with ``xla`` for PyTorch/XLA.
"""

import os
import sys

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
x = torch.tensor([0.6, 1.7, -2.5], dtype=torch.float64, device=dev, requires_grad=True)
y = torch.tensor([0.5, 0.5, 2.0], dtype=torch.float64, device=dev, requires_grad=True)
try:
    grads = torch.autograd.grad((x // y).sum(), [x, y])
    got = [g.cpu().numpy().tolist() for g in grads]
    bug = any(any(v != 0 for v in g) for g in got)
except RuntimeError as error:
    got, bug = f"RuntimeError: {error}", True
print(f"d/dx, d/dy of sum(x // y): torch {got}; NumPy (finite differences) [0, 0, 0] each")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
