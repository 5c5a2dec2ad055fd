"""An out-of-range index list raises by running the indexing (torch._lazy), or never (XLA).

NumPy raises ``IndexError`` at the call for ``x[[0, 5]]`` on a length-3 array: the list is known
on the host. torch._lazy raises it too, but by running ``aten::index`` on the CPU at the call (a
fallback: every index list is looked up eagerly, in range or not); PyTorch/XLA raises
nothing and returns a value clamped into range (``x[[0, 5]]`` is ``[x[0], x[2]]``, ``x[[-4]]`` is
``[x[0]]``): silently wrong. ``x[[7]] = 1`` likewise. Breaks LZ-ERR-007 (an out-of-range entry of
an index list raises ``IndexError`` at the call) and LZ-ERR-001.

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
    import torch._lazy.metrics
    import torch._lazy.ts_backend
    torch._lazy.ts_backend.init()
    return torch.device("lazy")


dev = device()


def host_runs():
    """The ops torch._lazy has run eagerly on the CPU so far (its ``aten::`` counters)."""
    if dev.type != "lazy":
        return 0
    metrics = sys.modules["torch._lazy.metrics"]
    return sum(metrics.counter_value(n) for n in metrics.counter_names() if n.startswith("aten::"))


x = np.array([10, 20, 30])
bug = False
for label, call in (("x[[0, 5]]", lambda t: t[[0, 5]]), ("x[[-4]]", lambda t: t[[-4]]),
                    ("x[[7]] = 1", lambda t: t.__setitem__([7], 1) or t)):
    t = torch.from_numpy(x.copy()).to(dev)
    ran = host_runs()
    try:
        result = call(t)
    except IndexError as error:
        ran = host_runs() - ran
        bug = bug or ran > 0
        print(f"{label}: torch IndexError ({error}) after running {ran} op(s) on the host; "
              "NumPy IndexError at the call, running nothing")
        continue
    try:
        got = f"no error at the call; observed: {result.cpu().numpy()}"
    except Exception as error:
        got = f"no error at the call; observed: {type(error).__name__}: " \
              f"{str(error).strip().splitlines()[-1][:70]}"
    bug = True
    print(f"{label}: torch {got}; NumPy IndexError at the call")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
