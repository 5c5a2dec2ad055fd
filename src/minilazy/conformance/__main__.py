"""``python -m minilazy.conformance --lazy-impl=MODULE:FACTORY [pytest options]``: run the oracle.

The same as ``pytest --pyargs minilazy.conformance ...``, but isolated from whatever project the
command runs in: no ``pytest.ini``/``pyproject.toml`` options (``addopts``, doctests, plugins'
settings) are picked up, test ids are relative to the suite (``suite/test_x.py::test_y``), and
no cache is written. The same command gives the same per-rule report from any directory. And
isolated from the library: tests run in a pytest-xdist worker that is restarted when the
library crashes it, and a test that hangs is stopped after ``--lazy-timeout`` seconds; both are
reported with the program that did it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    """Run the oracle with ``argv`` (pytest options); the exit code is pytest's.

    Example:
        >>> main.__name__
        'main'
    """
    args = sys.argv[1:] if argv is None else argv
    return int(pytest.main(["-c", os.devnull, "--rootdir", str(HERE), "-p", "no:cacheprovider",
                            *_isolated(args), "--pyargs", "minilazy.conformance", *args]))


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
