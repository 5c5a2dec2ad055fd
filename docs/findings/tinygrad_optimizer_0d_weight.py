"""tinygrad: an optimizer cannot update a 0-d weight.

``nn.optim`` keeps the learning rate as a tensor of shape (1,), so the update of a 0-d (scalar)
weight has shape (1,), and assigning it back raises ``ValueError: cannot broadcast tensor to
fewer dimensions. shape=(1,) to new_shape=()``. ``SGD``, ``SGD`` with momentum and ``Adam`` all
fail on a float32 weight ``w = Tensor(1.0)`` with gradient ``0.5``, where torch's formula gives
``0.95`` (SGD) and ``1 - 0.1 / (1 + 1e-8)`` (Adam) and keeps the shape ``()``. A weight of shape
(1,) steps fine.

Breaks LZ-OPT-001 (an optimizer step is the optimizer's formula, for weights of any shape;
every configuration of ``test_each_step_is_the_optimizers_formula`` draws a 0-d weight).
Seen on tinygrad 0.14.0, CPU device (clang).
"""

import sys

from tinygrad import Tensor, dtypes
from tinygrad.helpers import Context
from tinygrad.nn import optim

wrong = 0
for name, make, want in [
        ("SGD(lr=0.1)", lambda w: optim.SGD([w], 0.1), 0.95),
        ("SGD(lr=0.1, momentum=0.9)", lambda w: optim.SGD([w], 0.1, momentum=0.9), 0.95),
        ("Adam(lr=0.1)", lambda w: optim.Adam([w], 0.1), 1 - 0.1 / (1 + 1e-8))]:
    w = Tensor(1.0, dtype=dtypes.float32, device="CPU")
    opt = make(w)
    w.grad = Tensor(0.5, dtype=dtypes.float32, device="CPU")
    try:
        with Context(TRAINING=1):
            opt.step()
        value = w.numpy()
        ok = value.shape == () and abs(float(value) - want) < 1e-6
        got = f"{float(value)!r} of shape {value.shape}"
    except ValueError as e:
        ok, got = False, f"ValueError: {e}"
    wrong += not ok
    print(f"{name} on 0-d w = 1.0, g = 0.5: {got}, want {want!r}{'' if ok else '   <--'}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
