"""The report of ``run.py``: goals, Markdown tables for the docs, and the plot.

Reads the same dictionary ``run.py`` writes to ``results.json``, so a report can be redone from
that file: ``python benchmarks/report.py benchmarks/results/results.json``.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness import fmt_time
from systems import SYSTEMS

SYSTEM_ORDER = ("minilazy", "minilazy-special", "minilazy-captured", "minilazy-torch", "numpy",
                "jax", "jax-jit", "torch-lazy", "torch-xla", "torch")
THREAD_TITLES = {"one": "One thread (taskset -c 0; XLA, torch, OpenMP, OpenBLAS at 1 thread)",
                 "default": "Default threads (all {cpus} CPUs, every library's own default)"}

# (workload, metric, row title) of the main table, in order.
ROWS = (
    ("record/tensor+tensor", "op", "per op: `a + b`, tensor + tensor"),
    ("record/tensor+scalar", "op", "per op: `a + 0.5`, tensor + Python scalar"),
    ("record/chains", "op", "per op: 17 x 1000-op chains, no barrier (dead chains never cut)"),
    ("graph100/scalars", "barrier+wait", "cached barrier + wait, 100-op graph, 50 scalars"),
    ("graph100/scalars", "barrier", "cached barrier returns, 100-op graph, 50 scalars"),
    ("graph100/scalars", "step", "100-op graph step, 50 scalars"),
    ("graph100/tensors", "barrier+wait", "cached barrier + wait, 100-op graph, tensors only"),
    ("graph100/tensors", "barrier", "cached barrier returns, 100-op graph, tensors only"),
    ("graph100/tensors", "step", "100-op graph step, tensors only"),
    ("mlp", "step", "MLP training step (784-256-10, batch 128)"),
    ("model/cnn", "step", "CNN training step (conv 1-8, conv 8-16, linear, batch 64, Adam)"),
    ("model/transformer", "step",
     "Transformer training step (2 layers, width 64, context 32, batch 16, AdamW)"),
    ("mlp", "host", "MLP step: host time (in the step call: record, start the program)"),
    ("model/cnn", "host", "CNN step: host time (in the step call)"),
    ("model/transformer", "host", "Transformer step: host time (in the step call)"),
    ("chain/1e6", "step", "20-op elementwise chain, 1e6 float32"),
    ("chain/1e7", "step", "20-op elementwise chain, 1e7 float32"),
)

Result = dict[str, Any]
# model -> (its step's workload, its name in the tables)
MODEL_ROWS = {"mlp": ("mlp", "MLP"), "cnn": ("model/cnn", "CNN"),
              "transformer": ("model/transformer", "Transformer")}


def label(system: str) -> str:
    return SYSTEMS[system].label if system in SYSTEMS else system


def find(results: Sequence[Result], threads: str, workload: str, metric: str, system: str
         ) -> Result | None:
    for r in results:
        if (r["threads"], r["workload"], r["metric"], r["system"]) == (threads, workload, metric,
                                                                       system):
            return r
    return None


# -- goals -------------------------------------------------------------------------------------
def _goal(threads: str, name: str, ours: Result | None, theirs: Result | None, peer: str,
          target: float, higher_is_better: bool = False) -> dict[str, Any]:
    """Compare minilazy's median to a peer's: ratio ours/theirs (or theirs/ours)."""
    goal: dict[str, Any] = {"threads": threads, "goal": name, "target": target, "peer": peer}
    if ours is None or theirs is None:
        missing = "minilazy" if ours is None else label(peer)
        goal.update(met=None, ratio=None, value=f"n/a: no {missing} result")
        return goal
    a, b = ours["median"], theirs["median"]
    if higher_is_better:
        ratio = b / a
        goal.update(met=ratio >= target, ratio=ratio,
                    value=f"{fmt_time(b)} / {fmt_time(a)} = {ratio:.2f}x")
    else:
        ratio = a / b
        goal.update(met=ratio <= target, ratio=ratio,
                    value=f"{fmt_time(a)} vs {fmt_time(b)} = {ratio:.2f}x")
    return goal


def evaluate_goals(results: Sequence[Result], settings: Sequence[str]) -> list[dict[str, Any]]:
    """The issue's goals, as ratios of medians from the same run, per thread setting."""
    goals = []
    for t in settings:
        get = functools.partial(find, results, t)  # (workload, metric, system) -> result
        for kind in ("tensor+tensor", "tensor+scalar"):
            wl = f"record/{kind}"
            goals.append(_goal(t, f"recording ({kind}) <= 0.5x PyTorch/XLA per op",
                               get(wl, "op", "minilazy"), get(wl, "op", "torch-xla"),
                               "torch-xla", 0.5))
        for variant in ("scalars", "tensors"):
            wl = f"graph100/{variant}"
            goals.append(_goal(t, f"cached barrier + wait, 100-op graph ({variant}) <= 0.5x "
                               "torch._lazy", get(wl, "barrier+wait", "minilazy"),
                               get(wl, "barrier+wait", "torch-lazy"), "torch-lazy", 0.5))
        for wl, name in MODEL_ROWS.values():
            ours = get(wl, "step", "minilazy")
            if name != "MLP" and ours is None:  # the models were not measured: no goal rows
                continue
            bound = 1.3 if t == "one" else 1.1  # (on more cores the host's work can hide)
            goals.append(_goal(t, f"{name} step <= {bound}x jax.jit", ours,
                               get(wl, "step", "jax-jit"), "jax-jit", bound))
            for peer in ("torch-lazy", "torch-xla"):
                goals.append(_goal(t, f"{name} step below {label(peer)}", ours,
                                   get(wl, "step", peer), peer, 1.0))
        goals.append(_goal(t, "20-op chain at 1e6 >= 5x NumPy eager",
                           get("chain/1e6", "step", "minilazy"),
                           get("chain/1e6", "step", "numpy"), "numpy", 5.0,
                           higher_is_better=True))
    return goals


def overlaps(results: Sequence[Result], settings: Sequence[str], cpus: int
             ) -> list[tuple[str, list[str]]]:
    """Per thread setting and model: minilazy's host and step times, jax.jit's step, the
    overlap; each system's CPU per step and the step it bounds on the cores there are (one
    thread: 1, default: ``cpus``); how often minilazy's step call waited."""
    rows = []
    for t in settings:
        cores = 1 if t == "one" else cpus
        for wl, name in MODEL_ROWS.values():
            host, step, device = (find(results, t, wl, metric, system) for metric, system in
                                  (("host", "minilazy"), ("step", "minilazy"),
                                   ("step", "jax-jit")))
            if host is None or step is None or device is None:
                continue
            hidden = host["median"] + device["median"] - step["median"]
            share = f"{fmt_time(max(hidden, 0.0))} ({max(hidden, 0.0) / host['median']:.0%} " \
                    "of the host's)"
            cpu, jit_cpu, waits = (find(results, t, wl, metric, system) for metric, system in
                                   (("cpu", "minilazy"), ("cpu", "jax-jit"),
                                    ("waits", "minilazy")))
            spent = "—" if cpu is None or jit_cpu is None else \
                f"{fmt_time(cpu['median'])} / {fmt_time(jit_cpu['median'])}"
            floor = "—" if cpu is None else f"{fmt_time(cpu['median'] / cores)} " \
                f"({cpu['median'] / cores / device['median']:.2f}x)"
            rows.append((f"{name}, {t} thread", [
                fmt_time(host["median"]), fmt_time(device["median"]), fmt_time(step["median"]),
                share, spent, floor, "—" if waits is None else f"{waits['median']:.1f}"]))
    return rows


def _verdict(g: dict[str, Any]) -> str:
    return {True: "met", False: "MISSED", None: "n/a"}[g["met"]]


def print_goals(goals: Sequence[dict[str, Any]]) -> None:
    print("Goals (ratios of medians from this run):")
    for g in goals:
        print(f"  [{_verdict(g):>6}] {g['threads']} thread: {g['goal']}: {g['value']}")


# -- Markdown ----------------------------------------------------------------------------------
def _cell_time(r: Result | None) -> str:
    if r is None:
        return "—"
    return f"{fmt_time(r['median'])} ({fmt_time(r['p10'])}–{fmt_time(r['p90'])})"


def _cold_rows(cold: Sequence[Result], threads: str, systems: Sequence[str], model: str = "mlp"
               ) -> list[tuple[str, list[str]]]:
    import numpy as np

    name = MODEL_ROWS[model][1]
    cold = [c for c in cold if c.get("model", "mlp") == model]  # older runs: the MLP only

    def runs(system: str, memory_run: bool | None = None) -> list[Result]:
        return [c for c in cold if c["threads"] == threads and c["system"] == system
                and (memory_run is None or c["memory_run"] == memory_run)]

    def spread(values: list[float], fmt: Callable[[float], str]) -> str:
        if not values:
            return "—"
        p10, p50, p90 = np.percentile(values, [10, 50, 90])
        if len(values) == 1:
            return fmt(float(p50))
        return f"{fmt(float(p50))} ({fmt(float(p10))}–{fmt(float(p90))})"

    def mib(x: float) -> str:
        return f"{x:.0f} MiB"

    def seconds(x: float) -> str:
        return fmt_time(x)

    def memory(system: str, key: str, fmt: Callable[[float], str]) -> str:
        got = runs(system, True)
        return fmt(got[0][key]) if got and got[0][key] is not None else "—"

    def compiles(system: str) -> str:
        got = runs(system, True)
        if not got or got[0]["compiles_first_step"] is None:
            return "—"
        return f"{got[0]['compiles_first_step']} + {got[0]['compiles_later_steps']}"

    def losses(system: str) -> str:
        got = runs(system, True)
        if not got or got[0].get("loss_step21") is None:
            return "—"
        return f"{got[0]['loss_first']:.4f} → {got[0]['loss_step21']:.4f}"

    def nodes(system: str) -> str:
        got = runs(system, True)
        return str(got[0]["nodes_per_step"]) if got and got[0].get("nodes_per_step") else "—"

    if not cold:
        return []
    steps = next((c["steps"] for c in cold if c["memory_run"] and c["threads"] == threads), 0)
    rows = [
        (f"first {name} step in a fresh process (compiles)",
         [spread([c["first_step_s"] for c in runs(s)], seconds) for s in systems]),
        (f"{name}: compiles, first step + next {steps} steps", [compiles(s) for s in systems]),
        (f"{name}: peak RSS over {steps + 1} steps",
         [memory(s, "peak_rss_mib", mib) for s in systems]),
        (f"{name}: peak RSS growth over the set-up process",
         [memory(s, "peak_growth_mib", mib) for s in systems]),
        (f"{name} step, mean of the {steps} steps after the first",
         [memory(s, "later_step_s", seconds) for s in systems]),
        (f"{name}: import + set-up of the worker",
         [spread([c["import_s"] for c in runs(s)], seconds) for s in systems]),
        (f"{name}: loss after step 1 → step 21 (same numbers in, same loss out)",
         [losses(s) for s in systems]),
        (f"{name}: graph nodes per step (lazy systems; parameters included)",
         [nodes(s) for s in systems]),
    ]
    return [r for r in rows if any(c != "—" for c in r[1])]


def _table(header: Sequence[str], rows: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    lines += ["| " + " | ".join([title, *cells]) + " |" for title, cells in rows]
    return lines


def markdown(report: dict[str, Any]) -> str:
    """Tables for the docs (MyST Markdown, no top-level title): per thread setting, goals."""
    env, results, cold = report["environment"], report["results"], report["cold"]
    present = {r["system"] for r in results} | {c["system"] for c in cold}
    systems = [s for s in SYSTEM_ORDER if s in present]
    loads = [x["load1"] for x in report["load"]]
    by_python: dict[str, tuple[list[str], dict[str, str]]] = {}  # python -> systems, versions
    for w in report["workers"]:
        systems_here, versions = by_python.setdefault(w["python"], ([], {}))
        if label(w["system"]) not in systems_here:
            systems_here.append(label(w["system"]))
        versions.update({k: v for k, v in w["versions"].items()
                         if not k.endswith("_file") and k != "torch_threads"})
    environments = "; ".join(
        ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + f" ({', '.join(names)})"
        for names, versions in by_python.values())
    lines = [
        "<!-- Generated by benchmarks/run.py: do not edit; run it again. -->",
        "",
        f"Measured {env['date']} on {env['cpu'] or env['machine']} ({env['cpu_count']} CPUs), "
        f"{env['mode']} mode, in {env['seconds']:.0f} s; load average "
        f"{min(loads, default=0):.2f}–{max(loads, default=0):.2f} during the run. "
        "Each cell: median (p10–p90) of the samples, taken round-robin across the systems, "
        f"one process per system. Versions: {environments}.",
        "",
    ]
    remeasures = env.get("remeasured", [])  # benchmarks/run.py --workloads ... --merge
    for again in [remeasures] if isinstance(remeasures, dict) else remeasures:
        again_loads = [x["load1"] for x in again.get("load", [])]
        during = (f", in {again['seconds']:.0f} s, load average {min(again_loads):.2f}–"
                  f"{max(again_loads):.2f}" if again_loads else "")
        lines[-1:-1] = ["", f"Remeasured {again['date']} ({again['mode']} mode, "
                            f"{' '.join(again['argv'])}{during}): those rows replace the "
                            "earlier ones."]
    header = ["", *[label(s) for s in systems]]
    for t in env["threads"]:
        lines += [f"### {THREAD_TITLES[t].format(cpus=env['cpu_count'])}", ""]
        rows = [(title, [_cell_time(find(results, t, wl, metric, s)) for s in systems])
                for wl, metric, title in ROWS]
        rows = [r for r in rows if any(c != "—" for c in r[1])]
        lines += _table(header, rows) + [""]
        for model in MODEL_ROWS:
            cold_rows = _cold_rows(cold, t, systems, model)
            if cold_rows:
                lines += _table(header, cold_rows) + [""]
    lines += ["### Goals", ""]
    lines += [f"- **{_verdict(g)}** ({g['threads']} thread) {g['goal']}: {g['value']}"
              for g in report["goals"]]
    overlap = overlaps(results, env["threads"], env["cpu_count"])
    if overlap:
        lines += ["", "### Host and device per step (minilazy)", "",
                  "*Host*: the time in the step call (recording, the barrier starting the "
                  "program); *device*: jax.jit's whole step, the same program's run; *hidden*: "
                  "host + device − step, the host work done while the device ran. *CPU*: the "
                  "process's CPU time per step, all threads (minilazy / jax.jit); *CPU floor*: "
                  "minilazy's CPU over the cores it had, the shortest step that CPU allows "
                  "(and its ratio to jax.jit's step); *waits*: how often per step minilazy's "
                  "step call gave up the CPU to wait (voluntary context switches).", ""]
        lines += _table(["", "host", "device (jax.jit step)", "step", "hidden", "CPU",
                         "CPU floor", "waits"], overlap) + [""]
    lines += [
        "",
        "Notes: the per-op rows time recording for the lazy systems (no barrier) and running "
        "for the eager ones; `jax.jit` has no per-op cost. *Cached barrier + wait* is "
        "`mark_step` plus waiting for the result, after recording the same graph again (a "
        "cache hit); *returns* is `mark_step` alone (PyTorch/XLA executes asynchronously). "
        "`jax.jit` bakes Python scalars into the program as constants; PyTorch/XLA and "
        "`minilazy special_scalars` bake only 0 and 1. The MLP step includes moving the batch "
        "to the device. Every lazy system's timed samples compiled nothing unless noted. "
        "The CNN and the Transformer (those of `minilazy.demo.models`) start from the same "
        "weights (their own init, made in NumPy) on the same random data in every system; "
        "NumPy and JAX op by op do not run them (—). Nodes per step: minilazy's "
        "`ml.graph(...).num_nodes` of the step's cut, the peers' IR nodes of the same outputs "
        "(`torch._lazy.debug.dump_ir`, `_get_xla_tensors_text`), device data included.",
    ]
    compiled = sorted({f"{label(r['system'])} ({r['workload']}, {r['threads']} thread)"
                       for r in results if r.get("compiles_timed")})
    if compiled:
        lines += ["", "Compiled during timed samples: " + "; ".join(compiled) + "."]
    for note in report.get("notes", []):
        lines += ["", f"Note: {note}"]
    return "\n".join(lines) + "\n"


# -- plot --------------------------------------------------------------------------------------
PANELS = (
    ("record/tensor+tensor", "op", "per op: a + b (tensor + tensor)"),
    ("record/tensor+scalar", "op", "per op: a + 0.5 (tensor + scalar)"),
    ("graph100/scalars", "barrier+wait", "cached barrier + wait, 100 ops, 50 scalars"),
    ("graph100/tensors", "barrier+wait", "cached barrier + wait, 100 ops, tensors"),
    ("mlp", "step", "MLP training step"),
    ("model/cnn", "step", "CNN training step"),
    ("model/transformer", "step", "Transformer training step"),
    ("chain/1e6", "step", "20-op chain, 1e6 float32"),
    ("chain/1e7", "step", "20-op chain, 1e7 float32"),
    ("cold", "first_step_s", "first MLP step (compile)"),
    ("cold", "peak_rss_mib", "peak RSS over the MLP run (MiB)"),
)


def _panel_values(report: dict[str, Any], threads: str, workload: str, metric: str,
                  system: str) -> tuple[float, float, float] | None:
    """(median, p10, p90) of one bar, or None when the system has no such result."""
    import numpy as np

    if workload != "cold":
        r = find(report["results"], threads, workload, metric, system)
        return None if r is None else (r["median"], r["p10"], r["p90"])
    xs = [c[metric] for c in report["cold"] if c["threads"] == threads
          and c["system"] == system and c.get("model", "mlp") == "mlp"
          and (metric != "peak_rss_mib" or c["memory_run"])]
    if not xs:
        return None
    p50, p10, p90 = np.percentile(xs, [50, 10, 90])
    return float(p50), float(p10), float(p90)


def plot(report: dict[str, Any], stem: Path) -> list[Path]:
    """A grid of horizontal bar charts, one per workload; PNG and SVG. Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    settings = report["environment"]["threads"]
    fig, axes = plt.subplots(4, 3, figsize=(15, 14.5), constrained_layout=True)
    colors = {"one": "#1f77b4", "default": "#ff7f0e"}
    names = {"one": "one thread", "default": "default threads"}
    height = 0.8 / max(1, len(settings))
    for ax, (wl, metric, title) in zip(axes.flat, PANELS):
        values = {(t, s): _panel_values(report, t, wl, metric, s)
                  for t in settings for s in SYSTEM_ORDER}
        systems = [s for s in SYSTEM_ORDER if any(values[t, s] for t in settings)]
        ax.set_title(title, fontsize=10)
        if not systems:
            ax.text(0.5, 0.5, "not measured", transform=ax.transAxes, ha="center")
            continue
        for k, t in enumerate(settings):
            rows = [(i, v) for i, s in enumerate(systems) if (v := values[t, s]) is not None]
            ax.barh([i + k * height for i, _ in rows], [v[0] for _, v in rows], height,
                    xerr=[[v[0] - v[1] for _, v in rows], [v[2] - v[0] for _, v in rows]],
                    color=colors[t], label=names[t], capsize=2)
        ax.set_yticks([i + height * (len(settings) - 1) / 2 for i in range(len(systems))],
                      [label(s) for s in systems])
        ax.invert_yaxis()
        if metric == "peak_rss_mib":
            ax.set_xlabel("MiB")
        else:
            ax.set_xscale("log")
            low, high = ax.get_xlim()
            few_decades = high / max(low, 1e-12) < 300  # room for 1-2-5 ticks
            ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if few_decades else (1.0,)))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: fmt_time(x)))
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(axis="x", alpha=0.3)
    for ax in axes.flat[len(PANELS):]:
        ax.set_visible(False)
    axes.flat[0].legend(loc="lower right", fontsize=8)
    env = report["environment"]
    fig.suptitle(f"minilazy and the peers: median, whiskers p10–p90, log scale "
                 f"({env['date']}, {env['mode']} mode)")
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    for p in paths:
        fig.savefig(p, dpi=110)
    plt.close(fig)
    return paths


def main(argv: Sequence[str]) -> int:
    """Redo the goals, Markdown and plot from a results.json."""
    path = Path(argv[1])
    report = json.loads(path.read_text())
    settings = [t for t in report["environment"]["threads"]
                if any(r["threads"] == t for r in report["results"])]
    report["goals"] = evaluate_goals(report["results"], settings)
    path.write_text(json.dumps(report, indent=1))
    md = markdown(report)
    path.with_suffix(".md").write_text(md)
    print(md)
    print_goals(report["goals"])
    try:
        plot(report, path.with_suffix(""))
    except ImportError:
        print("(no plot: matplotlib is not installed in this environment)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
