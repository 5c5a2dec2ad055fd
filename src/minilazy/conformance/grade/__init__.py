"""``python -m minilazy.conformance.grade --assignment N --path FOLDER``: grade a student.

The students' part of the conformance package (implementers use the package's top level; the
oracle's own checks, the toy and its mutants, are ``minilazy.conformance.mutate``).

The course (``tutorials/build``) builds a LazyTensor in assignments; each spec rule carries the
``stage`` of the assignment that implements it (``rules.toml``). Grading assignment ``N`` runs the
oracle, in a fresh process as ``python -m minilazy.conformance`` does, on the rules of stages 1 to
``N``, and prints each rule's status, a score, and for each failed rule its text, the first
failing test, its message (what the implementation gave against what NumPy computed) and the
smallest failing example (Hypothesis shrinks it), with the program as Python where the test
builds one. A rule whose tests were
all skipped (a capability the adapter does not declare) scores as not passed, with the reason.
The exit code is 0 when every graded rule passes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minilazy.conformance.grade.overlay import overlay
from minilazy.conformance.registry import rules

ENGINE = "minilazy.conformance.adapters.minilazy_adapter:cpu"  # what a student's core runs under
LAST: int = max(r.stage for r in rules().values())


def staged(assignment: int) -> list[str]:
    """The rule IDs graded at ``assignment``: those of stages 1 to ``assignment``.

    Example:
        >>> staged(3)[-5:]
        ['LZ-HASH-001', 'LZ-HASH-002', 'LZ-HASH-003', 'LZ-HASH-004', 'LZ-HASH-005']
    """
    if not 1 <= assignment <= LAST:
        raise ValueError(f"assignment {assignment} does not exist: the course has 1 to {LAST}")
    chosen = [r for r in rules().values() if 1 <= r.stage <= assignment]
    return [r.id for r in sorted(chosen, key=lambda r: (r.stage, r.id))]


@dataclass(frozen=True)
class Grade:
    """The outcome of grading one assignment: the oracle's JSON report, read per graded rule.

    Example:
        >>> g = Grade(1, {"rules": {"LZ-REC-001": {"status": "passed"}}})
        >>> g.passed, g.score
        (['LZ-REC-001'], '1/10 rules (10%)')
    """

    assignment: int
    report: dict[str, Any]
    only: tuple[str, ...] = ()  # a few of the assignment's rules, while working on them

    @property
    def graded(self) -> list[str]:
        """The rules graded, in assignment order."""
        return [r for r in staged(self.assignment) if not self.only or r in self.only]

    def status(self, rid: str) -> str:
        """``passed``, ``failed``, ``skipped``, ``xfail`` or ``not run`` (no test was collected)."""
        return str(self.report.get("rules", {}).get(rid, {}).get("status", "not run"))

    @property
    def passed(self) -> list[str]:
        """The graded rules that passed."""
        return [r for r in self.graded if self.status(r) == "passed"]

    @property
    def score(self) -> str:
        """Rules passed out of rules graded."""
        n, total = len(self.passed), len(self.graded)
        return f"{n}/{total} rules ({100 * n // total}%)"

    def text(self) -> str:
        """The grade as the command prints it."""
        impl = self.report.get("implementation", {})
        chosen = f" ({len(self.only)} chosen)" if self.only else ""
        lines = [f"Assignment {self.assignment}: {impl.get('name', '?')} "
                 f"{impl.get('version', '')}, rules of assignments 1-{self.assignment}{chosen}",
                 ""]
        for rid in self.graded:
            rule = rules()[rid]
            lines.append(f"  {rid:<13} {rule.level:<6} assignment {rule.stage}  "
                         f"{self.status(rid)}")
        lines += ["", f"score: {self.score}"]
        for rid in self.graded:
            if self.status(rid) != "passed":
                lines += ["", *self._why(rid)]
        return "\n".join(lines)

    def _why(self, rid: str) -> list[str]:
        rule, row = rules()[rid], self.report.get("rules", {}).get(rid, {})
        out = [f"{rid} (assignment {rule.stage}, {self.status(rid)}): {rule.summary}"]
        first = row.get("first_failure")
        if first:
            out.append(f"  first failing test: {first['test']}")
            text = str(first.get("detail") or first["message"])  # lines kept: got, want...
            out += ["  " + line for line in text.splitlines()[:20]]
            out += ["  " + line for line in str(first.get("example", "")).splitlines()[:40]]
        elif self.status(rid) == "skipped":
            out.append(f"  skipped: its tests need capability {rule.capability!r}, which the "
                       "adapter does not declare")
        else:
            out.append("  no test of it ran")
        return out


def grade(assignment: int, impl: str = ENGINE, path: str | None = None, profile: str = "ci",
          extra: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> Grade:
    """Run the oracle on ``impl`` for ``assignment``, in a fresh process, and read its report.

    ``path`` is the student's folder. When it holds ``core/`` (the course's skeleton: a copy
    of minilazy's modules), those modules replace the installed ones in the run (see
    :mod:`~minilazy.conformance.grade.overlay`), the stubs of later assignments given. Else it
    is put first on ``PYTHONPATH``: an engine of the student's own, named by ``impl``.
    ``only`` grades just those of the assignment's rules (``ValueError`` for another one).

    Example:
        >>> g = grade(1, path="mywork")  # doctest: +SKIP
        >>> g.score  # doctest: +SKIP
        '10/10 rules (100%)'
    """
    if impl == ENGINE and not (path and (Path(path) / "core").is_dir()):
        raise ValueError(f"{path or 'no folder'}: not a skeleton (no core/ folder in it); make "
                         "one with python tutorials/build/make_skeleton.py mywork, or name an "
                         "engine of your own with --impl")
    outside = sorted(set(only) - set(staged(assignment)))
    if outside:
        raise ValueError(f"assignment {assignment} does not grade {', '.join(outside)}")
    graded = Grade(assignment, {}, tuple(only)).graded
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    with tempfile.TemporaryDirectory() as tmp:
        first = Path(path).resolve() if path else None
        if first is not None and (first / "core").is_dir():  # minilazy's own modules, rewritten
            first = overlay(first, assignment, Path(tmp) / "site")
        if first is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(first),
                                                 *filter(None, [env.get("PYTHONPATH")])])
        out = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "minilazy.conformance", f"--lazy-impl={impl}",
                   f"--lazy-rules={','.join(graded)}", f"--spec-report={out}",
                   f"--hypothesis-profile={profile}", "-q", *extra]
        done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp)
        if not out.exists():  # the run did not start: the adapter cannot be loaded, say
            raise RuntimeError(f"the oracle did not run (exit {done.returncode}):\n"
                               f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return Grade(assignment, json.loads(out.read_text()), tuple(only))


def main(argv: list[str] | None = None) -> int:
    """The command line: grade, print, exit 0 when every graded rule passes.

    Example:
        >>> main(["--assignment", "9", "--impl", "x:y"])
        Traceback (most recent call last):
        ...
        SystemExit: 2
    """
    parser = argparse.ArgumentParser(prog="python -m minilazy.conformance.grade",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--assignment", type=int, required=True, choices=range(1, LAST + 1),
                        metavar=f"1-{LAST}", help="grade the rules of assignments 1 to this one")
    parser.add_argument("--path", default=None,
                        help="your folder: the course's skeleton (FOLDER/core/...), or a "
                             "package of your own to import (with --impl)")
    parser.add_argument("--impl", default=ENGINE, metavar="MODULE:FACTORY",
                        help="the adapter to grade (default: minilazy's, on your core)")
    parser.add_argument("--profile", default="ci",
                        help="the Hypothesis profile: ci (default: each failure shrunk to its "
                             "smallest example), quick (no shrinking), thorough")
    parser.add_argument("--rules", default="", metavar="ID,ID",
                        help="grade only these of the assignment's rules (while you work on one)")
    args = parser.parse_args(argv)
    only = tuple(r.strip() for r in args.rules.split(",") if r.strip())
    try:
        result = grade(args.assignment, args.impl, args.path, args.profile, only=only)
    except ValueError as e:
        parser.error(str(e))
    print(result.text())
    return 0 if len(result.passed) == len(result.graded) else 1
