"""The verdict an implementer reads in a minute: one short paragraph per failing rule.

At the end of a run the plugin prints, after pytest's own report, a *digest* made from the JSON
report (:meth:`~minilazy.conformance.tools.report.Results.to_json`): for each failed rule its
id and text, how many of its tests failed and the first of them, that test's message shortened
to a line, and the failing program as Python where the test builds one. Then one line per
capability the adapter does not declare, with the number of tests it skipped, and, with
``--spec-baseline=REPORT.json``, the rules whose status changed since that saved run.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Mapping
from typing import Any

from minilazy.conformance.registry import rules

MESSAGE_CHARS, PROGRAM_LINES, WIDTH = 240, 12, 100
STATUSES = ("passed", "failed", "xfail", "skipped", "not covered")
_NOTES = ("program as JSON", "Falsifying example", "Failing test case", "You can reproduce",
          "Draw ", "Explanation:", "Trying example", "Highest target")


def program(example: str) -> list[str]:
    r"""The failing program as Python from a failure's example text (at most a few lines).

    Example:
        >>> program("Falsifying example: t(op='add')\nprogram as Python:\nadd(1, 2)\n"
        ...         "program as JSON:\n{}")
        ['add(1, 2)']
        >>> program("Falsifying example: t(op='add', n=3)")
        ["Falsifying example: t(op='add', n=3)"]
    """
    lines = example.splitlines()
    if "program as Python:" not in lines:  # no program: the drawn arguments say what failed
        return [line[:MESSAGE_CHARS] for line in lines if line.startswith("Falsifying")][:1]
    found: list[str] = []
    for line in lines[lines.index("program as Python:") + 1:]:
        if line.startswith(_NOTES) or line.startswith("program as Python:"):
            break
        found.append(line)
    if len(found) > PROGRAM_LINES:
        found = found[:PROGRAM_LINES] + [f"# ... {len(found) - PROGRAM_LINES} more lines in "
                                         "the JSON report (--spec-report)"]
    return found


def _short(text: str, most: int = MESSAGE_CHARS) -> str:
    one = " ".join(text.split()).split(" assert ")[0]  # not pytest's explanation of the assert
    return one if len(one) <= most else one[:most - 3] + "..."


def failing_rules(report: Mapping[str, Any]) -> list[str]:
    r"""A paragraph per failed rule of ``report`` (the JSON report), as lines.

    Example:
        >>> row = {"status": "failed", "failed": ["t1", "t2"], "passed": ["t3"], "skipped": [],
        ...        "first_failure": {"test": "t1", "message": "AssertionError: 1 != 2",
        ...                          "example": "program as Python:\nadd(1, 2)"}}
        >>> print("\n".join(failing_rules({"rules": {"LZ-BAR-001": row}})))
        LZ-BAR-001 (MUST) failed 2 of 3 tests: After `mark_step()`, no live tensor is pending.
          first: t1
          AssertionError: 1 != 2
          program as Python:
            add(1, 2)
    """
    lines: list[str] = []
    for rid, row in sorted(report.get("rules", {}).items()):
        if row.get("status") != "failed":
            continue
        rule = rules().get(rid)
        text = row.get("text") or (rule.summary if rule else "")
        level = row.get("level") or (rule.level if rule else "?")
        ran = sum(len(row.get(o, [])) for o in ("passed", "failed", "xfailed"))
        lines += textwrap.wrap(f"{rid} ({level}) failed {len(row.get('failed', []))} of {ran} "
                               f"tests: {text}", WIDTH, subsequent_indent="    ")
        first = row.get("first_failure") or {}
        if first:
            lines.append(f"  first: {first.get('test', '?')}")
            lines.append(f"  {_short(str(first.get('message', '')))}")
            found = program(str(first.get("example", "")))
            if found and found[0].startswith("Falsifying"):
                lines.append(f"  {found[0]}")
            elif found:
                lines += ["  program as Python:", *(f"    {line}" for line in found)]
    return lines


def capability_lines(skipped: Mapping[str, int]) -> list[str]:
    """One line per undeclared capability: how many tests it skipped.

    Example:
        >>> for line in capability_lines({"devices": 12, "autodiff": 1}):
        ...     print(line)
        capability autodiff not declared: 1 test skipped
        capability devices not declared: 12 tests skipped
    """
    return [f"capability {c} not declared: {n} test{'s' * (n != 1)} skipped"
            for c, n in sorted(skipped.items())]


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The rules of ``after`` whose status differs in ``before``, one line each.

    A rule ``before`` did not have (a rule new to the spec) was ``absent`` (and is left out
    while no test of it runs).

    Example:
        >>> a = {"rules": {"LZ-BAR-001": {"status": "passed"}, "LZ-REC-001": {"status": "failed"}}}
        >>> b = {"rules": {"LZ-BAR-001": {"status": "failed"}, "LZ-REC-001": {"status": "failed"}}}
        >>> changes(a, b)  # doctest: +ELLIPSIS
        ['LZ-BAR-001: passed -> failed (After `mark_step()`, no live tensor is pending.)']
    """
    old, new = before.get("rules", {}), after.get("rules", {})
    lines = []
    for rid in sorted(new):
        was = old.get(rid, {}).get("status", "absent")
        now = new.get(rid, {}).get("status", "absent")
        if was != now and {was, now} != {"absent", "not covered"}:
            rule = rules().get(rid)
            lines.append(f"{rid}: {was} -> {now}" + (f" ({rule.summary})" if rule else ""))
    return lines


def digest(report: Mapping[str, Any], skipped: Mapping[str, int] | None = None,
           baseline: Mapping[str, Any] | None = None) -> list[str]:
    """The whole digest: failing rules, undeclared capabilities, changes since a baseline.

    Example:
        >>> digest({"rules": {"LZ-BAR-001": {"status": "passed"}}})
        ['verdict: no rule failed (1 passed)']
    """
    blocks = [failing_rules(report), capability_lines(skipped or {})]
    if baseline is not None:
        changed = changes(baseline, report)
        blocks.append([f"since the baseline: {len(changed) or 'no'} rule"
                       f"{'s' * (len(changed) != 1)} changed status", *changed])
    counts = Counter(row.get("status", "") for row in report.get("rules", {}).values())
    summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s]) or "no rule checked"
    failed = counts.get("failed", 0)
    verdict = f"{failed} rule{'s' * (failed != 1)} failed" if failed else "no rule failed"
    blocks.append([f"verdict: {verdict} ({summary})"])
    return [line for block in blocks if block for line in [*block, ""]][:-1]
