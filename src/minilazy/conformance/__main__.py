"""``python -m minilazy.conformance --lazy-impl=MODULE:FACTORY [pytest options]``: run the oracle.

The same as ``pytest --pyargs minilazy.conformance ...``, but isolated from whatever project the
command runs in: no ``pytest.ini``/``pyproject.toml`` options (``addopts``, doctests, plugins'
settings) are picked up, test ids are relative to the suite (``suite/test_x.py::test_y``), and
no cache is written. The same command gives the same per-rule report from any directory.
"""

from __future__ import annotations

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
                            "--pyargs", "minilazy.conformance", *args]))


if __name__ == "__main__":
    raise SystemExit(main())
