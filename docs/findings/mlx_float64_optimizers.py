"""MLX: optimizers update float64 weights in float32 precision.

``mlx.optimizers`` keeps the learning rate (and Adam's betas and bias corrections) as float32
arrays, so a float64 weight is updated by a float32 ``0.1``: ``SGD(0.1)`` on a weight of 0 with a
gradient of 1 gives ``-0.10000000149011612``, and ``Adam(0.1, bias_correction=True)``
``-0.09999933...`` where torch's formula (and float64 arithmetic) gives ``-0.1`` (and
``-0.1 / (1 + 1e-8)``). The weight keeps its dtype but not its precision: a float64 model
trains as if in float32. (``mx.random.uniform`` and ``normal`` refuse float64 outright:
``RuntimeError: [uniform] Unsupported type.``; the oracle's MLX adapter declares that,
``uniform:float64`` in its dtype policy.)

Breaks LZ-OPT-001 and LZ-OPT-002 (an update keeps each weight's dtype; no Python number rounds it
through another dtype).
Seen on MLX 0.32.4 (mlx-cpu, Linux x86-64).
"""

import sys

import mlx.core as mx
import mlx.optimizers as optimizers
import numpy as np

wrong = 0
# torch's formulas in float64: -lr g, and -lr m_hat / (sqrt(v_hat) + eps) = -0.1 / (1 + 1e-8)
for name, opt, want in [("SGD(0.1)", optimizers.SGD(0.1), -0.1),
                        ("Adam(0.1, bias_correction=True)",
                         optimizers.Adam(0.1, bias_correction=True), -0.1 / (1 + 1e-8))]:
    params = {"w": mx.array(np.zeros(1, np.float64), dtype=mx.float64)}
    grads = {"w": mx.array(np.ones(1, np.float64), dtype=mx.float64)}
    got = np.array(opt.apply_gradients(grads, params)["w"])
    ok = got.dtype == np.float64 and abs(float(got[0]) - want) < 1e-15
    wrong += not ok
    print(f"{name} on float64 w = [0], g = [1]: {got.dtype} {float(got[0])!r}, want "
          f"{want!r}{'' if ok else '   <-- float32 precision'}")
print("bug present" if wrong else "fixed")
sys.exit(1 if wrong else 0)
