"""Two processes, one program: data-parallel training over ``jax.distributed`` on this machine.

``python -m minilazy.launch -n 2 examples/data_parallel.py`` against the same script in one
process. Each prints its losses and a digest of its final parameters.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data_parallel.py"
STEPS = "4"


def _run(*launcher: str) -> dict[str, tuple[list[float], int, str]]:
    """Per process: its losses, its compile count and its parameters' digest."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}  # one CPU device each
    env["MINILAZY_CACHE_DIR"] = ""  # every process compiles: the count is the program's
    done = subprocess.run([sys.executable, *launcher, str(EXAMPLE), STEPS], env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out: dict[str, tuple[list[float], int, str]] = {}
    for who, losses in re.findall(r"^(\[\d\] )?devices .*losses ([\d. ]+)$", done.stdout, re.M):
        out[who] = ([float(v) for v in losses.split()], 0, "")
    for who, compiles, digest in re.findall(
            r"^(\[\d\] )?compiles (\d+), cache hits \d+; params (\w+)$", done.stdout, re.M):
        out[who] = (out[who][0], int(compiles), digest)
    return out


def test_two_processes_train_as_one_and_end_with_the_same_parameters():
    two = _run("-m", "minilazy.launch", "-n", "2", "--timeout", "200")
    one = _run()
    assert sorted(two) == ["[0] ", "[1] "] and list(one) == [""]
    (l0, c0, d0), (l1, c1, d1) = two["[0] "], two["[1] "]
    assert d0 == d1 and l0 == l1  # the same parameters, to the bit, in both processes
    assert c0 == c1 == 1  # one program, compiled once in each process
    np.testing.assert_allclose(l0, one[""][0], rtol=1e-5)  # the gradient is summed across them
