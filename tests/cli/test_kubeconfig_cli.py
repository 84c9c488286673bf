"""The cluster commands choose their kubeconfig and context like kubectl (no cluster needed:
each case fails or is answered before a request is sent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from conftest import Run


def write(path: Path, data: dict) -> str:
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.fixture
def split_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Three files: a context only in the second, the current-context in the first."""
    first = write(
        tmp_path / "a",
        {
            "current-context": "ctx-a",
            "contexts": [{"name": "ctx-a", "context": {"cluster": "c", "user": "u"}}],
        },
    )
    second = write(
        tmp_path / "b",
        {
            "current-context": "ignored",
            "contexts": [
                {"name": "ctx-b", "context": {"cluster": "c", "user": "u", "namespace": "team"}}
            ],
        },
    )
    third = write(
        tmp_path / "c",
        {
            "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
        },
    )
    paths = [first, str(tmp_path / "missing"), "", second, third]
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(paths))
    return [first, second, third]


def test_unknown_context_is_exit_5_listing_the_contexts_of_every_file(
    run: Run, split_kubeconfig: list[str]
) -> None:
    result = run("list", "--context", "nope")
    assert result.exit_code == 5, result.output
    assert "error: context 'nope' not found in the kubeconfig" in result.stderr
    assert "hint: contexts found: 'ctx-a', 'ctx-b'" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--cluster", "nope", "cluster 'nope' not found"),
        ("--user", "nope", "user 'nope' not found"),
    ],
    ids=["cluster", "user"],
)
def test_unknown_cluster_or_user_override_is_exit_5(
    run: Run, split_kubeconfig: list[str], flag: str, value: str, message: str
) -> None:
    result = run("list", "--context", "ctx-b", flag, value)
    assert result.exit_code == 5, result.output
    assert message in result.stderr


def test_a_context_from_the_second_file_reaches_its_server(
    run: Run, split_kubeconfig: list[str]
) -> None:
    # the merged context, cluster and user are used: the request goes to the third file's server
    result = run("list", "--context", "ctx-b")
    assert result.exit_code == 4, result.output
    assert "https://127.0.0.1:1" in result.stderr


def test_explicit_kubeconfig_is_the_only_file_and_must_exist(
    run: Run, split_kubeconfig: list[str], tmp_path: Path
) -> None:
    result = run("list", "--kubeconfig", str(tmp_path / "absent"))
    assert result.exit_code == 4
    assert "does not exist" in result.stderr
    # the first file alone has no cluster "c": the other files are not read
    result = run("list", "--kubeconfig", split_kubeconfig[0])
    assert result.exit_code == 5
    assert "cluster 'c' for context 'ctx-a'" in result.stderr


def test_no_kubeconfig_anywhere_is_exit_4_naming_the_files(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "x"), str(tmp_path / "y")]))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    result = run("list")
    assert result.exit_code == 4
    assert "no kubeconfig found" in result.stderr and str(tmp_path / "y") in result.stderr
