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
    session.run("mypy", "--strict", "src/minilazy")


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", "src", "tests", "benchmarks", "noxfile.py")


@nox.session
def demo(session: nox.Session) -> None:
    session.install(".")
    session.run("python", "-m", "minilazy")


@nox.session
def docs(session: nox.Session) -> None:
    session.install(".[docs]")
    session.run("sphinx-build", "-W", "-b", "html", "docs", "docs/_build/html")
