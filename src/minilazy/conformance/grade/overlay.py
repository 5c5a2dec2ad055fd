"""A student's copy of minilazy's modules, overlaid on the package for a grading run.

The course (``tutorials/build``) has students write minilazy's own core: their folder holds
copies of its modules (``FOLDER/core/tracer.py`` is ``minilazy.core.tracer``,
``FOLDER/autodiff/tape.py`` is ``minilazy.autodiff.tape``, ``FOLDER/parts/tapes.py`` is
``minilazy.parts.tapes``) in which the functions of each
assignment start as stubs. :func:`overlay` builds a ``minilazy`` package that is the installed
one with those modules replaced; the grader puts it first on the oracle's ``PYTHONPATH``, so
the rest of minilazy (the op families, the array API, the parts) runs on the student's engine:
every op family registers into whatever core it finds. A plain package on the path, not an
import hook: the oracle's worker processes and pytest's own import hook find it as they find
any package.

Grading assignment ``N``, a stub of a *later* assignment (its body still
``raise NotImplementedError("assignment K: ...")`` with ``K > N``) is given: its body is taken
from the installed module, which is the answer key. Everything the student wrote, and every
stub of assignments 1 to ``N``, is graded as it is.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import minilazy

STUB = re.compile(r"assignment (\d+): see chapter")
INSTALLED = Path(minilazy.__file__).resolve().parent


def stub_of(fn: ast.FunctionDef) -> int | None:
    r"""The assignment whose stub ``fn``'s body still is, or None (it has been written).

    Example:
        >>> tree = ast.parse('def f():\n    "Doc."\n    raise NotImplementedError('
        ...                  '"assignment 3: see chapter 3, Hash")')
        >>> stub_of(tree.body[0]), stub_of(ast.parse("def g(): return 1").body[0])
        (3, None)
    """
    body = _body(fn)
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return None
    found = STUB.search(ast.unparse(body[0]))
    return int(found.group(1)) if found else None


def _body(fn: ast.FunctionDef) -> list[ast.stmt]:
    """``fn``'s statements after its docstring."""
    return fn.body[1:] if ast.get_docstring(fn) is not None else fn.body


def functions(tree: ast.AST) -> dict[str, ast.FunctionDef]:
    r"""Each function of a module by qualified name (``Class.method``).

    Example:
        >>> list(functions(ast.parse("class A:\n    def f(self): pass\ndef g(): pass")))
        ['A.f', 'g']
    """
    found: dict[str, ast.FunctionDef] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                found[prefix + child.name] = child
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(tree, "")
    return found


def given(student: str, key: str, assignment: int) -> str:
    r"""``student``'s module source with the later assignments' stubs filled from ``key``.

    Example:
        >>> stub = 'def f():\n    raise NotImplementedError("assignment 5: see chapter 5, X")\n'
        >>> given(stub, "def f():\n    return 1\n", 4)
        'def f():\n    return 1\n'
        >>> given(stub, "def f():\n    return 1\n", 5) == stub
        True
    """
    lines, answer = student.splitlines(keepends=True), key.splitlines(keepends=True)
    answers = functions(ast.parse(key))
    fills = []
    for name, fn in functions(ast.parse(student)).items():
        k = stub_of(fn)
        if k is not None and k > assignment and name in answers:
            body = _body(answers[name])
            fills.append((_body(fn)[0].lineno - 1, fn.end_lineno or fn.lineno,
                          answer[body[0].lineno - 1:answers[name].end_lineno]))
    for start, end, text in sorted(fills, reverse=True):  # bottom up: line numbers stay valid
        lines[start:end] = text
    return "".join(lines)


def overlay(folder: Path, assignment: int, out: Path) -> Path:
    r"""Build ``out/minilazy``: the installed package, with ``folder``'s modules in their places.

    Each ``folder/X/Y.py`` that is a module of the package replaces it (its later stubs given,
    :func:`given`); the rest of the package is linked, not copied. Returns ``out``: the folder
    to put first on ``PYTHONPATH``.

    Example:
        >>> import tempfile
        >>> mine = Path(tempfile.mkdtemp())
        >>> (mine / "core").mkdir()
        >>> _ = (mine / "core" / "metrics.py").write_text("# mine\n")
        >>> site = overlay(mine, 1, Path(tempfile.mkdtemp()))
        >>> (site / "minilazy" / "core" / "metrics.py").read_text()
        '# mine\n'
        >>> (site / "minilazy" / "core" / "ir.py").is_symlink()
        True
    """
    mine = {p.relative_to(folder) for p in folder.rglob("*.py")
            if (INSTALLED / p.relative_to(folder)).is_file()}
    replaced = {m.parent for m in mine}
    target = out / "minilazy"

    def link(source: Path, dest: Path, rel: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        for entry in source.iterdir():
            if entry.name == "__pycache__":
                continue
            here = rel / entry.name
            if here in mine:
                (dest / entry.name).write_text(
                    given((folder / here).read_text(), entry.read_text(), assignment))
            elif entry.is_dir() and any(here == r or here in r.parents for r in replaced):
                link(entry, dest / entry.name, here)
            else:
                (dest / entry.name).symlink_to(entry)

    shutil.rmtree(target, ignore_errors=True)
    link(INSTALLED, target, Path())
    return out
