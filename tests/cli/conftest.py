"""CLI tests run the real typer app in-process and look at exit code, stdout and stderr."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from kschedctl.cli import app

Run = Callable[..., Result]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """Run kschedctl with ARGS in a fresh working directory (tmp_path)."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        result = runner.invoke(app, list(args), prog_name="kschedctl")
        # Unexpected exceptions are bugs: they must never hide behind an exit code.
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result

    return invoke
