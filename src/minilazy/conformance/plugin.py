r"""The pytest plugin of the conformance oracle (entry point ``pytest11: minilazy_conformance``).

Run the suite against any implementation with an adapter (``adapter.py``)::

    pytest --pyargs minilazy.conformance --lazy-impl=package.module:factory \\
        [--spec-coverage] [--spec-report=report.json] [--hypothesis-profile=ci]

The implementation defaults to ``$MINILAZY_IMPL``, then to minilazy on the CPU. The suite runs
only when asked for: ``--lazy-impl``, ``--pyargs minilazy.conformance`` or a path into its
``suite/`` folder; in any other run the plugin is inert but for one check: every
``@pytest.mark.spec("LZ-...")`` must name a rule of the registry, or collecting the test fails.

Tests are skipped, naming the reason, when the adapter lacks a capability their rule needs
(``rules.toml``) or that they ask for with ``@pytest.mark.requires(...)``, or when it does not
support the op they are parametrized with (``op``) or mark with ``@pytest.mark.ops(...)``. A test
of SHOULD rules only that fails is reported as failed for its rules but does not fail the run
(``--lazy-strict``: it does).
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Generator
from pathlib import Path
from typing import Any, cast

import pytest

from minilazy.conformance.adapter import (
    DEFAULT_IMPL,
    IMPL_VARIABLE,
    OptionalAdapter,
    capabilities_of,
    load,
    policy_of,
    satisfies,
    supports,
)
from minilazy.conformance.adapters import process
from minilazy.conformance.oracle import applied_deviations, use_policy
from minilazy.conformance.oracle.strategies import declared_only, examples_independent_of_local_code
from minilazy.conformance.registry import ops, rules
from minilazy.conformance.tools import isolation, run, xfail
from minilazy.conformance.tools.run import SHOULD_FAILED, UNDECLARED, Oracle, register_profiles

SUITE_PARTS = ("minilazy", "conformance", "suite")
PROCESS_IMPL = "minilazy.conformance.adapters.process:command"  # what --lazy-command loads


ORACLE = pytest.StashKey[Oracle]()
WATCH = pytest.StashKey[isolation.Watch]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the oracle's command-line options."""
    group = parser.getgroup("minilazy-conformance", "LazyTensor conformance oracle")
    group.addoption("--lazy-impl", default=None, metavar="MODULE:FACTORY",
                    help=f"the implementation to check (default: ${IMPL_VARIABLE}, then "
                         "minilazy on the CPU); naming one runs the suite")
    group.addoption("--lazy-command", default=None, metavar="COMMAND",
                    help="check the implementation this command serves over the process "
                         "protocol (spec/protocol.md), in any language; naming one runs the "
                         "suite")
    group.addoption("--spec-coverage", action="store_true",
                    help="fail if an active MUST rule of the spec has no test")
    group.addoption("--spec-report", default=None, metavar="PATH",
                    help="write the per-rule and per-op results as JSON to PATH")
    group.addoption("--lazy-rules", default=None, metavar="ID,ID",
                    help="run only the tests of these rules (e.g. LZ-CACHE-003,LZ-HASH-002)")
    group.addoption("--lazy-assignment", default=None, type=int, metavar="N",
                    help="run only the tests of the rules of course assignments 1 to N "
                         "(tutorials/build; python -m minilazy.conformance.grade scores them)")
    group.addoption("--lazy-timeout", default=60.0, type=float, metavar="SECONDS",
                    help="stop a test running longer than this and report it hung (0: never;"
                         " with pytest-xdist workers the run goes on; default 60)")
    group.addoption("--spec-baseline", "--baseline", default=None, metavar="PATH",
                    help="a JSON report of an earlier run (--spec-report): print the rules "
                         "whose status changed since")
    group.addoption("--lazy-brief", action="store_true",
                    help="leave the per-rule table out of the summary: only the digest of "
                         "the failing rules (python -m minilazy.conformance's default)")
    group.addoption("--lazy-strict", action="store_true",
                    help="a failure of a SHOULD rule fails the run too (by default it is "
                         "reported, not fatal)")
    group.addoption("--lazy-xfail", default=None, metavar="FILE",
                    help="expected failures: a TOML file mapping rule IDs or test ids to a "
                         "reason; they are reported as xfail, and passing one is an error")


def in_suite(path: Path) -> bool:
    """Whether ``path`` lies in the suite's folder (of any copy of the package).

    Example:
        >>> in_suite(Path("src/minilazy/conformance/suite/test_x.py")), in_suite(Path("tests"))
        (True, False)
    """
    parts = path.parts
    n = len(SUITE_PARTS)
    return any(parts[i:i + n] == SUITE_PARTS for i in range(len(parts) - n + 1))


def _asked_for(config: pytest.Config) -> bool:
    """Whether this run asked for the suite (see the module docstring)."""
    if config.getoption("lazy_impl") or config.getoption("lazy_command"):
        return True
    for arg in config.args:
        name = arg.split("::")[0]
        if config.option.pyargs and (name == "minilazy.conformance"
                                     or name.startswith("minilazy.conformance.suite")):
            return True
        if in_suite(Path(name).resolve()):
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # before Hypothesis loads the profile named on the command line
def pytest_configure(config: pytest.Config) -> None:
    """Register the markers; where the suite runs, load the implementation and the profiles."""
    config.addinivalue_line("markers", "spec(*rule_ids): the LazyTensor spec rules a test checks")
    config.addinivalue_line("markers", "requires(*capabilities): adapter capabilities a test "
                                       "needs besides its rules'")
    config.addinivalue_line("markers", "ops(*names): registry ops a test uses")
    if not _asked_for(config):
        return
    last, assignment = max(r.stage for r in rules().values()), config.getoption("lazy_assignment")
    if assignment is not None and not 1 <= assignment <= last:
        raise pytest.UsageError(f"--lazy-assignment: the course has assignments 1 to {last}")
    register_profiles()
    examples_independent_of_local_code()
    if not config.getoption("hypothesis_profile", None):
        from hypothesis import settings

        settings.load_profile("quick")
    impl = config.getoption("lazy_impl") or os.environ.get(IMPL_VARIABLE) or ""
    if config.getoption("lazy_command"):  # the environment carries it to fresh processes
        os.environ[process.COMMAND_VARIABLE] = config.getoption("lazy_command")
        impl = PROCESS_IMPL
    try:
        adapter = load(impl or None)
    except Exception as e:
        raise pytest.UsageError(f"cannot load the implementation {impl or '(default)'}: "
                                f"{type(e).__name__}: {e}") from e
    declared_only(adapter)  # fixed data of an undeclared dtype skips, not fails
    oracle = Oracle(adapter, impl or DEFAULT_IMPL, selected=_chosen(config))
    use_policy(policy_of(adapter))  # expected values take the adapter's declared dtypes
    worker = getattr(config, "workerinput", None)
    if worker is None:  # the controller (or a run without workers)
        oracle.directory = isolation.fresh_directory(Path(tempfile.gettempdir()))
        oracle.report_path = config.getoption("spec_report")
    else:
        oracle.directory = Path(worker["minilazy_oracle_dir"])
    watch = isolation.Watch(oracle.directory, worker["workerid"] if worker else "main",
                            float(config.getoption("lazy_timeout")))
    isolation.install(watch)
    config.stash[WATCH] = watch
    config.stash[ORACLE] = oracle
    config.pluginmanager.register(oracle, "minilazy-conformance-oracle")


def _chosen(config: pytest.Config) -> frozenset[str] | None:
    """The rules ``--lazy-rules`` and ``--lazy-assignment`` ask for (None: every rule)."""
    wanted = config.getoption("lazy_rules") or ""
    assignment = config.getoption("lazy_assignment")
    if assignment is not None:  # the rules of the course's assignments 1..N
        wanted += "," + ",".join(r.id for r in rules().values() if 1 <= r.stage <= assignment)
    if not wanted:
        return None
    chosen = frozenset(r.strip() for r in wanted.split(",") if r.strip())
    unknown = chosen - set(rules())
    if unknown:
        raise pytest.UsageError(f"--lazy-rules: unknown rule IDs {sorted(unknown)}")
    return chosen


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave the suite out of runs that did not ask for it."""
    if ORACLE not in config.stash and in_suite(collection_path):
        return True  # the suite runs only when asked for
    return None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Name the implementation, its version and its capabilities."""
    if ORACLE not in config.stash:
        return []
    o = config.stash[ORACLE].describe()
    return [f"lazy implementation: {o['name']} {o['version']} ({o['impl']})",
            f"capabilities: {', '.join(o['capabilities']) or '(none)'}"]


def rule_ids(item: pytest.Item) -> list[str]:
    """The rule IDs of an item's ``spec`` markers, in order.

    Example:
        >>> rule_ids.__name__
        'rule_ids'
    """
    return [str(rid) for m in item.iter_markers("spec") for rid in m.args]


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """Make a spec marker naming an unknown rule a collection error."""
    rep = yield
    if rep.passed:
        bad = [f"{item.nodeid}: unknown spec rule ID {rid!r}" for item in rep.result
               if isinstance(item, pytest.Item) for rid in rule_ids(item) if rid not in rules()]
        if bad:  # a collection error, naming the ID: a typo must not silently check nothing
            rep.outcome, rep.longrepr, rep.result = "failed", "\n".join(bad), []
    return rep


def stable_id(item: pytest.Item) -> str:
    """A test's id relative to the suite: ``suite/test_x.py::test_y[param]``, from any path.

    Example:
        >>> stable_id.__name__
        'stable_id'
    """
    nodeid = item.nodeid
    where = nodeid.find("suite/")
    return nodeid[where:] if where >= 0 else nodeid


def _op_of(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    op = callspec.params.get("op") if callspec is not None else None
    return op if isinstance(op, str) and op in ops() else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tag each test with its rules and op; skip what the adapter cannot do."""
    if ORACLE not in config.stash:
        return
    adapter = config.stash[ORACLE].adapter
    caps = capabilities_of(adapter)
    # Only spec tests: a project's own options (--doctest-modules, testpaths) must not add
    # tests to an oracle run, nor run anything in its process.
    foreign = [i for i in items if not rule_ids(i) and not in_suite(Path(str(i.path)))]
    if foreign:
        items[:] = [i for i in items if rule_ids(i) or in_suite(Path(str(i.path)))]
        config.hook.pytest_deselected(items=foreign)
    expected = xfail.load(config.getoption("lazy_xfail"))
    chosen = config.stash[ORACLE].selected
    if chosen is not None:
        deselected = [i for i in items if not chosen & set(rule_ids(i))]
        items[:] = [i for i in items if chosen & set(rule_ids(i))]
        config.hook.pytest_deselected(items=deselected)
    for item in items:
        rids = rule_ids(item)
        op = _op_of(item)
        item.user_properties.append(("spec", tuple(rids)))
        item.user_properties.append(("op", op))
        needed = {rules()[r].capability for r in rids if rules()[r].capability}
        needed |= {str(c) for m in item.iter_markers("requires") for c in m.args}
        missing = sorted(n for n in needed if not satisfies(caps, n))
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"{adapter.name}{UNDECLARED}"
                                                    f"{', '.join(missing)}"))
            continue
        reason, whole_rule = xfail.reason_for(expected, stable_id(item), rids)
        if reason is not None:  # a rule is expected to fail as a whole: its tests one by one
            item.add_marker(pytest.mark.xfail(strict=not whole_rule,  # need not
                                              reason=f"{xfail.PREFIX}{reason}"))
        used = {str(o) for m in item.iter_markers("ops") for o in m.args} | ({op} if op else set())
        unsupported = sorted(o for o in used if not supports(adapter, o))
        if unsupported:
            item.add_marker(pytest.mark.skip(reason=f"{adapter.name} does not support "
                                                    f"{', '.join(unsupported)}"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Report a failure of SHOULD rules only as an expected failure."""
    rep = yield
    rids = rule_ids(item)
    if ORACLE not in item.config.stash:
        return rep
    if (rep.when == "call" and rep.failed and rids and not item.config.getoption("lazy_strict")
            and all(rules()[r].level != "MUST" for r in rids)):
        rep.outcome = "skipped"
        vars(rep)["wasxfail"] = SHOULD_FAILED  # pytest's own mark of an expected failure
    if rep.when == "call":  # the dtype deviations this test's expected values used
        rep.user_properties.append(("policy", dict(applied_deviations())))
    if call.excinfo is not None and call.excinfo.tb is not None:
        # The report holds the failure as text now. The traceback's frames would keep the
        # test's tensors alive -- pending ones included, which a later test's mark_step would
        # meet: one bug failing the tests of other rules. Drop them.
        traceback.clear_frames(call.excinfo.tb)
    return rep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None
                            ) -> Generator[None, object, object]:
    """Watch each spec test: a crash or a hang of the library is then reported, not lost."""
    watch = item.config.stash.get(WATCH, None)
    if watch is None:
        return (yield)
    watch.start(stable_id(item), rule_ids(item), _op_of(item))
    try:
        return (yield)
    finally:
        watch.stop()


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Seed Hypothesis from the rule and the test, not from the test's path.

    For a parametrized test, Hypothesis seeds a derandomised run from the node id, which
    depends on where the suite was collected from; the same run from another directory would
    draw other examples. (Innermost wrapper: runs after Hypothesis's own has set its key.)
    """
    inner = getattr(getattr(getattr(item, "obj", None), "hypothesis", None), "inner_test", None)
    if ORACLE in item.config.stash and inner is not None:
        key = f"{','.join(rule_ids(item))} {stable_id(item)}"
        inner._hypothesis_internal_add_digest = key.encode()
    try:
        return (yield)
    finally:
        # pytest keeps the last failure for post-mortem debugging: its frames hold tensors too.
        sys.last_type = sys.last_value = sys.last_traceback = None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the JSON report; fail the session on uncovered rules with ``--spec-coverage``."""
    if ORACLE in session.config.stash and not hasattr(session.config, "workerinput"):
        run.finish(session, session.config.stash[ORACLE])


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config
                            ) -> None:
    """Print the per-rule table and the op summary."""
    if ORACLE in config.stash and not hasattr(config, "workerinput"):
        run.summary(terminalreporter, config, config.stash[ORACLE])


@pytest.hookimpl(specname="pytest_terminal_summary", wrapper=True,
                 tryfirst=True)  # outermost: after pytest's own summary of the failures
def pytest_terminal_summary_digest(terminalreporter: Any, exitstatus: int,
                                   config: pytest.Config) -> Generator[None, None, None]:
    """End the report with the digest of what failed, rule by rule (``tools/digest.py``)."""
    yield
    if ORACLE in config.stash and not hasattr(config, "workerinput"):
        run.digested(terminalreporter, config, config.stash[ORACLE])


@pytest.fixture(scope="session")
def adapter(request: pytest.FixtureRequest) -> OptionalAdapter:
    """The implementation under test (``--lazy-impl``; minilazy on the CPU by default).

    Typed with the optional methods: a test calls only those its capabilities guarantee.

    Example:
        >>> import numpy as np
        >>> def test_negation(adapter):  # a spec test asks for the fixture by name
        ...     x = adapter.from_numpy(np.ones(2))
        ...     assert adapter.to_numpy(adapter.apply("negative", x)).tolist() == [-1.0, -1.0]
        >>> from minilazy.conformance.mutate.toy import toy
        >>> test_negation(toy())
    """
    found = request.config.stash[ORACLE].adapter if ORACLE in request.config.stash else load()
    return cast(OptionalAdapter, found)


@pytest.fixture(autouse=True)
def _fresh_cache(request: pytest.FixtureRequest) -> None:
    """Each spec test starts isolated (``isolate``), from an empty compile cache (``reset``).

    A test's outcome then depends on its own code only, not on what ran before it in the
    process; tests that need a warm cache warm it themselves.
    """
    if ORACLE in request.config.stash and request.node.get_closest_marker("spec"):
        found = cast(OptionalAdapter, request.config.stash[ORACLE].adapter)
        isolate = getattr(found, "isolate", None)
        if isolate is not None:  # leave nothing of the earlier tests behind
            isolate()
        if "reset" in found.capabilities:
            found.reset()


@pytest.fixture(scope="session")
def lazy_impl(request: pytest.FixtureRequest) -> str:
    """The ``module:factory`` name of the implementation under test, for fresh processes.

    Example:
        >>> from minilazy.conformance.adapter import load
        >>> def test_named(lazy_impl):  # a spec test that starts another process uses it
        ...     assert load(lazy_impl).name == "toy"
        >>> test_named("minilazy.conformance.mutate.toy:toy")
    """
    if ORACLE in request.config.stash:
        return request.config.stash[ORACLE].impl
    return os.environ.get(IMPL_VARIABLE) or DEFAULT_IMPL
