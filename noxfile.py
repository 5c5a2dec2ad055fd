"""Developer sessions: nox -s tests typecheck lint docs demo."""

import nox

nox.options.sessions = ["tests", "typecheck", "lint"]


@nox.session
def tests(session: nox.Session) -> None:
    session.install(".[test]")
    session.run("pytest", "-q", "-n", "2", *session.posargs)


@nox.session
def typecheck(session: nox.Session) -> None:
    session.install(".[dev]")
    session.run("mypy", "--strict", "src/minilazy", "tools")


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", "src", "tests", "benchmarks", "spec", "tools", "examples",
                "noxfile.py")


@nox.session
def demo(session: nox.Session) -> None:
    session.install(".")
    session.run("python", "-m", "minilazy")
    session.run("python", "-m", "minilazy", "--model", "cnn")
    session.run("python", "-m", "minilazy", "--model", "transformer")


@nox.session
def docs(session: nox.Session) -> None:
    session.install(".[docs]")
    session.run("sphinx-build", "-W", "-b", "html", "docs", "docs/_build/html")


@nox.session
def benchmarks(session: nox.Session) -> None:
    """Side by side with the peers: nox -s benchmarks -- [--quick] [--systems ...] [--out DIR]."""
    session.install(".", "matplotlib")  # matplotlib for the plot: here only, not a dependency
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """The oracle on minilazy (CPU): nox -s conformance [-- --hypothesis-profile=thorough]."""
    session.install(".[test]")
    session.run("python", "-m", "minilazy.conformance",
                "--lazy-impl=minilazy.conformance.adapters.minilazy_adapter:cpu",
                "--hypothesis-profile=ci", "--spec-coverage",
                "--spec-report=conformance-minilazy-cpu.json", *session.posargs)


@nox.session
def toy_mutants(session: nox.Session) -> None:
    """Every mutant of the oracle's toy caught on exactly the rules it breaks (the suite checks
    two, drawn by MINILAZY_MUTANT_SEED): about five minutes on two cores."""
    session.install(".[test]")
    session.run("pytest", "-q", "-n", "2", "tests/conformance/test_conformance.py", "-k",
                "catches_each_mutant", env={"MINILAZY_ALL_MUTANTS": "1"})


@nox.session
def conformance_bare(session: nox.Session) -> None:
    """The oracle on core without its installed parts (no plans, donation, stages, signal
    safety, meshes or disk cache)."""
    session.install(".[test]")
    session.run("python", "-m", "minilazy.conformance",
                "--lazy-impl=minilazy.conformance.adapters.minilazy_adapter:bare",
                "--hypothesis-profile=ci", "--spec-coverage",
                "--spec-report=conformance-minilazy-bare.json", *session.posargs)


@nox.session
def device(session: nox.Session) -> None:
    """The one-shot accelerator check (backend matrix, models, benchmarks vs jax.jit): on a GPU
    machine install jax[cuda12] first (-- extras); on a CPU machine it skips, saying why."""
    session.install(".[test]", *session.posargs)
    session.run("python", "benchmarks/device.py")


@nox.session
def protocol(session: nox.Session) -> None:
    """The whole oracle through the process protocol's reference server, against in-process."""
    session.install(".[test]")
    session.run("pytest", "-q", "tests/conformance/test_protocol.py", "-k", "reference_server",
                env={"MINILAZY_PROTOCOL_RULES": "all"})


@nox.session
def mutate(session: nox.Session) -> None:
    """The oracle's mutation table and adequacy (which spec tests some mutant fails): the docs'.

    Every mutant (the catalogue and the families made by rule, about 330) against all of its
    own rules' tests; about 40 minutes on two cores. ``-- --full`` runs the whole suite on each.
    """
    session.install(".[test]")
    session.run("python", "-m", "minilazy.conformance.mutate", "--earned",
                "--markdown", "docs/_generated/mutation.md", *session.posargs)


@nox.session
def mutate_alone(session: nox.Session) -> None:
    """Each catalogue mutant against each rule it names, alone: every one must kill it (the
    docs' table of it). About an hour on two cores."""
    session.install(".[test]")
    session.run("python", "-m", "minilazy.conformance.mutate", "--catalogue", "--alone",
                "--jobs", "1", "--markdown", "docs/_generated/mutation_alone.md",
                *session.posargs)


@nox.session
def mutate_generated(session: nox.Session) -> None:
    """Mutants nobody chose: sites of the engine's source drawn at random, each tried on the
    project's tests, then the oracle (the docs' table). ``-- N [SEED]``: how many (default 24,
    about four hours on two cores, one at a time); results.jsonl lets a stopped run resume."""
    session.install(".[test]")
    given = list(session.posargs)
    count, seed = (given + ["24"])[0], (given[1:] + ["0"])[0]
    session.run("python", "-m", "minilazy.conformance.mutate", "--generated", count,
                "--seed", seed, "--results", "mutation-generated.jsonl",
                "--markdown", "docs/_generated/mutation_generated.md")


@nox.session
def conformance_reports(session: nox.Session) -> None:
    """The conformance matrix of the docs, remade: minilazy, its reference, the toy, tinygrad
    and MLX (the PyTorch peers have sessions of their own: conformance_ltc)."""
    session.install(".[test,torch]", "tinygrad", "mlx", "mlx-cpu")  # tinygrad also needs clang
    reports = "docs/_generated/reports"
    for name, impl, profile in [
            ("minilazy-cpu", "minilazy.conformance.adapters.minilazy_adapter:cpu", "ci"),
            ("minilazy-reference", "minilazy.conformance.adapters.reference_adapter:reference",
             "ci"),
            ("toy", "minilazy.conformance.mutate.toy:toy", "ci"),
            ("minilazy-pytorch", "minilazy.conformance.adapters.minilazy_pytorch:pytorch", "ci"),
            ("tinygrad-cpu", "minilazy.conformance.adapters.tinygrad_adapter:tinygrad",
             "quick"),
            ("mlx-cpu", "minilazy.conformance.adapters.mlx_adapter:mlx", "quick")]:
        session.run("python", "-m", "minilazy.conformance", f"--lazy-impl={impl}",
                    f"--hypothesis-profile={profile}", f"--spec-report={reports}/{name}.json",
                    "-q", success_codes=[0, 1])
    js = "src/minilazy/conformance/adapters/js"  # through Node: npm ci there first
    with session.chdir(js):
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
    for name, adapter in [("tfjs-cpu", "tfjs.mjs"), ("jax-js-wasm", "jaxjs.mjs")]:
        session.run("python", "-m", "minilazy.conformance", "--lazy-command",
                    f"node {js}/{adapter}", f"--spec-report={reports}/{name}.json", "-q",
                    success_codes=[0, 1])
    session.run("python", "tools/conformance_matrix.py",
                *(f"{reports}/{n}.json" for n in (
                    "minilazy-cpu", "minilazy-reference", "toy", "minilazy-pytorch",
                    "tinygrad-cpu", "mlx-cpu", "torch-lazy", "torch-xla", "tfjs-cpu",
                    "jax-js-wasm")),
                "--out", "docs/_generated/conformance.md", "--save-reports", reports)


@nox.session
@nox.parametrize("backend", ["ltc", "xla"])
def conformance_ltc(session: nox.Session, backend: str) -> None:
    """The oracle on PyTorch's lazy tensors: torch._lazy (ltc) and PyTorch/XLA (xla)."""
    # PyTorch/XLA pins its torch (DESIGN.md: torch 2.9.1 with torch_xla 2.9.0, about 6.5 GB).
    peers = ["torch==2.13.0"] if backend == "ltc" else ["torch==2.9.1", "torch_xla==2.9.0"]
    session.install(".[test]", *peers)
    session.run("python", "-m", "minilazy.conformance",
                f"--lazy-impl=minilazy.conformance.adapters.torch_lazy:{backend}",
                # no shrinking: the peers fail ~150 tests, and shrinking each takes minutes
                "--hypothesis-profile=ci-noshrink",
                f"--spec-report=conformance-torch-{backend}.json",
                *session.posargs, env={"PJRT_DEVICE": "CPU"})
