"""tinygrad: optimizers update float64 weights in float32, and momentum or Adam crash on them.

``nn.optim`` keeps the learning rate as a float32 tensor and its state (momentum buffers, Adam's
moments) in ``OPTIM_DTYPE`` (float32). ``SGD(lr=0.1)`` on a float64 weight of 0 with a gradient of
1 gives ``-0.10000000149011612`` (float32's 0.1), where torch's formula gives ``-0.1``; with
momentum, the float64 gradient meets the float32 buffer and the step raises ``RuntimeError: assign
dtype mismatch dtypes.float != dtypes.double``.

Breaks LZ-OPT-001 and LZ-OPT-002 (an update keeps each weight's dtype and precision).
Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

from tinygrad import Tensor, dtypes
from tinygrad.helpers import Context
from tinygrad.nn import optim

wrong = 0
for name, make in [("SGD(lr=0.1)", lambda w: optim.SGD([w], 0.1)),
                   ("SGD(lr=0.1, momentum=0.9)", lambda w: optim.SGD([w], 0.1, momentum=0.9)),
                   ("Adam(lr=0.1)", lambda w: optim.Adam([w], 0.1))]:
    w = Tensor([0.0], dtype=dtypes.float64, device="CPU")
    opt = make(w)
    w.grad = Tensor([1.0], dtype=dtypes.float64, device="CPU")
    want = -0.1 if name.startswith("SGD") else -0.1 / (1 + 1e-8)
    try:
        with Context(TRAINING=1):
            opt.step()
        value = float(w.numpy()[0])
        ok, got = abs(value - want) < 1e-15, repr(value)
    except RuntimeError as e:
        ok, got = False, f"RuntimeError: {e}"
    wrong += not ok
    print(f"{name} on float64 w = [0], g = [1]: {got}, want {want!r}{'' if ok else '   <--'}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
