"""Benchmarks side by side with the peers: minilazy, NumPy, JAX, torch._lazy and PyTorch/XLA.

Usage::

    python benchmarks/run.py [--quick] [--systems ...] [--threads one default] [--out DIR]
                             [--peers DIR]
    python benchmarks/run.py --workloads record/chains --merge   # remeasure rows, keep the rest
    python benchmarks/run.py --workloads model/cnn model/transformer mlp --merge  # the models

Every system runs in its own worker process (``worker.py``) under its own Python: minilazy,
NumPy and JAX under this one; torch eager and ``torch._lazy`` under ``PEERS/ltc``; PyTorch/XLA
under ``PEERS/xla`` (``--peers``, default ``/work/peers``, as made by
``shared/peers/install-peers.sh``; or the environment variables ``MINILAZY_BENCH_LTC_PYTHON``
and ``MINILAZY_BENCH_XLA_PYTHON``).
A peer that is not installed is skipped with a note. The workers stay up for the whole run and
take their samples in turn, one sample of each system round-robin, so a drift of the machine
(other tenants, clock) hits every system alike.

Workloads (see ``workloads.py``; the same source runs on every system):

- ``record/…``: per-op cost of ``y = a + b`` on ``f32[4]``, tensor + tensor and tensor + Python
  scalar: recording for the lazy systems (no barrier), running for the eager ones;
- ``record/chains``: per-op cost of 17 chains of 1000 ops with no barrier and the system's own
  auto-cut policy (each chain dies before the next: a lazy system should never cut);
- ``graph100/…``: a step on a 100-op elementwise graph (with 50 Python scalars, or tensors
  only); the lazy systems also report the cached barrier alone (``barrier+wait``);
- ``mlp``: a 784-256-10 MLP training step, batch 128, softmax cross-entropy, SGD with momentum,
  the batch transferred each step (minilazy: ``minilazy.demo.train_step``; torch: idiomatic
  ``F.cross_entropy`` + ``torch.optim.SGD``; JAX: ``jax.value_and_grad``; NumPy: by hand);
- ``model/cnn``, ``model/transformer``: a training step of the main job's models
  (``minilazy.demo.models``, ``python -m minilazy --model cnn|transformer``): the CNN (conv 1-8,
  conv 8-16, linear 784-10, batch 64) with Adam, the character Transformer (2 layers, width 64,
  4 heads, context 32, batch 16) with AdamW, a cosine learning rate; minilazy as the models
  are written (``ml.nn``, ``ml.value_and_grad``, ``ml.optim.adam``), ``jax.jit`` the same model
  and update in JAX, torch with ``torch.nn.functional`` and ``torch.optim.Adam``/``AdamW``;
  NumPy and JAX op by op do not run them. Not in ``--quick`` unless named with ``--workloads``;
- ``chain/1e6``, ``chain/1e7``: a 20-op elementwise chain on float32 (record + barrier + wait);
- ``cold``: per model (the MLP, and the CNN and the Transformer where measured), in fresh
  workers: the first step (compiles), the compiles of the next steps, the peak RSS
  (``ru_maxrss``) over 1000 steps (``Plan.model_cold_steps`` can shorten a model's), the
  losses after steps 1 and 21, and the graph's nodes per step for the lazy systems;
  minilazy's persistent compile cache is off (``persistent_cache.py`` measures a fresh process
  that finds its programs on disk). With ``--workloads``, only the chosen models'.

Two thread settings: ``one`` (``taskset -c 0``, XLA_FLAGS with one intra-op thread and no Eigen
pool, ``torch.set_num_threads(1)``, OMP/MKL/OpenBLAS at 1) and ``default`` (nothing set).
Results go to ``--out`` (default ``benchmarks/results/``): ``results.json``, ``results.md``
(tables for the docs, no top-level title) and ``results.png``/``.svg`` (needs matplotlib in the
running environment; skipped with a note otherwise). The goals are printed as met or missed.
For steadier numbers run it with ``nice -n -20`` on an idle machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from harness import SINGLE_THREAD_ENV, XLA_SINGLE_THREAD, Stats
from report import SYSTEM_ORDER, evaluate_goals, markdown, plot, print_goals
from workloads import MODELS

HERE = Path(__file__).resolve().parent
THREADS = ("one", "default")


# -- what to run -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """How much to measure (``--quick`` trades precision for time)."""

    warmup: int
    repeat: int  # samples per system and workload, round-robin
    target_s: float  # one sample's length: ops or steps per sample are sized to this
    chain_sizes: tuple[int, ...]
    cold_steps: int  # steps after the first one in the cold run (peak memory)
    cold_repeat: int  # fresh processes per system for the first-step time (>= 1)
    settle_s: float  # pause before each sample with default threads (see measure_workload)
    # cold_steps for some models: a slow peer (torch._lazy's Transformer step takes ~0.2 s)
    # can make 1000 steps per system too long for a run
    model_cold_steps: dict[str, int] = field(default_factory=dict)

    def steps_of(self, model: str) -> int:
        return self.model_cold_steps.get(model, self.cold_steps)


FULL = Plan(warmup=2, repeat=15, target_s=0.08, chain_sizes=(1_000_000, 10_000_000),
            cold_steps=1000, cold_repeat=3, settle_s=0.1)
QUICK = Plan(warmup=1, repeat=3, target_s=0.01, chain_sizes=(1_000_000, 10_000_000),
             cold_steps=20, cold_repeat=1, settle_s=0.0)


@dataclass(frozen=True)
class Workload:
    """One workload: which sampler of the systems, its arguments and how to size a sample."""

    name: str
    method: str  # System method that makes the sampler
    kwargs: dict[str, Any] = field(default_factory=dict)
    probe: int = 2  # units (ops, steps) of the calibration run
    max_units: int = 1000


def workloads(plan: Plan) -> list[Workload]:
    out = [
        Workload("record/tensor+tensor", "record", {"scalar": False}, probe=2000,
                 max_units=200_000),
        Workload("record/tensor+scalar", "record", {"scalar": True}, probe=2000,
                 max_units=200_000),
        Workload("record/chains", "chains", probe=1, max_units=2),
        Workload("graph100/scalars", "graph100", {"scalars": True}, max_units=200),
        Workload("graph100/tensors", "graph100", {"scalars": False}, max_units=200),
        Workload("mlp", "mlp", max_units=100),
        Workload("model/cnn", "model", {"model": "cnn"}, max_units=100),
        Workload("model/transformer", "model", {"model": "transformer"}, max_units=100),
    ]
    out += [Workload(f"chain/{n:.0e}".replace("e+0", "e"), "chain", {"n": n}, probe=1,
                     max_units=20) for n in plan.chain_sizes]
    return out


# -- the systems' processes --------------------------------------------------------------------
@dataclass
class SystemSpec:
    """Where a system runs: its Python, and why it is skipped when it is."""

    id: str
    python: str | None
    env: dict[str, str] = field(default_factory=dict)
    note: str = ""


def system_specs(ids: Sequence[str], peers: Path) -> list[SystemSpec]:
    ltc = os.environ.get("MINILAZY_BENCH_LTC_PYTHON", str(peers / "ltc" / "bin" / "python"))
    xla = os.environ.get("MINILAZY_BENCH_XLA_PYTHON", str(peers / "xla" / "bin" / "python"))
    specs = []
    for sid in ids:
        if sid in ("torch", "torch-lazy"):
            python, env = ltc, {}
        elif sid == "torch-xla":
            python, env = xla, {"PJRT_DEVICE": "CPU"}
        elif sid == "minilazy-torch" and importlib.util.find_spec("torch") is None:
            python, env = "(this Python, with the torch extra)", {}
        else:  # the cold row times compiling: no program from an earlier run's persistent
            # cache (benchmarks/persistent_cache.py measures that)
            python, env = sys.executable, {"MINILAZY_CACHE_DIR": ""}
        note = "" if os.path.exists(python) else f"not installed ({python} missing)"
        specs.append(SystemSpec(sid, None if note else python, env, note))
    return specs


class WorkerError(RuntimeError):
    """A worker died or answered with an error."""


class WorkerProcess:
    """A running ``worker.py``: send a request, read its one-line JSON answer."""

    def __init__(self, spec: SystemSpec, threads: str, log: IO[str]) -> None:
        assert spec.python is not None
        env = {**os.environ, **spec.env, "MINILAZY_BENCH_THREADS": threads,
               "PYTHONUNBUFFERED": "1"}
        # OpenBLAS's forced core type (set on some machines for old builds) slows NumPy's
        # current one: unset both variables together, for every system alike.
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
        command = [spec.python, str(HERE / "worker.py"), spec.id]
        if threads == "one":
            env.update(SINGLE_THREAD_ENV)
            env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {XLA_SINGLE_THREAD}".strip()
            if shutil.which("taskset"):
                command = ["taskset", "-c", "0", *command]
        self.spec = spec
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=log, env=env, text=True, bufsize=1, cwd=HERE)
        self.ready = self.read()

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise WorkerError(f"{self.spec.id}: worker exited (code {self.process.wait()}); "
                              "see its log")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise WorkerError(f"{self.spec.id}: {answer['error']}")
        return answer

    def call(self, cmd: str, **request: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"cmd": cmd, **request}) + "\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        try:
            self.call("exit")
        except (WorkerError, BrokenPipeError, OSError):
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- one thread setting ------------------------------------------------------------------------
@dataclass
class Run:
    """Everything measured, as it goes into results.json."""

    results: list[dict[str, Any]] = field(default_factory=list)
    cold: list[dict[str, Any]] = field(default_factory=list)
    workers: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load: list[dict[str, Any]] = field(default_factory=list)


def log(message: str) -> None:
    print(message, flush=True)


def loadavg(run: Run, when: str) -> None:
    one, five, _ = os.getloadavg()
    run.load.append({"when": when, "load1": one, "load5": five, "time": time.time()})
    log(f"  [{when}] load average {one:.2f} (5 min {five:.2f})")


def start_workers(specs: Sequence[SystemSpec], threads: str, out: Path, run: Run,
                  tag: str) -> dict[str, WorkerProcess]:
    workers = {}
    for spec in specs:
        if spec.python is None:
            continue
        path = out / "logs" / f"{spec.id}-{threads}{tag}.log"
        with open(path, "a") as f:
            try:
                w = WorkerProcess(spec, threads, f)
            except WorkerError as e:
                run.notes.append(f"{spec.id} ({threads} thread): failed to start: "
                                 f"{str(e).strip().splitlines()[-1]} (see {path})")
                log(f"  {spec.id}: FAILED to start, see {path}")
                continue
        workers[spec.id] = w
        if not tag:
            run.workers.append({"system": spec.id, "threads": threads,
                                **{k: v for k, v in w.ready.items() if k != "ready"}})
            log(f"  {spec.id}: ready in {w.ready['import_s']:.1f} s (pid {w.ready['pid']})")
    return workers


def cold_sample(w: WorkerProcess, threads: str, model: str, steps: int, run: Run,
                first: bool) -> None:
    try:
        answer = w.call("cold", steps=steps, model=model)
    except WorkerError as e:
        run.notes.append(f"{w.spec.id} ({threads} thread): cold run of {model} failed: "
                         f"{str(e).strip().splitlines()[-1]}")
        return
    if "skip" in answer:  # NotApplicable: this system does not run this model
        return
    got = answer["cold"]
    got.update(system=w.spec.id, threads=threads, import_s=w.ready["import_s"],
               memory_run=first)
    run.cold.append(got)


def cold_key(c: dict[str, Any]) -> tuple[str, str, str]:
    """A cold run's (threads, system, model); runs from before the models were the MLP's."""
    return c["threads"], c["system"], c.get("model", "mlp")


def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``old`` report with the rows ``new`` measured replaced (and its notes added)."""
    key = ("threads", "workload", "system")
    fresh = {tuple(r[k] for k in key) for r in new["results"]}
    out = dict(old)
    out["results"] = [r for r in old["results"] if tuple(r[k] for k in key) not in fresh]
    out["results"] += new["results"]
    fresh_cold = {cold_key(c) for c in new["cold"]}
    out["cold"] = [c for c in old["cold"] if cold_key(c) not in fresh_cold] + new["cold"]
    # a system new since the first run (a peer installed later) brings its versions
    known = {(w["system"], w["threads"]) for w in old["workers"]}
    out["workers"] = [*old["workers"],
                      *(w for w in new["workers"] if (w["system"], w["threads"]) not in known)]
    out["notes"] = [*old.get("notes", []), *(f"remeasured {new['environment']['date']}: {n}"
                                             for n in new["notes"])]
    # each remeasure keeps its own date, command and load: "load" stays the first run's
    earlier = old["environment"].get("remeasured", [])
    earlier = [earlier] if isinstance(earlier, dict) else earlier  # (one, in older reports)
    out["environment"] = {**old["environment"], "remeasured": [
        *earlier, {**new["environment"], "load": new["load"]}]}
    return out


def measure_setting(specs: Sequence[SystemSpec], threads: str, plan: Plan, out: Path,
                    run: Run, chosen: Sequence[Workload], models: Sequence[str]) -> None:
    log(f"\n== {threads} thread{'s' if threads == 'default' else ''} ==")
    loadavg(run, f"{threads}: start")
    for model in models:  # before the long-lived workers start: nothing else runs meanwhile
        cold_samples(specs, threads, model, plan, out, run)
        loadavg(run, f"{threads}: after cold {model}")
    workers = start_workers(specs, threads, out, run, "")
    try:
        for wl in chosen:
            measure_workload(wl, workers, threads, plan, run)
            loadavg(run, f"{threads}: after {wl.name}")
    finally:
        for w in workers.values():
            w.close()


def cold_samples(specs: Sequence[SystemSpec], threads: str, model: str, plan: Plan, out: Path,
                 run: Run) -> None:
    """``model``'s cold runs: each in a fresh worker (``ru_maxrss`` is the process's peak, so
    one model's run would hide the next one's); the first also runs the steps for memory."""
    started = time.perf_counter()
    steps = plan.steps_of(model)
    for i in range(plan.cold_repeat):  # the first: memory run; the others: first step only
        for spec in specs:
            fresh = start_workers([spec], threads, out, run, f"-cold-{model}{i}")
            for w in fresh.values():
                cold_sample(w, threads, model, steps if i == 0 else 3, run, first=i == 0)
                w.close()
    log(f"  cold {model}: first step and {steps} more, in {plan.cold_repeat} fresh "
        f"process(es) per system: {time.perf_counter() - started:.1f} s")


def measure_workload(wl: Workload, workers: dict[str, WorkerProcess], threads: str, plan: Plan,
                     run: Run) -> None:
    started = time.perf_counter()
    active: dict[str, WorkerProcess] = {}
    units: dict[str, int] = {}
    for sid, w in workers.items():
        try:
            answer = w.call("setup", name=wl.name, workload=wl.method, kwargs=wl.kwargs,
                            target_s=plan.target_s, probe=wl.probe, warmup=plan.warmup,
                            max_units=wl.max_units)
        except WorkerError as e:
            run.notes.append(f"{sid} ({threads} thread) {wl.name}: failed: "
                             f"{str(e).strip().splitlines()[-1]}")
            log(f"    {sid}: {wl.name} FAILED (see results.json notes)")
            continue
        if "skip" in answer:
            continue
        active[sid] = w
        units[sid] = answer["units"]
    series: dict[str, dict[str, list[float]]] = {sid: {} for sid in active}
    compiles: dict[str, int | None] = dict.fromkeys(active, 0)
    faults: dict[str, float] = dict.fromkeys(active, 0.0)
    order = list(active)
    # With default threads, the pool threads of the system that just ran (OpenBLAS, OpenMP)
    # spin for a while before they sleep, taking a core from the next system: let them settle.
    settle = plan.settle_s if threads == "default" else 0.0
    for r in range(plan.repeat):
        shift = r % len(order) if order else 0
        for sid in order[shift:] + order[:shift]:  # rotate: nobody always goes first
            time.sleep(settle)
            got = active[sid].call("sample", name=wl.name)
            for key, xs in got["series"].items():
                series[sid].setdefault(key, []).extend(xs)
            c = compiles[sid]
            compiles[sid] = None if c is None or got["compiles"] is None else c + got["compiles"]
            faults[sid] += got["faults"] / plan.repeat
    for sid, w in active.items():
        w.call("drop", name=wl.name)
        for metric, xs in series[sid].items():
            s = Stats.of(xs)
            run.results.append({"threads": threads, "workload": wl.name, "metric": metric,
                                "system": sid, **asdict(s), "units_per_sample": units[sid],
                                "compiles_timed": compiles[sid],
                                "faults_per_sample": faults[sid]})
    log(f"  {wl.name}: {len(active)} systems, {time.perf_counter() - started:.1f} s")


# -- main --------------------------------------------------------------------------------------
def environment(args: argparse.Namespace, plan: Plan) -> dict[str, Any]:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), "")
    except OSError:
        pass
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "python": platform.python_version(),
            "machine": platform.machine(), "cpu": cpu, "cpu_count": os.cpu_count(),
            "niceness": os.nice(0), "mode": "quick" if args.quick else "full",
            "threads": args.threads, "plan": asdict(plan), "argv": sys.argv[1:]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few short samples (about 1 min)")
    parser.add_argument("--systems", nargs="+", choices=SYSTEM_ORDER, default=list(SYSTEM_ORDER),
                        metavar="SYSTEM", help=f"systems to run (default all: "
                        f"{' '.join(SYSTEM_ORDER)})")
    parser.add_argument("--threads", nargs="+", choices=THREADS, default=list(THREADS),
                        help="thread settings to run (default both)")
    parser.add_argument("--out", type=Path, default=HERE / "results",
                        help="where to write results.json, results.md and the plot")
    parser.add_argument("--peers", type=Path, default=Path("/work/peers"),
                        help="the peers' virtual environments: PEERS/ltc, PEERS/xla")
    parser.add_argument("--workloads", nargs="+", metavar="NAME",
                        help="measure only these workloads (a name or its prefix, e.g. "
                             "record/chains, chain, model); the cold runs only of the models "
                             "chosen (mlp, model/cnn, model/transformer)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other rows of OUT/results.json: remeasure a few rows "
                             "without rerunning everything")
    parser.add_argument("--settle", type=float, metavar="SECONDS",
                        help="pause before each sample with default threads (default: 0.1 s, "
                             "0 with --quick)")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.settle is not None:
        plan = dataclasses.replace(plan, settle_s=args.settle)
    systems = [s for s in SYSTEM_ORDER if s in args.systems]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "logs").mkdir(exist_ok=True)
    for old in (args.out / "logs").glob("*.log"):
        old.unlink()
    (args.out / "logs" / ".gitignore").write_text("*\n")  # the workers' stderr: not results
    started = time.perf_counter()
    env = environment(args, plan)
    log(f"benchmarks/run.py, {env['mode']} mode: {', '.join(systems)}; threads "
        f"{' and '.join(args.threads)}; {env['cpu']} x {env['cpu_count']}, nice {env['niceness']}")
    specs = system_specs(systems, args.peers)
    run = Run()
    for spec in specs:
        if spec.note:
            run.notes.append(f"{spec.id}: skipped: {spec.note}")
            log(f"  {spec.id}: skipped, {spec.note}")
    # --quick leaves the models out unless named: the CI smoke test stays short
    chosen = [wl for wl in workloads(plan) if any(wl.name == w or wl.name.startswith(w + "/")
                                                  for w in args.workloads)] \
        if args.workloads else [wl for wl in workloads(plan)
                                if not (args.quick and wl.name.startswith("model/"))]
    # the cold runs: every model measured, or with --workloads the chosen models only
    names = {wl.name for wl in chosen}
    models = [m for m in MODELS if (m if m == "mlp" else f"model/{m}") in names]
    for threads in args.threads:
        measure_setting(specs, threads, plan, args.out, run, chosen, models)
    env["seconds"] = time.perf_counter() - started
    report = {"environment": env, "systems": [asdict(s) for s in specs],
              "workers": run.workers, "results": run.results, "cold": run.cold,
              "goals": [], "load": run.load, "notes": run.notes}
    if args.merge and (args.out / "results.json").exists():
        report = merged(json.loads((args.out / "results.json").read_text()), report)
    measured = [t for t in THREADS if any(r["threads"] == t for r in report["results"])]
    report["goals"] = goals = evaluate_goals(report["results"], measured)
    (args.out / "results.json").write_text(json.dumps(report, indent=1))
    md = markdown(report)
    (args.out / "results.md").write_text(md)
    print("\n" + md)
    print_goals(goals)
    written = [args.out / "results.json", args.out / "results.md"]
    try:
        written += plot(report, args.out / "results")
    except ImportError:
        log("(no plot: matplotlib is not installed in this environment)")
    for note in run.notes:
        log(f"note: {note}")
    log(f"\nwrote {', '.join(map(str, written))} in {env['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
