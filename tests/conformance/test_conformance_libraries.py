"""The oracle on libraries no one here wrote: the guide's adapter, tinygrad and MLX.

tinygrad and MLX are optional (``pip install tinygrad mlx mlx-cpu``; tinygrad's CPU backend also
needs Debian's ``clang``): their tests skip, saying so, where they are missing. CI installs them
in a step of its own (``.ci/run``). The findings scripts in ``docs/findings/`` must keep running:
each exits 1 while its bug is there and 0 once it is fixed, never with a traceback of its own.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = ROOT / "docs" / "findings"
ADAPTERS = "minilazy.conformance.adapters"


def adapter_module(name: str):
    try:
        return importlib.import_module(f"{ADAPTERS}.{name}")
    except ImportError as e:
        pytest.skip(str(e))


def oracle(impl: str, tmp_path: Path, *options: str) -> dict:
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance", f"--lazy-impl={impl}",
                           f"--spec-report={report}", "-q", *options], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert report.exists(), f"no report:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return json.loads(report.read_text())


def status(report: dict, rid: str) -> str:
    return report["rules"][rid]["status"]


def test_the_guides_adapter_fits_in_40_lines_and_is_checked(tmp_path) -> None:
    source = (ROOT / "src" / "minilazy" / "conformance" / "adapters" / "jax_numpy.py")
    assert len(source.read_text().splitlines()) <= 40
    report = oracle(f"{ADAPTERS}.jax_numpy:JaxNumpy", tmp_path,
                    "--lazy-rules=LZ-REC-001,LZ-NUM-012")
    assert status(report, "LZ-NUM-012") == "passed"
    assert status(report, "LZ-REC-001") == "failed"  # eager: recording executes


@pytest.mark.parametrize("name, impl, passing, failing", [
    ("tinygrad_adapter", "tinygrad", ["LZ-BAR-006"], ["LZ-NUM-001"]),  # NUM-012: a finding
    ("mlx_adapter", "mlx", ["LZ-NUM-012", "LZ-BAR-006"], ["LZ-NUM-010"]),
], ids=["tinygrad", "mlx"])
def test_a_library_runs_through_the_oracle(name: str, impl: str, passing: list[str],
                                           failing: list[str], tmp_path) -> None:
    adapter_module(name)
    report = oracle(f"{ADAPTERS}.{name}:{impl}", tmp_path,
                    f"--lazy-rules={','.join(passing + failing)}")
    assert [status(report, r) for r in passing] == ["passed"] * len(passing)
    assert [status(report, r) for r in failing] == ["failed"] * len(failing), \
        "a finding is gone: check docs/findings and the conformance page"
    assert report["policy"], "values were checked under the declared dtype policy"


@pytest.mark.parametrize("library", ["tinygrad", "mlx"])
def test_the_findings_scripts_run(library: str) -> None:
    adapter_module(f"{library}_adapter")
    scripts = sorted(FINDINGS.glob(f"{library}_*.py"))
    assert len(scripts) >= 10
    env = {**os.environ, "PYTHONPATH": ""}  # the library and NumPy only: no minilazy needed
    for script in scripts[:: 1 if os.environ.get("MINILAZY_ALL_FINDINGS") else 4]:
        text = script.read_text()
        assert "minilazy" not in text.split('"""', 2)[-1], f"{script.name} imports minilazy"
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=300, env=env, cwd=FINDINGS)
        assert done.returncode in (0, 1), f"{script.name}: {done.stderr[-2000:]}"


def test_a_failure_becomes_a_script_without_minilazy(tmp_path) -> None:
    adapter_module("mlx_adapter")
    impl = f"{ADAPTERS}.mlx_adapter:mlx"
    oracle(impl, tmp_path, "--lazy-rules=LZ-NUM-001", "-k", "unary and exp and not expm1")
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance.tools.repro", "--impl", impl,
                           str(tmp_path / "report.json"), "--out", str(tmp_path / "repro")],
                          capture_output=True, text=True, timeout=300)
    scripts = sorted((tmp_path / "repro").glob("repro_*.py"))
    assert scripts, done.stdout + done.stderr
    text = scripts[0].read_text()
    assert "import minilazy" not in text and "mx.exp(" in text
    run = subprocess.run([sys.executable, str(scripts[0])], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": ""}, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr  # MLX 0.32: float64 exp is float32's
