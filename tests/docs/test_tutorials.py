"""The tutorials execute, end on their checkpoint, and the instructors' solutions solve them.

Each tutorial (``tutorials/NN_*.md``, a MyST notebook) runs in a fresh Python process, cell after
cell in one namespace, as its notebook kernel would run it in the docs build; its last printed
line must be its checkpoint. A fresh process per tutorial because the compile cache, the metrics,
the compile history and the XLA flags are per process, and the tutorials count compiles: no
tutorial may depend on another's state, and none does (each imports and builds all it uses).

What guarantees the fresh process, in both places:

- here, :func:`run_tutorial` starts a new interpreter (``subprocess.run``) per tutorial, in an
  empty temporary directory, with ``MINILAZY_DEBUG`` and ``XLA_FLAGS`` removed from its
  environment;
- in the docs build, ``docs/conf.py`` sets MyST-NB's ``nb_execution_mode = "force"``: every
  build executes every notebook with ``NotebookClientDirect``, which starts a new Jupyter kernel
  (a new process) for each notebook and shuts it down after, in the notebook's own directory; no
  execution cache is read. The kernel inherits the Sphinx process's environment as it is.

Counts are claims: a page must never print one number and say another. So every code cell that
prints a count (compiles, cache hits, executions, barriers, transfers, donations, nodes...) also
asserts it, right there, and both this driver and the docs build (``nb_execution_raise_on_error``)
fail on the first false one; :func:`test_every_cell_that_prints_counts_asserts_them` checks that
no such cell lacks an ``assert``.

Exercises: a cell tagged ``exercise`` holds a stub for the student, a cell tagged ``check`` tests
it and prints ``exercise ...: not solved yet`` while the stub is there. After the checkpoint the
driver runs ``tutorials/solutions/NN_*.py`` in the tutorial's namespace and every ``check`` cell
again, which must then print ``exercise ...: solved``.

Only the standard library and minilazy are needed (no Jupyter): CI runs this with ``.[test]``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = sorted((ROOT / "tutorials").glob("[0-9][0-9]_*.md"))
SOLUTIONS = ROOT / "tutorials" / "solutions"

# What each tutorial promises to print last: counts and facts, never timings.
CHECKPOINTS = {
    "00": "checkpoint 0: 100 steps, 1 compile, 99 cache hits; results match NumPy",
    "01": "checkpoint 1: 3 loop iterations recorded as 6 ops, 0 executions before the "
          "observation, 1 after",
    "02": "checkpoint 2: 6 nodes, 3 printers, 0 executions, round trip keeps the key: True",
    "03": "checkpoint 3: key stable across processes; 50 barriers, 1 compile, 49 cache hits",
    "04": "checkpoint 4: 20 steps, 20 executions of one program, 0 hidden syncs",
    "05": "checkpoint 5: 30 elementwise ops fuse into 1 kernel; data are parameters; float64 "
          "stays float64",
    "06": "checkpoint 6: 2 devices; an in-place update loop donated 5 of 5 buffers, 0 without "
          "donation",
    "07": "checkpoint 7: 200 training steps, 1 compile, 199 cache hits, test accuracy above 90%",
    "08": "checkpoint 8: .item() without mark_step: 10 compiles in 10 steps; with mark_step: "
          "0 compiles, 10 cache hits",
    "09": "checkpoint 9: the toy passes every rule checked; eager NumPy fails 3 laziness rules",
    "10": "checkpoint 10: 8 devices; data- and tensor-parallel steps match one device, 1 compile "
          "each; the gradient's HLO has an all-reduce; a layout change compiles (sharding); 2 "
          "host fallbacks counted",
    "11": "checkpoint 11: one Transformer step is 692 nodes, 1 compile then 5 cache hits; a new "
          "sequence length compiled (shape); padded, 0 compiles",
    "12": "checkpoint 12: forward and backward and optimizer recorded from aten ops; writes "
          "through 2 views reach their base; compiles per step [1, 1] then 0; losses equal "
          "PyTorch eager's",
}
# Tutorials that need an optional extra: the module each imports (skipped, saying why, without).
NEEDS = {"12": "torch"}

CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
OPTION = re.compile(r"^:(\w[\w-]*):[ \t]*(.*)$")
SEPARATOR = "\x1e"  # printed before each cell's output, then the cell's index

DRIVER = r"""
import json, sys, traceback
spec = json.load(sys.stdin)
namespace = {"__name__": "__main__"}

def run(i):
    cell = spec["cells"][i]
    print(f"\x1e{i}", flush=True)
    code = compile(cell["source"], f"<{spec['name']} cell {i}>", "exec")
    if "raises-exception" not in cell["tags"]:
        exec(code, namespace)
        return
    try:
        exec(code, namespace)
    except Exception:
        traceback.print_exc(limit=-1, file=sys.stdout)
    else:
        raise AssertionError(f"cell {i} is tagged raises-exception but raised nothing")

for i in range(len(spec["cells"])):
    run(i)
print("\x1esolutions", flush=True)
if spec["solution"]:
    with open(spec["solution"], encoding="utf-8") as f:
        exec(compile(f.read(), spec["solution"], "exec"), namespace)
    for i, cell in enumerate(spec["cells"]):
        if "check" in cell["tags"]:
            run(i)
"""


@dataclass(frozen=True)
class Cell:
    source: str
    tags: tuple[str, ...]


def cells(path: Path) -> list[Cell]:
    """The code cells of a MyST notebook, with their tags (``:tags: [a, b]`` option lines)."""
    found = []
    for match in CELL.finditer(path.read_text(encoding="utf-8")):
        lines = match.group(1).splitlines()
        tags: tuple[str, ...] = ()
        while lines and (option := OPTION.match(lines[0])):
            if option.group(1) == "tags":
                tags = tuple(t.strip() for t in option.group(2).strip("[] ").split(",") if t)
            lines.pop(0)
        found.append(Cell("\n".join(lines).strip("\n") + "\n", tags))
    return found


def run_tutorial(path: Path, tmp: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Run a tutorial, then its solution; each phase's output by cell index."""
    solutions = sorted(SOLUTIONS.glob(f"{path.stem[:2]}_*.py"))
    spec = {"name": path.stem, "cells": [vars(c) for c in cells(path)],
            "solution": str(solutions[0]) if solutions else None}
    env = {k: v for k, v in os.environ.items() if k not in ("MINILAZY_DEBUG", "XLA_FLAGS")}
    done = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(spec), text=True,
                          capture_output=True, cwd=tmp, env=env, timeout=300)
    assert done.returncode == 0, f"{path.name} failed:\n{done.stdout[-4000:]}\n{done.stderr}"
    student, _, solved = done.stdout.partition(f"{SEPARATOR}solutions\n")
    return _by_cell(student), _by_cell(solved)


def _by_cell(output: str) -> dict[str, str]:
    parts = output.split(SEPARATOR)[1:]
    return {p.partition("\n")[0]: p.partition("\n")[2] for p in parts}


def test_every_tutorial_has_a_checkpoint():
    assert TUTORIALS, "no tutorials found"
    assert sorted(p.stem[:2] for p in TUTORIALS) == sorted(CHECKPOINTS)


def test_every_solution_belongs_to_a_tutorial_with_exercises():
    for solution in SOLUTIONS.glob("*.py"):
        (tutorial,) = [p for p in TUTORIALS if p.stem[:2] == solution.stem[:2]]
        tags = {t for c in cells(tutorial) for t in c.tags}
        assert {"exercise", "check"} <= tags, f"{solution.name}: {tutorial.name} has no exercise"


# What a cell reads when it prints a count: the engine's counters, the tutorial-0 sketch's COUNT,
# an adapter's counters, the compile history, a graph's size.
COUNTS = re.compile(r"metrics\(\)|metrics_report\(\)|\bCOUNT\b|counters\(\)|compile_history\(\)|"
                    r"num_nodes")


def test_every_cell_that_prints_counts_asserts_them():
    unchecked = [f"{path.name} cell {i}" for path in TUTORIALS for i, cell in enumerate(cells(path))
                 if COUNTS.search(cell.source) and "print(" in cell.source
                 and "assert" not in cell.source]
    assert not unchecked, f"these cells print counts without asserting them: {unchecked}"


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs_to_its_checkpoint(path, tmp_path):
    if path.stem[:2] in NEEDS:
        pytest.importorskip(NEEDS[path.stem[:2]], reason=f"{path.name} needs the "
                            f"{NEEDS[path.stem[:2]]} extra: pip install 'minilazy[torch]'")
    student, solved = run_tutorial(path, tmp_path)
    last = [line for out in student.values() for line in out.splitlines() if line.strip()][-1]
    assert last == CHECKPOINTS[path.stem[:2]]
    checks = [str(i) for i, c in enumerate(cells(path)) if "check" in c.tags]
    for i in checks:
        assert "not solved yet" in student[i], f"cell {i}: the stub should not solve it"
        assert re.search(r"^exercise [^\n]*: solved$", solved[i], re.M), \
            f"cell {i} with the solution:\n{solved[i]}"
