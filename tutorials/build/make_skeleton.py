"""Make the student skeleton from minilazy's own modules: your starting point for the course.

``python tutorials/build/make_skeleton.py mywork`` writes ``mywork/core/`` (a copy of
``minilazy/core``, the engine's reading path), ``mywork/autodiff/tape.py`` and
``mywork/parts/tapes.py``: minilazy's own code, in which the body of every function an assignment
asks for (:data:`ASSIGNMENTS`) is replaced by ``raise NotImplementedError("assignment N: see chapter
N, Title")``, its signature and docstring kept. The grader loads your copies in place of the
installed modules, so the rest of minilazy (the op families, the array API, the hardening parts)
runs on your engine.

The answer key is minilazy itself: the engine is public, and so is every solution. Reading
``src/minilazy/core`` before you write is allowed; the grader grades what you wrote.
``--from N`` stubs assignments N and later only (a class that starts at chapter N).
"""

from __future__ import annotations

import argparse
import ast
import functools
import shutil
import sys
import tempfile
from pathlib import Path

import minilazy
from minilazy.conformance.grade.overlay import functions

PACKAGE = Path(minilazy.__file__).resolve().parent
MODULES = [*sorted(p.name for p in (PACKAGE / "core").glob("*.py") if p.name != "__init__.py")]

# Each assignment: its title (the chapter's), and the functions it asks for, as module:name.
ASSIGNMENTS: dict[int, tuple[str, tuple[str, ...]]] = {
    1: ("Record ops", ("core/tracer.py:record", "core/infer.py:broadcast_shapes",
                       "core/infer.py:binary")),
    2: ("Live tensors and barriers", ("core/state.py:Registry.tensors", "core/tracer.py:value",
                                      "core/barrier.py:mark_step", "core/barrier.py:sync")),
    3: ("Linearise and hash", ("core/cut.py:roots_of", "core/cut.py:_positions",
                               "core/cut.py:walk")),
    4: ("Lower to XLA and cache", ("core/lowering.py:program", "core/lowering.py:lower",
                                   "core/cache.py:CompileCache.lookup",
                                   "core/cache.py:CompileCache.compile")),
    5: ("Run, transfer, donate", ("core/runtime.py:to_device", "core/runtime.py:execute",
                                  "core/barrier.py:execute", "core/barrier.py:_settle")),
    6: ("Observations, auto-cut, eager mode", ("core/barrier.py:after_record",
                                               "core/state.py:live_pending_nodes")),
    7: ("Reverse-mode autodiff", ("autodiff/tape.py:_run_rules", "parts/tapes.py:take")),
}


def stubbed(module: str, first: int = 1) -> dict[str, tuple[int, str]]:
    """The functions of ``module`` (``core/cut.py``) to stub: name -> (assignment, title)."""
    return {spec.split(":")[1]: (n, title) for n, (title, specs) in ASSIGNMENTS.items()
            if n >= first for spec in specs if spec.split(":")[0] == module}


def stub(source: str, todo: dict[str, tuple[int, str]]) -> str:
    """``source`` with the body of each function in ``todo`` replaced by its stub."""
    lines = source.splitlines(keepends=True)
    cuts: list[tuple[int, int, str]] = []
    found = functions(ast.parse(source))
    for name, (n, title) in todo.items():
        fn = found[name]  # a KeyError here: the table names a function core no longer has
        first = fn.body[0]
        start = (first.end_lineno or first.lineno) if ast.get_docstring(fn) is not None \
            else first.lineno - 1  # after the docstring, which stays: the assignment's text
        text = " " * first.col_offset + \
            f'raise NotImplementedError("assignment {n}: see chapter {n}, {title}")'
        cuts.append((start, fn.end_lineno or fn.lineno, text + "\n"))
    for start, end, text in sorted(cuts, reverse=True):  # bottom up: line numbers stay valid
        lines[start:end] = [text]
    return "".join(lines)


def write(out: Path, first: int = 1) -> list[str]:
    """Write the skeleton into ``out`` (assignments ``first`` and later stubbed): what was done."""
    done = []
    for module in [f"core/{m}" for m in MODULES] + ["autodiff/tape.py", "parts/tapes.py"]:
        target = out / module
        target.parent.mkdir(parents=True, exist_ok=True)
        todo = stubbed(module, first)
        target.write_text(stub((PACKAGE / module).read_text(), todo))
        done.append(f"{module}: {len(todo)} stubs")
    return done


@functools.cache
def skeleton(first: int = 1) -> Path:
    """A fresh skeleton, assignments ``first`` and later stubbed (made once per process).

    What the course pages grade: chapter N shows what a student who wrote assignments 1 to
    N - 1 gets, ``skeleton(N)``.
    """
    out = Path(tempfile.mkdtemp(prefix="minilazy-skeleton-"))
    write(out, first)
    return out


def stubs(stage: int) -> list[str]:
    """The functions assignment ``stage`` asks for: ``module.name(signature)``, summary line."""
    found = []
    for spec in ASSIGNMENTS[stage][1]:
        module, name = spec.split(":")
        fn = functions(ast.parse((PACKAGE / module).read_text()))[name]
        doc = (ast.get_docstring(fn) or "").splitlines()[0]
        dotted = module.removesuffix(".py").replace("/", ".")
        found.append(f"{dotted}.{name}({ast.unparse(fn.args)})\n    {doc}")
    return found


def main(argv: list[str]) -> int:
    """``make_skeleton.py [FOLDER] [--from N]``: write the skeleton into FOLDER (``mywork``)."""
    parser = argparse.ArgumentParser(prog="python tutorials/build/make_skeleton.py",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", nargs="?", default="mywork", help="where (default: mywork)")
    parser.add_argument("--from", dest="first", type=int, default=1, choices=list(ASSIGNMENTS),
                        help="stub assignments N and later only (default: 1, all of them)")
    args = parser.parse_args(argv)
    out = Path(args.folder)
    if (out / "core").exists():
        print(f"{out / 'core'} exists: your work is not overwritten; pick another folder",
              file=sys.stderr)
        return 1
    try:
        print("\n".join(write(out, args.first)))
    except BaseException:
        shutil.rmtree(out / "core", ignore_errors=True)  # never half a skeleton
        raise
    print(f"wrote {out}: grade it with python -m minilazy.conformance.grade "
          f"--assignment {args.first} --path {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
