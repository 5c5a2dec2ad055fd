"""The course of ``tutorials/build``: students write minilazy's own core, graded by the oracle.

The skeleton is minilazy's core (and its tape) with the functions of each assignment stubbed,
made by ``make_skeleton.py`` (never committed: one copy of the code, minilazy's own). The answer
key, minilazy's modules copied unchanged into a student's folder, is graded as minilazy; each
assignment's stubs break a rule it grades; and the skeleton has core's modules, names and
signatures. Each oracle run is one fresh process, as a student runs the grader.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from minilazy.conformance.grade import LAST, grade, staged
from minilazy.conformance.grade.overlay import INSTALLED, functions, overlay, stub_of
from minilazy.conformance.registry import rules

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "tutorials" / "build"
sys.path.insert(0, str(BUILD))
import make_skeleton  # noqa: E402  (the course's command, a script beside the chapters)


def _make(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command a student runs."""
    return subprocess.run([sys.executable, str(BUILD / "make_skeleton.py"), str(out), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def mywork(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the skeleton, made by the command a student runs."""
    out = tmp_path_factory.mktemp("mywork")
    done = _make(out)
    assert done.returncode == 0 and "wrote" in done.stdout, done.stderr
    return out


def test_the_answer_key_is_minilazy_and_the_grader_runs_it_end_to_end(tmp_path: Path) -> None:
    # The key, overlaid, is the installed package file for file, so it passes every rule of
    # every assignment exactly when minilazy does (test_conformance's test_minilazy_conforms
    # runs every rule on it). Graded through the overlay, a rule of each assignment passes.
    make_skeleton.write(tmp_path / "key", first=LAST + 1)  # nothing stubbed
    site = overlay(tmp_path / "key", LAST, tmp_path / "site") / "minilazy"
    for module in _modules(tmp_path / "key"):
        assert (site / module).read_text() == (INSTALLED / module).read_text(), module
    sample = ("LZ-REC-001", "LZ-BAR-001", "LZ-HASH-002", "LZ-CACHE-001", "LZ-BAR-002",
              "LZ-BAR-009", "LZ-AD-004")  # one quick rule of each assignment
    assert sorted(rules()[r].stage for r in sample) == list(range(1, LAST + 1))
    g = grade(LAST, path=str(tmp_path / "key"), profile="quick", only=sample)
    assert g.report["implementation"]["name"] == "minilazy-cpu"
    assert g.passed == g.graded and set(g.graded) == set(sample), g.text()[-6000:]


@pytest.mark.parametrize("assignment", range(1, LAST + 1))
def test_each_assignments_stubs_break_a_rule_it_grades(assignment: int, tmp_path: Path) -> None:
    # The assignments before it written (minilazy's code), its own stubbed: graded at it, the
    # first failure is its stub's. (-x: the first failure is all this needs.)
    done = _make(tmp_path / "w", "--from", str(assignment))
    assert done.returncode == 0, done.stderr
    g = grade(assignment, path=str(tmp_path / "w"), profile="quick", extra=("-x",))
    failed = [r for r in g.graded if g.status(r) == "failed"]
    assert failed, g.text()[-3000:]
    first = g.report["rules"][failed[0]]["first_failure"]
    assert f"assignment {assignment}: see chapter {assignment}" in str(first), first


def _api(path: Path) -> dict[str, str]:
    """Each function and class of a module, with its signature."""
    api: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef):
                returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
                decorators = "".join(f"@{ast.unparse(d)} " for d in node.decorator_list)
                api[prefix + node.name] = f"{decorators}({ast.unparse(node.args)}){returns}"
            elif isinstance(node, ast.ClassDef):
                api[prefix + node.name] = "class"
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(path.read_text()).body, "")
    return api


def _modules(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))


def test_the_skeleton_is_cores_modules_with_their_names_and_signatures(mywork: Path) -> None:
    core = sorted(f"core/{p.name}" for p in (INSTALLED / "core").glob("*.py")
                  if p.name != "__init__.py")
    assert _modules(mywork) == sorted([*core, "autodiff/tape.py", "parts/tapes.py"])
    for name in _modules(mywork):
        assert _api(mywork / name) == _api(INSTALLED / name), name


def test_every_stub_keeps_its_docstring_and_raises_naming_its_assignment(mywork: Path) -> None:
    stages: set[int] = set()
    for n, (title, specs) in make_skeleton.ASSIGNMENTS.items():
        for spec in specs:
            module, name = spec.split(":")
            mine = functions(ast.parse((mywork / module).read_text()))[name]
            key = functions(ast.parse((INSTALLED / module).read_text()))[name]
            assert ast.get_docstring(mine) == ast.get_docstring(key), spec
            assert stub_of(mine) == n and stub_of(key) is None, spec
            raised = mine.body[-1]
            assert isinstance(raised, ast.Raise) and isinstance(raised.exc, ast.Call)
            assert ast.unparse(raised.exc) == \
                f"NotImplementedError('assignment {n}: see chapter {n}, {title}')"
            stages.add(n)
    assert stages == set(range(1, LAST + 1))
    stubbed = sum(stub_of(f) is not None for p in mywork.rglob("*.py")
                  for f in functions(ast.parse(p.read_text())).values())
    assert stubbed == sum(len(specs) for _, specs in make_skeleton.ASSIGNMENTS.values())


def test_every_assignment_grades_the_rules_of_its_stage() -> None:
    assert set(make_skeleton.ASSIGNMENTS) == set(range(1, LAST + 1))
    assert {rules()[r].stage for r in staged(LAST)} == set(make_skeleton.ASSIGNMENTS)


def test_the_skeleton_command_never_overwrites_work(mywork: Path) -> None:
    mine = mywork / "core" / "tracer.py"
    before = mine.read_text()
    done = _make(mywork)
    assert done.returncode == 1 and "not overwritten" in done.stderr
    assert mine.read_text() == before


def test_no_skeleton_and_no_second_engine_is_committed() -> None:
    try:
        tracked = subprocess.run(["git", "ls-files", "tutorials/build"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.split()
    except FileNotFoundError:
        tracked = []
    if not tracked:
        pytest.skip("not a git checkout (or no git)")
    assert [t for t in tracked if t.endswith(".py")] == \
        ["tutorials/build/bench.py", "tutorials/build/make_skeleton.py"]


def test_the_course_readme_shows_the_grader() -> None:
    text = (BUILD / "README.md").read_text()
    assert "python tutorials/build/make_skeleton.py mywork" in text
    assert "python -m minilazy.conformance.grade --assignment 1 --path mywork" in text
