"""JAX/XLA: an empty slice of a concatenate, at an empty operand's end, aborts the process.

``jax.jit(lambda a, b: jnp.concatenate([a, b])[1:])(jnp.ones(1), jnp.zeros(0))`` never
returns: XLA's compiler throws ``std::length_error`` ("SmallVector unable to grow. Requested
capacity (18446744073709551615)"), uncaught, and the process is aborted (SIGABRT). NumPy gives
an empty array. ``lax.slice`` of the same concatenate from 1 to 1 does the same; the slice
from 0 to 0 (what ``jnp`` indexing makes of ``x[1:]`` on one element) and a non-empty slice
starting there are fine. minilazy met it through ``ml.unpack`` of an empty piece after a packed
weight (its optimizer's multi-tensor update) and reads empty pieces from 0 instead.

Breaks LZ-NUM-020 for an implementation lowering ``unpack`` to ``lax.slice`` (and the "process
never dies from user input" bar). Seen on jax and jaxlib 0.10.2 (CPU, Linux x86-64). The check
runs the call in a child process, since it kills the process that makes it.
"""

import subprocess
import sys

import jax
import numpy as np

CHILD = """
import jax, jax.numpy as jnp
from jax import lax
f = jax.jit(lambda a, b: lax.slice(lax.concatenate([a, b], 0), (1,), (1,)))
print(f(jnp.ones(1), jnp.zeros(0)).shape)
"""

print(f"JAX {jax.__version__}; NumPy: np.concatenate([ones(1), zeros(0)])[1:1].shape =",
      np.concatenate([np.ones(1), np.zeros(0)])[1:1].shape)
done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
said = (done.stdout.strip() or done.stderr.strip().splitlines()[-1:] or ["nothing"])
shown = said if isinstance(said, str) else said[0]
print(f"JAX (jit, CPU): exit status {done.returncode}: {shown}")
aborted = done.returncode != 0
print("bug present: the process was aborted" if aborted else "fixed")
sys.exit(1 if aborted else 0)
