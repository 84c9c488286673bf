"""The documented exit codes (README "Exit codes"), produced in one place: KschedGroup."""

from __future__ import annotations

import os
import signal
import time

import pytest
import typer
from typer.testing import CliRunner

from kschedctl import __version__
from kschedctl.base.errors import (
    EXIT_FINDINGS,
    ClusterError,
    KschedError,
    NotFoundError,
    Problem,
    SpecError,
    UsageError,
    WorseError,
)
from kschedctl.base.signals import TERMINATING, Terminated
from kschedctl.cli import KschedGroup, app


def _app(exc: BaseException | None = None, code: int | None = None) -> typer.Typer:
    demo = typer.Typer(cls=KschedGroup, pretty_exceptions_enable=False)

    @demo.command()
    def boom() -> None:
        if exc is not None:
            raise exc
        if code is not None:
            raise typer.Exit(code)

    @demo.command()
    def other() -> None:  # a second command keeps "boom" a subcommand
        pass

    return demo


@pytest.mark.parametrize(
    ("exc", "code", "stderr"),
    [
        (KschedError("it broke", hint="try again"), 1, "error: it broke\nhint: try again\n"),
        (UsageError("bad flags"), 2, "error: bad flags\n"),
        (
            SpecError("spec.replicas", "must be 1", source="s.yaml"),
            3,
            "error: s.yaml: spec.replicas: must be 1\n",
        ),
        (ClusterError("connection refused"), 4, "error: connection refused\n"),
        (NotFoundError("no such scheduler"), 5, "error: no such scheduler\n"),
        (
            WorseError("b leaves 3 more pods unschedulable"),
            7,
            "error: b leaves 3 more pods unschedulable\n",
        ),
        (KeyboardInterrupt(), 130, "interrupted\n"),
        (Terminated(signal.SIGTERM), 143, "terminated by SIGTERM\n"),
        (Terminated(signal.SIGHUP), 129, "terminated by SIGHUP\n"),
    ],
)
def test_errors_become_messages_and_exit_codes(exc: BaseException, code: int, stderr: str) -> None:
    result = CliRunner().invoke(_app(exc), ["boom"])
    assert result.exit_code == code
    assert result.stderr == stderr
    assert result.stdout == ""


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_terminating_signal_cleans_up_like_ctrl_c(signum: int, code: int) -> None:
    # What a command started is stopped on the way out (simulate's lab, a child process).
    demo = typer.Typer(cls=KschedGroup, pretty_exceptions_enable=False)
    stopped = []

    @demo.command()
    def start() -> None:
        try:
            os.kill(os.getpid(), signum)
            time.sleep(30)  # interrupted at once: signals reach the main thread
        finally:
            stopped.append("the lab")

    @demo.command()
    def other() -> None:
        pass

    # the dispositions a command starts with, not the test session's (tests/conftest.py)
    session = {sig: signal.signal(sig, signal.SIG_DFL) for sig in TERMINATING}
    try:
        result = CliRunner().invoke(demo, ["start"])
    finally:
        for sig, handler in session.items():
            signal.signal(sig, handler)
    assert (result.exit_code, result.stderr) == (
        code,
        f"terminated by {signal.Signals(signum).name}\n",
    )
    assert stopped == ["the lab"]


def test_findings_and_ok() -> None:
    assert CliRunner().invoke(_app(code=EXIT_FINDINGS), ["boom"]).exit_code == 6
    assert CliRunner().invoke(_app(), ["boom"]).exit_code == 0


def test_bugs_are_not_swallowed() -> None:
    result = CliRunner().invoke(_app(RuntimeError("bug")), ["boom"])
    assert isinstance(result.exception, RuntimeError)


def test_spec_error_lists_every_problem() -> None:
    err = SpecError.from_problems(
        [Problem("spec.a", "one", "s.yaml"), Problem("spec.b", "two", "s.yaml")]
    )
    assert err.message == "s.yaml has 2 problems:\n  s.yaml: spec.a: one\n  s.yaml: spec.b: two"
    assert err.exit_code == 3
    assert (err.path, err.source) == ("spec.a", "s.yaml")


def test_version_and_help() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["--version"])
    assert (result.exit_code, result.stdout) == (0, f"kschedctl {__version__}\n")
    result = runner.invoke(app, ["-h"])
    assert result.exit_code == 0
    for command in ("create", "render", "validate"):
        assert command in result.stdout
        sub = runner.invoke(app, [command, "-h"])
        assert sub.exit_code == 0 and "Usage" in sub.stdout
