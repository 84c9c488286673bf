"""`kschedctl scheduler run`: refusals happen before any connection, with exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_offline_imports import _loaded


def test_a_bad_policy_is_refused_at_start_naming_the_problem(run, tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text(
        "apiVersion: kschedctl.io/v1alpha1\nkind: FallbackPolicy\nfallbacks:\n"
        "- name: spare\n  nodePool: {pool: spare}\n  tolerate: [{operator: Exists}]\n"
        "- name: spare\n  resources: {cpu: '1'}\n"
    )
    result = run("scheduler", "run", "--name", "mine", "--policy", "policy.yaml")
    assert result.exit_code == 3
    assert "error: policy.yaml has 3 problems:" in result.stderr
    assert "policy.yaml: fallbacks[0].tolerate[0].key: is required" in result.stderr
    assert (
        "policy.yaml: fallbacks[1].resources: resource requests are never relaxed" in result.stderr
    )
    assert "policy.yaml: fallbacks[1].name: 'spare' is used by an earlier step" in result.stderr
    assert "hint:" in result.stderr and result.stdout == ""


def test_a_missing_policy_file(run) -> None:
    result = run("scheduler", "run", "--name", "mine", "--policy", "nope.yaml")
    assert result.exit_code == 5  # a missing file, as in every command
    assert "nope.yaml: cannot read the policy" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "Bad_Name"], "--name 'Bad_Name': scheduler name"),
        (["--name", "default-scheduler"], "is the cluster's own scheduler"),
        (["--name", "mine", "--lease-name", "kube-scheduler"], "the default scheduler's lock"),
        (["--name", "mine", "--lease-duration", "5", "--renew-deadline", "10"], "lease timing: need leaseDuration > renewDeadline"),
        (["--name", "mine", "--qps", "0"], "--qps must be positive"),
    ],
)  # fmt: skip
def test_usage_errors(run, args: list[str], message: str) -> None:
    result = run("scheduler", "run", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_no_cluster_is_exit_4(run, tmp_path: Path) -> None:
    result = run("scheduler", "run", "--name", "mine", "--kubeconfig", str(tmp_path / "missing"))
    assert result.exit_code == 4
    assert "does not exist" in result.stderr


def test_help_does_not_load_the_client(tmp_path: Path) -> None:
    assert _loaded(["scheduler", "run", "--help"], tmp_path) == ""
