"""The conformance report: each rule's and each op's outcome, as JSON and as a readable table.

The plugin feeds :class:`Results` one outcome per test (with the rules and the op the test
checks); at the end of the session it is turned into the JSON report (``--spec-report``) and the
summary table. A rule *failed* if any of its tests failed, else *passed* if any passed, else
*skipped* if its tests were all skipped, else it is *not covered*.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from minilazy.conformance.registry import ops, rules

OUTCOMES = ("passed", "failed", "skipped")


def status(outcomes: dict[str, list[str]]) -> str:
    """A rule's or op's status from the node ids of its tests, by outcome.

    Example:
        >>> status({"passed": ["t1"], "failed": [], "skipped": ["t2"]})
        'passed'
        >>> status({"passed": [], "failed": [], "skipped": []})
        'not covered'
    """
    for outcome in ("failed", "passed", "skipped"):
        if outcomes.get(outcome):
            return outcome
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

    def add(self, nodeid: str, outcome: str, rule_ids: Iterable[str], op: str | None) -> None:
        """Record that test ``nodeid`` had ``outcome`` (passed, failed or skipped)."""
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

    def uncovered(self, capabilities: frozenset[str]) -> list[str]:
        """Active MUST rules (capability declared or none needed) that no test checked.

        Example:
            >>> "LZ-REC-001" in Results().uncovered(frozenset({"counters"}))
            True
        """
        return sorted(rid for rid, r in rules().items()
                      if r.level == "MUST" and (not r.capability or r.capability in capabilities)
                      and not any(self.by_rule.get(rid, {}).values()))

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
        rule_rows = {rid: {"level": r.level, "section": r.section, "capability": r.capability,
                           "status": self.rule_status(rid), **self.by_rule.get(rid, empty)}
                     for rid, r in sorted(rules().items())}
        op_rows = {name: {"kind": spec.kind, "status": self.op_status(name),
                          **self.by_op.get(name, empty)}
                   for name, spec in sorted(ops().items())}
        counts = {s: sum(1 for r in rule_rows.values() if r["status"] == s)
                  for s in ("passed", "failed", "skipped", "not covered")}
        return {"implementation": implementation, "summary": counts,
                "uncovered": self.uncovered(capabilities), "rules": rule_rows, "ops": op_rows}

    def table(self, capabilities: frozenset[str]) -> list[str]:
        """The summary table, one line per rule, then one line for the ops.

        Example:
            >>> Results().table(frozenset())[0].split()
            ['rule', 'level', 'capability', 'status', 'passed', 'failed', 'skipped']
        """
        lines = [f"{'rule':<13} {'level':<6} {'capability':<10} {'status':<12} "
                 f"{'passed':>6} {'failed':>6} {'skipped':>7}"]
        for rid, r in sorted(rules().items()):
            got = self.by_rule.get(rid, {})
            n = {o: len(got.get(o, [])) for o in OUTCOMES}
            cap = r.capability or "-"
            if r.capability and r.capability not in capabilities:
                cap += "!"  # declared missing: the rule's tests were skipped
            lines.append(f"{rid:<13} {r.level:<6} {cap:<10} {self.rule_status(rid):<12} "
                         f"{n['passed']:>6} {n['failed']:>6} {n['skipped']:>7}")
        by_status: dict[str, list[str]] = {}
        for name in sorted(ops()):
            by_status.setdefault(self.op_status(name), []).append(name)
        summary = ", ".join(f"{len(v)} {k}" for k, v in sorted(by_status.items()))
        lines.append(f"ops: {summary}")
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
