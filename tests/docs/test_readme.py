"""The README's example runs and prints what it claims."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).parents[2] / "README.md"


def test_readme_example_compiles_once_in_100_steps():
    """The README's training-loop example runs and prints the counts it claims (1 compile, 99
    cache hits): the documentation, not LZ-CACHE-001, which the suite checks."""
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    claimed = re.search(r"print\(.*\)\s+# (.*)", code).group(1)
    assert out.getvalue().strip() == claimed == "1 99"


def test_ci_runs_the_readme_test_command():
    test_line = next(line for line in README.read_text().splitlines()
                     if line.startswith("python3 -m venv") and "pytest" in line)
    assert test_line in (README.parent / ".ci" / "run").read_text().splitlines()


ROOT = README.parent
INTRODUCTION = ROOT / "docs" / "introduction.md"
NUMBERS = {"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
           "thirteen": 13, "fourteen": 14}


def _flat(path: pathlib.Path) -> str:
    return " ".join(path.read_text().split())  # sentences wrap anywhere


def test_the_readmes_step_times_are_the_benchmark_files():
    """The README quotes the harness's one-thread medians; they must be the file's figures."""
    import json
    results = json.loads((ROOT / "benchmarks" / "results" / "results.json").read_text())
    median = {r["workload"]: r["median"] for r in results["results"]
              if r["system"] == "minilazy" and r["threads"] == "one" and r["metric"] == "step"}
    text = _flat(README)
    for workload, name in (("model/cnn", "CNN"), ("model/transformer", "Transformer")):
        quoted = re.search(rf"a {name} step (?:took )?([\d.]+) ms", text)
        assert quoted, f"the README quotes no {name} step time"
        assert quoted.group(1) == f"{median[workload] * 1e3:.3g}", (name, median[workload])


def test_the_course_and_assignment_counts_are_the_files():
    from minilazy.conformance.grade import LAST
    text = _flat(README)
    parts = len(list((ROOT / "tutorials").glob("[0-9][0-9]_*.md")))
    course = re.search(r"a (\w+)-part course", text)
    assert course and NUMBERS[course.group(1)] == parts
    assignments = re.search(r"(\w+) assignments that write minilazy's core", text)
    assert assignments and NUMBERS[assignments.group(1)] == LAST


def test_the_graph_sizes_the_docs_quote_are_measured(capsys):
    """The introduction's node counts are what one step of each model records."""
    from minilazy.demo import models
    cnn, transformer = models.main_cnn(steps=1), models.main_transformer(steps=1)
    capsys.readouterr()
    quoted = re.search(r"its graph size \((\d+) nodes for the CNN's step, (\d+) for the "
                       r"Transformer's\)", _flat(INTRODUCTION))
    assert quoted and (int(quoted.group(1)), int(quoted.group(2))) == (cnn.nodes,
                                                                       transformer.nodes)
