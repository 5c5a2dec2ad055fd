"""Expected failures: what an implementation knows it fails, declared in a file with a reason.

``--lazy-xfail=FILE`` names a TOML file with one table, ``[xfail]``, mapping a rule ID or a test
id (``suite/test_x.py::test_y``, a prefix matching its parametrizations too) to the reason::

    [xfail]
    "LZ-HASH-005" = "the key leaves out which parameter an op reads (issue #123)"
    "suite/test_errors.py::test_dtypes_numpy_has_no_loop_for_raise_type_error" = "RuntimeError"

Matching tests run as expected failures: a failure is reported as ``xfail`` (and the rule's
status says so). A named test that passes fails the run, and so does a named rule whose tests
all pass -- the bug is fixed, the entry must go. Unknown rule IDs in the file are an error.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from minilazy.conformance.registry import rules

PREFIX = "expected: "  # begins every xfail reason this module adds


def load(path: str | None) -> dict[str, str]:
    """The entries of the file at ``path`` (none without a path); ``UsageError`` if malformed.

    Example:
        >>> load(None)
        {}
    """
    if not path:
        return {}
    try:
        table = tomllib.loads(Path(path).read_text()).get("xfail")
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise pytest.UsageError(f"--lazy-xfail {path}: {e}") from e
    if not isinstance(table, Mapping) or not all(isinstance(v, str) for v in table.values()):
        raise pytest.UsageError(f"--lazy-xfail {path}: needs an [xfail] table of "
                                "'id' = 'reason' strings")
    unknown = [k for k in table if k.startswith("LZ-") and k not in rules()]
    if unknown:
        raise pytest.UsageError(f"--lazy-xfail {path}: unknown rule IDs {unknown}")
    return dict(table)


def reason_for(entries: Mapping[str, str], test_id: str, rule_ids: Iterable[str]
               ) -> tuple[str | None, bool]:
    """Why a test is expected to fail, if an entry names it or one of its rules.

    Also whether the entry names a whole rule (then some of its tests may pass).

    Example:
        >>> reason_for({"LZ-BAR-001": "no mark_step"}, "suite/t.py::x", ["LZ-BAR-001"])
        ('no mark_step', True)
        >>> reason_for({"suite/t.py::x": "bug"}, "suite/t.py::x[add]", [])
        ('bug', False)
    """
    for key, reason in entries.items():
        if not key.startswith("LZ-") and (test_id == key or test_id.startswith(key + "[")):
            return reason, False
    for rid in rule_ids:
        if rid in entries:
            return entries[rid], True
    return None, False
