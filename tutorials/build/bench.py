"""Assignment 8 (optional): tinylazy against minilazy, through the oracle's adapter protocol.

``PYTHONPATH=mywork python tutorials/build/bench.py [--steps N]`` (``mywork`` holds your
``tinylazy``) times, on each implementation, (1) a training step (forward, gradient, update,
``mark_step``) after its one compile, and (2) recording a long chain of elementwise ops and
observing it. The same code drives both, so the numbers compare the engines, not the callers.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from minilazy.conformance.adapter import load

IMPLS = {"tinylazy": "tinylazy.adapter:adapter",
         "minilazy": "minilazy.conformance.adapters.minilazy_adapter:cpu"}


def train(a: Any, steps: int) -> float:
    """Seconds per training step of a one-layer tanh regression (after a warm-up step)."""
    rng = np.random.default_rng(0)
    w = a.from_numpy(rng.standard_normal((64, 32)).astype(np.float32))

    def loss(w: Any, x: Any) -> Any:
        return a.apply("mean", a.apply("square", a.apply("tanh", a.apply("matmul", x, w))))

    start = 0.0
    for step in range(steps + 1):
        if step == 1:
            start = time.perf_counter()
        x = a.from_numpy(rng.standard_normal((128, 64)).astype(np.float32))
        (g,) = a.grad(loss, (0,))(w, x)
        w = a.apply("subtract", w, a.apply("multiply", g, 0.01))
        a.barrier()
    a.to_numpy(w)
    return (time.perf_counter() - start) / steps


def chain(a: Any, n: int) -> float:
    """Seconds to record ``n`` elementwise ops and observe the result."""
    x = a.from_numpy(np.zeros(1000, np.float32))
    start = time.perf_counter()
    for _ in range(n // 2):
        x = a.apply("multiply", a.apply("add", x, 1.0), 0.5)
    a.to_numpy(x)
    return time.perf_counter() - start


def main() -> None:
    """Print a table: implementation, ms per training step, ms per 1000 recorded ops."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--ops", type=int, default=4000)
    args = parser.parse_args()
    print(f"{'implementation':<16}{'ms/step':>10}{'ms/1000 ops':>14}")
    for name, spec in IMPLS.items():
        a = load(spec)
        step, ops = train(a, args.steps), chain(a, args.ops)
        print(f"{name:<16}{1000 * step:>10.2f}{1e6 * ops / args.ops:>14.2f}")


if __name__ == "__main__":
    main()
