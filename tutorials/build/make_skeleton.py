"""Derive the student skeleton from the reference solution (instructors: rerun after an edit).

``python tutorials/build/make_skeleton.py`` rewrites ``skeleton/tinylazy`` from
``solution/tinylazy``: every function whose docstring has a line ``Assignment N, "Title": ...``
keeps its signature and docstring, and its body becomes
``raise NotImplementedError("assignment N: see chapter N, Title")``. Everything else (the given
infrastructure) is copied as it is. ``tests/conformance/test_course.py`` checks that the two stay in step.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOLUTION, SKELETON = HERE / "solution" / "tinylazy", HERE / "skeleton" / "tinylazy"
MARK = re.compile(r'^\s*Assignment (\d+), "([^"]+)":', re.MULTILINE)
NOTE = ('"""tinylazy, the student skeleton: every ``NotImplementedError`` is yours to write.\n\n'
        "Start with assignment 1 (``tutorials/build/README.md``); the grader says what passes.\n")


def assignment(fn: ast.FunctionDef) -> tuple[int, str] | None:
    """The assignment ``(number, title)`` a function's docstring names, if any."""
    found = MARK.search(ast.get_docstring(fn) or "")
    return (int(found.group(1)), found.group(2)) if found else None


def stub(source: str) -> str:
    """``source`` with the body of every assignment's function replaced by its stub."""
    lines = source.splitlines(keepends=True)
    cuts: list[tuple[int, int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and (found := assignment(node)):
            n, title = found
            doc = node.body[0]
            indent = " " * (doc.col_offset)
            text = f'{indent}raise NotImplementedError("assignment {n}: see chapter {n}, {title}")'
            cuts.append((doc.end_lineno or doc.lineno, node.end_lineno or node.lineno, text + "\n"))
    for start, end, text in sorted(cuts, reverse=True):  # bottom up: line numbers stay valid
        lines[start:end] = [text]
    return "".join(lines)


def main() -> int:
    """Write the skeleton; print what was stubbed."""
    SKELETON.mkdir(parents=True, exist_ok=True)
    for path in sorted(SOLUTION.glob("*.py")):
        text = stub(path.read_text())
        if path.name == "__init__.py":
            text = NOTE + text.split('"""', 2)[1].split("\n", 1)[1] + '"""' + \
                text.split('"""', 2)[2]
        (SKELETON / path.name).write_text(text)
        print(f"{path.name}: {len(MARK.findall(path.read_text()))} stubs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
