"""Data-parallel training across processes.

Run: ``python -m minilazy.launch -n 2 examples/data_parallel.py [STEPS]``.

Every process runs this same script. minilazy joins them up on first use (``jax.distributed``),
so ``ml.devices()`` lists every process's devices and one mesh spans them all. Each process
builds the same global batches (same seed); placing a batch with ``sharding=(mesh, ...)`` puts
only this process's rows on its own devices. The parameters are replicated, so XLA's GSPMD adds
an all-reduce of the gradients across the processes, and every process ends with the same
parameters: the last line prints their digest, which must be equal everywhere.

Runs unchanged in one process (``python examples/data_parallel.py``): the same losses.
"""

import hashlib
import sys

import numpy as np

import minilazy as ml
from minilazy import demo
from minilazy.demo.datasets import digits

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
BATCH = 64

mesh = ml.Mesh(ml.devices("cpu"), ("data",))


def place(a: np.ndarray, split: bool) -> ml.Tensor:
    """The batch split along the mesh, everything else replicated."""
    spec = (("data",) if split else (None,)) + (None,) * (a.ndim - 1)
    return ml.asarray(a, sharding=(mesh, spec))


x, y = digits(BATCH * STEPS, seed=3)
params = {k: place(v, False) for k, v in demo.init_params().items()}
velocity = {k: place(np.zeros_like(v), False) for k, v in demo.init_params().items()}
ml.mark_step()
ml.reset_metrics()
losses = []
for i in range(STEPS):
    lo = i * BATCH
    loss = demo.train_step(params, velocity, place(x[lo:lo + BATCH], True),
                           place(y[lo:lo + BATCH], True), lr=0.05)
    losses.append(loss.item())
m = ml.metrics()
digest = hashlib.sha256(b"".join(params[k].numpy().tobytes() for k in sorted(params)))
print(f"devices {len(ml.devices('cpu'))} (here: {ml.default_device()}); losses "
      f"{' '.join(f'{v:.6f}' for v in losses)}")
print(f"compiles {m.compiles}, cache hits {m.cache_hits}; params {digest.hexdigest()[:16]}")
