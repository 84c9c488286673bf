"""kubectl's connection flags: the same set on every command that talks to a cluster, and
their values parsed as kubectl parses them (no cluster needed: usage errors come first)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from conftest import Run

from kschedctl.base.errors import UsageError
from kschedctl.cli import app
from kschedctl.cli.kube import Kube, request_timeout, verbosity_level

CONNECTION = (
    "--kubeconfig", "--context", "--cluster", "--user", "--server", "--certificate-authority",
    "--insecure-skip-tls-verify", "--token", "--request-timeout", "--verbosity",
)  # fmt: skip
IMPERSONATION = ("--as", "--as-group")


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    if hasattr(group, "commands"):  # a group (typer's click, not necessarily click's)
        for name, sub in group.commands.items():
            yield from commands(sub, (*path, name))
    else:
        yield " ".join(path), group


def flags(command: Any) -> set[str]:
    return {opt for param in command.params for opt in getattr(param, "opts", [])}


CLUSTER_COMMANDS = sorted(
    (name, command)
    for name, command in commands(typer.main.get_command(app))
    if "--kubeconfig" in flags(command) and not name.startswith("scheduler")
)


def test_the_cluster_commands_are_found() -> None:
    names = [name for name, _ in CLUSTER_COMMANDS]
    for expected in ("list", "status", "logs", "remove", "why", "events", "snapshot", "deploy"):
        assert expected in names


@pytest.mark.parametrize(
    ("name", "command"), CLUSTER_COMMANDS, ids=[n for n, _ in CLUSTER_COMMANDS]
)
def test_every_cluster_command_has_kubectls_connection_flags(name: str, command: Any) -> None:
    offered = flags(command)
    missing = [f for f in CONNECTION if f not in offered]
    assert not missing, f"{name} lacks {missing}"
    assert {"-v", "--v", "-s"} <= offered
    if name in ("deploy", "diff"):  # their --as names the form deployed, as render's does
        assert "--as-group" not in offered
    else:
        assert set(IMPERSONATION) <= offered


@pytest.mark.parametrize(
    ("text", "seconds"),
    [(None, None), ("0", 0.0), ("5", 5.0), ("30s", 30.0), ("1m", 60.0), ("1m30s", 90.0),
     ("500ms", 0.5)],
    ids=["absent", "zero-no-limit", "bare-seconds", "30s", "1m", "1m30s", "500ms"],
)  # fmt: skip
def test_request_timeout_takes_kubectls_syntax(text: str | None, seconds: float | None) -> None:
    assert request_timeout(text) == seconds


@pytest.mark.parametrize("text", ["soon", "-1s", "1x", ""])
def test_a_bad_request_timeout_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as info:
        request_timeout(text)
    assert "--request-timeout" in info.value.message and info.value.hint


@pytest.mark.parametrize(("text", "level"), [(None, 0), ("6", 6), ("=6", 6), ("10", 10)])
def test_verbosity_levels(text: str | None, level: int) -> None:
    assert verbosity_level(text) == level


def test_contradicting_tls_flags_are_refused() -> None:
    with pytest.raises(UsageError, match="contradict"):
        Kube(certificate_authority="/ca.crt", insecure_skip_tls_verify=True).overrides()


def test_impersonation_reaches_the_overrides() -> None:
    overrides = Kube(as_user="jane", as_group=("a", "b"), token="t").overrides()
    assert (overrides.impersonate, overrides.impersonate_groups) == ("jane", ("a", "b"))
    assert overrides.token == "t" and overrides.request_timeout is None


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--request-timeout", "soon"), "invalid --request-timeout 'soon'"),
        (("-v", "loud"), "-v loud: the log level is a whole number"),
        (("--as-group", "g"), "--as-group needs --as"),
    ],
    ids=["timeout", "verbosity", "group-without-user"],
)
def test_bad_connection_flags_exit_2_before_connecting(
    run: Run, args: tuple[str, ...], needle: str
) -> None:
    result = run("list", *args)
    assert result.exit_code == 2, result.output
    assert needle in result.stderr and "hint:" in result.stderr
    assert result.stdout == ""


NAMESPACED_READS = ("list", "status", "logs", "top nodes", "remove", "why", "events")


@pytest.mark.parametrize("name", NAMESPACED_READS)
def test_every_namespaced_read_has_the_same_n_and_a(name: str) -> None:
    command = dict(CLUSTER_COMMANDS)[name]
    by_flag = {opt: param for param in command.params for opt in getattr(param, "opts", [])}
    reference = dict(CLUSTER_COMMANDS)["events"].params
    ref = {opt: param for param in reference for opt in getattr(param, "opts", [])}
    for flag in ("-n", "--namespace", "-A", "--all-namespaces"):
        assert flag in by_flag, f"{name} lacks {flag}"
        assert by_flag[flag].help == ref[flag].help  # one declaration: the same help
    assert set(by_flag["-n"].opts) == {"-n", "--namespace"}


def test_a_wins_over_n() -> None:
    from kschedctl.cli.options import namespace_scope

    assert namespace_scope("team", True) is None
    assert namespace_scope("team", False) == "team"
    assert namespace_scope(None, False) is None
