"""Sorts, linalg functions and FFTs run when they are recorded, not at the barrier.

A lazy tensor records an op and runs nothing until a barrier. Both peers have no lowering for
many of these ops and run them eagerly on the CPU at the call (their ``aten::`` fallback
counters; PyTorch/XLA also executes the pending input to feed them), so recording them
executes programs: ``torch.sort``, ``torch.linalg.inv``/``cholesky``/``eigh``/``matrix_norm
(ord="nuc")`` and ``torch.fft.rfft``/``irfft``/``fftshift`` on one or both. Breaks LZ-REC-001
(recording an op executes nothing), as the tests of LZ-NUM-018 and LZ-NUM-019 check it.

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
        import torch_xla.core.xla_model
        import torch_xla.debug.metrics
        return torch_xla.device()
    import torch._lazy.metrics
    import torch._lazy.ts_backend
    torch._lazy.ts_backend.init()
    return torch.device("lazy")


dev = device()


def runs():
    """Programs executed and ops run eagerly on the CPU so far, from the peer's metrics."""
    if dev.type == "lazy":
        metrics = sys.modules["torch._lazy.metrics"]
        names = [n for n in metrics.counter_names() if n.startswith("aten::")
                 or n in ("UncachedCompile", "CachedCompile")]
        torch._lazy.wait_device_ops()
    else:
        metrics = sys.modules["torch_xla.debug.metrics"]
        names = [n for n in metrics.counter_names() if n.startswith("aten::")
                 or n == "ExecuteComputation"]
        sys.modules["torch_xla.core.xla_model"].wait_device_ops()
    return {n: metrics.counter_value(n) or 0 for n in names}


a = np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]], np.float32)
x = torch.from_numpy(a).to(dev) * 1.0  # pending, as a recorded input is
bug = False
for label, record in (
        ("sort", lambda: torch.sort(x, dim=0, stable=True)),
        ("linalg.inv", lambda: torch.linalg.inv(x)),
        ("linalg.cholesky", lambda: torch.linalg.cholesky(x)),
        ("linalg.eigh", lambda: torch.linalg.eigh(x)),
        ("linalg.matrix_norm(nuc)", lambda: torch.linalg.matrix_norm(x, ord="nuc")),
        ("fft.rfft", lambda: torch.fft.rfft(x)),
        ("fft.fftshift", lambda: torch.fft.fftshift(x))):
    before = runs()
    record()
    after = runs()
    ran = {n: v - before.get(n, 0) for n, v in after.items() if v != before.get(n, 0)}
    bug = bug or bool(ran)
    print(f"recording {label}: ran {ran or 'nothing'}; a lazy tensor runs nothing")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
