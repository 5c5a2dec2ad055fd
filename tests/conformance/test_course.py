"""The course of ``tutorials/build``: students build LazyTensor themselves, graded by the oracle.

The reference solution passes every rule of every assignment; the student skeleton, made from
it by ``make_skeleton.py`` (never committed: one copy of the code), fails at least one rule of
each (so no assignment is done before it is written); and the two have the same modules, names
and signatures, with each stub raising ``NotImplementedError`` that names its assignment. Each
oracle run is one fresh process, as a student runs the grader.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minilazy.conformance.grade import LAST, staged
from minilazy.conformance.registry import rules

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "tutorials" / "build"
SOLUTION = BUILD / "solution"
MARK = re.compile(r'^\s*Assignment (\d+), "([^"]+)":', re.MULTILINE)


@pytest.fixture(scope="module")
def mywork(tmp_path_factory) -> Path:
    """A folder holding the skeleton, made by the command a student runs."""
    out = tmp_path_factory.mktemp("mywork")
    done = subprocess.run([sys.executable, str(BUILD / "make_skeleton.py"), str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "wrote" in done.stdout, done.stderr
    return out


def oracle(package: Path, tmp_path: Path) -> tuple[dict, str]:
    """Run the oracle on every staged rule, importing tinylazy from ``package``: report, tail."""
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    env["PYTHONPATH"] = os.pathsep.join([str(package), *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(
        [sys.executable, "-m", "minilazy.conformance", "--lazy-impl=tinylazy.adapter:adapter",
         f"--lazy-rules={','.join(staged(LAST))}", f"--spec-report={report}", "-q",
         "--hypothesis-profile=quick"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    tail = out.stdout[-6000:] + out.stderr[-3000:]
    assert report.exists(), tail
    return json.loads(report.read_text()), tail


def by_stage(report: dict) -> dict[int, dict[str, str]]:
    """The status of each staged rule, by assignment."""
    stages: dict[int, dict[str, str]] = {}
    for rid in staged(LAST):
        stages.setdefault(rules()[rid].stage, {})[rid] = report["rules"][rid]["status"]
    return stages


def test_the_solution_passes_every_rule_of_every_assignment(tmp_path: Path) -> None:
    report, tail = oracle(SOLUTION, tmp_path)
    assert report["implementation"]["name"] == "tinylazy"
    not_passed = {rid: status for stage in by_stage(report).values()
                  for rid, status in stage.items() if status != "passed"}
    assert not_passed == {}, tail


def test_the_skeleton_fails_a_rule_of_every_assignment(mywork: Path, tmp_path: Path) -> None:
    report, tail = oracle(mywork, tmp_path)
    for stage, statuses in sorted(by_stage(report).items()):
        assert "failed" in statuses.values(), f"assignment {stage} passes unwritten: {statuses}"


def _api(path: Path) -> dict[str, str]:
    """Each public function, class and method of a module, with its signature."""
    api: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
                decorators = "".join(f"@{ast.unparse(d)} " for d in node.decorator_list)
                api[prefix + node.name] = f"{decorators}({ast.unparse(node.args)}){returns}"
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                api[prefix + node.name] = "class"
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(path.read_text()).body, "")
    return api


def _modules(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "tinylazy").glob("*.py"))


def test_skeleton_and_solution_have_the_same_modules_names_and_signatures(mywork: Path) -> None:
    assert _modules(mywork) == _modules(SOLUTION)
    assert {"ir.py", "tracer.py", "barrier.py", "graph.py", "lowering.py", "runtime.py",
            "autodiff.py", "adapter.py"} <= set(_modules(SOLUTION))
    for name in _modules(SOLUTION):
        assert _api(mywork / "tinylazy" / name) == _api(SOLUTION / "tinylazy" / name), name


def _assignments(path: Path) -> dict[str, tuple[ast.FunctionDef, int]]:
    found = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            mark = MARK.search(ast.get_docstring(node) or "")
            if mark:
                found[node.name] = (node, int(mark.group(1)))
    return found


def test_every_stub_raises_not_implemented_naming_its_assignment(mywork: Path) -> None:
    stages: set[int] = set()
    for name in _modules(mywork):
        solution = _assignments(SOLUTION / "tinylazy" / name)
        skeleton = _assignments(mywork / "tinylazy" / name)
        assert set(skeleton) == set(solution), name
        for fn, (node, n) in skeleton.items():
            stages.add(n)
            assert len(node.body) == 2, f"{name}:{fn} is not a stub"
            doc = ast.get_docstring(node) or ""
            assert "LZ-" in doc, f"{name}:{fn}: the docstring names no rule"
            raised = node.body[1]
            assert isinstance(raised, ast.Raise) and isinstance(raised.exc, ast.Call)
            assert ast.unparse(raised.exc.func) == "NotImplementedError"
            message = raised.exc.args[0]
            assert isinstance(message, ast.Constant), f"{name}:{fn}"
            assert message.value.startswith(f"assignment {n}: see chapter {n}, "), message.value
    assert stages == set(range(1, LAST + 1))


def test_a_stub_raises_when_called(mywork: Path) -> None:
    code = ("import numpy as np\nfrom tinylazy.adapter import adapter\n"
            "a = adapter()\ntry:\n    a.apply('add', a.from_numpy(np.ones(2)), 1.0)\n"
            "except NotImplementedError as e:\n    print(e)\n")
    env = {**os.environ, "PYTHONPATH": str(mywork)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "assignment 1: see chapter 1, Record ops", out.stderr[-2000:]


def test_the_skeleton_command_never_overwrites_work(mywork: Path) -> None:
    mine = mywork / "tinylazy" / "tracer.py"
    before = mine.read_text()
    done = subprocess.run([sys.executable, str(BUILD / "make_skeleton.py"), str(mywork)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "not overwritten" in done.stderr
    assert mine.read_text() == before


def test_the_skeleton_command_refuses_without_the_solution(tmp_path: Path) -> None:
    # A copy of the command away from the solution (a student's own folder, say): it says why.
    command = tmp_path / "make_skeleton.py"
    command.write_text((BUILD / "make_skeleton.py").read_text())
    done = subprocess.run([sys.executable, str(command), str(tmp_path / "mywork")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "no solution" in done.stderr, done.stderr
    assert not (tmp_path / "mywork").exists()


def test_no_skeleton_is_committed_beside_the_solution() -> None:
    try:
        tracked = subprocess.run(["git", "ls-files", "tutorials/build"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.split()
    except FileNotFoundError:
        tracked = []
    if not tracked:
        pytest.skip("not a git checkout (or no git)")
    assert [t for t in tracked if t.endswith(".py") and "/solution/" not in t] == \
        ["tutorials/build/bench.py", "tutorials/build/make_skeleton.py"]


@pytest.mark.parametrize("path", ["README.md"])
def test_the_course_readme_shows_the_grader(path: str) -> None:
    text = (BUILD / path).read_text()
    assert "python tutorials/build/make_skeleton.py mywork" in text
    assert "python -m minilazy.conformance.grade --assignment 1" in text
