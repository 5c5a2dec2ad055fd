"""Inputs NumPy refuses at the call raise other error types, or nothing at the call.

NumPy raises ``ValueError`` for ``zeros((10**10, 10**10))`` (an array that cannot exist) and for
an integer array to the power ``-1``, and ``OverflowError`` for ``asarray([1, 2**70],
dtype=int64)``. torch raises ``RuntimeError`` for the first (both peers), ``RuntimeError`` for
the power on torch._lazy and nothing at all on PyTorch/XLA (which then computes a value), and
``ValueError`` ("Overflow when unpacking long long") for the third. Breaks LZ-ERR-006 and
LZ-ERR-007 (the error type NumPy raises, at the call).

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
i = torch.tensor([1, 2, 3], device=dev)
bug = False
for label, call, want in (
        ("zeros((10**10, 10**10))",
         lambda: torch.zeros((10**10, 10**10), device=dev), ValueError),
        ("int64 tensor ** -1", lambda: i ** -1, ValueError),
        ("asarray([1, 2**70], int64)",
         lambda: torch.asarray([1, 2**70], dtype=torch.int64, device=dev), OverflowError)):
    try:
        result = call()
        got = f"no error at the call (then {result.cpu().numpy()})"
    except Exception as error:
        got = f"{type(error).__name__}: {str(error).splitlines()[0][:90]}"
    bug = bug or not got.startswith(want.__name__)
    print(f"{label}: torch {got}; NumPy {want.__name__}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
