"""The status matrix generator: JSON reports in, the docs page's MyST Markdown out.

Synthetic reports (made with the plugin's own ``Results``), so no peer is needed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conformance_matrix import compact, main, render
from minilazy.conformance.tools.report import Results

TOOL = Path(__file__).parents[2] / "tools" / "conformance_matrix.py"

FAILURE = ("AssertionError: add(int16[2], -1.5): dtype float32 != float64\n"
           "assert False\n"
           "Falsifying example: test_python_scalars_are_weak(op='add', data=data(...))\n"
           "Draw 1: array([0, 0], dtype=int16)\n"
           "program as JSON:\n{\"leaves\": []}\n"
           "You can reproduce this example by temporarily adding @reproduce_failure(...)")


def _reports() -> list[dict]:
    good = Results()
    good.add("suite/t.py::test_weak[add]", "passed", ["LZ-NUM-003"], "add")
    good.add("suite/t.py::test_mark", "passed", ["LZ-BAR-001"], None)
    good.add("suite/t.py::test_devices", "skipped", ["LZ-ERR-005"], None)
    peer = Results()
    peer.add("suite/t.py::test_weak[add]", "failed", ["LZ-NUM-003"], "add", FAILURE)
    peer.add("suite/t.py::test_weak[multiply]", "passed", ["LZ-NUM-003"], "multiply")
    peer.add("suite/t.py::test_mark", "passed", ["LZ-BAR-001"], None)
    peer.add("suite/t.py::test_fuse", "failed", ["LZ-LOW-003"], None, "AssertionError: 2 kernels")
    return [good.to_json({"name": "good", "version": "1.0", "impl": "m:good",
                          "capabilities": ["counters"]}, frozenset({"counters"})),
            peer.to_json({"name": "peer", "version": "2.0", "impl": "m:peer",
                          "capabilities": ["counters", "devices"]},
                         frozenset({"counters", "devices"}))]


def _row(page: str, first_cell: str) -> list[str]:
    line = next(x for x in page.splitlines() if x.startswith(f"| {first_cell} |"))
    return [c.strip() for c in line.strip("|").split(" | ")]


def test_the_rules_table_has_a_column_per_implementation_and_a_row_per_rule() -> None:
    page = render(_reports())
    assert _row(page, "rule") == ["rule", "level", "section", "good", "peer"]
    assert _row(page, "LZ-NUM-003") == ["LZ-NUM-003", "MUST", "numerics", "pass", "FAIL"]
    assert _row(page, "LZ-BAR-001") == ["LZ-BAR-001", "MUST", "barriers", "pass", "pass"]
    assert _row(page, "LZ-LOW-003") == ["LZ-LOW-003", "SHOULD", "lowering", "—", "FAIL"]
    # Skipped for want of a capability: the cell names it.
    assert _row(page, "LZ-ERR-005")[3:] == ["skip (no `devices`)", "—"]
    assert _row(page, "LZ-REC-001")[3:] == ["—", "—"]
    assert _row(page, "`add`") == ["`add`", "elementwise", "pass", "FAIL"]
    assert _row(page, "**peer**")[1:3] == ["`2.0`", "`m:peer`"]
    assert _row(page, "**peer**")[4:] == ["1", "2", "0", str(len(_reports()[1]["rules"]) - 3)]


def test_the_page_has_no_title_and_sections_from_level_three() -> None:
    page = render(_reports())
    headings = re.findall(r"^(#+) (.*)$", page, flags=re.M)
    assert min(len(h) for h, _ in headings) == 3
    assert [t for h, t in headings if len(h) == 3] == ["Implementations", "Rules", "Ops",
                                                       "Findings"]
    assert [t for h, t in headings if len(h) == 4] == ["good", "peer"]


def test_findings_name_the_failing_test_its_values_and_its_example() -> None:
    page = render(_reports())
    findings = page.split("#### peer")[1]
    assert "**LZ-NUM-003** (MUST, numerics)" in findings
    assert "`suite/t.py::test_weak[add]`" in findings
    assert "`AssertionError: add(int16[2], -1.5): dtype float32 != float64`" in findings
    assert "Falsifying example: test_python_scalars_are_weak(op='add'" in findings
    assert "Draw 1: array([0, 0], dtype=int16)" in findings
    # pytest's assertion explanation, the program's JSON and the reproduction hint are left out
    assert "assert False" not in findings and "leaves" not in findings
    assert "reproduce_failure" not in findings
    assert "**LZ-LOW-003** (SHOULD, lowering)" in findings
    assert "| `add` | `AssertionError: add(int16[2], -1.5)" in findings  # the failed ops
    assert "No rule fails." in page.split("#### good")[1].split("#### peer")[0]


def test_a_message_with_pipes_and_backticks_stays_in_its_cell() -> None:
    r = Results()
    r.add("t::x", "failed", ["LZ-NUM-001"], "abs", "ValueError: `a|b` is wrong")
    page = render([r.to_json({"name": "x"})])
    assert "| `abs` | ``ValueError: `a\\|b` is wrong`` |" in page


def test_an_older_report_without_failure_messages_still_renders() -> None:
    report = _reports()[1]
    for table in ("rules", "ops"):
        for row in report[table].values():
            row.pop("first_failure", None)
    findings = render([report]).split("#### peer")[1]
    assert "the first: `suite/t.py::test_weak[add]`" in findings
    assert "got against NumPy" not in findings


def test_compacted_reports_keep_the_page(tmp_path: Path) -> None:
    paths = []
    for r in _reports():
        paths.append(tmp_path / f"{r['implementation']['name']}-full.json")
        paths[-1].write_text(json.dumps(r))
    out, saved = tmp_path / "page.md", tmp_path / "saved"
    assert main([*map(str, paths), "--out", str(out), "--save-reports", str(saved)]) == 0
    small = json.loads((saved / "peer.json").read_text())
    assert "passed" not in small["rules"]["LZ-NUM-003"]
    assert small["rules"]["LZ-NUM-003"]["counts"] == {"passed": 1, "failed": 1, "skipped": 0}
    assert small["rules"]["LZ-NUM-003"]["failed"] == ["suite/t.py::test_weak[add]"]
    assert compact(small) == small
    again = tmp_path / "again.md"
    main([str(saved / "good.json"), str(saved / "peer.json"), "--out", str(again)])
    assert again.read_text() == out.read_text()


def test_the_command_line_writes_the_page(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    report.write_text(json.dumps(_reports()[1]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    out = subprocess.run([sys.executable, str(TOOL), str(report)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("### Implementations")
    assert "| LZ-NUM-003 | MUST | numerics | FAIL |" in out.stdout


def test_the_plugin_reports_the_first_failures_message(tmp_path: Path) -> None:
    (tmp_path / "test_it.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.spec('LZ-BAR-004')\n"
        "@pytest.mark.parametrize('op', ['add'])\n"
        "def test_value(adapter, op):\n"
        "    assert 1 + 1 == 3, 'add: got 2, want 3'\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    subprocess.run([sys.executable, "-m", "pytest", "test_it.py", "-p", "no:cacheprovider",
                    "--lazy-impl=minilazy.conformance.mutate.toy:toy", "--spec-report=r.json"],
                   cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    report = json.loads((tmp_path / "r.json").read_text())
    first = report["rules"]["LZ-BAR-004"]["first_failure"]
    assert first["test"] == "test_it.py::test_value[add]"
    assert first["message"] == "AssertionError: add: got 2, want 3"
    assert report["ops"]["add"]["first_failure"]["message"] == first["message"]
    assert "first_failure" not in report["rules"]["LZ-BAR-001"]
