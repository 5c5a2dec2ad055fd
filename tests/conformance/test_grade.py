"""The course grader: the rules of assignments 1 to N, a score, and why each failed rule failed.

Graded for real on the toy implementation (which passes) and on one of its mutants (which breaks
an assignment-1 rule), each in a fresh process as a student runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from minilazy.conformance.grade import LAST, Grade, main, staged
from minilazy.conformance.registry import rules


def test_each_assignment_grades_the_rules_of_its_stage_and_the_ones_before():
    for n in range(1, LAST + 1):
        assert set(staged(n)) == {r.id for r in rules().values() if 1 <= r.stage <= n}
        assert {rules()[r].stage for r in staged(n)} == set(range(1, n + 1))
    with pytest.raises(ValueError, match="assignment 9 does not exist"):
        staged(9)


def test_every_must_rule_is_some_assignments_but_the_two_device_one():
    ungraded = {r.id for r in rules().values() if r.level == "MUST" and not r.stage}
    # Two devices, data-dependent shapes (host fallbacks), convolutions, sorts and the linalg
    # and fft extensions are not part of the course; nor, yet, the seams an adversarial round
    # found (issue 28: barriers and in-place updates inside grad, host data copied at the call,
    # mode blocks left by an exception, a tape reused across eager mode); nor the persistent
    # cache, optimizers and random keys.
    assert ungraded == {"LZ-ERR-005", "LZ-NUM-016", "LZ-NUM-017", "LZ-NUM-018", "LZ-NUM-019",
                        "LZ-AD-008", "LZ-AD-009", "LZ-AD-011", "LZ-REC-007", "LZ-BAR-013",
                        "LZ-CACHE-008", "LZ-CACHE-010"} | {
        r for r in ungraded if r.startswith(("LZ-DYN-", "LZ-OPT-", "LZ-RNG-"))}
    assert all(not r.stage for r in rules().values() if r.level == "IMPL")


def test_a_grade_says_why_each_rule_failed():
    report = {"implementation": {"name": "mine", "version": "0"}, "rules": {
        "LZ-REC-001": {"status": "passed"},
        "LZ-REC-002": {"status": "failed", "first_failure": {
            "test": "suite/test_recording.py::test_x", "message": "AssertionError: f32 != f64",
            "example": "program as Python:\nx + 1"}},
        "LZ-REC-003": {"status": "skipped"}}}
    g = Grade(1, report)
    text = g.text()
    assert g.passed == ["LZ-REC-001"] and g.score == f"1/{len(staged(1))} rules (10%)"
    assert rules()["LZ-REC-002"].summary in text
    assert "suite/test_recording.py::test_x" in text and "f32 != f64" in text
    assert "program as Python:\n  x + 1" in text
    assert "capability 'executions|compiles', which the adapter does not declare" in text
    assert "LZ-ERR-001 (assignment 1, not run)" in text  # no test of it ran: not passed


def _grade(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    return subprocess.run([sys.executable, "-m", "minilazy.conformance.grade", *args],
                          capture_output=True, text=True, env=env, timeout=600)


def test_the_toy_passes_assignment_1_and_a_mutant_is_told_what_broke():
    done = _grade("--assignment", "1", "--impl", "minilazy.conformance.mutate.toy:toy")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"score: {len(staged(1))}/{len(staged(1))} rules (100%)" in done.stdout
    done = _grade("--assignment", "1", "--impl",
                  "minilazy.conformance.mutate.toy_mutants:mutant_strong_scalars")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "LZ-NUM-003 (assignment 1, failed): Python scalars are weak" in done.stdout
    assert "first failing test: suite/" in done.stdout


def test_the_plugin_selects_the_rules_of_an_assignment(tmp_path):
    out = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance", "-q",
                           "--lazy-pytest-output", "-k", "test_hashing and parameters",
                           "--lazy-impl=minilazy.conformance.mutate.toy:toy", "--lazy-assignment=3",
                           f"--spec-report={out}", "--hypothesis-profile=quick"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    ran = {rid for rid, row in json.loads(out.read_text())["rules"].items()
           if row["status"] != "not covered"}
    assert ran and ran <= set(staged(3)) and "LZ-HASH-002" in ran
    table = done.stdout[done.stdout.index("LazyTensor conformance"):]
    rows = {line.split()[0] for line in table.splitlines() if line.startswith("LZ-")}
    assert rows == set(staged(3))  # the table speaks of the chosen rules only
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance", "--lazy-assignment=0",
                           "--lazy-impl=minilazy.conformance.mutate.toy:toy"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 4 and "the course has assignments 1 to" in done.stderr


def test_an_assignment_the_course_lacks_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--assignment", str(LAST + 1), "--impl", "x:y"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_a_failure_keeps_its_lines_and_a_single_rule_run_its_own_table():
    """The grader prints got and want on lines of their own (not one truncated line), and a run
    of one rule reports that rule only: no rows of rules it never asked for, no coverage
    failure for them."""
    from minilazy.conformance.tools.report import Results, summarize
    text = ("AssertionError: add(float32[2], int 3) recorded float64[2]\n"
            "  got:  [2.0, 2.0]\n  want: [2.0, 2.0]\nassert False\n"
            "Falsifying example: test(op='add')")
    found = summarize(text)
    assert found["detail"].splitlines()[1:] == ["  got:  [2.0, 2.0]", "  want: [2.0, 2.0]"]
    assert "\n" not in found["message"]  # one line, for the tables
    grade = Grade(1, {"rules": {"LZ-REC-002": {"status": "failed", "first_failure": {
        "test": "t", **found}}}}).text()
    assert "    got:  [2.0, 2.0]" in grade
    one = Results(selected=frozenset({"LZ-NUM-003"}))
    one.add("t", "passed", ["LZ-NUM-003"], "add")
    lines = one.table(frozenset())
    assert [line.split()[0] for line in lines[1:-1]] == ["LZ-NUM-003"]
    assert lines[-1] == "ops: 1 passed" and one.uncovered(frozenset()) == []
    assert "LZ-REC-001" in Results().uncovered(frozenset({"executions"}))  # all, by default


def test_a_wrong_recorded_dtype_names_got_and_want():
    """LZ-REC-002's message: the call, what was recorded, and NumPy's dtype and shape."""
    import numpy as np

    from minilazy.conformance.mutate.toy import toy
    from minilazy.conformance.suite.test_recording import _recorded_matches

    class Wrong(type(toy())):  # records every result as float64
        def dtype(self, t):
            return np.dtype(np.float64)

    with pytest.raises(AssertionError) as e:
        _recorded_matches(Wrong(), "add", [np.ones(2, np.float32), 3])
    assert "add(float32[2], int 3) recorded float64[2]; NumPy gives float32[2]" in str(e.value)
