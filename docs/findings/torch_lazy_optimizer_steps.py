"""torch._lazy: ``Adam`` runs a program in every ``step()``; ``AdamW`` compiles for a new rate.

An optimizer step on lazy tensors should be recorded like the forward and backward passes and
run at the next ``mark_step``, one compiled program for every step alike. On torch 2.13.0's
``torch._lazy`` (TorchScript backend, CPU), ``torch.optim.Adam`` and ``AdamW`` execute a graph
during each ``step()`` call (a ``CachedCompile`` or ``UncachedCompile`` counted before any
barrier), and ``AdamW`` compiles a new program at the ``mark_step`` after its learning rate
changes from 0.1 to 0.05 (a step at a constant rate compiles nothing after the second).

Breaks LZ-OPT-005 (a step is recorded, not run) and LZ-OPT-003 (no new program for a new
learning rate).
Seen on torch 2.13.0+cpu, torch._lazy with the TorchScript backend.
"""

import sys

import torch
import torch._lazy
import torch._lazy.metrics as metrics
import torch._lazy.ts_backend

torch._lazy.ts_backend.init()
device = torch.device("lazy")


def programs() -> int:
    """Graphs executed so far, compiled or served from torch._lazy's cache."""
    names = metrics.counter_names()
    return sum(metrics.counter_value(k) for k in ("UncachedCompile", "CachedCompile")
               if k in names)


def compiles() -> int:
    """Programs compiled so far."""
    names = metrics.counter_names()
    return metrics.counter_value("UncachedCompile") if "UncachedCompile" in names else 0


wrong = 0
for name in ("Adam", "AdamW"):
    w = torch.zeros(4, device=device)
    opt = getattr(torch.optim, name)([w], lr=0.1)
    for step, lr in enumerate([0.1, 0.1, 0.05]):
        for group in opt.param_groups:
            group["lr"] = lr
        w.grad = torch.full((4,), 0.5, device=device)
        before = programs()
        with torch.no_grad():
            opt.step()
        ran = programs() - before
        start = compiles()
        torch._lazy.mark_step()
        torch._lazy.wait_device_ops()
        new = compiles() - start
        late = step == 2 and new > 0
        wrong += ran > 0 or late
        print(f"{name} step {step} (lr {lr}): {ran} programs run inside step(), {new} compiled "
              f"at mark_step{'   <--' if ran or late else ''}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
