"""``cumsum``, ``tril`` and ``triu`` of unsigned integers give the wrong dtype, or fail.

NumPy's ``cumulative_sum`` of ``uint8``/``uint16``/``uint32`` is ``uint64`` (unsigned ints sum in
the unsigned default), and ``tril``/``triu`` keep the dtype. torch._lazy's ``cumsum`` of them is
``int64``, and its ``tril``/``triu`` of ``uint64`` have no TorchScript kernel
(``NotImplementedError``). PyTorch/XLA's ``cumsum`` keeps the input's dtype (``uint8`` sums
wrap at 256), its ``cumsum`` of an empty ``bool`` tensor fails to lower ("Window ... has a
non-positive dimension"), and its ``tril``/``triu`` of ``uint64`` are ``int64``. Breaks LZ-NUM-016.

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
bug = False
for label, x, run, want in (
        ("cumsum", np.array([200, 100], np.uint8), lambda t: torch.cumsum(t, 0),
         np.cumulative_sum(np.array([200, 100], np.uint8))),
        ("cumsum", np.array([1, 2], np.uint32), lambda t: torch.cumsum(t, 0),
         np.cumulative_sum(np.array([1, 2], np.uint32))),
        ("cumsum", np.zeros(0, bool), lambda t: torch.cumsum(t, 0),
         np.cumulative_sum(np.zeros(0, bool))),
        ("tril", np.ones((2, 2), np.uint64), torch.tril, np.tril(np.ones((2, 2), np.uint64))),
        ("triu", np.ones((2, 2), np.uint64), torch.triu, np.triu(np.ones((2, 2), np.uint64)))):
    try:
        out = run(torch.from_numpy(x).to(dev)).cpu().numpy()
        got = f"{out.dtype} {out.tolist()}"
        bug = bug or out.dtype != want.dtype or not np.array_equal(out, want)
    except Exception as error:
        got, bug = f"{type(error).__name__}: {str(error).splitlines()[0][:80]}", True
    print(f"{label}({x.dtype}{list(x.shape)}): torch {got}; NumPy {want.dtype} {want.tolist()}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
