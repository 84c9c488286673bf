"""One command per task: ``nox -l`` lists them, ``nox -s NAME`` runs one.

Every session runs in the environment nox was started from (``pip install -e '.[test]'``
installs nox and everything the sessions need), so a session costs only its own work.
CONTRIBUTING.md says what to run when.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "none"
nox.options.sessions = ["lint", "types", "fast"]


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint and format check) and the import contracts: seconds."""
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lint-imports", "--no-cache")


@nox.session
def types(session: nox.Session) -> None:
    """mypy on the package (strict on the model block and the pure packages)."""
    session.run("mypy", "kschedctl")


@nox.session
def fast(session: nox.Session) -> None:
    """Every test that needs no Go-built binary, in parallel: about 2–3 minutes."""
    session.run("python", "-m", "pytest", "-m", "not lab", *session.posargs)


def _pytest_on_the_lab(session: nox.Session, *args: str) -> None:
    """pytest with ``args`` after ``kschedctl lab build`` (a no-op once the binaries are
    cached): the build is a step of its own, never inside a test's timeout."""
    session.run("kschedctl", "lab", "build")
    session.run("python", "-m", "pytest", *args, *session.posargs)


@nox.session
def e2e(session: nox.Session) -> None:
    """The tests on the real control plane (builds the lab binaries first if missing)."""
    _pytest_on_the_lab(session, "-m", "e2e")


@nox.session
def oracle(session: nox.Session) -> None:
    """validate against the lab's real kube-scheduler on the corpus (tests/oracle)."""
    _pytest_on_the_lab(session, "tests/oracle")


@nox.session
def scale(session: nox.Session) -> None:
    """The 500+ node / 1,000+ pod tests, left out of the README's test command."""
    _pytest_on_the_lab(session, "--scale")


@nox.session
def suite(session: nox.Session) -> None:
    """The README's test command: the whole suite but the scale tests."""
    _pytest_on_the_lab(session, "--durations=30")


@nox.session
def regen(session: nox.Session) -> None:
    """Every generator, then the drift tests (tools/regen.py; -- --pictures for the README's)."""
    session.run("python", "tools/regen.py", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """The docs against the code: links exist, headings are commands, generated pages and
    completions current, then the site (mkdocs build --strict, into site/)."""
    session.run(
        "python", "-m", "pytest", "-n", "0", "tests/unit/test_docs_links.py",
        "tests/cli/test_completions.py", *session.posargs,
    )  # fmt: skip
    session.run("mkdocs", "build", "--strict", env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session
def bench_suite(session: nox.Session) -> None:
    """Wall time per test file and per lab started (benchmarks/suite.py)."""
    session.run("python", "benchmarks/suite.py", *session.posargs)
