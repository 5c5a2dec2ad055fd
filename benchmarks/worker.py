"""A benchmark worker: one system in one process, driven by ``run.py`` over stdin and stdout.

Usage (by ``run.py``, not by hand): ``python benchmarks/worker.py SYSTEM``. The worker imports
the system's libraries, answers ``{"ready": ...}``, then serves one JSON request per line:

- ``{"cmd": "cold", "steps": N, "model": M}``: the first training step of model M (``mlp``,
  ``cnn``, ``transformer``) in this fresh process, N more, memory, graph nodes per step;
- ``{"cmd": "setup", "name": ..., "workload": ..., "kwargs": {...}, "target_s": T,
  "probe": P, "warmup": W}``: build the workload's sampler, run it once (this compiles), size a
  sample to take about T seconds, then warm up W samples;
- ``{"cmd": "sample", "name": ...}``: one timed sample, with the compiles and page faults it
  caused (a steady state compiles nothing);
- ``{"cmd": "drop", "name": ...}`` and ``{"cmd": "exit"}``.

Runs under the system's own Python (the peers' virtual environments): NumPy and the standard
library, plus whatever the system itself imports.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from harness import minor_faults, pin_glibc_malloc, protocol_stream, rss_mib, send
from systems import SYSTEMS, NotApplicable, System

Sampler = Callable[[int], dict[str, list[float]]]  # units per sample -> named series


class Worker:
    """Holds the system and its workloads' samplers between requests."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.samplers: dict[str, tuple[Sampler, int]] = {}  # name -> (sampler, units/sample)

    def cold(self, steps: int, model: str = "mlp") -> dict[str, Any]:
        return {"cold": self.system.cold(steps, model)}

    def setup(self, name: str, workload: str, kwargs: dict[str, Any], target_s: float,
              probe: int, warmup: int, max_units: int) -> dict[str, Any]:
        factory = getattr(self.system, workload)
        made: dict[int, Callable[[], dict[str, list[float]]]] = {}

        def sample(units: int) -> dict[str, list[float]]:
            # A sampler per size: making one puts the inputs on the device, outside the timing.
            if units not in made:
                made.clear()
                made[units] = factory(**kwargs, **{_UNITS[workload]: units})
            return made[units]()

        sample(probe)  # the first run compiles
        start = time.perf_counter()
        sample(probe)
        per_unit = (time.perf_counter() - start) / probe
        units = max(1, min(max_units, round(target_s / max(per_unit, 1e-9))))
        for _ in range(warmup):
            sample(units)
        self.samplers[name] = (sample, units)
        return {"ok": True, "units": units}

    def sample(self, name: str) -> dict[str, Any]:
        sample, units = self.samplers[name]
        compiles = self.system.compiles()
        faults = minor_faults()
        series = sample(units)
        after = self.system.compiles()
        return {"series": series, "units": units,
                "compiles": None if compiles is None or after is None else after - compiles,
                "faults": minor_faults() - faults}

    def drop(self, name: str) -> dict[str, Any]:
        self.samplers.pop(name, None)
        gc.collect()
        return {"ok": True}


# The keyword argument that sets how many units (ops, steps) one sample runs.
_UNITS = {"record": "ops", "chains": "sets", "graph100": "steps", "chain": "steps",
          "mlp": "steps", "model": "steps"}


def main(argv: list[str]) -> int:
    system_id = argv[1]
    out = protocol_stream()
    pinned = os.environ.get("MINILAZY_BENCH_MALLOC", "pinned") == "pinned" and pin_glibc_malloc()
    single = os.environ.get("MINILAZY_BENCH_THREADS") == "one"
    rss_start = rss_mib()
    start = time.perf_counter()
    try:
        system = SYSTEMS[system_id](single)
        versions = system.versions()
    except Exception:
        send(out, {"error": traceback.format_exc()})
        return 1
    send(out, {"ready": True, "label": system.label, "import_s": time.perf_counter() - start,
               "versions": versions, "pid": os.getpid(), "python": sys.executable,
               "affinity": sorted(os.sched_getaffinity(0)), "malloc_pinned": pinned,
               "rss_start_mib": rss_start, "rss_ready_mib": rss_mib()})
    worker = Worker(system)
    for line in sys.stdin:
        request = json.loads(line)
        command = request.pop("cmd")
        try:
            if command == "exit":
                send(out, {"ok": True})
                break
            reply = getattr(worker, command)(**request)
        except NotApplicable as e:
            reply = {"skip": str(e)}
        except Exception:
            reply = {"error": traceback.format_exc()}
        send(out, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
