"""One spelling per idea: deploy --as FORM (and its --as-FORM aliases), --dry-run like kubectl."""

from __future__ import annotations

import pytest
from conftest import Run

from kschedctl.cli.options import dry_run_mode
from kschedctl.cli.usage import BadChoice


def test_deploy_as_form_equals_its_alias(run: Run) -> None:
    # a client dry run prints what would be applied and contacts nothing
    spelled = run("deploy", "s1", "--as", "deployment", "--dry-run=client")
    alias = run("deploy", "s1", "--as-deployment", "--dry-run=client")
    both = run("deploy", "s1", "--as", "deployment", "--as-deployment", "--dry-run=client")
    assert spelled.exit_code == alias.exit_code == both.exit_code == 0, spelled.stderr
    assert spelled.stdout == alias.stdout == both.stdout
    assert "kind: Deployment" in spelled.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--as", "pod", "--as-deployment"], "--as pod and --as-deployment name different forms"),
        (["--as-pod", "--as-service"], "--as-pod and --as-service name different forms"),
        ([], "choose a form: --as pod|deployment|service|static-pod"),
    ],
)
def test_deploy_form_usage_errors(run: Run, args: list[str], message: str) -> None:
    result = run("deploy", "s1", *args, "--dry-run=client")
    assert result.exit_code == 2, result.output
    assert message in result.stderr and result.stdout == ""


def test_deploy_as_offers_the_deployable_forms_of_the_forms_table(run: Run) -> None:
    from kschedctl.render.forms import DEPLOY_FORMS

    result = run("deploy", "s1", "--as", "config")
    assert result.exit_code == 2
    for form in DEPLOY_FORMS:
        assert form in result.stderr


@pytest.mark.parametrize(
    ("value", "mode", "warns"),
    [
        ("none", "none", False),
        ("client", "client", False),
        ("server", "server", False),
        ("unchanged", "client", True),  # a bare --dry-run
        ("true", "client", True),
        ("false", "none", True),
    ],
)
def test_dry_run_values_as_kubectl(value: str, mode: str, warns: bool) -> None:
    got, warning = dry_run_mode(value)
    assert got == mode and (warning is not None) is warns


def test_a_bad_dry_run_value_is_kubectls_usage_error() -> None:
    with pytest.raises(
        BadChoice,
        match='Invalid dry-run value \\(maybe\\). Must be "none", "server", or "client".',
    ):
        dry_run_mode("maybe")


@pytest.mark.parametrize(
    "args",
    [
        ["s1", "--dry-run"],  # bare: client, deprecated, as kubectl
        ["--dry-run", "s1"],  # bare before the name: the name is not taken as its value
        ["s1", "--dry-run=client"],
        ["s1", "--dry-run", "client"],  # deploy's spelling so far keeps working
    ],
    ids=" ".join,
)
def test_deploy_dry_run_spellings(run: Run, args: list[str]) -> None:
    result = run("deploy", *args, "--as", "pod")
    assert result.exit_code == 0, result.stderr
    assert "kind: Pod" in result.stdout
    assert ("deprecated" in result.stderr) is (
        args.count("--dry-run") == 1 and "client" not in args
    )


@pytest.mark.parametrize(
    "args", [["s", "--dry-run"], ["s", "--dry-run=client"], ["s", "--dry-run=server"]], ids=" ".join
)
def test_remove_takes_dry_run_values(run: Run, args: list[str]) -> None:
    result = run("remove", *args)
    assert result.exit_code == 4, result.output  # parsed; then no cluster (missing kubeconfig)
    assert ("deprecated and can be replaced with --dry-run=client" in result.stderr) is (
        args[-1] == "--dry-run"
    )


def test_remove_refuses_a_bad_dry_run_value_before_connecting(run: Run) -> None:
    result = run("remove", "s", "--dry-run=yes")
    assert result.exit_code == 2 and "Invalid dry-run value (yes)" in result.stderr
