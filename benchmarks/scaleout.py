"""Data-parallel MLP steps on 1, 2, 4 and 8 CPU devices: the cost of a mesh on one host.

Each device count runs in a fresh process (XLA splits the host into that many CPU devices when
JAX starts). The demo's MLP step (batch 128) is placed by ``minilazy.demo.placer``: the batch
split along the mesh, the parameters replicated. Prints a markdown table and writes it to
``--out`` (the docs' scale-out page includes ``benchmarks/results/scaleout.md``)::

    python benchmarks/scaleout.py [--steps 200] [--out benchmarks/results/scaleout.md]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
import minilazy as ml
from minilazy import demo
from minilazy.demo.datasets import digits

devices, steps = int(sys.argv[1]), int(sys.argv[2])
place = demo.placer(devices)
x, y = digits(128 * 8, seed=1)
p = {k: place(v, False) for k, v in demo.init_params().items()}
v = {k: place(np.zeros_like(a), False) for k, a in demo.init_params().items()}
ml.mark_step()
start = time.perf_counter()
batch = [place(x[:128], True), place(y[:128], True)]
ml.wait(demo.train_step(p, v, *batch, lr=0.01))
first = time.perf_counter() - start
times = []
for i in range(steps):
    lo = (i % 7) * 128
    start = time.perf_counter()
    loss = demo.train_step(p, v, place(x[lo:lo + 128], True), place(y[lo:lo + 128], True),
                           lr=0.01)
    ml.wait(loss)
    times.append(time.perf_counter() - start)
m = ml.metrics()
print(json.dumps({"devices": devices, "first": first, "median": float(np.median(times)),
                  "p90": float(np.percentile(times, 90)), "compiles": m.compiles,
                  "loss": loss.item()}))
"""


def measure(devices: int, steps: int) -> dict[str, float]:
    """One fresh process training on ``devices`` CPU devices; its figures."""
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    done = subprocess.run([sys.executable, "-c", CHILD, str(devices), str(steps)], env=env,
                          capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows = [measure(n, args.steps) for n in (1, 2, 4, 8)]
    base = rows[0]["median"]
    lines = [f"MLP 784-256-10, batch 128, data-parallel, {args.steps} timed steps, "
             f"{os.cpu_count()} host cores", "",
             "| CPU devices | first step (ms) | step median (ms) | step p90 (ms) | vs 1 device "
             "| compiles | loss after |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['devices']} | {r['first'] * 1e3:.0f} | {r['median'] * 1e3:.2f} | "
                     f"{r['p90'] * 1e3:.2f} | {r['median'] / base:.2f}x | {r['compiles']} | "
                     f"{r['loss']:.4f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
