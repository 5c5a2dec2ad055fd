"""Core benchmarks: what recording, a cached barrier and a fused chain cost, vs NumPy and JAX.

Usage::

    python benchmarks/core.py [--quick] [--json out.json] [--single-thread] [--profile]

Three workloads, measured in one run on one machine, each against NumPy eager, JAX op by op and
(where it applies) ``jax.jit``:

1. ``record``: the cost of recording one op, ``y = a + b`` on ``f32[4]`` (tensor + tensor and
   tensor + Python scalar), in a loop with no barrier. The same two inputs are reused, so the
   graph never grows: each result dies at the next iteration.
2. ``graph100``: a cached barrier on a 100-op elementwise graph on ``f32[8]`` (25 x mul, add,
   tanh, maximum), once with 50 Python scalars (52 parameters) and once with tensors only (2).
   A step is: record the 100 ops, ``ml.mark_step()``, optionally ``ml.wait(out)``. Each phase is
   timed directly inside every step; ``barrier = step - record`` is also derived from the medians.
3. ``chain``: the 20-op elementwise chain of ``minilazy.demo`` (5 x mul, add, maximum, sub) on
   1e6 and 1e7 float32, plus a variant with ``tanh`` in place of ``maximum``; and ``tanh`` and
   ``maximum(x, 0.0)`` alone, to price one op of each (XLA:CPU's tanh against NumPy's SIMD one).

Method: warm every system up (this compiles), then take ``repeat`` samples of each system
round-robin with ``time.perf_counter``; report the median and the p10-p90 spread, the minilazy
compiles and cache hits of the timed phase (a steady state must compile nothing) and, for the big
arrays, the page faults per step. The garbage collector stays on: users pay for it too. glibc's
malloc thresholds are pinned (see :func:`pin_glibc_malloc`) unless ``--glibc-default-malloc``.

Threads: NumPy's elementwise loops are single-threaded, XLA:CPU may split a large fused loop over
all cores. ``--single-thread`` re-executes this script under ``taskset -c 0`` (when taskset
exists) with ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1``,
so every system gets one core. To do it by hand: ``taskset -c 0 python benchmarks/core.py`` (the
reliable way: it pins every thread) or set ``XLA_FLAGS`` before JAX starts.

Noise: the header prints the load average and warns when the machine is busy. Absolute times on
a shared 2-vCPU machine can double under load; the ratios are sturdier (round-robin sampling).
``--profile`` runs cProfile on minilazy's two hot paths instead of the benchmarks.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import json
import os
import platform
import pstats
import resource
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from harness import XLA_SINGLE_THREAD, Samples, Stats, fmt_time, pin_glibc_malloc
from workloads import Array, chain, graph100
from workloads import loop_add as _loop_add
from workloads import loop_only as _loop_only

import minilazy as ml

_SINGLE_THREAD_ENV = "MINILAZY_BENCH_SINGLE_THREAD"
_NO_CUT = 10**9  # max_pending_nodes that never auto-cuts inside a timed loop


# -- configuration -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """How much to measure (``--quick`` trades precision for time)."""

    warmup: int
    record_ops: int  # ops per sample in `record` (JAX op by op, ~5x slower, gets a fifth)
    record_repeat: int
    graph_steps: int  # steps per sample in `graph100`
    graph_repeat: int
    chain_sizes: tuple[int, ...]
    chain_repeat: int  # samples at 1e6 elements; larger sizes get proportionally fewer (>= 5)


FULL = Config(warmup=2, record_ops=100_000, record_repeat=9, graph_steps=50, graph_repeat=40,
              chain_sizes=(1_000_000, 10_000_000), chain_repeat=25)
QUICK = Config(warmup=1, record_ops=20_000, record_repeat=5, graph_steps=20, graph_repeat=10,
               chain_sizes=(1_000_000,), chain_repeat=7)


# -- measurement -------------------------------------------------------------------------------
@dataclass
class Row:
    """One line of the table: a system's time on a workload."""

    workload: str
    system: str
    unit: str  # what one timing is: "op", "step"...
    stats: Stats
    vs_numpy: bool = True  # show NumPy's median / this median (False for component timings)
    compiles: int | None = None  # minilazy only: during the timed phase
    cache_hits: int | None = None
    note: str = ""


@dataclass(frozen=True)
class Measured:
    """What :func:`measure` found for one system in the timed phase."""

    series: dict[str, Stats]
    compiles: int  # minilazy compiles while this system's samples ran
    cache_hits: int
    faults: float  # minor page faults per sample: fresh pages the OS had to hand out


def measure(systems: Mapping[str, Callable[[], Samples]], warmup: int, repeat: int
            ) -> dict[str, Measured]:
    """Warm every system up, then take ``repeat`` samples of each, round-robin.

    Round-robin sampling spreads slow drifts of the machine (other tenants, frequency) over all
    systems alike instead of over whichever ran at the wrong moment. Each sample returns named
    series of seconds per unit; minilazy's counters and the page faults are read around each
    sample, outside its timed region.
    """
    for sample in systems.values():
        for _ in range(warmup):
            sample()
    series: dict[str, Samples] = {name: {} for name in systems}
    counts = {name: [0, 0, 0] for name in systems}  # compiles, cache hits, page faults
    for _ in range(repeat):
        for name, sample in systems.items():
            before = ml.metrics(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            for key, xs in sample().items():
                series[name].setdefault(key, []).extend(xs)
            after = ml.metrics(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            counts[name][0] += after[0].compiles - before[0].compiles
            counts[name][1] += after[0].cache_hits - before[0].cache_hits
            counts[name][2] += after[1] - before[1]
    return {name: Measured({k: Stats.of(xs) for k, xs in series[name].items()},
                           counts[name][0], counts[name][1], counts[name][2] / repeat)
            for name in systems}


def lazy_row(workload: str, system: str, unit: str, stats: Stats, m: Measured,
             vs_numpy: bool = True, note: str = "") -> Row:
    return Row(workload, system, unit, stats, vs_numpy, m.compiles, m.cache_hits, note)


# -- workload 1: recording cost per op ---------------------------------------------------------
def _loop_jnp_add(a: Array, b: Array, n: int) -> Array:
    add = jnp.add
    y = a
    for _ in range(n):
        y = add(a, b)
    return y


def bench_record(cfg: Config) -> list[Row]:
    n = cfg.record_ops
    host_a = np.arange(4, dtype=np.float32)
    host_b = np.ones(4, dtype=np.float32)
    jax_a, jax_b = jnp.asarray(host_a), jnp.asarray(host_b)
    lazy_a, lazy_b = ml.asarray(host_a), ml.asarray(host_b)
    ml.mark_step()

    def per_op(loop: Callable[[Array, Array, int], Array], a: Array, b: Array, ops: int,
               block: bool = False) -> Callable[[], Samples]:
        def sample() -> Samples:
            start = time.perf_counter()
            y = loop(a, b, ops)
            if block:
                y.block_until_ready()
            return {"op": [(time.perf_counter() - start) / ops]}
        return sample

    def lazy_per_op(b: Array) -> Callable[[], Samples]:
        def sample() -> Samples:
            with ml.policy(max_pending_nodes=_NO_CUT):  # no auto-cut inside the timed loop
                start = time.perf_counter()
                y = _loop_add(lazy_a, b, n)
                seconds = time.perf_counter() - start
            ml.mark_step()  # untimed: materialises the last y (the others are dead)
            del y
            return {"op": [seconds / n]}
        return sample

    rows: list[Row] = []
    cases = [("tensor+tensor", host_b, jax_b, lazy_b), ("tensor+scalar", 1.0, 1.0, 1.0)]
    for kind, np_b, jnp_b, ml_b in cases:
        wl = f"record: y = a + b, f32[4], {kind}"
        systems = {
            "numpy eager": per_op(_loop_add, host_a, np_b, n),
            "jax op-by-op (jnp.add)": per_op(_loop_jnp_add, jax_a, jnp_b, n // 5, block=True),
            "minilazy record (no barrier)": lazy_per_op(ml_b),
        }
        if kind == "tensor+tensor":
            systems["python loop alone (y = b)"] = per_op(_loop_only, host_a, host_b, n)
        got = measure(systems, cfg.warmup, cfg.record_repeat)
        for name, m in got.items():
            if name.startswith("minilazy"):
                rows.append(lazy_row(wl, name, "op", m.series["op"], m))
            elif name.startswith("python"):
                rows.append(Row(wl, name, "op", m.series["op"], vs_numpy=False,
                                note="included in every row"))
            else:
                rows.append(Row(wl, name, "op", m.series["op"]))
    return rows


# -- workload 2: a cached barrier on a 100-op graph --------------------------------------------
def bench_graph100(cfg: Config, scalars: bool) -> tuple[list[Row], dict[str, float]]:
    wl = f"graph100: 100 ops on f32[8], {'50 Python scalars' if scalars else 'tensors only'}"
    k = cfg.graph_steps
    hx = np.linspace(-1.0, 1.0, 8, dtype=np.float32)
    hy = np.linspace(0.5, -0.5, 8, dtype=np.float32)
    expected = graph100(hx, hy, np, scalars)
    jx, jy = jnp.asarray(hx), jnp.asarray(hy)
    op_by_op = functools.partial(graph100, ns=jnp, scalars=scalars)
    jitted = jax.jit(op_by_op)
    x0, y0 = ml.asarray(hx), ml.asarray(hy)
    ml.mark_step()

    def numpy_sample() -> Samples:
        start = time.perf_counter()
        for _ in range(k):
            graph100(hx, hy, np, scalars)
        return {"step": [(time.perf_counter() - start) / k]}

    def jax_sample(fn: Callable[[Array, Array], Array]) -> Callable[[], Samples]:
        def sample() -> Samples:
            start = time.perf_counter()
            for _ in range(k):
                fn(jx, jy).block_until_ready()
            return {"step": [(time.perf_counter() - start) / k]}
        return sample

    def record_only() -> Samples:
        times = []
        with ml.policy(max_pending_nodes=_NO_CUT):
            for _ in range(k):
                start = time.perf_counter()
                out = graph100(x0, y0, ml, scalars)
                times.append(time.perf_counter() - start)
                del out  # untimed: the dead graph is freed here, never computed
        ml.mark_step()  # resets the pending-node count; nothing pending is live, nothing runs
        return {"record": times}

    def steps() -> Samples:
        series: Samples = {"record": [], "barrier": [], "barrier+wait": [], "step": [],
                           "step+wait": []}
        for _ in range(k):
            t0 = time.perf_counter()
            out = graph100(x0, y0, ml, scalars)
            t1 = time.perf_counter()
            ml.mark_step()
            t2 = time.perf_counter()
            ml.wait(out)
            t3 = time.perf_counter()
            del out
            series["record"].append(t1 - t0)
            series["barrier"].append(t2 - t1)
            series["barrier+wait"].append(t3 - t1)
            series["step"].append(t2 - t0)
            series["step+wait"].append(t3 - t0)
        return series

    got = measure({"numpy": numpy_sample, "jax op-by-op": jax_sample(op_by_op),
                   "jax.jit": jax_sample(jitted), "record": record_only, "steps": steps},
                  cfg.warmup, cfg.graph_repeat)
    rec, st = got["record"], got["steps"]
    per_op = rec.series["record"].median / 100
    rows = [
        Row(wl, "numpy eager", "step", got["numpy"].series["step"]),
        Row(wl, "jax op-by-op + block", "step", got["jax op-by-op"].series["step"]),
        Row(wl, "jax.jit call + block", "step", got["jax.jit"].series["step"],
            note="scalars baked in as constants" if scalars else ""),
        lazy_row(wl, "minilazy record+mark_step+wait", "step", st.series["step+wait"], st),
        lazy_row(wl, "minilazy record+mark_step", "step", st.series["step"], st,
                 note="execution may still be in flight"),
        lazy_row(wl, "  record only (no barrier)", "step", rec.series["record"], rec,
                 vs_numpy=False, note=f"{per_op * 1e6:.2f} µs/op"),
        lazy_row(wl, "  record (inside the step)", "step", st.series["record"], st,
                 vs_numpy=False),
        lazy_row(wl, "  barrier: mark_step", "step", st.series["barrier"], st, vs_numpy=False),
        lazy_row(wl, "  barrier: mark_step + wait", "step", st.series["barrier+wait"], st,
                 vs_numpy=False),
    ]
    derived = {
        "barrier_direct_s": st.series["barrier"].median,
        "barrier_wait_direct_s": st.series["barrier+wait"].median,
        "barrier_by_difference_s": st.series["step"].median - rec.series["record"].median,
        "barrier_wait_by_difference_s": (st.series["step+wait"].median
                                         - rec.series["record"].median),
        "max_abs_error_minilazy": float(np.max(np.abs(
            graph100(x0, y0, ml, scalars).numpy() - expected))),
        "max_abs_error_jit": float(np.max(np.abs(np.asarray(jitted(jx, jy)) - expected))),
    }
    return rows, derived


# -- workload 3: a 20-op elementwise chain on big arrays ---------------------------------------
def bench_chain(cfg: Config, n: int, act: str) -> tuple[list[Row], dict[str, float]]:
    wl = f"chain: 20 ops ({act}) on {n:.0e} float32"
    repeat = max(5, cfg.chain_repeat * 1_000_000 // n)
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    expected = chain(host, np, act)
    jx = jnp.asarray(host)
    lx = ml.asarray(host)
    ml.mark_step()
    jitted = jax.jit(functools.partial(chain, ns=jnp, act=act))

    def timed(step: Callable[[], object]) -> Callable[[], Samples]:
        def sample() -> Samples:
            start = time.perf_counter()
            step()
            return {"step": [time.perf_counter() - start]}
        return sample

    def lazy_step() -> None:
        y = chain(lx, ml, act)
        ml.wait(y)

    got = measure({
        "numpy eager": timed(lambda: chain(host, np, act)),
        "jax op-by-op + block": timed(lambda: chain(jx, jnp, act).block_until_ready()),
        "jax.jit call + block": timed(lambda: jitted(jx).block_until_ready()),
        "minilazy record + wait": timed(lazy_step),
    }, cfg.warmup, repeat)
    rows = []
    for name, m in got.items():
        note = f"{m.faults:.0f} page faults/step"
        if name.startswith("minilazy"):
            rows.append(lazy_row(wl, name, "step", m.series["step"], m, note=note))
        else:
            rows.append(Row(wl, name, "step", m.series["step"], note=note))
    errors = {
        "max_abs_error_minilazy": float(np.max(np.abs(chain(lx, ml, act).numpy() - expected))),
        "max_abs_error_jit": float(np.max(np.abs(np.asarray(jitted(jx)) - expected))),
    }
    return rows, errors


def bench_single_op(cfg: Config, n: int, op: str) -> list[Row]:
    """One op over ``n`` float32: what the chain's tanh and maximum cost on their own."""
    wl = f"one op: {op} on {n:.0e} float32"
    repeat = max(5, cfg.chain_repeat * 1_000_000 // n)
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    jx = jnp.asarray(host)
    lx = ml.asarray(host)
    ml.mark_step()

    def apply(x: Array, ns: Any) -> Array:
        return ns.tanh(x) if op == "tanh" else ns.maximum(x, 0.0)

    jitted = jax.jit(functools.partial(apply, ns=jnp))

    def timed(step: Callable[[], object]) -> Callable[[], Samples]:
        def sample() -> Samples:
            start = time.perf_counter()
            step()
            return {"step": [time.perf_counter() - start]}
        return sample

    got = measure({
        "numpy eager": timed(lambda: apply(host, np)),
        "jax.jit call + block": timed(lambda: jitted(jx).block_until_ready()),
        "minilazy record + wait": timed(lambda: ml.wait(apply(lx, ml))),
    }, cfg.warmup, repeat)
    return [lazy_row(wl, name, "call", m.series["step"], m) if name.startswith("minilazy")
            else Row(wl, name, "call", m.series["step"]) for name, m in got.items()]


# -- report ------------------------------------------------------------------------------------
def numpy_median(rows: Sequence[Row], workload: str) -> float | None:
    for r in rows:
        if r.workload == workload and r.system == "numpy eager":
            return r.stats.median
    return None


def table(rows: Sequence[Row]) -> str:
    head = (f"  {'system':<33}{'median':>11}  {'p10 .. p90':<21}{'NumPy/this':>11}"
            f"  {'compiles/hits':<14} note")
    lines: list[str] = []
    workload = None
    for r in rows:
        if r.workload != workload:
            workload = r.workload
            lines += ["", f"{workload}  (time per {r.unit})", head]
        base = numpy_median(rows, r.workload)
        ratio = f"{base / r.stats.median:.2f}x" if r.vs_numpy and base else ""
        counts = "" if r.compiles is None else f"{r.compiles}/{r.cache_hits}"
        spread = f"{fmt_time(r.stats.p10)} .. {fmt_time(r.stats.p90)}"
        lines.append(f"  {r.system:<33}{fmt_time(r.stats.median):>11}  {spread:<21}{ratio:>11}"
                     f"  {counts:<14} {r.note}")
    return "\n".join(lines)


@dataclass
class Goal:
    """A target from the project plan and whether this run meets it."""

    name: str
    value: str
    met: bool


def find(rows: Sequence[Row], workload_prefix: str, system: str) -> Row:
    for r in rows:
        if r.workload.startswith(workload_prefix) and r.system == system:
            return r
    raise KeyError(f"{workload_prefix} / {system}")


def goals(rows: Sequence[Row]) -> list[Goal]:
    out = []
    rec = find(rows, "record: y = a + b, f32[4], tensor+tensor", "minilazy record (no barrier)")
    out.append(Goal("recording tensor+tensor <= 1.8 µs/op", fmt_time(rec.stats.median),
                    rec.stats.median <= 1.8e-6))
    for variant in ("50 Python scalars", "tensors only"):
        bar = find(rows, f"graph100: 100 ops on f32[8], {variant}", "  barrier: mark_step")
        out.append(Goal(f"cached barrier, 100-op graph ({variant}) <= 60 µs",
                        fmt_time(bar.stats.median), bar.stats.median <= 60e-6))
    wl = "chain: 20 ops (maximum) on 1e+06 float32"
    lazy = find(rows, wl, "minilazy record + wait")
    base = numpy_median(rows, wl)
    assert base is not None
    speedup = base / lazy.stats.median
    out.append(Goal("chain 1e6: minilazy >= 5x NumPy", f"{speedup:.2f}x", speedup >= 5.0))
    compiles = sum(r.compiles or 0 for r in rows)
    out.append(Goal("no compiles in any timed minilazy phase", str(compiles), compiles == 0))
    return out


def environment(single_thread: bool, malloc_pinned: bool) -> dict[str, Any]:
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "python": platform.python_version(), "numpy": np.__version__, "jax": jax.__version__,
        "minilazy": ml.__version__, "machine": platform.machine(), "cpu_count": os.cpu_count(),
        "affinity": affinity, "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
        "single_thread": single_thread, "device": str(ml.default_device()),
        "gc_enabled": gc.isenabled(), "glibc_malloc_pinned": malloc_pinned,
        "load_average_1min": os.getloadavg()[0],
    }


# -- profiling ---------------------------------------------------------------------------------
def profile(cfg: Config) -> None:
    """cProfile minilazy's hot paths: recording one op, and a cached barrier on graph100.

    The barrier profiles switch the profiler on only around ``mark_step`` + ``wait``. cProfile
    adds ~0.1-0.3 µs per Python call, so it inflates small functions: trust it for call counts
    and ranking, and the timed table for absolute numbers.
    """
    a = ml.asarray(np.arange(4, dtype=np.float32))
    b = ml.asarray(np.ones(4, dtype=np.float32))
    x0 = ml.asarray(np.linspace(-1.0, 1.0, 8, dtype=np.float32))
    y0 = ml.asarray(np.linspace(0.5, -0.5, 8, dtype=np.float32))
    n, steps = cfg.record_ops, cfg.graph_steps * cfg.graph_repeat

    def show(title: str, prof: cProfile.Profile, calls: int) -> None:
        print(f"\n== cProfile: {title} ({calls} calls; divide times by it) ==")
        pstats.Stats(prof).sort_stats("tottime").print_stats(16)

    for b_ in (b, 1.0):
        prof = cProfile.Profile()
        with ml.policy(max_pending_nodes=_NO_CUT):
            prof.runcall(_loop_add, a, b_, n)
        ml.mark_step()
        show(f"record y = a + b, b = {'tensor' if b_ is b else 'Python scalar'}", prof, n)

    for scalars in (True, False):
        out = graph100(x0, y0, ml, scalars)
        ml.mark_step()  # compiles, outside the profile
        prof = cProfile.Profile()
        for _ in range(steps):
            out = graph100(x0, y0, ml, scalars)
            prof.enable()
            ml.mark_step()
            ml.wait(out)
            prof.disable()
        show(f"cached barrier (mark_step + wait) on graph100, scalars={scalars}", prof, steps)


# -- main --------------------------------------------------------------------------------------
def reexec_single_thread() -> None:
    """Run this script again, pinned to one core, with XLA's threading switched off."""
    env = dict(os.environ)
    env[_SINGLE_THREAD_ENV] = "1"
    env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {XLA_SINGLE_THREAD}".strip()
    command = [sys.executable, os.path.abspath(__file__), *sys.argv[1:]]
    taskset = shutil.which("taskset")
    if taskset is None:
        print("taskset not found: limiting threads with XLA_FLAGS only", file=sys.stderr)
    else:
        command = [taskset, "-c", "0", *command]
    sys.stdout.flush()
    os.execve(command[0], command, env)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter samples (< 30 s)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--single-thread", action="store_true",
                        help="re-run pinned to one core (taskset -c 0) with XLA threading off")
    parser.add_argument("--profile", action="store_true",
                        help="only cProfile the minilazy recording and barrier hot paths")
    parser.add_argument("--glibc-default-malloc", action="store_true",
                        help="leave glibc's adaptive malloc thresholds alone (noisier NumPy "
                             "times on big arrays; see pin_glibc_malloc)")
    args = parser.parse_args(argv)
    single = os.environ.get(_SINGLE_THREAD_ENV) == "1"
    if args.single_thread and not single:
        reexec_single_thread()  # does not return
    cfg = QUICK if args.quick else FULL
    if args.profile:
        profile(cfg)
        return 0

    started = time.perf_counter()
    pinned = not args.glibc_default_malloc and pin_glibc_malloc()
    env = environment(single, pinned)
    print(f"minilazy {env['minilazy']}, jax {env['jax']}, numpy {env['numpy']}, python "
          f"{env['python']}; {len(env['affinity'] or [])} of {env['cpu_count']} CPUs usable"
          f"{', single-thread' if single else ''}; glibc malloc "
          f"{'pinned' if pinned else 'adaptive'}; {'quick' if args.quick else 'full'} mode; "
          f"load average {env['load_average_1min']:.2f}")
    if env["load_average_1min"] > 0.5 * len(env["affinity"] or [1]):
        print("WARNING: the machine is busy; timings will be noisy")
    rows = bench_record(cfg)
    derived: dict[str, dict[str, float]] = {}
    for scalars in (True, False):
        r, d = bench_graph100(cfg, scalars)
        rows += r
        derived[r[0].workload] = d
    for n in cfg.chain_sizes:
        for act in ("maximum", "tanh"):
            r, d = bench_chain(cfg, n, act)
            rows += r
            derived[r[0].workload] = d
        for op in ("tanh", "maximum"):
            rows += bench_single_op(cfg, n, op)

    print(table(rows))
    print("\nDerived (medians):")
    for workload, d in derived.items():
        parts = [f"{k.removesuffix('_s')} {fmt_time(v)}" if k.endswith("_s") else f"{k} {v:.2g}"
                 for k, v in d.items()]
        print(f"  {workload}:\n    " + ", ".join(parts))
    results = goals(rows)
    print("\nGoals:")
    for g in results:
        print(f"  [{'met' if g.met else 'MISSED'}] {g.name}: {g.value}")
    elapsed = time.perf_counter() - started
    print(f"\n(total {elapsed:.1f} s)")

    if args.json:
        report = {"environment": env, "config": asdict(cfg), "rows": [asdict(r) for r in rows],
                  "derived": derived, "goals": [asdict(g) for g in results],
                  "seconds": elapsed}
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
