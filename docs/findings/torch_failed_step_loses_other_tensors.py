"""When one tensor of a step fails to run, the step's other tensors are lost.

A barrier should be failure-atomic: the failing tensor raises, every other one materialises to
its value. Here ``bad`` cannot run (torch._lazy: negating a ``uint16`` tensor, which has no
TorchScript kernel; PyTorch/XLA: a 4 TiB tensor, out of memory). The step raises, as it should;
but afterwards ``exp(x)`` raises "Trying to access data while an async operation is in flight"
every time it is read, on both peers, and so does the input ``x`` itself on torch._lazy. Breaks
LZ-ERR-009 (PyTorch/XLA) and LZ-ERR-003; on torch._lazy the oracle sees it as LZ-REC-007's
failure (its test negates a ``uint16`` input and reads it back after a barrier).

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


def step():
    """The barrier: ``mark_step`` of the peer, waiting for it."""
    if dev.type == "lazy":
        torch._lazy.mark_step(wait=True)
    else:
        sys.modules["torch_xla"].sync(wait=True)


host = np.array([1.0, 2.0, 3.0], np.float32)
x = torch.from_numpy(host).to(dev)
good = torch.exp(x)
if dev.type == "lazy":
    bad = -torch.from_numpy(np.array([1, 2], np.uint16)).to(dev)
else:
    bad = torch.ones((2**20, 2**20), device=dev) * 2.0
try:
    step()
    print("the step raised nothing; a step with a tensor that cannot run raises")
except Exception as error:
    message = str(error).strip().splitlines()[-1][:80]
    print(f"the step raised {type(error).__name__} (right): {message}")
bug = False
for label, t, want in (("x", x, host), ("exp(x)", good, np.exp(host))):
    for _ in range(2):
        try:
            got = t.cpu().numpy()
            bug = bug or not np.allclose(got, want)
        except RuntimeError as error:
            got, bug = f"RuntimeError: {str(error).strip().splitlines()[-1][:90]}", True
    print(f"{label} read after the failed step: torch {got}; NumPy {want}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
