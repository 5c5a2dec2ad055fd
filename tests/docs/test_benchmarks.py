"""Smoke test of the benchmark entry point: it runs, and writes the report files.

Only that ``benchmarks/run.py --quick`` works on minilazy, NumPy and jax.jit and produces every
workload (the models only when named): no timing is asserted (timings belong to the benchmark,
not to the test suite).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"
SYSTEMS = ("minilazy", "numpy", "jax-jit")
WORKLOADS = {"record/tensor+tensor", "record/tensor+scalar", "record/chains", "graph100/scalars",
             "graph100/tensors", "mlp", "chain/1e6", "chain/1e7"}


def test_quick_run_writes_every_workload(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--systems", *SYSTEMS, "--threads", "one",
         "--out", str(tmp_path), "--peers", str(tmp_path / "no-peers")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    report = json.loads((tmp_path / "results.json").read_text())
    results = report["results"]
    assert {r["workload"] for r in results} == WORKLOADS
    assert {r["system"] for r in results} == set(SYSTEMS)
    for r in results:  # (a count of waits may be 0: a step that never waits for its device)
        assert (0 <= r["p10"] if r["metric"] == "waits" else 0 < r["p10"]), r
        assert r["p10"] <= r["median"] <= r["p90"], r
    assert {"cpu", "waits"} <= {r["metric"] for r in results if r["workload"] == "mlp"}
    # jax.jit has no per-op cost; every other system has a result for every workload.
    for system in ("minilazy", "numpy"):
        assert {r["workload"] for r in results if r["system"] == system} == WORKLOADS
    # The lazy system reports its barrier, and compiled nothing while it was timed.
    lazy = [r for r in results if r["system"] == "minilazy"]
    assert {"record", "barrier", "barrier+wait"} <= {r["metric"] for r in lazy}
    assert all(r["compiles_timed"] == 0 for r in lazy)

    # One cold run per system: the same MLP, from the same numbers, gives the same losses.
    cold = {c["system"]: c for c in report["cold"]}
    assert set(cold) == set(SYSTEMS)
    assert cold["minilazy"]["compiles_first_step"] >= 1
    assert cold["minilazy"]["compiles_later_steps"] == 0
    assert cold["numpy"]["compiles_first_step"] is None
    for c in cold.values():
        assert c["peak_rss_mib"] > 0
        assert abs(c["loss_first"] - cold["numpy"]["loss_first"]) < 1e-4
        assert abs(c["loss_step21"] - cold["numpy"]["loss_step21"]) < 1e-3

    assert {g["goal"] for g in report["goals"]}  # evaluated (n/a without the peers)
    assert (tmp_path / "results.md").read_text().count("\n|") > 10
    assert report["notes"] == [], report["notes"]
    # A model step reports its host time too: a part of each sample's step, so of the median.
    mlp = {r["metric"]: r["median"] for r in lazy if r["workload"] == "mlp"}
    assert 0 < mlp["host"] <= mlp["step"], mlp


def test_models_start_from_minilazys_own_weights() -> None:
    """The NumPy init the peers' workers use is minilazy.demo.models' own, number for number."""
    import numpy as np

    import minilazy as ml
    from minilazy.demo import models
    from minilazy.demo.corpus import characters

    sys.path.insert(0, str(RUN.parent))
    try:
        import workloads
    finally:
        sys.path.remove(str(RUN.parent))
    cfg = models.Config()
    assert workloads.TF_VOCAB == cfg.vocab == len(characters()[0])
    assert (workloads.TF_LAYERS, workloads.TF_WIDTH, workloads.TF_HEADS,
            workloads.TF_CONTEXT) == (cfg.layers, cfg.width, cfg.heads, cfg.context)
    for ours, theirs in ((models.cnn_params(), workloads.cnn_init()),
                         (models.transformer_params(), workloads.transformer_init())):
        assert list(ours) == list(theirs)
        for k, t in ours.items():
            assert t.dtype == ml.float32 and np.array_equal(t.numpy(), theirs[k]), k


def test_quick_run_of_a_model(tmp_path: Path) -> None:
    """``--workloads model/cnn`` on minilazy and jax.jit: the same losses from the same numbers,
    one compile, the graph's nodes counted. (The CNN only: the Transformer's two compiles per
    system would double the test's ~25 s; the benchmark's own loss rows check it.)"""
    systems = ("minilazy", "jax-jit")
    done = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--workloads", "model/cnn", "--systems", *systems,
         "--threads", "one", "--out", str(tmp_path), "--peers", str(tmp_path / "no-peers")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    report = json.loads((tmp_path / "results.json").read_text())
    assert {(r["workload"], r["system"]) for r in report["results"]} == {
        ("model/cnn", s) for s in systems}
    cold = {c["system"]: c for c in report["cold"]}
    assert set(cold) == set(systems) and {c["model"] for c in report["cold"]} == {"cnn"}
    assert cold["minilazy"]["compiles_first_step"] == 1
    assert cold["minilazy"]["compiles_later_steps"] == 0
    assert cold["minilazy"]["nodes_per_step"] > 100
    for key, tolerance in (("loss_first", 1e-4), ("loss_step21", 1e-3)):
        assert abs(cold["minilazy"][key] - cold["jax-jit"][key]) < tolerance, key
    assert "CNN step <= 1.3x jax.jit" in {g["goal"] for g in report["goals"]}
    assert report["notes"] == [], report["notes"]


def test_the_device_check_runs_and_skips_honestly_without_an_accelerator(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(RUN.parent / "device.py"), "--out", str(tmp_path),
                           "--models", "cnn"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "device.json").read_text())
    parts = report["parts"]
    assert {"matrix", "model/cnn", "benchmarks"} == set(parts)  # the model named only
    assert parts["model/cnn"]["status"] == 0 and parts["model/cnn"]["steps"] >= 1
    if not report["accelerators"]:  # this machine: every accelerator part says why it skipped
        assert parts["matrix"]["status"] == parts["benchmarks"]["status"] == "skipped"
        assert "no GPU" in parts["matrix"]["why"]
    assert "| model/cnn | 0 |" in (tmp_path / "device.md").read_text()


def test_the_overlap_table_is_host_plus_device_minus_the_step() -> None:
    sys.path.insert(0, str(RUN.parent))
    try:
        from report import overlaps
    finally:
        sys.path.remove(str(RUN.parent))

    def row(metric: str, system: str, median: float, threads: str = "one"
            ) -> dict[str, object]:
        return {"threads": threads, "workload": "model/cnn", "metric": metric,
                "system": system, "median": median}

    results = [row("host", "minilazy", 2e-3), row("step", "minilazy", 6e-3),
               row("step", "jax-jit", 5e-3)]
    assert overlaps(results, ["one"], 2) == [
        ("CNN, one thread", ["2 ms", "5 ms", "6 ms", "1 ms (50% of the host's)", "—", "—",
                             "—"])]
    assert overlaps(results[:2], ["one"], 2) == []  # no device time: no row
    # CPU per step over the cores the setting had: one core, or all of them with default threads
    for threads, floor in (("one", "8 ms (1.60x)"), ("default", "4 ms (0.80x)")):
        timed = [row(m, s, v, threads) for m, s, v in
                 (("host", "minilazy", 2e-3), ("step", "minilazy", 6e-3),
                  ("step", "jax-jit", 5e-3), ("cpu", "minilazy", 8e-3),
                  ("cpu", "jax-jit", 6e-3), ("waits", "minilazy", 0.25))]
        assert overlaps(timed, [threads], 2)[0][1][4:] == ["8 ms / 6 ms", floor, "0.2"]
