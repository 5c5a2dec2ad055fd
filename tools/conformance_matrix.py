r"""The docs' conformance status matrix: the oracle's JSON reports as one MyST Markdown page.

A tool of this repository's docs, not part of the installed oracle.
``python tools/conformance_matrix.py REPORT.json... --out docs/_generated/conformance.md``
reads the reports that ``--spec-report`` wrote, one per implementation, and writes:

- the implementations, with their versions, capabilities and rule counts;
- a rules x implementations table: each rule's level and status per implementation (``pass``,
  ``FAIL``, ``skip``, ``—`` for not covered; a skip for want of a capability names it);
- an ops x implementations table;
- the findings: for each implementation, each rule it fails with its first failing test, the
  failure's message (what the implementation gave against what NumPy gives) and, for a
  Hypothesis test, the minimal falsifying example; then each failed op with its message.

The page has no ``#`` title (the including page has one): its sections are ``###`` headings.
``--save-reports DIR`` also writes each report to ``DIR/<name>.json`` without the node ids of
passed and skipped tests (their counts stay), small enough to keep beside the page and to
regenerate it from.

Example:
    >>> from minilazy.conformance.tools.report import Results
    >>> r = Results()
    >>> r.add("t::a", "failed", ["LZ-BAR-001"], "add", "AssertionError: 1 != 2")
    >>> page = render([r.to_json({"name": "toy", "version": "1"})])
    >>> "| LZ-BAR-001 | MUST | barriers | FAIL |" in page
    True
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from minilazy.conformance.adapter import implied, satisfies
from minilazy.conformance.registry import rules

Report = dict[str, Any]
OUTCOMES = ("passed", "failed", "skipped")
CELL = {"passed": "pass", "failed": "FAIL", "skipped": "skip", "not covered": "—"}


def counts(row: dict[str, Any]) -> dict[str, int]:
    """How many tests of a rule's or op's row passed, failed and were skipped.

    A compacted row (``--save-reports``) keeps them as ``counts``; a full one lists node ids.

    Example:
        >>> counts({"passed": ["a", "b"], "failed": [], "skipped": ["c"]})
        {'passed': 2, 'failed': 0, 'skipped': 1}
        >>> counts({"counts": {"passed": 2, "failed": 0, "skipped": 1}, "failed": []})
        {'passed': 2, 'failed': 0, 'skipped': 1}
    """
    if "counts" in row:
        return {o: int(row["counts"].get(o, 0)) for o in OUTCOMES}
    return {o: len(row.get(o, [])) for o in OUTCOMES}


def compact(report: Report) -> Report:
    """``report`` without the node ids of passed and skipped tests (``counts`` instead).

    Failed tests keep their node ids; an op's first failure keeps its message, not its example.

    Example:
        >>> row = {"status": "passed", "passed": ["a"], "failed": [], "skipped": []}
        >>> compact({"rules": {"R": row}, "ops": {}})["rules"]["R"]
        {'status': 'passed', 'failed': [], 'counts': {'passed': 1, 'failed': 0, 'skipped': 0}}
    """
    out = dict(report)
    for table in ("rules", "ops"):
        out[table] = {key: {**{k: v for k, v in row.items() if k not in ("passed", "skipped")},
                            "counts": counts(row)}
                      for key, row in report.get(table, {}).items()}
    for row in out["ops"].values():  # the page shows an op's message only
        if "first_failure" in row:
            row["first_failure"] = {k: v for k, v in row["first_failure"].items()
                                    if k != "example"}
    return out


def _name(report: Report) -> str:
    return str(report.get("implementation", {}).get("name", "?"))


def _code(text: str) -> str:
    """``text`` as an inline code span that is safe in a table cell."""
    text = " ".join(text.split()).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}" if text else ""


def _cell(report: Report, table: str, key: str) -> str:
    row = report.get(table, {}).get(key)
    if row is None:
        return "n/a"  # a report of an older registry, without this rule or op
    status = str(row.get("status", "not covered"))
    cell = CELL.get(status, status)
    capability = row.get("capability") or ""
    declared = report.get("implementation", {}).get("capabilities", [])
    if status == "skipped" and capability and not satisfies(implied(declared), capability):
        cell += f" (no `{capability}`)"
    return cell


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _fence(text: str) -> list[str]:
    return ["````text", *text.splitlines(), "````"]


def _implementations(reports: Sequence[Report]) -> list[str]:
    rows = []
    for r in reports:
        impl, summary = r.get("implementation", {}), r.get("summary", {})
        caps = ", ".join(f"`{c}`" for c in impl.get("capabilities", [])) or "(none)"
        rows.append([f"**{_name(r)}**", _code(str(impl.get("version", ""))),
                     _code(str(impl.get("impl", ""))), caps,
                     *(str(summary.get(s, 0)) for s in ("passed", "failed", "skipped",
                                                        "not covered"))])
    return _table(["implementation", "version", "adapter", "capabilities", "rules passed",
                   "failed", "skipped", "not covered"], rows)


def _rules(reports: Sequence[Report]) -> list[str]:
    ids = sorted({rid for r in reports for rid in r.get("rules", {})} | set(rules()))
    rows = []
    for rid in ids:
        spec = rules().get(rid)
        first: dict[str, Any] = next((r["rules"][rid] for r in reports
                                      if rid in r.get("rules", {})), {})
        level = spec.level if spec else str(first.get("level", "?"))
        section = spec.section if spec else str(first.get("section", "?"))
        rows.append([rid, level, section,
                     *(_cell(r, "rules", rid) for r in reports)])
    return _table(["rule", "level", "section", *map(_name, reports)], rows)


def _ops(reports: Sequence[Report]) -> list[str]:
    names = sorted({op for r in reports for op in r.get("ops", {})})
    rows = []
    for op in names:
        kind = next((str(r["ops"][op].get("kind", "")) for r in reports
                     if op in r.get("ops", {})), "")
        rows.append([f"`{op}`", kind, *(_cell(r, "ops", op) for r in reports)])
    return _table(["op", "kind", *map(_name, reports)], rows)


def _findings(report: Report) -> list[str]:
    lines = [f"#### {_name(report)}", ""]
    failed = [(rid, row) for rid, row in sorted(report.get("rules", {}).items())
              if row.get("status") == "failed"]
    if not failed:
        lines += ["No rule fails.", ""]
    for rid, row in failed:
        spec = rules().get(rid)
        n = counts(row)
        lines.append(f"**{rid}** ({row.get('level', '?')}, {row.get('section', '?')}): "
                     f"{spec.summary if spec else ''}")
        lines.append("")
        first = row.get("first_failure") or {}
        test = first.get("test") or (sorted(row.get("failed", [])) or [""])[0]
        lines.append(f"- {n['failed']} of {sum(n.values())} tests fail; the first: "
                     f"{_code(test)}")
        if first.get("message"):
            lines.append(f"- got against NumPy: {_code(first['message'])}")
        lines.append("")
        if first.get("example"):
            lines += _fence(first["example"]) + [""]
    ops = [(op, row) for op, row in sorted(report.get("ops", {}).items())
           if row.get("status") == "failed"]
    if ops:
        lines += [f"Failed ops ({len(ops)}), each with its first failing test's message:", ""]
        lines += _table(["op", "first failure"],
                        ([f"`{op}`", _code((row.get("first_failure") or {}).get("message", ""))
                          or _code((sorted(row.get("failed", [])) or [""])[0])]
                         for op, row in ops))
        lines.append("")
    return lines


def render(reports: Sequence[Report]) -> str:
    """The status page for ``reports`` (one per implementation, in column order), as MyST.

    Example:
        >>> page = render([])
        >>> page.startswith("### Implementations")
        True
    """
    lines = ["### Implementations", "", *_implementations(reports), "",
             "### Rules", "",
             "Status of each rule of the spec per implementation: `pass`, `FAIL`, `skip` "
             "(its capability is not declared, or its tests do not apply), `—` (no test ran). "
             "A failed SHOULD rule is reported, not fatal.", "",
             *_rules(reports), "",
             "### Ops", "",
             "Status of each op of the registry: `FAIL` when any test of the op fails.", "",
             *_ops(reports), "",
             "### Findings", "",
             "Each rule an implementation fails, with the first failing test (by node id), its "
             "message (the implementation's result against NumPy's) and, for a property test, "
             "the minimal example Hypothesis found.", ""]
    for r in reports:
        lines += _findings(r)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python tools/conformance_matrix.py REPORT.json... [--out PAGE] [--save-reports DIR]``.

    Example:
        >>> import tempfile, os
        >>> from minilazy.conformance.tools.report import Results, write
        >>> with tempfile.TemporaryDirectory() as d:
        ...     write(os.path.join(d, "r.json"), Results().to_json({"name": "toy"}))
        ...     main([os.path.join(d, "r.json"), "--out", os.path.join(d, "m.md")])
        ...     "| toy |" in open(os.path.join(d, "m.md")).read()
        0
        True
    """
    parser = argparse.ArgumentParser(prog="python tools/conformance_matrix.py",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="+", metavar="REPORT.json",
                        help="--spec-report files, one per implementation, in column order")
    parser.add_argument("--out", metavar="PAGE", help="write the page here (default: stdout)")
    parser.add_argument("--save-reports", metavar="DIR",
                        help="also write each report, compacted, to DIR/<name>.json")
    args = parser.parse_args(argv)
    reports = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.reports]
    page = render(reports)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(page, encoding="utf-8")
    else:
        print(page, end="")
    if args.save_reports:
        folder = Path(args.save_reports)
        folder.mkdir(parents=True, exist_ok=True)
        for r in reports:
            text = json.dumps(compact(r), indent=1, sort_keys=True) + "\n"
            (folder / f"{_name(r)}.json").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
