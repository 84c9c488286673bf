"""`kschedctl completion SHELL` (the committed script of each shell) and `kschedctl version
--client` (offline; the server's part is tests/e2e/test_version.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from kschedctl import __version__, cli
from kschedctl.cli import completion_scripts
from kschedctl.model.config.versions import DEFAULT_VERSION, supported_minors

# what marks each shell's script: its completion registration
MARKS = {
    "bash": "complete -o default -F _kschedctl_completion kschedctl",
    "zsh": "#compdef kschedctl",
    "fish": "complete --command kschedctl",
    "powershell": "Register-ArgumentCompleter -Native -CommandName kschedctl",
}


@pytest.mark.parametrize("shell", sorted(completion_scripts.FILES))
def test_completion_prints_the_committed_script_of_each_shell(shell: str) -> None:
    result = CliRunner().invoke(cli.app, ["completion", shell], prog_name="kschedctl")
    assert result.exit_code == 0, result.output
    committed = completion_scripts.source_dir() / completion_scripts.FILES[shell]
    assert result.stdout == committed.read_text(encoding="utf-8")
    assert MARKS[shell] in result.stdout
    assert "_KSCHEDCTL_COMPLETE" in result.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_bash_script_completes_in_bash() -> None:
    # source the script, then ask its function for `kschedctl ver<TAB>` as bash would
    script = subprocess.run(
        [sys.executable, "-m", "kschedctl", "completion", "bash"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    driver = (
        f"{script}\nCOMP_WORDS=(kschedctl ver); COMP_CWORD=1; _kschedctl_completion kschedctl; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    out = subprocess.run(
        ["bash", "-c", driver], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.split() == ["version"]


def test_completion_refuses_an_unknown_shell_and_the_plugin_name() -> None:
    result = CliRunner().invoke(cli.app, ["completion", "tcsh"], prog_name="kschedctl")
    assert result.exit_code == 2
    assert "tcsh" in result.stderr and "See 'kschedctl completion -h' for help." in result.stderr
    result = CliRunner().invoke(cli.app, ["completion", "bash"], prog_name="kubectl sched")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: kubectl sched is completed by kubectl's own")
    assert "hint: kubectl completion bash" in result.stderr


def test_version_client_offline_in_each_format() -> None:
    runner = CliRunner()
    result = runner.invoke(cli.app, ["version", "--client"], prog_name="kschedctl")
    assert result.exit_code == 0
    minors = supported_minors()
    assert result.stdout == (
        f"Client Version: {__version__} (Kubernetes {minors[0]}–{minors[-1]}, "
        f"default {DEFAULT_VERSION})\n"
    )
    expected = {
        "clientVersion": {
            "version": __version__,
            "kubernetesVersions": {
                "oldest": minors[0], "newest": minors[-1], "default": DEFAULT_VERSION
            },
        }
    }  # fmt: skip
    result = runner.invoke(cli.app, ["version", "--client", "-o", "json"])
    assert json.loads(result.stdout) == expected
    result = runner.invoke(cli.app, ["version", "--client", "-o", "yaml"])
    assert yaml.safe_load(result.stdout) == expected
    result = runner.invoke(cli.app, ["version", "--client", "-o", "wide"])
    assert result.exit_code == 2


def test_version_without_a_cluster_says_so(tmp_path: object) -> None:
    result = CliRunner().invoke(cli.app, ["version"], env={"KUBECONFIG": "/nonexistent/kubeconfig"})
    assert result.exit_code not in (0, 1)  # a documented code, never a traceback
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.output
