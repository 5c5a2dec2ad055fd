"""The oracle on two JavaScript libraries, through the process protocol: TensorFlow.js and jax-js.

Optional: they need Node 20 and ``npm ci`` in ``src/minilazy/conformance/adapters/js`` (CI does
both in a step of its own, ``.ci/run``); without them these tests skip, saying so. The findings
scripts (``docs/findings/*.mjs``) must keep running: each exits 1 while its bug is there and 0
once it is fixed, never with an error of its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "src" / "minilazy" / "conformance" / "adapters" / "js"
FINDINGS = ROOT / "docs" / "findings"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node (node) on this machine")
    if not (JS / "node_modules").exists():
        pytest.skip(f"the JavaScript libraries are not installed: npm ci in {JS}")
    return node


@pytest.mark.parametrize("adapter, name, passing, failing", [
    ("tfjs.mjs", "tfjs-cpu", ["LZ-BAR-006", "LZ-CACHE-006", "LZ-ERR-004"],
     ["LZ-NUM-016"]),  # tfjs_cumsum_negative_axis
    ("jaxjs.mjs", "jax-js-wasm", ["LZ-BAR-003", "LZ-CACHE-002", "LZ-REC-004"],
     ["LZ-CACHE-001"]),  # jaxjs_new_scalar_recompiles
], ids=["tfjs", "jax-js"])
def test_a_javascript_library_runs_through_the_oracle(adapter: str, name: str,
                                                     passing: list[str], failing: list[str],
                                                     tmp_path: Path) -> None:
    node = _node()
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance", "-q",
                           "--lazy-command", f"{node} {JS / adapter}",
                           f"--lazy-rules={','.join(passing + failing)}",
                           f"--spec-report={report}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(report.read_text())
    assert result["implementation"]["name"] == name
    status = {rid: result["rules"][rid]["status"] for rid in passing + failing}
    assert [status[r] for r in passing] == ["passed"] * len(passing), status
    assert [status[r] for r in failing] == ["failed"] * len(failing), \
        "a finding is gone: check docs/findings and the conformance page"


@pytest.mark.parametrize("library", ["tfjs", "jaxjs"])
def test_the_javascript_findings_scripts_run(library: str) -> None:
    node = _node()
    scripts = sorted(FINDINGS.glob(f"{library}_*.mjs"))
    assert len(scripts) >= 10
    for script in scripts[:: 1 if os.environ.get("MINILAZY_ALL_FINDINGS") else 3]:
        text = script.read_text()
        assert not re.search(r"(import|require)\b[^\n]*(protocol|tfjs|jaxjs)\.mjs", text), \
            f"{script.name} uses the adapter: a finding imports the library only"
        done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=120,
                              cwd=FINDINGS)
        # Exit 1 is the bug's; an uncaught error also exits 1, with a stack trace on stderr.
        assert done.returncode in (0, 1) and "\n    at " not in done.stderr, \
            f"{script.name}: {done.stderr[-2000:]}"
