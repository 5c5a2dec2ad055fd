"""Generated mutants on trial: the project's own tests first, then the oracle.

Each mutant (:mod:`.generated`) runs in fresh processes with its module's source replaced: the
installed ``minilazy`` package is copied to a temporary folder, the one module is rewritten
there, and that folder goes first on ``PYTHONPATH`` (so every process the tests start, a
pytest-xdist worker included, imports the mutant). First a fast subset of the project's tests
that reach the module (:data:`PROJECT_TESTS`, ``-x``): a mutant they do not fail is not *kept*
(nothing the project checks changed: an equivalent mutant, or a hole of the project's tests,
not of the oracle's). A kept mutant then meets the oracle: the shipped suite, at the ci
profile's examples (unshrunk: whether it fails is the same), stopping at the first failure
(``-x``, SHOULD rules included: ``--lazy-strict``), with a time limit. It is *killed* when a
rule fails. A survivor is a hole in the oracle, or an equivalence: :mod:`.explained` lists each.

Needs a checkout of the project (its ``tests/`` folder); run from its root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from minilazy.conformance.mutate.explained import EXPLAINED
from minilazy.conformance.mutate.generated import TARGETS, Site, path_of, source_of

IMPL = "minilazy.conformance.adapters.minilazy_adapter:cpu"
# The project's tests run against a mutant of each module (longest prefix wins): those that
# reach it, a few seconds to a minute each, stopped at the first failure.
_BASIC = ("tests/core/test_laziness.py", "tests/core/test_cut.py")
PROJECT_TESTS: dict[str, tuple[str, ...]] = {
    "minilazy.core": (*_BASIC, "tests/core/test_lowering.py", "tests/core/test_shapes.py",
                      "tests/api/test_indexing.py"),
    "minilazy.ops.fft": (*_BASIC, "tests/fft/test_fft.py"),
    "minilazy.ops.conv": (*_BASIC, "tests/api/test_scans_and_windows.py"),
    "minilazy.api.fallback": (*_BASIC, "tests/api/test_fallback.py"),
    "minilazy.api.interop": (*_BASIC, "tests/api/test_numpy_protocols.py",
                              "tests/api/test_array_likes.py"),
    "minilazy.parts.refcounts": (*_BASIC, "tests/api/test_views.py",
                                 "tests/api/test_host_data.py", "tests/parts/test_refcounts.py"),
    "minilazy.parts.signals": (*_BASIC, "tests/core/test_barrier_faults.py"),
    "minilazy.ops.complex": (*_BASIC, "tests/ops/test_complex.py"),
    "minilazy.ops.integers": (*_BASIC, "tests/ops/test_int_edges.py",
                                   "tests/core/test_lowering.py"),
    "minilazy.autodiff": (*_BASIC, "tests/autodiff/test_autodiff.py",
                          "tests/autodiff/test_vjp_edges.py"),
    "minilazy.optim": (*_BASIC, "tests/nn/test_optim.py"),
    "minilazy.random": (*_BASIC, "tests/nn/test_random.py"),
    "minilazy.api.numpy_policy": (*_BASIC, "tests/api/test_numpy_protocols.py"),
    "minilazy.api.tensor": (*_BASIC, "tests/core/test_lowering.py", "tests/core/test_shapes.py",
                            "tests/api/test_indexing.py"),
    "minilazy.api.indexing": (*_BASIC, "tests/api/test_indexing.py"),
    "minilazy.api.methods": (*_BASIC, "tests/api/test_numpy_habits.py"),
    "minilazy.api.host": (*_BASIC, "tests/api/test_host_data.py",
                          "tests/api/test_array_likes.py"),
    "minilazy.api.scalars": (*_BASIC, "tests/ops/test_int_edges.py",
                             "tests/core/test_lowering.py"),
    "minilazy.api.axes": (*_BASIC, "tests/api/test_reductions.py", "tests/core/test_shapes.py"),
    "minilazy.parts": (*_BASIC, "tests/core/test_barrier_faults.py", "tests/core/test_limits.py"),
    "minilazy.scaleout.placement": (*_BASIC, "tests/scaleout/test_sharding.py"),
}
VERDICTS = ("killed", "survived", "not kept", "stillborn")


@dataclass(frozen=True)
class Trial:
    """What became of one generated mutant.

    Attributes:
        site: the mutant.
        verdict: ``killed`` (a rule of the oracle failed), ``survived`` (the oracle passed it),
            ``not kept`` (the project's tests pass it), ``stillborn`` (it does not import, or
            the site is gone from the source).
        rules: the oracle's failed rules.
        test: the first failing oracle test (or the project's, for a mutant not kept).
        seconds: the wall time of both runs.
        note: a short account of anything unusual (a time limit, a failed run).
    """

    site: Site
    verdict: str
    rules: tuple[str, ...] = ()
    test: str = ""
    seconds: float = 0.0
    note: str = ""

    @property
    def explained(self) -> str:
        """Why a survivor is not a hole of the oracle ('' for none, or not a survivor)."""
        return EXPLAINED.get(self.site.id, "") if self.verdict == "survived" else ""

    def to_json(self) -> dict[str, object]:
        """The trial as a JSON object (the results file's lines).

        Example:
            >>> s = Site("minilazy.optim", "sgd", "constant", "1", "2", 0, 3)
            >>> Trial(s, "killed", ("LZ-OPT-001",)).to_json()["verdict"]
            'killed'
        """
        return {**asdict(self), "id": self.site.id}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Trial:
        """The trial back from :meth:`to_json`."""
        return Trial(Site(**data["site"]), data["verdict"], tuple(data["rules"]), data["test"],
                     float(data["seconds"]), data["note"])


def project_tests(module: str) -> tuple[str, ...]:
    """The project's tests run against a mutant of ``module``.

    Example:
        >>> project_tests("minilazy.optim")[-1], project_tests("minilazy.core.cut")[0]
        ('tests/nn/test_optim.py', 'tests/core/test_laziness.py')
    """
    prefix = max((p for p in PROJECT_TESTS if module == p or module.startswith(p + ".")),
                 key=len)
    return PROJECT_TESTS[prefix]


def overlay(site: Site, folder: Path) -> Path:
    """Copy the installed package into ``folder`` with ``site``'s module mutated; the folder.

    Example:
        >>> import tempfile
        >>> from minilazy.conformance.mutate.generated import sites
        >>> s = sites("minilazy.optim")[0][0]
        >>> with tempfile.TemporaryDirectory() as d:
        ...     copy = overlay(s, Path(d))
        ...     (copy / "minilazy" / "optim.py").read_text() == source_of(s)
        True
    """
    package = path_of("minilazy").parent
    shutil.copytree(package, folder / "minilazy",
                    ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    relative = path_of(site.module).relative_to(package)
    (folder / "minilazy" / relative).write_text(source_of(site))
    return folder


def _env(copy: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HYPOTHESIS", "MINILAZY_IMPL", "COV_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(copy), env.get("PYTHONPATH", "")]))
    env["MINILAZY_CACHE_DIR"] = ""  # no persistent cache: a program compiled by the original
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(site: Site, root: Path, tests_timeout: float = 300, oracle_timeout: float = 900,
        oracle_options: Sequence[str] = ()) -> Trial:
    """Put ``site``'s mutant on trial (the module docstring says how); ``root``: the checkout."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="minilazy-mutant-") as tmp:
        try:
            copy = overlay(site, Path(tmp))
        except (LookupError, SyntaxError) as e:  # the source changed; or no valid mutant
            return Trial(site, "stillborn", note=str(e))
        env = {**_env(copy), "HYPOTHESIS_PROFILE": "ci"}
        load = subprocess.run([sys.executable, "-c", f"import minilazy, {site.module}"],
                              cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
        if load.returncode != 0:
            return Trial(site, "stillborn", seconds=time.perf_counter() - start,
                         note=load.stderr.strip().splitlines()[-1][:200])
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:xdist",
                   *project_tests(site.module)]
        try:
            done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                                  timeout=tests_timeout)
            changed = done.returncode != 0
            note = "" if done.returncode in (0, 1) else f"project tests exit {done.returncode}"
        except subprocess.TimeoutExpired:
            changed, note = True, f"project tests ran over {tests_timeout:.0f} s"
        if not changed:
            return Trial(site, "not kept", seconds=time.perf_counter() - start)
        return _oracle(site, copy, Path(tmp), start, oracle_timeout, oracle_options,
                       f"{note}; " if note else "")


def _oracle(site: Site, copy: Path, tmp: Path, start: float, timeout: float,
            options: Sequence[str], note: str) -> Trial:
    report = tmp / "report.json"
    command = [sys.executable, "-m", "minilazy.conformance", f"--lazy-impl={IMPL}",
               "--hypothesis-profile=ci-noshrink", "-x", "--lazy-strict", "-q",
               "-p", "no:xdist", f"--spec-report={report}", *options]
    try:
        done = subprocess.run(command, cwd=tmp, env=_env(copy), capture_output=True, text=True,
                              timeout=timeout)
        code, tail = done.returncode, (done.stdout + done.stderr)[-300:]
    except subprocess.TimeoutExpired:
        code, tail = -1, ""
        note += f"the oracle ran over {timeout:.0f} s; "
    seconds = time.perf_counter() - start
    data = json.loads(report.read_text()) if report.exists() else {"rules": {}, "failures": {}}
    failed = tuple(r for r, v in data["rules"].items() if v["status"] == "failed")
    first = min(data.get("failures", {}) or [""])
    if failed:
        return Trial(site, "killed", failed, first, seconds, note.rstrip("; "))
    if code not in (0, -1):  # the oracle refused it without a failing rule: killed, say how
        return Trial(site, "killed", (), "", seconds,
                     (note + f"oracle exit {code}: {' '.join(tail.split())[-150:]}"))
    return Trial(site, "survived", (), "", seconds, note.rstrip("; "))


def run_all(sites: Iterable[Site], root: Path, results: Path | None = None,
            oracle_timeout: float = 900) -> list[Trial]:
    """Try each site in turn (one process at a time); resume from and append to ``results``."""
    done: dict[str, Trial] = {}
    if results is not None and results.exists():
        for line in results.read_text().splitlines():
            trial = Trial.from_json(json.loads(line))
            done[trial.site.id] = trial
    trials, chosen = [], list(sites)
    for i, site in enumerate(chosen, 1):
        if site.id not in done:
            done[site.id] = run(site, root, oracle_timeout=oracle_timeout)
            if results is not None:
                with results.open("a") as f:
                    f.write(json.dumps(done[site.id].to_json()) + "\n")
            t = done[site.id]
            print(f"[{i}/{len(chosen)}] {t.verdict} {', '.join(t.rules[:3])} {t.seconds:.0f} s: "
                  f"{site.describe()} {t.note}", file=sys.stderr, flush=True)
        trials.append(done[site.id])
    return trials


def baseline(root: Path, modules: Iterable[str]) -> list[str]:
    """What the unmutated package fails: each test subset of ``modules``, then the oracle.

    A mutant is only kept by tests that pass without it, and killed by rules that pass without
    it: this must be empty.
    """
    env = {**_env(path_of("minilazy").parent.parent), "HYPOTHESIS_PROFILE": "ci"}
    failing = []
    for tests in sorted({project_tests(m) for m in modules}):
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", *tests],
                              cwd=root, env=env, capture_output=True, text=True)
        failing += [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    with tempfile.TemporaryDirectory() as tmp:
        trial = _oracle(Site("minilazy", "", "none", "", "", 0, 0),
                        path_of("minilazy").parent.parent, Path(tmp), time.perf_counter(),
                        3600, [], "")
    return failing + [f"oracle: {trial.rules} {trial.test} {trial.note}"] * (
        trial.verdict != "survived")


def main(count: int, seed: int, root: Path, results: Path | None = None,
         markdown: Path | None = None) -> int:
    """Draw ``count`` sites, try them, print the table; 1 if a survivor is not explained."""
    from minilazy.conformance.mutate.generated import every_site, sample

    chosen = sample(count, seed)
    if results is None or not results.exists():  # a resumed run checked it when it began
        failing = baseline(root, {s.module for s in chosen})
        if failing:
            print("The unmutated package fails:", *failing, sep="\n- ", file=sys.stderr)
            return 2
    found = run_all(chosen, root, results)
    lines = [f"{len(found)} generated mutants drawn at random (seed {seed}) from the "
             f"{sum(1 for _ in every_site())} sites of {', '.join(TARGETS)}; the oracle killed "
             f"{score(found):.0%} of those kept.", "", *table(found)]
    print("\n".join(lines))
    if markdown is not None:
        markdown.write_text("\n".join(lines) + "\n")
    return 0 if all(t.explained for t in found if t.verdict == "survived") else 1


def table(trials: Sequence[Trial]) -> list[str]:
    """The score per module and every survivor with its explanation, as Markdown lines.

    Example:
        >>> table([])[0]
        '| module | sites drawn | stillborn | not kept | kept | killed | survived | score |'
    """
    lines = ["| module | sites drawn | stillborn | not kept | kept | killed | survived | score |",
             "|---|---|---|---|---|---|---|---|"]
    by_module: dict[str, list[Trial]] = {}
    for t in trials:
        by_module.setdefault(t.site.module.removeprefix("minilazy."), []).append(t)
    for module, mine in [*sorted(by_module.items()), ("all", list(trials))]:
        n = {v: sum(t.verdict == v for t in mine) for v in VERDICTS}
        kept = n["killed"] + n["survived"]
        share = f"{n['killed'] / kept:.0%}" if kept else "-"
        name = f"**{module}**" if module == "all" else module
        lines.append(f"| {name} | {len(mine)} | {n['stillborn']} | {n['not kept']} | {kept} | "
                     f"{n['killed']} | {n['survived']} | {share} |")
    survivors = [t for t in trials if t.verdict == "survived"]
    if survivors:
        lines += ["", "Survivors:", ""]
        lines += [f"- `{t.site.id}` {t.site.describe()}: {t.explained or 'NOT EXPLAINED'}"
                  for t in survivors]
    return lines


def score(trials: Sequence[Trial]) -> float:
    """The share of kept mutants the oracle killed (1.0 when none was kept).

    Example:
        >>> score([])
        1.0
    """
    kept = [t for t in trials if t.verdict in ("killed", "survived")]
    return sum(t.verdict == "killed" for t in kept) / len(kept) if kept else 1.0
