"""Which spec tests the mutants earn: the oracle's adequacy, per rule family (the docs' table).

A spec test is *earned* when some mutant meant for its rule fails it (``earned`` runs: each
mutant runs its own rules' tests, narrowed to its op): the test is shown able to catch a
realistic bug of the kind it exists for. A test no mutant fails is either missing its mutant
or checking nothing; those that no realistic mutant can reach are listed in :data:`UNREACHABLE`
with the reason, and the docs list the rest.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from minilazy.conformance.mutate import Outcome, oracle_command

BASELINE = "minilazy.conformance.adapters.minilazy_adapter:cpu"

# Tests no realistic mutant of minilazy reaches, by test-name prefix, and why.
_GRAPHS = ("its attribute values record different graphs (other ops or other wiring), not one "
           "op with other attributes: a key that confused them would ignore ops or wiring, "
           "which key-ignores-wiring and LZ-HASH-004's mutants break")
UNREACHABLE: dict[str, str] = {
    "test_a_barrier_anywhere_changes_no_value[none]": (
        "the control case, with no barrier: a mutant fails it only by breaking values "
        "everywhere (LZ-NUM's business); it tells the other cases' failures apart"),
    "test_each_attribute_value_gets_its_own_program[searchsorted]": (
        "side='left' and 'right' record other comparisons (less, less_equal): " + _GRAPHS),
    "test_each_attribute_value_gets_its_own_program[take_along_axis]": (
        "each axis records its own iota and wiring: " + _GRAPHS),
    "test_each_attribute_value_of_an_extension_gets_its_own_program[cholesky]": (
        "upper=True records a transpose after the factorization: " + _GRAPHS),
    "test_each_attribute_value_of_an_extension_gets_its_own_program[matrix_power]": (
        "each power records its own chain of products: " + _GRAPHS),
}


def spec_tests(profile: str = "ci-noshrink") -> tuple[dict[str, str], list[str]]:
    """Every spec test and its rule, and the tests that fail, from a run on the unmutated engine.

    It must pass them all: a mutant is only killed by a test that passes without it.
    """
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTEST_", "HYPOTHESIS", "MINILAZY_IMPL"))}
        done = subprocess.run(oracle_command(BASELINE, f"--hypothesis-profile={profile}",
                                             f"--spec-report={report}", "-q", "-p", "no:xdist"),
                              cwd=tmp, env=env, capture_output=True, text=True)
        if not report.exists():
            return {}, [f"the unmutated run gave no report:\n{done.stdout[-2000:]}"]
        data = json.loads(report.read_text())
    failed = [t for v in data["rules"].values() for t in v.get("failed", [])]
    return {t: rule for rule, v in data["rules"].items() for t in v.get("passed", [])}, failed


def _family(rule: str) -> str:
    return rule.rsplit("-", 1)[0]


def earned(outcomes: Iterable[Outcome]) -> set[str]:
    """The spec tests some mutant failed."""
    return set().union(*(o.failed_tests for o in outcomes))


def reason(test: str) -> str:
    """Why no realistic mutant reaches ``test`` (empty: none given, a mutant is missing).

    Example:
        >>> reason("suite/test_nothing.py::test_x")
        ''
    """
    name = test.split("::")[-1]
    return next((why for prefix, why in UNREACHABLE.items() if name.startswith(prefix)), "")


def adequacy(outcomes: Sequence[Outcome], tests: dict[str, str]) -> list[str]:
    """The adequacy table as Markdown lines: per rule family, then the tests not earned.

    Example:
        >>> adequacy([], {"suite/t.py::test_a": "LZ-BAR-001"})[2]
        '| LZ-BAR | 1 | 0 | 0 | 0 |'
    """
    won = earned(outcomes) & set(tests)
    mutants: Counter[str] = Counter()
    for o in outcomes:
        for family in {_family(r) for r in o.mutant.breaks}:
            mutants[family] += 1
    lines = ["| rule family | spec tests | earned | unreachable (reasons below) | mutants |",
             "|---|---|---|---|---|"]
    families = sorted({_family(r) for r in tests.values()})
    for family in families:
        mine = [t for t, r in tests.items() if _family(r) == family]
        unreachable = [t for t in mine if t not in won and reason(t)]
        lines.append(f"| {family} | {len(mine)} | {sum(t in won for t in mine)} | "
                     f"{len(unreachable)} | {mutants[family]} |")
    share = len(won) / len(tests) if tests else 1.0
    lines += ["", f"Spec tests earned: {len(won)} of {len(tests)} ({share:.1%}).", ""]
    rest = sorted(set(tests) - won)
    if rest:
        lines += ["Not earned:", ""]
        lines += [f"- `{t}` ({tests[t]}): {reason(t) or 'no mutant yet'}" for t in rest]
    return lines
