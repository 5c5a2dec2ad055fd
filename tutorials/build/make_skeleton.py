"""Make the student skeleton from the reference solution: your starting point for the course.

``python tutorials/build/make_skeleton.py mywork`` writes ``mywork/tinylazy`` from
``solution/tinylazy``: every function whose docstring has a line ``Assignment N, "Title": ...``
keeps its signature and docstring, and its body becomes
``raise NotImplementedError("assignment N: see chapter N, Title")``. Everything else (the given
infrastructure) is copied as it is. The skeleton is made, never kept beside the solution: there
is one copy of the course's code (``tests/conformance/test_course.py`` grades what this makes).
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOLUTION = HERE / "solution" / "tinylazy"
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


def write(out: Path) -> list[str]:
    """Write the skeleton package ``out/tinylazy``; one line per module: what was stubbed."""
    target = out / "tinylazy"
    target.mkdir(parents=True, exist_ok=True)
    done = []
    for path in sorted(SOLUTION.glob("*.py")):
        text = stub(path.read_text())
        if path.name == "__init__.py":
            text = NOTE + text.split('"""', 2)[1].split("\n", 1)[1] + '"""' + \
                text.split('"""', 2)[2]
        (target / path.name).write_text(text)
        done.append(f"{path.name}: {len(MARK.findall(path.read_text()))} stubs")
    return done


@functools.cache
def skeleton() -> Path:
    """A folder holding a fresh skeleton (made once per process): what the course pages grade."""
    out = Path(tempfile.mkdtemp(prefix="tinylazy-skeleton-"))
    write(out)
    return out


def stubs(stage: int) -> list[str]:
    """The skeleton's functions that assignment ``stage`` asks for: signature, summary line."""
    found = []
    for path in sorted((skeleton() / "tinylazy").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(s, ast.Raise) and f"assignment {stage}:" in ast.unparse(s)
                    for s in node.body):
                doc = (ast.get_docstring(node) or "").splitlines()[0]
                found.append(f"{path.stem}.{node.name}({ast.unparse(node.args)})\n    {doc}")
    return found


def main(argv: list[str]) -> int:
    """``make_skeleton.py [FOLDER]``: write the skeleton into FOLDER (``mywork`` by default)."""
    if len(argv) > 1 or argv[:1] in (["-h"], ["--help"]):
        print(__doc__.splitlines()[0] + "\n\nusage: python tutorials/build/make_skeleton.py "
              "[FOLDER]   (default: mywork)", file=sys.stderr)
        return 2 if len(argv) > 1 else 0
    out = Path(argv[0] if argv else "mywork")
    if not sorted(SOLUTION.glob("*.py")):
        print(f"no solution in {SOLUTION}: the skeleton is made from it (instructors: make it in "
              "a minilazy checkout and hand out the folder)", file=sys.stderr)
        return 1
    if (out / "tinylazy").exists():
        print(f"{out / 'tinylazy'} exists: your work is not overwritten; pick another folder",
              file=sys.stderr)
        return 1
    print("\n".join(write(out)))
    print(f"wrote {out / 'tinylazy'}: grade it with python -m minilazy.conformance.grade "
          f"--assignment 1 --impl tinylazy.adapter:adapter --path {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
