"""The conformance report: each rule's and each op's outcome, as JSON and as a readable table.

The plugin feeds :class:`Results` one outcome per test (with the rules and the op the test
checks); at the end of the session it is turned into the JSON report (``--spec-report``) and the
summary table. A rule *failed* if any of its tests failed, else *passed* if any passed, else
*skipped* if its tests were all skipped, else it is *not covered*. A failed rule or op also
names its first failing test (in node id order) with that test's short failure message and,
for a rule, the falsifying example of a Hypothesis test (``first_failure``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from minilazy.conformance.adapter import satisfies
from minilazy.conformance.registry import ops, rules

OUTCOMES = ("passed", "failed", "xfailed", "skipped")
# How much of a failure the report keeps: the message (observed vs expected) and the example.
MESSAGE_CHARS, EXAMPLE_CHARS, DETAIL_LINES = 400, 1200, 20
# Where the message of a failure ends and Hypothesis's notes begin.
_NOTES = re.compile(r"^(Falsifying example|Failing test case|Draw \d|program as |"
                    r"You can reproduce|Highest target|Trying example|Explanation:)")


def summarize(text: str) -> dict[str, str]:
    r"""A failure's crash text, short: its ``message`` and its falsifying ``example``.

    The message is the exception's text up to pytest's assertion explanation or Hypothesis's
    notes, on one line (for tables); ``detail`` is the same text with its lines kept (what the
    grader prints: got and want on lines of their own); the example is the notes (the
    falsifying example, its draws and the program as Python), without the program's JSON and
    the reproduction hint.

    Example:
        >>> s = summarize("AssertionError: add: dtype int16 != int8\nassert False\n"
        ...               "Falsifying example: test(op='add')\nYou can reproduce ...")
        >>> s["message"]
        'AssertionError: add: dtype int16 != int8'
        >>> s["example"]
        "Falsifying example: test(op='add')"
    """
    message: list[str] = []
    example: list[str] = []
    skipping = explaining = False
    for line in text.splitlines():
        if not example and not _NOTES.match(line):
            explaining = explaining or line.startswith("assert ")  # pytest's explanation
            if not explaining:
                message.append(line)
            continue
        if line.startswith(("program as JSON", "You can reproduce")):
            skipping = True
        elif _NOTES.match(line):
            skipping = False
        if not skipping:
            example.append(line.rstrip())
    short = " ".join(" ".join(m for m in message if m).split())
    if len(short) > MESSAGE_CHARS:
        short = short[:MESSAGE_CHARS - 3] + "..."
    notes = re.sub(r" at 0x[0-9a-f]+>", ">", "\n".join(example).strip())  # run to run
    if len(notes) > EXAMPLE_CHARS:
        notes = notes[:EXAMPLE_CHARS - 4] + "\n..."
    lines = [m.rstrip() for m in message if m.strip()]
    detail = "\n".join(lines[:DETAIL_LINES] + (["..."] if len(lines) > DETAIL_LINES else []))
    found = {"message": short, "example": notes}
    if detail != short:  # more than one line: kept as lines too
        found["detail"] = detail[:EXAMPLE_CHARS]
    if "distinct failures" in text:  # Hypothesis found several: keep each one's message
        found["all"] = "\n".join(dict.fromkeys(m.group(1)[:MESSAGE_CHARS]
                                                for m in _SUBFAILURE.finditer(text)))
    return found


# A sub-exception's message in an exception group's text: "    | ValueError: too small".
_SUBFAILURE = re.compile(r"^[ |]*\| (\w+(?:Error|Exception): .+)$", re.M)


def status(outcomes: dict[str, list[str]]) -> str:
    """A rule's or op's status from the node ids of its tests, by outcome.

    Example:
        >>> status({"passed": ["t1"], "failed": [], "skipped": ["t2"]})
        'passed'
        >>> status({"passed": [], "failed": [], "skipped": []})
        'not covered'
    """
    for outcome, name in (("failed", "failed"), ("xfailed", "xfail"), ("passed", "passed"),
                          ("skipped", "skipped")):
        if outcomes.get(outcome):
            return name
    return "not covered"


@dataclass
class Results:
    """Outcomes of the spec tests, by rule and by op.

    Example:
        >>> r = Results()
        >>> r.add("test_x", "failed", ["LZ-BAR-001"], "add")
        >>> r.rule_status("LZ-BAR-001"), r.op_status("add"), r.op_status("sum")
        ('failed', 'failed', 'not covered')
    """

    by_rule: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    by_op: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    failures: dict[str, dict[str, str]] = field(default_factory=dict)
    # The rules a run was asked for (--lazy-rules, --lazy-assignment); None: all of them. The
    # table and the coverage check then speak of these only.
    selected: frozenset[str] | None = None

    def _rules(self) -> list[str]:
        return sorted(r for r in rules() if self.selected is None or r in self.selected)

    def add(self, nodeid: str, outcome: str, rule_ids: Iterable[str], op: str | None,
            failure: str | None = None) -> None:
        """Record that test ``nodeid`` had ``outcome`` (passed, failed or skipped).

        ``failure`` is a failed test's crash text (:func:`summarize` keeps it short).
        """
        if outcome == "failed" and failure is not None:
            self.failures[nodeid] = summarize(failure)
        for rid in rule_ids:
            self.by_rule.setdefault(rid, {o: [] for o in OUTCOMES})[outcome].append(nodeid)
        if op is not None:
            self.by_op.setdefault(op, {o: [] for o in OUTCOMES})[outcome].append(nodeid)

    def rule_status(self, rid: str) -> str:
        """The status of rule ``rid``."""
        return status(self.by_rule.get(rid, {}))

    def op_status(self, op: str) -> str:
        """The status of op ``op``."""
        return status(self.by_op.get(op, {}))

    def first_failure(self, outcomes: dict[str, list[str]]) -> dict[str, str] | None:
        """The first failed test of ``outcomes`` (by node id): its id, message and example.

        Example:
            >>> r = Results()
            >>> r.add("t2", "failed", ["LZ-BAR-001"], None, "AssertionError: 1 != 2")
            >>> r.first_failure(r.by_rule["LZ-BAR-001"])
            {'test': 't2', 'message': 'AssertionError: 1 != 2', 'example': ''}
        """
        failed = sorted(outcomes.get("failed", []))
        if not failed:
            return None
        return {"test": failed[0], **self.failures.get(failed[0], {"message": "",
                                                                    "example": ""})}

    def uncovered(self, capabilities: frozenset[str]) -> list[str]:
        """Active MUST rules (capability declared or none needed) that no test checked.

        Example:
            >>> "LZ-REC-001" in Results().uncovered(frozenset({"executions"}))
            True
        """
        return [rid for rid in self._rules() if rules()[rid].level == "MUST"
                and satisfies(capabilities, rules()[rid].capability)
                and not any(self.by_rule.get(rid, {}).values())]

    def to_json(self, implementation: dict[str, Any],
                capabilities: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The JSON report: the implementation, the summary, every rule and every op.

        ``uncovered`` lists the active MUST rules no test checked (what ``--spec-coverage``
        fails on).

        Example:
            >>> report = Results().to_json({"name": "toy"})
            >>> report["rules"]["LZ-BAR-001"]["status"], report["ops"]["add"]["status"]
            ('not covered', 'not covered')
            >>> "LZ-BAR-001" in report["uncovered"]
            True
        """
        empty: dict[str, list[str]] = {o: [] for o in OUTCOMES}
        Row = dict[str, Any]
        rule_rows: dict[str, Row] = {
            rid: {"level": r.level, "section": r.section, "capability": r.capability,
                  "text": r.summary, "status": self.rule_status(rid),
                  **self.by_rule.get(rid, empty)}
            for rid, r in sorted(rules().items())}
        op_rows: dict[str, Row] = {
            name: {"kind": spec.kind, "status": self.op_status(name),
                   **self.by_op.get(name, empty)}
            for name, spec in sorted(ops().items())}
        for rows in (rule_rows, op_rows):
            for row in rows.values():
                if (first := self.first_failure(row)) is not None:
                    if rows is op_rows:  # the rule's first failure shows the example
                        del first["example"]
                    row["first_failure"] = first
        counts = {s: sum(1 for r in rule_rows.values() if r["status"] == s)
                  for s in ("passed", "failed", "xfail", "skipped", "not covered")}
        failures = {t: {**f, "rules": [f"{r}: {rules()[r].summary}" for r in self.rules_of(t)]}
                    for t, f in sorted(self.failures.items())}
        return {"implementation": implementation, "summary": counts,
                "uncovered": self.uncovered(capabilities), "rules": rule_rows, "ops": op_rows,
                "failures": failures}

    def rules_of(self, nodeid: str) -> list[str]:
        """The rules test ``nodeid`` checks (as recorded).

        Example:
            >>> r = Results(); r.add("t", "failed", ["LZ-BAR-001"], None)
            >>> r.rules_of("t")
            ['LZ-BAR-001']
        """
        return sorted(rid for rid, by in self.by_rule.items()
                      if any(nodeid in ids for ids in by.values()))

    def table(self, capabilities: frozenset[str]) -> list[str]:
        """The summary table, one line per rule, then one line for the ops.

        Example:
            >>> Results().table(frozenset())[0].split()
            ['rule', 'level', 'capability', 'status', 'passed', 'failed', 'skipped']
        """
        caps = {rid: (r.capability or "-") + ("" if satisfies(capabilities, r.capability)
                                              else "!")  # "!": missing, so its tests skipped
                for rid, r in rules().items()}
        w = max(10, *map(len, caps.values()))
        lines = [f"{'rule':<13} {'level':<6} {'capability':<{w}} {'status':<12} "
                 f"{'passed':>6} {'failed':>6} {'skipped':>7}"]
        for rid in self._rules():
            r = rules()[rid]
            n = {o: len(self.by_rule.get(rid, {}).get(o, [])) for o in OUTCOMES}
            lines.append(f"{rid:<13} {r.level:<6} {caps[rid]:<{w}} {self.rule_status(rid):<12} "
                         f"{n['passed']:>6} {n['failed']:>6} {n['skipped']:>7}")
        by_status: dict[str, list[str]] = {}
        for name in sorted(ops()):
            by_status.setdefault(self.op_status(name), []).append(name)
        if self.selected is not None:  # the ops the chosen rules did not reach say nothing
            by_status.pop("not covered", None)
        summary = ", ".join(f"{len(v)} {k}" for k, v in sorted(by_status.items()))
        lines.append(f"ops: {summary or 'none checked'}")
        if by_status.get("failed"):
            lines.append(f"ops failed: {' '.join(by_status['failed'])}")
        return lines


def write(path: str, report: dict[str, Any]) -> None:
    """Write ``report`` as indented JSON to ``path``.

    Example:
        >>> import tempfile, os
        >>> with tempfile.TemporaryDirectory() as d:
        ...     write(os.path.join(d, "r.json"), {"summary": {}})
    """
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")
