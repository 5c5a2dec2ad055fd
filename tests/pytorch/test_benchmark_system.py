"""The benchmark's minilazy.pytorch system runs the peers' PyTorch programs: a smoke test (no
timing is asserted), and its losses are torch eager's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


def test_the_same_pytorch_mlp_step_runs_on_minilazy_pytorch(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(RUN), "--quick", "--systems", "minilazy-torch", "torch",
         "--threads", "one", "--workloads", "mlp", "--out", str(tmp_path), "--peers",
         str(tmp_path / "no-peers")],
        capture_output=True, text=True, timeout=300,
        env={"MINILAZY_BENCH_LTC_PYTHON": sys.executable, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "results.json").read_text())
    assert {(r["system"], r["metric"]) for r in report["results"]} >= {
        ("minilazy-torch", "step"), ("torch", "step")}
    cold = {c["system"]: c for c in report["cold"] if c["model"] == "mlp"}
    mine, eager = cold["minilazy-torch"], cold["torch"]
    assert mine["compiles_later_steps"] <= 1  # SGD's momentum is made at step 1, read after
    for loss in ("loss_first", "loss_step21"):  # the same program in: the same loss out
        assert mine[loss] == pytest.approx(eager[loss], rel=1e-4)
