"""`kschedctl diff`'s printing and flags (no cluster: what reaches one is tests/e2e/test_diff.py)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kschedctl.cli import app
from kschedctl.cli.diff_view import print_diff
from kschedctl.ops.diff import Change, DiffResult
from kschedctl.printers.unified import unified


def test_diff_lines_are_escaped_plain_data_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "app: \x1b]52;c;cm0gLXJmIH4=\x07\u202e"
    lines = unified("v1.ConfigMap.ns.c", "app: x\n", hostile + "\n")
    result = DiffResult("s", "pod", (
        Change("configmap/c -n ns", tuple(lines)),
        Change("pod/s -n ns", ("diff -u -N a b",), "replaced by deploy: …"),
    ))  # fmt: skip
    print_diff(result)
    out, err = capsys.readouterr()
    assert "\x1b" not in out and "\u202e" not in out  # escaped, and no colour when piped
    assert "+app: ^[]52;c;cm0gLXJmIH4=\\x07\\u202e" in out
    assert out.startswith("diff -u -N LIVE/v1.ConfigMap.ns.c MERGED/v1.ConfigMap.ns.c\n")
    assert "pod/s -n ns: replaced by deploy" in err and "no differences" not in err


def test_no_differences_is_said_on_stderr_only(capsys: pytest.CaptureFixture[str]) -> None:
    print_diff(DiffResult("s", "deployment", (Change("deployment/s -n ns", ()),)))
    out, err = capsys.readouterr()
    assert out == "" and "s (deployment): no differences" in err


@pytest.mark.parametrize(
    "args",
    [["diff", "s"], ["diff", "s", "--as-pod", "--as", "deployment"]],
    ids=["no form", "two forms"],
)
def test_a_form_is_required_once(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output


def test_deploy_diff_with_a_client_dry_run_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["deploy", "s", "--as-pod", "--diff", "--dry-run=client"])
    assert result.exit_code == 2 and "--dry-run=client never reads" in result.output
