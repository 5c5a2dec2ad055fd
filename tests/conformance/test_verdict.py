"""The oracle's verdict, read in a minute: a digest per failing rule, the rule text in the JSON
report, a line per undeclared capability, the changes since a saved run, SHOULD rules made fatal
on demand, and usage instead of a run when no implementation is named."""

from __future__ import annotations

import json
import os
import subprocess
import sys

TOY = "--lazy-impl=minilazy.conformance.mutate.toy:toy"
SPEC_TESTS = '''
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minilazy.conformance.suite.util import explain_call


@pytest.mark.spec("LZ-BAR-004")
@given(st.just(3))
def test_must(adapter, n):
    explain_call("add", [np.array([1, 2], np.int8), n])
    assert n == 4, "add: got [4 5], NumPy gives [4 6]"


@pytest.mark.spec("LZ-BAR-004")
def test_must_passes(adapter):
    pass


@pytest.mark.spec("LZ-BAR-002")  # a SHOULD rule
def test_should(adapter):
    assert False, "two executions, not one"


@pytest.mark.spec("LZ-ERR-005")  # capability devices: the toy does not declare it
def test_devices(adapter):
    pass
'''


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTEST_", "HYPOTHESIS", "MINILAZY_IMPL"))}


def _pytest(tmp_path, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_it.py").write_text(SPEC_TESTS)
    return subprocess.run([sys.executable, "-m", "pytest", "test_it.py", "-p", "no:cacheprovider",
                           "-p", "no:xdist", TOY, *options], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300)


def test_the_run_ends_with_a_digest_of_each_failing_rule(tmp_path) -> None:
    report = tmp_path / "r.json"
    out = _pytest(tmp_path, f"--spec-report={report}")
    digest = out.stdout[out.stdout.index("what failed, rule by rule"):]
    lines = digest.splitlines()
    assert lines[1].startswith("LZ-BAR-002 (SHOULD) failed 1 of 1 tests: `mark_step()` "), digest
    assert "LZ-BAR-004 (MUST) failed 1 of 2 tests: An observation materialises" in digest
    at = lines.index("  first: test_it.py::test_must")
    assert lines[at:at + 4] == ["  first: test_it.py::test_must",
                                    "  AssertionError: add: got [4 5], NumPy gives [4 6]",
                                    "  program as Python:",
                                    "    add(np.array([1, 2], dtype=np.int8), 3)"], digest
    assert "capability devices not declared: 1 test skipped" in lines, digest
    assert "verdict: 2 rules failed (2 failed, 1 skipped, " in digest
    assert "FAILED test_it.py::test_must" not in digest  # it comes last: after pytest's lines
    data = json.loads(report.read_text())
    assert data["rules"]["LZ-BAR-004"]["text"].startswith("An observation materialises")
    assert data["undeclared"] == {"devices": 1}


def test_a_baseline_names_the_rules_whose_status_changed(tmp_path) -> None:
    baseline = tmp_path / "before.json"
    baseline.write_text(json.dumps({"rules": {"LZ-BAR-004": {"status": "passed"},
                                              "LZ-BAR-002": {"status": "failed"}}}))
    out = _pytest(tmp_path, f"--spec-baseline={baseline}")
    assert "since the baseline: 2 rules changed status" in out.stdout, out.stdout[-3000:]
    assert "LZ-BAR-004: passed -> failed (An observation materialises" in out.stdout
    assert "LZ-ERR-005: absent -> skipped" in out.stdout  # a rule the baseline lacked
    assert "LZ-BAR-002:" not in out.stdout.split("since the baseline")[1]  # failed both times


def test_a_should_rule_fails_the_run_only_when_strict(tmp_path) -> None:
    assert _pytest(tmp_path, "-k", "should").returncode == 0
    strict = _pytest(tmp_path, "-k", "should", "--lazy-strict")
    assert strict.returncode == 1, strict.stdout[-3000:]


def test_the_command_with_no_implementation_prints_its_usage(tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance"], cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout[-2000:]
    assert done.stderr.startswith("usage: python -m minilazy.conformance --lazy-impl=")


def test_the_command_prints_the_digest_not_pytests_tracebacks(tmp_path) -> None:
    # A mutant of the toy failing dozens of tests: each used to print its traceback and a
    # FAILED line. The digest says the same per rule; --lazy-pytest-output brings them back.
    impl = "--lazy-impl=minilazy.conformance.mutate.toy_mutants:mutant_strong_scalars"
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance", impl,
                           "--lazy-rules=LZ-REC-002", "-p", "no:xdist"], cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 1
    assert "Traceback" not in done.stdout and "\nFAILED " not in done.stdout, done.stdout
    assert "LZ-REC-002 (MUST) failed 3 of " in done.stdout, done.stdout
    assert len(done.stdout.splitlines()) < 30, done.stdout
