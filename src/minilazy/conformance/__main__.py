"""``python -m minilazy.conformance --lazy-impl=MODULE:FACTORY [pytest options]``: run the oracle.

The same as ``pytest --pyargs minilazy.conformance ...``, but isolated from whatever project the
command runs in: no ``pytest.ini``/``pyproject.toml`` options (``addopts``, doctests, plugins'
settings) are picked up, test ids are relative to the suite (``suite/test_x.py::test_y``), and
no cache is written. The same command gives the same per-rule report from any directory. And
isolated from the library: tests run in a pytest-xdist worker that is restarted when the
library crashes it, and a test that hangs is stopped after ``--lazy-timeout`` seconds; both are
reported with the program that did it.

Its output is short: pytest's progress, then the digest of what failed, rule by rule
(``tools/digest.py``); the JSON report (``--spec-report``) has everything. ``--lazy-pytest-output``
gives pytest's own report too (each failure's traceback, the FAILED lines, the per-rule table),
as ``pytest --pyargs minilazy.conformance`` prints it. With no argument it prints its usage.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from minilazy.conformance.adapter import IMPL_VARIABLE

HERE = Path(__file__).resolve().parent


USAGE = """usage: python -m minilazy.conformance --lazy-impl=MODULE:FACTORY [options]
       python -m minilazy.conformance --lazy-command="COMMAND" [options]

Check a LazyTensor implementation against the spec's rules (its adapter: MODULE:FACTORY; or a
server in any language: COMMAND; or $MINILAZY_IMPL). Common options:
  --lazy-rules=ID,ID          only these rules' tests
  --spec-report=PATH          the per-rule results as JSON
  --spec-baseline=PATH        print the rules whose status changed since that saved report
  --hypothesis-profile=NAME   quick (default), ci (failures shrunk), thorough
  --lazy-strict               a failing SHOULD rule fails the run too
  --lazy-pytest-output        pytest's own report too (tracebacks, FAILED lines, rule table)
  --help                      every option (pytest's and the oracle's)
To check minilazy itself: --lazy-impl=minilazy.conformance.adapters.minilazy_adapter:cpu"""
# What the short output leaves out of pytest's: tracebacks, the FAILED lines, warnings.
QUIET = ["--tb=no", "-rN", "--disable-warnings", "-q", "--lazy-brief"]
VERBOSE = "--lazy-pytest-output"


def main(argv: list[str] | None = None) -> int:
    """Run the oracle with ``argv`` (pytest options); the exit code is pytest's.

    Example:
        >>> main([])  # no implementation named: the usage (on stderr), exit 2
        2
    """
    args = sys.argv[1:] if argv is None else argv
    named = any(a.startswith(("--lazy-impl", "--lazy-command", "-h", "--help")) for a in args)
    if not named and not os.environ.get(IMPL_VARIABLE):
        print(USAGE, file=sys.stderr)
        return 2
    quiet = [] if VERBOSE in args or _chooses_output(args) else QUIET
    args = [a for a in args if a != VERBOSE]
    return int(pytest.main(["-c", os.devnull, "--rootdir", str(HERE), "-p", "no:cacheprovider",
                            *_isolated(args), *quiet, "--pyargs", "minilazy.conformance",
                            *args]))


def _chooses_output(args: list[str]) -> bool:
    """Whether the command line says how to report (``--tb``, ``-r``, ``-v``): then it rules."""
    return any(a.startswith(("--tb", "-r", "-v", "--verbose")) for a in args)


def _isolated(args: list[str]) -> list[str]:
    """Run in a pytest-xdist worker, restarted when the library crashes it (tools/isolation.py).

    Unless the command line says how to distribute (``-n``, ``-p no:xdist``) or xdist is absent.
    """
    if importlib.util.find_spec("xdist") is None:
        return []
    chosen = any(a.startswith(("-n", "--numprocesses", "--dist")) or a == "no:xdist"
                 for a in args)
    return [] if chosen else ["-n", "1", "--max-worker-restart", "1000"]


if __name__ == "__main__":
    raise SystemExit(main())
