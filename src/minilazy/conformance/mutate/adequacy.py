"""Which spec tests the mutants earn: the oracle's adequacy, per rule family (the docs' table).

A spec test is *earned* when some mutant meant for its rule fails it (``earned`` runs: each
mutant runs its own rules' tests, narrowed to its op): the test is shown able to catch a
realistic bug of the kind it exists for. A test no mutant fails is either missing its mutant
or checking nothing; those that no realistic mutant reaches at the ci profile are listed in
:data:`UNREACHABLE` with the reason, and the docs list them all.
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

# The spec tests no mutant earns, by test-name prefix, and why: none realistic can reach them,
# or (``_RARE``) their mutant fails them only at the thorough profile, the ci profile's few
# examples missing the case, while a fixed test or a sibling earns the class at ci.
_GRAPHS = ("its attribute values record different graphs (other ops or other wiring), not one "
           "op with other attributes: a key that confused them would ignore ops or wiring, "
           "which key-sums-its-nodes and LZ-HASH-004's mutants break")


def _rare(mutant: str, earned_by: str = "") -> str:
    also = f"; {earned_by} earns the class at ci" if earned_by else ""
    return (f"drawn: {mutant} fails it at the thorough profile (`python -m "
            f"minilazy.conformance.mutate --earned --profile thorough {mutant}`), not in the ci "
            f"profile's examples{also}")


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
    "test_a_program_run_twice_observes_the_same_values": (
        "no realistic mutant of minilazy makes one compiled program give two answers (XLA on "
        "CPU reduces in a fixed order); it is there for implementations whose kernels are not "
        "deterministic (atomics on a GPU)"),
    "test_golden_programs_observe_numpys_values[wiring_and_dead_values]": (
        "it observes only after mark_step, so an observation that skips the barrier "
        "(array-observation-unsynced) passes it; its wiring and dead values are LZ-HASH-002's "
        "and LZ-BAR-003's, whose mutants their own tests catch first"),
    "test_compiles_never_exceed_the_distinct_keys_cut": (
        "a stateful run over random programs: its mutant, cache-of-one, fails the sibling "
        "test_compiles_are_at_most_the_distinct_keys_cut; these steps seldom come back to an "
        "evicted structure at the ci profile"),
    "test_tensordot_matches_numpy": (
        "drawn: an int `axes` contracting x2's last axes instead of its first is wrong only "
        "with free axes on both sides (a few draws in a hundred); tested at the thorough "
        "profile, not a mutant of the table (it would survive at ci)"),
    "test_linalg_functions_match_numpy[matrix_power]": (
        "drawn: matrix_power's abs(n) slip (namespaces.py) fails it at the thorough profile, "
        "when a negative power is drawn; not in the table (it survives at ci)"),
    "test_linalg_functions_match_numpy[matrix_rank]": (
        "the drawn matrices are well conditioned: their rank does not depend on the tolerance, "
        "so no slip of rtol shows; the rank of a nearly singular matrix is implementation-"
        "defined (LZ-NUM-018 compares within a bound)"),
    "test_sort_and_argsort_match_the_stable_oracle[sort]": (
        "sorted values cannot show a stability bug (sort-unstable fails [argsort]); a descending "
        "sort by negation fails it only with NaNs or unsigned zeros drawn with descending=True, "
        "not in the ci profile's examples"),
    "test_fill_values_convert_like_numpy[full_like]": _rare(
        "slip:full_like", "test_creation_matches_numpy[full_like]"),
    "test_in_place_operators_with_python_scalars_are_weak[bitwise_or]": _rare(
        "inplace-uncast", "the other operators' cases"),
    "test_integer_arrays_mixed_with_basic_indices_match_numpy": _rare(
        "adjacent-index-arrays-moved-first", "test_adjacent_index_arrays_keep_their_place"),
    "test_indexing_a_pending_result_and_chained_indexing": _rare(
        "negative-indices-clamped"),
    "test_indexing_matches_numpy[getitem]": _rare("negative-indices-clamped"),
    "test_boolean_mask_indexing_matches_numpy": _rare(
        "nonzero-column-major", "test_a_mask_of_two_axes_selects_in_row_major_order"),
    "test_nonzero_matches_numpy": _rare(
        "nonzero-column-major", "test_a_mask_of_two_axes_selects_in_row_major_order"),
    "test_boolean_mask_assignment_matches_numpy": (
        "its values come from a pool of one to four (the point: repeats), so an order of "
        "positions rarely shows even at the thorough profile; the fixed "
        "test_a_mask_of_two_axes_selects_in_row_major_order earns the class "
        "(nonzero-column-major)"),
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
    lines = ["| rule family | spec tests | earned | not earned, with a reason (below) | mutants |",
             "|---|---|---|---|---|"]
    families = sorted({_family(r) for r in tests.values()})
    for family in families:
        mine = [t for t, r in tests.items() if _family(r) == family]
        explained = [t for t in mine if t not in won and reason(t)]
        lines.append(f"| {family} | {len(mine)} | {sum(t in won for t in mine)} | "
                     f"{len(explained)} | {mutants[family]} |")
    share = len(won) / len(tests) if tests else 1.0
    lines += ["", f"Spec tests earned: {len(won)} of {len(tests)} ({share:.1%}).", ""]
    rest = sorted(set(tests) - won)
    if rest:
        lines += ["Not earned:", ""]
        lines += [f"- `{t}` ({tests[t]}): {reason(t) or 'no mutant yet'}" for t in rest]
    return lines
