"""CLI tests run the real typer app in-process and look at exit code, stdout and stderr."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


@pytest.fixture
def why(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``explain`` answers with what ``found["pod"]`` / ``found["all"]`` hold; it keeps the
    options it was given in ``found["options"]``."""
    from kschedctl.ops.why import Explanation

    found: dict[str, Any] = {}
    monkeypatch.setattr("kschedctl.cli.why.connect", lambda *a: contextlib.nullcontext(object()))

    def explain(cluster: object, pod: str | None, **kw: Any) -> Explanation:
        found["options"] = kw
        if pod is not None:
            return Explanation(found["pod"], one_pod=True, namespace="default")
        return Explanation(found["all"], one_pod=False, namespace=kw.get("namespace"))

    monkeypatch.setattr("kschedctl.ops.why.explain_pods", explain)
    return found
