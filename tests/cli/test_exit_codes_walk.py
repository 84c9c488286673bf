"""One walk over every command: a missing input file is exit 5 and an unknown flag exit 2
everywhere (README "Exit codes"), and stderr names the problem and what to do."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from conftest import Run

from kschedctl.cli import app

FIXTURES = Path(__file__).parent.parent / "fixtures" / "simulate"
MISSING = "missing-input.yaml"


def leaves(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    if hasattr(group, "commands"):  # a group (typer's click, not necessarily click's)
        for name, sub in group.commands.items():
            yield from leaves(sub, (*path, name))
    else:
        yield " ".join(path), group


COMMANDS = dict(leaves(typer.main.get_command(app)))
# The words a command needs before the flag under test (its required arguments).
REQUIRED = {
    "deploy": ["ws", "--as", "deployment"],
    "diff": ["ws", "--as", "deployment"],
    "remove": ["mine"],
    "history": ["mine"],
    "rollback": ["mine"],
    "status": ["mine"],
    "logs": ["mine"],
    "why": ["--all"],
    "scheduler run": ["--name", "mine"],
    "simulate": ["cluster.yaml", "--scheduler", "spread.yaml"],
    "render": ["mine", "--as", "config"],
    "validate": ["ws"],
    "create": ["ws2"],
    "schema": ["spec"],
}
# Every option or argument that reads a file the user names, beside --certificate-authority
# (every cluster command: checked below for each of them).
INPUT_FILES = {
    "validate": ["validate", MISSING],
    "validate --kube-scheduler": ["validate", "ws", "--kube-scheduler", MISSING],
    "render": ["render", MISSING, "--as", "config"],
    "render --add-to": ["render", "mine", "--as", "config", "--add-to", MISSING],
    "deploy": ["deploy", MISSING, "--as", "deployment"],
    "diff": ["diff", MISSING, "--as", "deployment"],
    "simulate": ["simulate", MISSING, "--scheduler", "spread.yaml"],
    "simulate --scheduler": ["simulate", "cluster.yaml", "--scheduler", MISSING],
    "simulate --workload": ["simulate", *REQUIRED["simulate"], "--workload", MISSING],
    "why --plugin": ["why", "--all", "--plugin", MISSING.replace(".yaml", ".py")],
    "scheduler run --plugin": ["scheduler", "run", "--name", "mine", "--plugin", "missing.py"],
    "scheduler run --policy": ["scheduler", "run", "--name", "mine", "--policy", MISSING],
    "lab up --nodes-file": ["lab", "up", "--nodes-file", MISSING, "--dir", "lab"],
}
CLUSTER_COMMANDS = sorted(
    name
    for name, command in COMMANDS.items()
    if any("--certificate-authority" in getattr(p, "opts", []) for p in command.params)
)


@pytest.fixture
def workdir(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("cluster.yaml", "spread.yaml"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    assert run("create", "ws").exit_code == 0

    def no_lab(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a lab was started for inputs that should have been refused")

    monkeypatch.setattr("kschedctl.ops.simulate.simulate", no_lab)
    return tmp_path


def assert_names_problem_and_fix(stderr: str, needle: str) -> None:
    assert stderr.startswith("error:") or "Error" in stderr, stderr
    assert needle in stderr, stderr
    assert "hint:" in stderr or " -h' for help" in stderr, stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize("case", sorted(INPUT_FILES))
def test_a_missing_input_file_is_exit_5(run: Run, workdir: Path, case: str) -> None:
    args = INPUT_FILES[case]
    missing = next(a for a in args if a.startswith("missing"))
    result = run(*args)
    assert result.exit_code == 5, (case, result.stderr)
    assert_names_problem_and_fix(result.stderr, missing)
    assert "hint:" in result.stderr
    assert result.stdout == "" or case == "validate"  # validate lists it as a problem too


@pytest.mark.parametrize("name", CLUSTER_COMMANDS)
def test_a_missing_certificate_authority_is_exit_5_before_connecting(
    run: Run, workdir: Path, name: str
) -> None:
    args = REQUIRED.get(name) or name.split()
    words = args if args[: len(name.split())] == name.split() else [*name.split(), *args]
    result = run(*words, "--certificate-authority", "missing-ca.crt")
    assert result.exit_code == 5, (name, result.stderr)
    assert "--certificate-authority missing-ca.crt: no such file" in result.stderr
    assert "hint: pass the path of the CA certificate" in result.stderr


def test_the_file_inputs_listed_are_every_input_file_option() -> None:
    # an option whose metavar says it reads a file is in INPUT_FILES (or is an output)
    outputs = {"--export", "--report", "--output-file", "--dir", "--bin-dir", "--lab-dir",
               "--manifests-dir", "--root", "--kubeconfig", "--certificate-authority"}  # fmt: skip
    listed = " ".join(INPUT_FILES)
    for name, command in COMMANDS.items():
        for param in command.params:
            flag = next((o for o in getattr(param, "opts", []) if o.startswith("--")), None)
            metavar = str(param.metavar or "")
            if flag and flag not in outputs and any(w in metavar for w in ("FILE", "PATH", "SPEC")):
                assert f"{name} {flag}" in listed or f"{name.split()[0]} {flag}" in listed, (
                    name,
                    flag,
                )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_unknown_flag_is_exit_2(run: Run, name: str) -> None:
    result = run(*name.split(), "--no-such-flag")
    assert result.exit_code == 2, (name, result.stderr)
    assert_names_problem_and_fix(result.stderr, "--no-such-flag")
    assert f"kschedctl {name} -h" in result.stderr
    assert result.stdout == ""
