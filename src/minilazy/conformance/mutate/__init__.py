"""The oracle, tested: a catalogue of mutants and the harness that scores the oracle on them.

The oracle's own quality checks. A *mutant* is an implementation with one realistic bug: minilazy's
engine patched in one place (:mod:`.engine` and its siblings), or the from-scratch toy (:mod:`.toy`,
the oracle's independent test subject) broken in one place (:mod:`.toy_mutants`). Each entry of
:data:`CATALOGUE` names the rules its bug breaks. The harness runs the oracle against each mutant in
a fresh process and reports whether it was *killed* (some test failed), by which rules, and how long
it took; the **mutation score** is the share killed by at least one of their own rules. ``python -m
minilazy.conformance.mutate`` prints the table.

Two modes. ``fast`` runs only each mutant's own rules and stops at the first failure: what CI
runs. ``full`` runs the whole suite on every mutant: it also shows *collateral* failures (rules
outside the declared ones: a failure that leaked into another rule's tests) and which spec
tests no mutant fails (a test that cannot fail is a test that checks nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from minilazy.conformance.mutate.catalogue import CATALOGUE, Mutant, family_mutants

__all__ = ["CATALOGUE", "Mutant", "Outcome", "family_mutants", "oracle_command", "run",
           "run_all", "score", "table"]


@dataclass(frozen=True)
class Outcome:
    """What the oracle did to one mutant.

    Attributes:
        mutant: the mutant.
        failed_rules: the rules with a failing test.
        failed_tests: the failing tests' ids.
        seconds: the run's wall time.
        error: why the run gave no report (a crash of the run itself), if it did not.
    """

    mutant: Mutant
    failed_rules: frozenset[str]
    failed_tests: frozenset[str]
    seconds: float
    error: str = ""
    tests: frozenset[str] = frozenset()  # every spec test the run reported on

    @property
    def killed(self) -> bool:
        """Killed by one of its own rules (failures of other rules alone do not count)."""
        return bool(self.failed_rules & set(self.mutant.breaks))

    @property
    def collateral(self) -> frozenset[str]:
        """Failed rules the mutant does not declare: a failure that leaked out of its rule."""
        return self.failed_rules - set(self.mutant.breaks)


def oracle_command(impl: str, *options: str) -> list[str]:
    """The command that runs the oracle on ``impl``, isolated from any project's pytest setup.

    Example:
        >>> oracle_command("minilazy.conformance.mutate.toy:toy")[:3]
        [..., '-m', 'minilazy.conformance']
    """
    return [sys.executable, "-m", "minilazy.conformance", f"--lazy-impl={impl}", *options]


def run(mutant: Mutant, profile: str = "ci", mode: str = "fast", timeout: float = 900
        ) -> Outcome:
    """Run the oracle on ``mutant`` in a fresh process.

    ``mode``: ``fast``, only its own rules (narrowed by its ``focus``), stopping at the first
    failure, without shrinking (the ``ci`` profile's ``-noshrink`` twin draws the same
    examples: whether a mutant is killed is the same; only the failing example is not
    minimised); ``earned``, the same tests, all of them (which tests it fails: the tests it
    earns); ``full``, the whole suite.
    """
    if mode not in ("fast", "earned", "full"):
        raise ValueError(f"mode: fast, earned or full, not {mode!r}")
    if mode != "full" and profile == "ci":
        profile = "ci-noshrink"
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        options = [f"--hypothesis-profile={profile}", f"--spec-report={report}", "-q",
                   "-p", "no:xdist"]  # the mutants do not crash: no worker to start
        if mode != "full":
            options += [f"--lazy-rules={','.join(mutant.breaks)}"]
            options += ["-x"] if mode == "fast" else []
            if mutant.focus:
                options += ["-k", mutant.focus]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTEST_", "HYPOTHESIS", "MINILAZY_IMPL"))}
        env.update(mutant.env)
        start = time.perf_counter()
        try:
            done = subprocess.run(oracle_command(mutant.impl, *options), cwd=tmp, env=env,
                                  capture_output=True, text=True, timeout=timeout)
            tail = (done.stdout + done.stderr)[-2000:]
        except subprocess.TimeoutExpired:
            tail = f"timed out after {timeout:.0f} s"
        seconds = time.perf_counter() - start
        if not report.exists():
            return Outcome(mutant, frozenset(), frozenset(), seconds, tail)
        data = json.loads(report.read_text())
    failed_rules = frozenset(r for r, v in data["rules"].items() if v["status"] == "failed")
    failed_tests = frozenset(t for v in data["rules"].values() for t in v.get("failed", []))
    tests = frozenset(t for v in data["rules"].values()
                      for outcome in ("passed", "failed") for t in v.get(outcome, []))
    return Outcome(mutant, failed_rules, failed_tests, seconds, tests=tests)


def run_all(mutants: Iterable[Mutant], profile: str = "ci", mode: str = "fast", jobs: int = 2
            ) -> list[Outcome]:
    """Run every mutant, ``jobs`` at a time, in catalogue order (``mode``: see :func:`run`)."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda m: run(m, profile, mode), mutants))


def score(outcomes: Sequence[Outcome]) -> float:
    """The share of mutants killed by one of their own rules (1.0 is every one).

    Example:
        >>> score([])
        1.0
    """
    return sum(o.killed for o in outcomes) / len(outcomes) if outcomes else 1.0


def table(outcomes: Sequence[Outcome]) -> list[str]:
    """The mutation score table, as Markdown lines.

    Example:
        >>> table([])[0]
        '| mutant | layer | its rules | killed | killed by | collateral | time |'
    """
    lines = ["| mutant | layer | its rules | killed | killed by | collateral | time |",
             "|---|---|---|---|---|---|---|"]
    families: dict[str, list[Outcome]] = {}
    for o in outcomes:
        if o.mutant.family:  # one row per family; the names of any it missed
            families.setdefault(o.mutant.family, []).append(o)
            continue
        verdict = "yes" if o.killed else ("NO (run failed)" if o.error else "NO")
        own = ", ".join(sorted(o.failed_rules & set(o.mutant.breaks))) or "-"
        extra = ", ".join(sorted(o.collateral)) or "-"
        lines.append(f"| {o.mutant.name} | {o.mutant.layer} | {', '.join(o.mutant.breaks)} | "
                     f"{verdict} | {own} | {extra} | {o.seconds:.0f} s |")
    for family, runs in families.items():
        rules = sorted({r for o in runs for r in o.mutant.breaks})
        missed = [o.mutant.name.split(":", 1)[1] for o in runs if not o.killed]
        verdict = f"{len(runs) - len(missed)} of {len(runs)} sites" + (
            f" (NO: {', '.join(missed)})" if missed else "")
        won = ", ".join(sorted({r for o in runs for r in o.failed_rules & set(o.mutant.breaks)}))
        lines.append(f"| {family}:* | {runs[0].mutant.layer} | {', '.join(rules)} | {verdict} | "
                     f"{won or '-'} | - | {sum(o.seconds for o in runs):.0f} s |")
    killed = sum(o.killed for o in outcomes)
    lines += ["", f"Mutation score: {killed}/{len(outcomes)} killed by their own rules "
                  f"({score(outcomes):.0%})."]
    return lines
