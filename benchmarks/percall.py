"""Microseconds per call of each public function the three models call, recording only.

``python benchmarks/percall.py`` wraps every public callable the models reach (``ml.*``,
``ml.nn.*``, ``ml.optim``'s ``update``, the functions ``ml.value_and_grad`` makes, ``Tensor``'s
operators and methods) with a timer, runs steps of the MLP, CNN and Transformer exactly as
``benchmarks/systems.py``'s ``minilazy`` system does (one thread), and prints, per function:
calls per step, microseconds per call and nodes recorded per call, then microseconds per node.
Each figure is the median step's (a step with a garbage collection is not the typical
one). Times are *exclusive*: a call's own work, without the public calls made inside it (what a
composite such as ``layer_norm`` records through internal functions is its own). The barrier
(``ml.mark_step``, which on one thread also runs the program) is its own row. ``--json
out.json`` keeps the figures; ``--before old.json ...`` adds another revision's as columns and
``--now new.json ...`` makes the tables from kept files, each the least over the files given
(run this file alternately on each revision, e.g. with ``PYTHONPATH=<other checkout>/src``: a
shared machine's noise is then the same for both). The wrapper's own cost is subtracted.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
import types
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

# One thread, as the benchmark's one-thread table: set before jax or numpy start.
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import minilazy as ml  # noqa: E402
from minilazy.core.metrics import COUNTERS  # noqa: E402

# name -> [calls, exclusive seconds, exclusive nodes]
TOTALS: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0])
_stack: list[list[float]] = []  # per open call: [time spent in its public callees, their nodes]
_clock = time.perf_counter


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, counting its calls, own time and own recorded nodes under ``name``."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        inner = [0.0, 0]
        _stack.append(inner)
        nodes, start = COUNTERS.ops_recorded, _clock()
        try:
            return fn(*args, **kwargs)
        finally:
            spent, made = _clock() - start, COUNTERS.ops_recorded - nodes
            _stack.pop()
            row = TOTALS[name]
            row[0] += 1
            row[1] += spent - inner[0]
            row[2] += made - inner[1]
            if _stack:
                _stack[-1][0] += spent
                _stack[-1][1] += made
    return wrapper


def _made_by(name: str, maker: Callable[..., Any], what: str) -> Callable[..., Any]:
    """``maker``, whose results (functions, or optimizers' ``update``) are timed as ``what``."""
    def make(*args: Any, **kwargs: Any) -> Any:
        made = maker(*args, **kwargs)
        if callable(made) and not hasattr(made, "update"):
            return timed(what, made)
        return type(made)(made.init, timed(what, made.update))
    return functools.wraps(maker)(make)


_SKIP = {"__init__", "__new__", "__del__", "__repr__", "__str__", "__hash__", "__len__",
         "__iter__", "__bool__", "__array__", "__index__", "__int__", "__float__", "__format__",
         "__getattr__", "__setattr__", "__dir__", "__init_subclass__", "__class_getitem__",
         "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__copy__", "__deepcopy__",
         "__dlpack__", "__dlpack_device__", "__array_namespace__", "__array_function__",
         "__array_ufunc__"}


def install() -> None:
    """Wrap the public callables (once)."""
    for name in ml.__all__:
        fn = getattr(ml, name)
        if isinstance(fn, types.FunctionType) and name not in ("wait", "value_and_grad", "grad"):
            setattr(ml, name, timed("ml." + name, fn))
    for module in (ml.nn, ml.random):  # their own functions, not the names they import
        for name, fn in list(vars(module).items()):
            if isinstance(fn, types.FunctionType) and not name.startswith("_") and \
                    fn.__module__ == module.__name__:
                setattr(module, name, timed(f"{module.__name__[9:]}.{name}", fn))
    ml.value_and_grad = _made_by("ml.value_and_grad", ml.value_and_grad,
                                 "value_and_grad(f)(...): forward's own + backward")
    ml.grad = _made_by("ml.grad", ml.grad, "grad(f)(...): forward's own + backward")
    for name in ("adam", "sgd"):
        setattr(ml.optim, name, _made_by(name, getattr(ml.optim, name), f"optim.{name}.update"))
    for name, fn in list(vars(ml.Tensor).items()):
        if isinstance(fn, types.FunctionType) and name not in _SKIP and \
                (name.startswith("__") or not name.startswith("_")):
            setattr(ml.Tensor, name, timed(f"Tensor.{name}", fn))


def _wrapper_cost() -> float:
    """Seconds one wrapper adds to a call (of an empty function), as a floor to subtract."""
    empty = timed("(empty)", lambda: None)
    for _ in range(20000):
        empty()
    row = TOTALS.pop("(empty)")
    return row[1] / row[0]


def measure_least(runs: int, steps: int, warm: int) -> dict[str, dict[str, Any]]:
    """:func:`measure` ``runs`` times; per function the least µs per call (noise only adds)."""
    best = measure(steps, warm)
    for _ in range(runs - 1):
        again = measure(steps, warm)
        for model, rows in best.items():
            for name, row in rows.items():
                if name in again[model]:
                    row["us"] = min(row["us"], again[model][name]["us"])
    return best


def measure(steps: int, warm: int) -> dict[str, dict[str, Any]]:
    """Per model: per function, calls per step, µs per call, nodes per call."""
    from systems import MinilazySystem

    out: dict[str, dict[str, Any]] = {}
    for model in ("mlp", "cnn", "transformer"):
        system = MinilazySystem(single_thread=True)
        step = system.model_step(model)
        for i in range(warm):
            system.wait(step(i))
        rows: dict[str, list[list[float]]] = defaultdict(list)
        for i in range(warm, warm + steps):
            TOTALS.clear()
            system.wait(step(i))
            for name, row in TOTALS.items():
                rows[name].append(row)
        # The median step's time: a step with a garbage collection in it is not the typical one
        out[model] = {name: {"calls": r[0][0], "us": 1e6 * statistics.median(t for _, t, _ in r)
                             / r[0][0], "nodes": r[0][2] / r[0][0]}
                      for name, r in rows.items()}
    return out


# Not recording: the barrier runs the program too (XLA's CPU client runs it in the calling
# thread), and asarray copies the batch.
OUTSIDE = ("ml.mark_step", "ml.asarray")


def table(now: dict[str, Any], before: dict[str, Any] | None, floor: float) -> str:
    """A markdown table per model, most time per step first."""
    lines = []
    for model, rows in now.items():
        old = (before or {}).get(model, {})
        lines += [f"\n### {model}\n",
                  "| function | calls/step | nodes/call | µs/call | µs/node | µs/step |"
                  + (" µs/call before | µs/node before |" if before else ""),
                  "|---|---|---|---|---|---|" + ("---|---|" if before else "")]
        total = before_total = 0.0
        for name, r in sorted(rows.items(), key=lambda kv: -kv[1]["us"] * kv[1]["calls"]):
            us = max(r["us"] - floor, 0.0)
            b = old.get(name)
            if name not in OUTSIDE:
                total += us * r["calls"]
                before_total += max(b["us"] - floor, 0.0) * b["calls"] if b else 0.0
            per_node = f"{us / r['nodes']:.2f}" if r["nodes"] else "—"
            line = (f"| `{name}` | {r['calls']:g} | {r['nodes']:.1f} | {us:.2f} | {per_node} | "
                    f"{us * r['calls']:.0f} |")
            if before:
                if b:
                    bus = max(b["us"] - floor, 0.0)
                    line += f" {bus:.2f} | " + (f"{bus / b['nodes']:.2f} |" if b["nodes"]
                                                else "— |")
                else:
                    line += " — | — |"
            lines.append(line)
        lines.append(f"\nRecording (every call but {' and '.join(sorted(OUTSIDE))}): "
                     f"{total:.0f} µs per step" + (f", {before_total:.0f} before." if before
                                                   else "."))
    return "\n".join(lines)


def least_of(paths: list[Path]) -> dict[str, Any]:
    """``--json`` files of one revision as one: per function the least µs per call."""
    kept = [json.loads(p.read_text()) for p in paths]
    out = kept[0]
    for other in kept[1:]:
        for model, rows in out["models"].items():
            for name, row in rows.items():
                if name in other["models"].get(model, {}):
                    row["us"] = min(row["us"], other["models"][model][name]["us"])
    if len(kept) > 1:
        out["measured"] = f"{len(kept)} files: " + "; ".join(k["measured"] for k in kept)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3, help="measure this many times: the least")
    parser.add_argument("--markdown", type=Path, help="write the tables here too")
    parser.add_argument("--now", type=Path, nargs="+",
                        help="no measuring: the tables of these --json files (the least)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--before", type=Path, nargs="+",
                        help="--json files of another revision (the least of them), as columns")
    args = parser.parse_args()
    if args.now:
        kept = least_of(args.now)
        floor, now, when = kept["floor_us"] / 1e6, kept["models"], kept["measured"]
    else:
        install()
        floor = _wrapper_cost()
        now = measure_least(args.runs, args.steps, args.warm)
        when = (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, least of {args.runs} "
                f"runs' median step, {args.steps} steps each")
    if args.json:
        args.json.write_text(json.dumps({"floor_us": 1e6 * floor, "models": now,
                                         "measured": when}, indent=1))
    before = least_of(args.before)["models"] if args.before else None
    text = (f"Measured by `benchmarks/percall.py` ({when}; one thread; per function the least; "
            f"the timer's own {1e6 * floor:.2f} µs per call subtracted).\n"
            + table(now, before, 1e6 * floor))
    print(text)
    if args.markdown:
        args.markdown.write_text("<!-- Generated by benchmarks/percall.py: do not edit. -->\n\n"
                                 + text + "\n")


if __name__ == "__main__":
    main()
