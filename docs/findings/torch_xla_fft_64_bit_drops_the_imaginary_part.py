"""FFTs of ``complex128`` and ``float64`` tensors drop imaginary parts: wrong values.

NumPy's ``fft.fft([1, 2j, -1, 0.5])`` is ``[0.5+2j, 4+0.5j, -0.5-2j, -0.5j]``. PyTorch/XLA gives
``[0.5, 2, -0.5, 2]`` for ``complex128`` input (its imaginary part read as zero, and the result
has none), and ``rfft`` of ``float64`` loses the imaginary part of the result. ``complex64`` and
``float32`` are right. Breaks LZ-NUM-019 (every transform, every ``norm``).

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
for dtype, name in ((np.complex64, "fft"), (np.complex128, "fft"), (np.float32, "rfft"),
                    (np.float64, "rfft")):
    x = np.array([1, 2j, -1, 0.5] if name == "fft" else [1, 2, -1, 0.5], dtype)
    want = getattr(np.fft, name)(x)
    got = getattr(torch.fft, name)(torch.from_numpy(x).to(dev)).cpu().numpy()
    bad = not np.allclose(got, want)
    bug = bug or bad
    print(f"{name} of {x.dtype}: torch {np.round(got, 6).tolist()}; NumPy "
          f"{np.round(want, 6).tolist()}{'  <- wrong' if bad else ''}")
print("BUG PRESENT" if bug else "fixed")
sys.exit(1 if bug else 0)
