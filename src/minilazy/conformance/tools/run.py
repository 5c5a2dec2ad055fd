"""An oracle run: its Hypothesis profiles, the outcomes it collects, and how it ends.

The pytest plugin (``plugin.py``) registers an :class:`Oracle` for a run of the suite; it
collects each test's outcome as its reports arrive, writes the JSON report as tests finish,
and at the end prints the per-rule table and the digest of what failed.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from minilazy.conformance.adapter import Adapter, DtypePolicy, capabilities_of, policy_of
from minilazy.conformance.registry import rules
from minilazy.conformance.tools import digest, isolation, report, xfail

SHOULD_FAILED = "SHOULD rule failed (reported, not fatal)"
UNDECLARED = " does not declare capability "  # in the reason of a test skipped for that
# Hypothesis profiles of an oracle run. None of them runs Hypothesis's "explain" phase, whose
# line tracer slows a pure-Python library under test by an order of magnitude.
# - quick (the default): derandomised, no shrinking: a first run on a new implementation takes
#   minutes, and says which rules fail; failing examples are not minimised.
# - ci: the same examples, shrunk to the smallest failing one (what the shipped reports use).
# - ci-noshrink: quick's other name (older commands use it).
# - thorough: 200 random examples per test, shrunk.
# They replace profiles of the same names (Hypothesis has a built-in `ci`), but only in a run
# of the suite.
_FAST = ["explicit", "reuse", "generate"]
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"max_examples": 10, "derandomize": True, "database": None, "phases": _FAST},
    "ci": {"max_examples": 10, "derandomize": True, "database": None,
           "phases": [*_FAST, "shrink"]},
    "ci-noshrink": {"max_examples": 10, "derandomize": True, "database": None,
                    "phases": _FAST},
    "thorough": {"max_examples": 200, "phases": [*_FAST, "shrink"]},
}


def register_profiles() -> None:
    """Register :data:`PROFILES` with Hypothesis.

    Example:
        >>> from hypothesis import settings
        >>> register_profiles(); settings.get_profile("thorough").max_examples
        200
    """
    from hypothesis import HealthCheck, Phase, settings  # here: other runs need no Hypothesis

    slow = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture]
    for name, values in PROFILES.items():
        if "phases" in values:
            values = {**values, "phases": [Phase[p] for p in values["phases"]]}
        settings.register_profile(name, deadline=None, print_blob=True,
                                  suppress_health_check=slow, **values)


@dataclass(eq=False)  # hashed by identity: pluggy keeps plugins in sets
class Oracle:
    """The state of an oracle run: the implementation and what its tests gave.

    Registered as a plugin of its own, it collects each test's outcome as its reports arrive
    (with xdist, in the controller, which has no items: all it needs travels on the report).

    Example:
        >>> from minilazy.conformance.mutate.toy import toy
        >>> Oracle(toy(), "minilazy.conformance.mutate.toy:toy").describe()["name"]
        'toy'
    """

    adapter: Adapter
    impl: str
    outcomes: dict[str, tuple[str, tuple[str, ...], str | None]] = field(default_factory=dict)
    uncovered: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # node id: its failure text
    deviations: Counter[str] = field(default_factory=Counter)  # dtype policy uses, in all
    directory: Path | None = None  # the workers' current-test files (tools/isolation.py)
    report_path: str | None = None  # --spec-report: rewritten as tests finish
    saved: float = 0.0  # when the report was last written
    selected: frozenset[str] | None = None  # --lazy-rules / --lazy-assignment: only these
    # Tests skipped because the adapter does not declare a capability, by capability.
    undeclared: Counter[str] = field(default_factory=Counter)

    def describe(self) -> dict[str, Any]:
        """The implementation, as the report names it (with its dtype policy, if declared)."""
        found: dict[str, Any] = {"name": self.adapter.name, "version": self.adapter.version,
                                 "impl": self.impl,
                                 "capabilities": sorted(self.adapter.capabilities)}
        policy = policy_of(self.adapter)
        if policy != DtypePolicy():
            found["dtype_policy"] = {**asdict(policy), "unsupported": sorted(policy.unsupported),
                                     "promotion": dict(policy.promotion)}
        return found

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """(pytest-xdist, in the controller) Tell a worker where its current-test file goes."""
        node.workerinput["minilazy_oracle_dir"] = str(self.directory)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props: dict[str, Any] = dict(report.user_properties)
        self.deviations.update(props.get("policy", {}))
        if str(report.when) == "???" and self.directory is not None:  # xdist: a worker died
            self._died(report)
            return
        if "spec" not in props or (report.when != "call" and report.passed):
            return
        if report.skipped and (missing := _undeclared(report)):
            self.undeclared.update(missing.split(", "))  # a test counts for each one it needs
        expected = str(getattr(report, "wasxfail", ""))
        if report.failed or expected == SHOULD_FAILED:
            outcome = "failed"
        elif report.skipped and xfail.PREFIX in expected[:len(xfail.PREFIX) + 8]:
            outcome = "xfailed"  # an expected failure the --lazy-xfail file declares
        else:
            outcome = "skipped" if report.skipped else "passed"
        if self.outcomes.get(report.nodeid, ("",))[0] != "failed":  # a failed phase sticks
            self.outcomes[report.nodeid] = (outcome, tuple(props["spec"]), props.get("op"))
            if outcome == "failed":
                crash = getattr(report.longrepr, "reprcrash", None)
                text = str(crash.message if crash is not None else report.longrepr)
                if "distinct failures" in text:  # each failure's message is in the longrepr
                    text += "\n" + str(report.longrepr)
                self.failures[report.nodeid] = text
        self.save()

    def _died(self, report: pytest.TestReport) -> None:
        assert self.directory is not None
        worker = str(getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "?"))
        cause, record = isolation.post_mortem(self.directory, worker)
        nodeid = str(record.get("nodeid") or report.nodeid)
        self.outcomes[nodeid] = ("failed", tuple(record.get("rules") or ()), record.get("op"))
        self.failures[nodeid] = isolation.describe(cause, record)
        self.save()

    def save(self, final: bool = False) -> None:
        """Write the JSON report now: as tests finish (at most every 2 s), and at the end."""
        if self.report_path and (final or time.monotonic() - self.saved > 2.0):
            found = self.results().to_json(self.describe(), capabilities_of(self.adapter))
            found["policy"] = dict(sorted(self.deviations.items()))  # each deviation, once
            found["undeclared"] = dict(sorted(self.undeclared.items()))  # tests it skipped
            report.write(self.report_path, found)
            self.saved = time.monotonic()

    def results(self) -> report.Results:
        """The outcomes so far, by rule and by op."""
        results = report.Results(selected=self.selected)
        for nodeid, (outcome, spec, op) in self.outcomes.items():
            results.add(nodeid, outcome, spec, op, self.failures.get(nodeid))
        return results


def _undeclared(report: pytest.TestReport) -> str:
    """The capabilities whose absence skipped ``report``'s test ('' for another reason)."""
    reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else "")
    return reason.partition(UNDECLARED)[2].strip()


def finish(session: pytest.Session, oracle: Oracle) -> None:
    """At the end of a session: expected failures that passed fail it; the report is written.

    With ``--spec-coverage``, a MUST rule no test covered fails the session too.
    """
    config = session.config
    results = oracle.results()
    for rid, reason in xfail.load(config.getoption("lazy_xfail")).items():
        if rid in rules() and results.rule_status(rid) == "passed":  # fixed: say so
            name = f"{rid} (--lazy-xfail)"
            oracle.outcomes[name] = ("failed", (rid,), None)
            oracle.failures[name] = f"expected to fail ({reason}), but every test passed"
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    oracle.uncovered = oracle.results().uncovered(capabilities_of(oracle.adapter))
    oracle.save(final=True)
    if config.getoption("spec_coverage") and oracle.uncovered:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def summary(terminalreporter: Any, config: pytest.Config, oracle: Oracle) -> None:
    """Print the per-rule table and the op summary."""
    o = oracle.describe()
    terminalreporter.section(f"LazyTensor conformance: {o['name']} {o['version']}")
    table = oracle.results().table(capabilities_of(oracle.adapter))
    brief = config.getoption("lazy_brief")
    for line in table[-2:] if brief else table:  # brief: the ops' lines only
        if not brief or line.startswith("ops") and not line.endswith("none checked"):
            terminalreporter.write_line(line)
    if oracle.deviations:
        terminalreporter.write_line(f"dtype policy: values checked under {len(oracle.deviations)}"
                                    f" declared deviations from NumPy's dtypes (see the report)")
    if oracle.uncovered:
        verdict = "FAILS" if config.getoption("spec_coverage") else "would fail"
        terminalreporter.write_line(f"spec coverage {verdict}: no test of the active MUST rules "
                                    f"{', '.join(oracle.uncovered)}")


def digested(terminalreporter: Any, config: pytest.Config, oracle: Oracle) -> None:
    """The digest of what failed, rule by rule (``tools/digest.py``), against a baseline."""
    terminalreporter.section("what failed, rule by rule", sep="-")
    found = oracle.results().to_json(oracle.describe(), capabilities_of(oracle.adapter))
    if oracle.selected is not None:  # the rules not chosen say nothing
        found["rules"] = {r: row for r, row in found["rules"].items() if r in oracle.selected}
    for line in digest.digest(found, oracle.undeclared, _baseline(config)):
        terminalreporter.write_line(line)


def _baseline(config: pytest.Config) -> dict[str, Any] | None:
    path = config.getoption("spec_baseline")
    if not path:
        return None
    try:
        found: dict[str, Any] = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise pytest.UsageError(f"--spec-baseline: cannot read {path}: {e}") from e
    return found
