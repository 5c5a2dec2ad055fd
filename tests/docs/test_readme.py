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
