"""`why`, `events` and `logs` argument handling: usage errors exit 2 before any connection."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Run
from test_offline_imports import _loaded


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["why"], "name one pod, or pass --all"),
        (["why", "p", "--all"], "name one pod, or pass --all"),
        (["why", "p", "-A"], "-A/--all-namespaces goes with --all"),
        (["why", "p", "-o", "wide"], "unknown output format 'wide'"),
        (["events", "--since", "5x"], "invalid --since '5x'"),
        (["events", "--types", "Error"], "unknown event type 'Error'"),
        (["events", "--for", "pod/"], "use KIND/NAME"),
        (["events", "-o", "csv"], "unknown output format 'csv'"),
        (["logs", "s", "--since", "yesterday"], "invalid --since 'yesterday'"),
        (["logs", "s", "--grep", "("], "invalid --grep expression '('"),
        (
            ["logs", "s", "--grep", r"(a)\1"],
            "backreferences and group conditionals are not supported",
        ),
        (["logs", "s", "--grep", "(?<=a)b"], "lookahead and lookbehind are not supported"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_usage_errors(run: Run, args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stdout == ""


def test_since_names_the_accepted_format(run: Run) -> None:
    result = run("events", "--since", "10 minutes")
    assert result.exit_code == 2
    assert "hint: use a duration like 30s, 10m, 2h, 1h30m or 2d" in result.stderr


@pytest.mark.parametrize("args", [["why", "p"], ["events"], ["logs", "s"]], ids=" ".join)
def test_no_cluster_is_exit_4(run: Run, args: list[str]) -> None:
    result = run(*args)  # KUBECONFIG points at a missing file (tests/conftest.py)
    assert result.exit_code == 4
    assert "kubeconfig" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("command", ["why", "events", "logs"])
def test_help_does_not_import_kubernetes(command: str, tmp_path: Path) -> None:
    assert _loaded([command, "--help"], tmp_path) == ""
