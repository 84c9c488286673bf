"""A value a command checks against its choices itself is a usage error like a bad value of a
click choice (:func:`kschedctl.cli.usage.bad_choice`): exit 2, nothing on stdout, kubectl's
plain lines with the closest choice."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kschedctl import cli

CASES = {
    "create --program": (
        ["create", "x", "--program", "builtn"],
        'error: invalid value "builtn" for --program: one of kube-scheduler, builtin, custom',
        "Did you mean builtin?",
        "create",
    ),
    "top nodes --sort-by": (
        ["top", "nodes", "--sort-by", "cpux"],
        'error: invalid value "cpux" for --sort-by: one of name, cpu, memory, pods',
        "Did you mean cpu?",
        "top nodes",
    ),
    "remove --dry-run": (
        ["remove", "x", "--dry-run=serevr"],
        'error: Invalid dry-run value (serevr). Must be "none", "server", or "client".',
        "Did you mean server?",
        "remove",
    ),
    "deploy --dry-run": (
        ["deploy", "x", "--as", "pod", "--dry-run=cleint"],
        'error: Invalid dry-run value (cleint). Must be "none", "server", or "client".',
        "Did you mean client?",
        "deploy",
    ),
    "schema NAME": (
        ["schema", "spek"],
        'error: invalid value "spek" for spec|policy|snapshot: one of spec, policy, snapshot',
        "Did you mean spec?",
        "schema",
    ),
    "completion SHELL": (
        ["completion", "zhs"],
        'error: invalid value "zhs" for SHELL: one of bash, zsh, fish, powershell',
        "Did you mean zsh?",
        "completion",
    ),
}


@pytest.mark.parametrize(("args", "error", "mean", "command"), CASES.values(), ids=CASES)
@pytest.mark.parametrize("prog", ["kschedctl", "kubectl sched"])
def test_a_bad_choice_is_a_plain_usage_error_with_did_you_mean(
    args: list[str], error: str, mean: str, command: str, prog: str, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # create must write nothing anywhere that matters
    result = CliRunner().invoke(cli.app, args, prog_name=prog, env={"NO_COLOR": "1"})
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == [error, mean, f"See '{prog} {command} -h' for help."]
    assert list(tmp_path.iterdir()) == []


def test_no_close_choice_gives_no_guess() -> None:
    result = CliRunner().invoke(cli.app, ["completion", "qqqq"], env={"NO_COLOR": "1"})
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        'error: invalid value "qqqq" for SHELL: one of bash, zsh, fish, powershell',
        "See 'kschedctl completion -h' for help.",
    ]
