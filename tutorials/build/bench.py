"""Assignment 8 (optional): your core against minilazy's, on the same workloads.

``python tutorials/build/bench.py --path mywork [--steps N] [--ops N]`` times, each in a fresh
process, (1) a training step (forward, gradient, update, ``mark_step``) after its one compile,
and (2) recording a long chain of elementwise ops and observing it (its compile included: the
persistent compile cache is off). ``yours`` is minilazy with your ``mywork/core`` and
``mywork/autodiff/tape.py`` in place of its own (the grader's overlay, as for assignment 7: no
stub is filled from the key); ``minilazy`` is the installed package. The same code drives
both, so the numbers compare the cores, not the callers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def train(steps: int) -> tuple[float, int]:
    """Seconds per step of a one-layer tanh regression, and programs compiled while timing.

    The first step (its compile) is not timed: a cached step compiles nothing after it.
    """
    import minilazy as ml

    rng = np.random.default_rng(0)
    w = ml.asarray(rng.standard_normal((64, 32)).astype(np.float32))

    def loss(w: ml.Tensor, x: ml.Tensor) -> ml.Tensor:
        return ml.mean(ml.square(ml.tanh(x @ w)))

    start, compiles = 0.0, 0
    for step in range(steps + 1):
        if step == 1:
            ml.wait(w)
            start, compiles = time.perf_counter(), ml.metrics().compiles
        x = ml.asarray(rng.standard_normal((128, 64)).astype(np.float32))
        w = w - 0.01 * ml.grad(loss)(w, x)
        ml.mark_step()
    ml.wait(w)
    return (time.perf_counter() - start) / steps, ml.metrics().compiles - compiles


def chain(ops: int) -> float:
    """Seconds to record ``ops`` elementwise ops and observe the result."""
    import minilazy as ml

    x = ml.asarray(np.zeros(1000, np.float32))
    start = time.perf_counter()
    for _ in range(ops // 2):
        x = (x + 1.0) * 0.5
    x.numpy()
    return time.perf_counter() - start


def worker(steps: int, ops: int) -> dict[str, float | str]:
    """Both workloads in this process, on whichever ``minilazy`` it imports."""
    import minilazy as ml

    step, compiles = train(steps)
    return {"step": step, "compiles": compiles, "chain": chain(ops),
            "core": str(Path(ml.__file__).parent / "core")}


def measure(site: Path | None, steps: int, ops: int) -> dict[str, float | str]:
    """Run :func:`worker` in a fresh process, with ``site`` first on ``PYTHONPATH`` if given.

    The persistent compile cache is off: a program an earlier run compiled would make the
    chain's compile free for one core and not the other (its keys cover the engine's source).
    """
    env = {**os.environ, "MINILAZY_CACHE_DIR": ""}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    code = (f"import sys, json; sys.path.append({str(Path(__file__).resolve().parent)!r}); "
            f"import bench; print(json.dumps(bench.worker({steps}, {ops})))")
    done = subprocess.run([sys.executable, "-P", "-c", code], env=env, capture_output=True,
                          text=True, check=False)  # -P: not the working folder first
    if done.returncode != 0:
        raise RuntimeError(f"the workload failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    found: dict[str, float | str] = json.loads(done.stdout.splitlines()[-1])
    return found


def compare(folder: Path, steps: int = 50, ops: int = 4000) -> dict[str, dict[str, float | str]]:
    """The workloads on ``folder``'s core (``yours``) and on the installed one (``minilazy``)."""
    from minilazy.conformance.grade.overlay import overlay

    with tempfile.TemporaryDirectory() as tmp:
        site = overlay(folder.resolve(), 7, Path(tmp))  # assignment 7: nothing from the key
        return {"yours": measure(site, steps, ops), "minilazy": measure(None, steps, ops)}


def table(found: dict[str, dict[str, float | str]], ops: int) -> str:
    """The figures as a table: ms per training step, compiles while timing, µs per op."""
    lines = [f"{'core':<10}{'ms/step':>10}{'compiles':>10}{'µs/op (chain)':>16}"]
    for name, row in found.items():
        step, compiles, seconds = float(row["step"]), int(row["compiles"]), float(row["chain"])
        lines.append(f"{name:<10}{1000 * step:>10.2f}{compiles:>10}{1e6 * seconds / ops:>16.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The command line: print the table."""
    parser = argparse.ArgumentParser(prog="python tutorials/build/bench.py",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--path", required=True, help="your folder (mywork: core/, autodiff/)")
    parser.add_argument("--steps", type=int, default=50, help="training steps timed")
    parser.add_argument("--ops", type=int, default=4000, help="ops in the recorded chain")
    args = parser.parse_args(argv)
    folder = Path(args.path)
    if not (folder / "core").is_dir():
        parser.error(f"{folder / 'core'} does not exist: make it with make_skeleton.py")
    print(table(compare(folder, args.steps, args.ops), args.ops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
