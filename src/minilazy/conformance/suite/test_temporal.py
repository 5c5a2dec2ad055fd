"""One structure reached twice, a property that decides its program changed in between.

Generated from the table of :mod:`minilazy.conformance.oracle.temporal`: for each row, every
ordered pair of its settings (so both orders), in one process; and, where a program can outlive
its process (capability ``persistent``), across two processes sharing one cache directory. Each
reach is compared to NumPy: a program, plan or tape reused by structure alone gives one
setting's values (or consumes its buffers) in the other's place.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minilazy.conformance.adapter import OptionalAdapter
from minilazy.conformance.oracle.strategies import undeclared
from minilazy.conformance.oracle.temporal import ROWS, Row, pairs
from minilazy.conformance.suite.util import explain


def _marks(row: Row, *rules: str) -> list[Any]:
    marks = [pytest.mark.spec(*(rules or (row.rule,))), pytest.mark.ops(*row.ops)]
    return marks + ([pytest.mark.requires(*row.needs)] if row.needs else [])


def _id(*parts: str) -> str:
    return ":".join(parts).replace(" ", "_")


def _declared(adapter: OptionalAdapter, row: Row) -> list[str]:
    """The row's settings whose dtypes the adapter declares (the others skip)."""
    def allowed(setting: str) -> bool:
        return not any(undeclared(adapter, d) for s, d in row.dtypes if s in ("", setting))

    found = [s for s in row.settings if allowed(s)]
    if len(found) < 2:
        pytest.skip(f"{adapter.name} declares the dtypes of fewer than two settings of "
                    f"{row.name!r}")
    return found


IN_ONE_PROCESS = [pytest.param(row.name, first, second, marks=_marks(row),
                               id=_id(row.name, first, "then", second))
                  for row in ROWS.values() for first, second in pairs(row, lambda s: True)]


@pytest.mark.parametrize("name, first, second", IN_ONE_PROCESS)
def test_one_structure_reached_again_with_a_property_changed(
        adapter: OptionalAdapter, name: str, first: str, second: str) -> None:
    row = ROWS[name]
    settings = _declared(adapter, row)
    if first not in settings or second not in settings:
        pytest.skip(f"{adapter.name} does not declare the dtype of {first!r} or {second!r}")
    explain(f"{row.name}: reached under {first!r}, then under {second!r} ({row.rule})")
    row.check(first, 1, row.reach(adapter, first, 1), "reached first")
    row.check(second, 2, row.reach(adapter, second, 2), f"reached after {first!r}")


ACROSS_PROCESSES = [pytest.param(row.name, marks=_marks(row, "LZ-CACHE-008"), id=_id(row.name))
                    for row in ROWS.values() if row.processes]


def _in_a_process(lazy_impl: str, row: Row, plan: list[tuple[str, str, int]]
                  ) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "minilazy.conformance.oracle.temporal",
                           lazy_impl, row.name, json.dumps(plan)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"the process failed:\n{done.stderr[-3000:]}"
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("name", ACROSS_PROCESSES)
def test_a_program_kept_across_processes_is_reused_only_where_it_applies(
        adapter: OptionalAdapter, lazy_impl: str, name: str, tmp_path: Path) -> None:
    """Process 1 reaches setting ``i`` in directory ``i``; process 2 the next setting there.

    (And the previous one, in other directories, with three settings or more.) Each from a
    cold in-memory cache: every ordered pair of settings meets on disk.
    """
    row = ROWS[name]
    settings = _declared(adapter, row)
    n = len(settings)
    cycles = [(i, (i + 1) % n) for i in range(n)] + [(i, (i - 1) % n) for i in range(n) if n > 2]
    dirs = [str(tmp_path / f"cache{k}") for k in range(len(cycles))]
    first = [(d, settings[i], 1) for d, (i, _) in zip(dirs, cycles)]
    second = [(d, settings[j], 2) for d, (_, j) in zip(dirs, cycles)]
    explain(f"{row.name}: process 1 reaches {[s for _, s, _ in first]}, process 2 "
            f"{[s for _, s, _ in second]} in the same cache directories ({row.rule})")
    for plan, when in ((first, "in process 1"), (second, "in process 2, after process 1")):
        results = _in_a_process(lazy_impl, row, plan)
        for k, (_, setting, seed) in enumerate(plan):
            got = results[str(k)]
            assert isinstance(got, dict), f"{row.name} {setting!r} {when} raised:\n{got}"
            values = [np.asarray(v, dtype) for v, dtype in zip(got["values"], got["dtypes"])]
            row.check(setting, seed, values, f"{when} (directory {k})")
