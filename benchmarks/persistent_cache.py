"""The persistent compile cache: the first MLP training step of a fresh process, cold and warm.

Usage::

    python benchmarks/persistent_cache.py [--repeat N] [--steps S] [--out DIR]

Each repetition starts three fresh processes, one after the other, each running minilazy's MLP
step exactly as ``run.py``'s ``cold`` row does (``systems.MinilazySystem.cold``): one with the
persistent cache off (``MINILAZY_CACHE_DIR=``), one on an empty cache directory (it compiles and
writes every program), and one on the directory the second filled (it reads them). Reported:
the first step's time, the time spent making programs (tracing, compiling or loading, writing)
over the whole process, how many programs came from disk, the time to read and load an entry
and to serialize and write one (the child wraps ``diskcache.load``/``save`` in timers), and the
entries' sizes. Writes
``persistent_cache.json`` and ``persistent_cache.md`` to ``--out`` (default
``benchmarks/results/``). The goal: the warm process makes its programs at least 10x faster.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GOAL = 10.0  # warm programs made this many times faster than cold ones, at least

CHILD = """
import json, sys, time
from minilazy.persist import diskcache
from systems import MinilazySystem
timed = {"load_s": 0.0, "save_s": 0.0}  # reading + deserializing; serializing + writing

def timing(name, fn):
    def wrapped(*args):
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            timed[name] += time.perf_counter() - start
    return wrapped

diskcache.load, diskcache.save = timing("load_s", diskcache.load), timing("save_s", diskcache.save)
system = MinilazySystem(single_thread=False)
system.ml.reset_metrics()
got = system.cold(int(sys.argv[1]))
m = system.ml.metrics()
# Programs made: compiled by XLA or loaded from disk; making them: tracing, compiling, loading,
# and writing the new ones (compile_seconds counts XLA's compiles only).
print(json.dumps({**got, **timed, "programs": m.compiles + m.disk_hits, "disk_hits": m.disk_hits,
                  "disk_writes": m.disk_writes, "making_s": m.trace_seconds + m.compile_seconds
                  + m.load_seconds + timed["save_s"]}))
"""
MODES = ("off", "cold", "warm")


def fresh_process(directory: str, steps: int) -> dict[str, Any]:
    """One fresh minilazy process on cache ``directory`` (``""``: off); what it measured."""
    env = {**os.environ, "MINILAZY_CACHE_DIR": directory}
    done = subprocess.run([sys.executable, "-c", CHILD, str(steps)], cwd=HERE, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode:
        raise RuntimeError(f"the benchmark process failed:\n{done.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


def measure(repeat: int, steps: int) -> dict[str, Any]:
    """``repeat`` rounds of (off, cold, warm) fresh processes; the samples and entry sizes."""
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
    sizes: list[int] = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            runs["off"].append(fresh_process("", steps))
            runs["cold"].append(fresh_process(tmp, steps))
            runs["warm"].append(fresh_process(tmp, steps))
            sizes = sorted(p.stat().st_size for p in Path(tmp).iterdir())
    return {"runs": runs, "entry_bytes": sizes, "repeat": repeat, "steps": steps}


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """Medians per mode, and the warm-over-cold ratios."""
    keys = ("first_step_s", "making_s", "programs", "disk_hits", "disk_writes", "load_s",
            "save_s")
    med = {m: {k: statistics.median(r[k] for r in report["runs"][m]) for k in keys}
           for m in MODES}
    cold, warm = med["cold"], med["warm"]
    return {"median": med, "first_step_ratio": cold["first_step_s"] / warm["first_step_s"],
            "making_ratio": cold["making_s"] / warm["making_s"],
            "load_ms_per_program": 1e3 * warm["load_s"] / max(warm["disk_hits"], 1),
            "save_ms_per_program": 1e3 * cold["save_s"] / max(cold["disk_writes"], 1)}


def markdown(report: dict[str, Any], s: dict[str, Any]) -> str:
    """The results as a Markdown table, for the docs."""
    rows = ["| fresh process | first MLP step | making programs | programs (from disk) |",
            "|---|---:|---:|---:|"]
    names = {"off": "cache off", "cold": "cold cache (writes)", "warm": "warm cache (reads)"}
    for m in MODES:
        r = s["median"][m]
        rows.append(f"| {names[m]} | {r['first_step_s'] * 1e3:.1f} ms | "
                    f"{r['making_s'] * 1e3:.1f} ms | {r['programs']:g} ({r['disk_hits']:g}) |")
    sizes = ", ".join(f"{b / 1024:.1f} KiB" for b in report["entry_bytes"])
    met = "met" if s["making_ratio"] >= GOAL else "missed"
    return "\n".join([
        *rows, "",
        f"Medians of {report['repeat']} rounds of three fresh processes. Warm against cold: the "
        f"first step {s['first_step_ratio']:.1f}x faster, making its programs "
        f"{s['making_ratio']:.1f}x faster (goal {GOAL:g}x: {met}); "
        f"a program takes {s['load_ms_per_program']:.1f} ms to read and load, "
        f"{s['save_ms_per_program']:.1f} ms to serialize and write (mean). "
        f"Entries: {sizes}.", ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20, help="MLP steps after the first one")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    report = measure(args.repeat, args.steps)
    s = summary(report)
    text = markdown(report, s)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "persistent_cache.json").write_text(json.dumps({**report, "summary": s},
                                                               indent=1))
    (args.out / "persistent_cache.md").write_text(text)
    return 0 if s["making_ratio"] >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
