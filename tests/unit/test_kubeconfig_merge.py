"""kubeconfig loading and merging follows client-go's clientcmd rules (plain dicts)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kschedctl.base.errors import ClusterError, NotFoundError
from kschedctl.kubeclient.kubeconfig import (
    Overrides,
    kubeconfig_paths,
    merge_kubeconfigs,
    read_kubeconfigs,
    section_names,
    select,
)


def cluster(name: str, server: str, **extra: str) -> dict:
    return {"name": name, "cluster": {"server": server, **extra}}


def user(name: str, **fields: object) -> dict:
    return {"name": name, "user": dict(fields)}


def context(name: str, cluster: str, user: str = "", namespace: str | None = None) -> dict:
    body = {"cluster": cluster, "user": user}
    if namespace:
        body["namespace"] = namespace
    return {"name": name, "context": body}


def by_name(merged: dict, section: str) -> dict:
    return {e["name"]: e for e in merged[section]}


A = (
    "/cfg/a",
    {
        "current-context": "ctx-a",
        "clusters": [cluster("shared", "https://a"), cluster("only-a", "https://only-a")],
        "users": [user("admin", token="token-a")],
        "contexts": [context("ctx-a", "shared", "admin"), context("both", "shared", "admin")],
    },
)
B = (
    "/cfg/b",
    {
        "current-context": "ctx-b",
        "clusters": [cluster("shared", "https://b"), cluster("only-b", "https://only-b")],
        "users": [user("admin", token="token-b"), user("bob", token="bob")],
        "contexts": [context("both", "only-b", "bob"), context("ctx-b", "only-b", "bob", "team")],
    },
)


def test_first_file_wins_per_name_and_other_names_are_added() -> None:
    merged = merge_kubeconfigs([A, B])
    clusters = by_name(merged, "clusters")
    assert clusters["shared"]["cluster"]["server"] == "https://a"
    assert set(clusters) == {"shared", "only-a", "only-b"}
    assert by_name(merged, "users")["admin"]["user"]["token"] == "token-a"
    assert by_name(merged, "contexts")["both"]["context"]["cluster"] == "shared"
    assert section_names(merged, "contexts") == ["ctx-a", "both", "ctx-b"]


def test_order_of_files_decides() -> None:
    merged = merge_kubeconfigs([B, A])
    assert by_name(merged, "clusters")["shared"]["cluster"]["server"] == "https://b"
    assert merged["current-context"] == "ctx-b"


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("ctx-a", "ctx-b", "ctx-a"),  # the first file that sets it wins (not the last)
        ("", "ctx-b", "ctx-b"),  # an empty value does not count as set
        (None, "ctx-b", "ctx-b"),
        (None, None, None),
    ],
    ids=["first-wins", "empty-skipped", "unset-skipped", "none"],
)
def test_current_context_first_non_empty_wins(first, second, expected) -> None:
    one = {"current-context": first} if first is not None else {}
    two = {"current-context": second} if second is not None else {}
    merged = merge_kubeconfigs([("/x/1", one), ("/x/2", two)])
    assert merged.get("current-context") == expected


def test_last_entry_of_a_name_wins_inside_one_file() -> None:
    data = {"clusters": [cluster("c", "https://1"), cluster("c", "https://2")]}
    assert merge_kubeconfigs([("/f", data)])["clusters"] == [cluster("c", "https://2")]


def test_relative_paths_resolve_against_the_defining_files_directory() -> None:
    first = (
        "/etc/kube/a.yaml",
        {
            "clusters": [cluster("c", "https://c", **{"certificate-authority": "pki/ca.crt"})],
            "users": [
                user(
                    "u",
                    **{
                        "client-certificate": "u.crt",
                        "client-key": "../keys/u.key",
                        "tokenFile": "/abs/token",
                        "exec": {"command": "./bin/helper", "apiVersion": "v1"},
                    },
                ),
                user("p", exec={"command": "gke-gcloud-auth-plugin"}),
            ],
        },
    )
    second = ("/home/me/b.yaml", {"users": [user("v", tokenFile="tok")]})
    merged = merge_kubeconfigs([first, second])
    ca = by_name(merged, "clusters")["c"]["cluster"]["certificate-authority"]
    assert ca == "/etc/kube/pki/ca.crt"
    users = by_name(merged, "users")
    assert users["u"]["user"]["client-certificate"] == "/etc/kube/u.crt"
    assert users["u"]["user"]["client-key"] == "/etc/keys/u.key"
    assert users["u"]["user"]["tokenFile"] == "/abs/token"
    assert users["u"]["user"]["exec"]["command"] == "/etc/kube/bin/helper"
    # a command looked up on PATH stays as is
    assert users["p"]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert users["v"]["user"]["tokenFile"] == "/home/me/tok"


def test_malformed_entries_are_skipped() -> None:
    data = {"clusters": [None, "x", {"cluster": {}}, cluster("ok", "https://ok")], "users": "no"}
    merged = merge_kubeconfigs([("/f", data)])
    assert section_names(merged, "clusters") == ["ok"]
    assert merged["users"] == []


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (f"/a{os.pathsep}{os.pathsep}/b{os.pathsep}/a", ["/a", "/b"]),
        ("/only", ["/only"]),
        ("", ["/home/u/.kube/config"]),
    ],
    ids=["list-empty-and-duplicate-skipped", "one", "unset-default"],
)
def test_paths_from_the_environment(env: str, expected: list[str]) -> None:
    assert kubeconfig_paths(None, {"KUBECONFIG": env}, home="/home/u") == expected


def test_explicit_path_is_the_only_file() -> None:
    assert kubeconfig_paths("/x", {"KUBECONFIG": "/a:/b"}) == ["/x"]


def test_missing_files_in_the_list_are_ignored_but_explicit_is_an_error(tmp_path: Path) -> None:
    present = tmp_path / "present"
    present.write_text(yaml.safe_dump({"current-context": "x"}))
    empty = tmp_path / "empty"
    empty.write_text("")
    loaded = read_kubeconfigs([str(tmp_path / "missing"), str(present), str(empty)], explicit=False)
    assert loaded == [(str(present), {"current-context": "x"}), (str(empty), {})]
    with pytest.raises(ClusterError, match="does not exist"):
        read_kubeconfigs([str(tmp_path / "missing")], explicit=True)


@pytest.mark.parametrize("text", ["a: [", "- just\n- a list\n"], ids=["bad-yaml", "not-mapping"])
def test_unreadable_kubeconfig_is_a_cluster_error(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "bad"
    bad.write_text(text)
    with pytest.raises(ClusterError, match="kubeconfig"):
        read_kubeconfigs([str(bad)], explicit=False)


def test_select_current_context_and_its_namespace() -> None:
    chosen = select(merge_kubeconfigs([B, A]))
    assert (chosen.context, chosen.namespace, chosen.cluster) == ("ctx-b", "team", "only-b")
    config = chosen.config
    assert config["current-context"] == "ctx-b"
    assert [c["name"] for c in config["clusters"]] == ["only-b"]
    assert [u["name"] for u in config["users"]] == ["bob"]


def test_select_defaults_namespace_to_default_and_honours_n() -> None:
    merged = merge_kubeconfigs([A, B])
    assert select(merged).namespace == "default"
    assert select(merged, context="ctx-b").namespace == "team"
    assert select(merged, context="ctx-b", namespace="other").namespace == "other"


def test_select_cluster_and_user_overrides() -> None:
    merged = merge_kubeconfigs([A, B])
    chosen = select(merged, context="ctx-a", cluster="only-b", user="bob")
    assert chosen.cluster == "only-b"
    body = chosen.config["contexts"][0]["context"]
    assert (body["cluster"], body["user"]) == ("only-b", "bob")
    assert chosen.config["users"] == [user("bob", token="bob")]


def test_unknown_context_lists_the_contexts_found() -> None:
    merged = merge_kubeconfigs([A, B])
    with pytest.raises(NotFoundError) as info:
        select(merged, context="nope")
    assert "'nope'" in info.value.message
    assert "'ctx-a', 'both', 'ctx-b'" in (info.value.hint or "")


def test_the_list_of_contexts_in_an_error_is_bounded() -> None:
    data = {"contexts": [context(f"c{i}", "x") for i in range(40)]}
    with pytest.raises(NotFoundError) as info:
        select(merge_kubeconfigs([("/f", data)]), context="nope")
    assert "and 30 more" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"context": "ctx-a", "cluster": "nope"}, "cluster 'nope' not found"),
        ({"context": "ctx-a", "user": "nope"}, "user 'nope' not found"),
    ],
    ids=["cluster", "user"],
)
def test_unknown_override_is_not_found(kwargs: dict, match: str) -> None:
    with pytest.raises(NotFoundError, match=match):
        select(merge_kubeconfigs([A]), **kwargs)


def test_no_current_context_is_a_cluster_error_naming_the_contexts() -> None:
    with pytest.raises(ClusterError) as info:
        select(merge_kubeconfigs([("/f", {"contexts": [context("one", "x")]})]))
    assert "'one'" in (info.value.hint or "")


def test_cluster_override_without_any_context() -> None:
    merged = merge_kubeconfigs([("/f", {"clusters": [cluster("c", "https://c")]})])
    chosen = select(merged, cluster="c")
    assert chosen.cluster == "c" and chosen.namespace == "default"


# -- kubectl's connection flags (Overrides) -----------------------------------------------------


def test_server_ca_and_token_flags_replace_the_kubeconfigs_values() -> None:
    merged = merge_kubeconfigs([("/f", {
        "current-context": "c",
        "clusters": [cluster("k", "https://k", **{"certificate-authority-data": "Q0E="})],
        "users": [user("u", **{"client-certificate": "/u.crt", "client-key": "/u.key"})],
        "contexts": [context("c", "k", "u", "team")]})])  # fmt: skip
    chosen = select(
        merged,
        overrides=Overrides(server="https://s:6443", certificate_authority="/ca.crt", token="t"),
    )
    assert chosen.config["clusters"] == [
        cluster("k", "https://s:6443", **{"certificate-authority": "/ca.crt"})
    ]
    # the token replaces the client certificate: the server sees the token's identity
    assert chosen.config["users"] == [user("u", token="t")]
    assert (chosen.context, chosen.namespace) == ("c", "team")


def test_insecure_flag_drops_the_kubeconfigs_ca() -> None:
    merged = merge_kubeconfigs([("/f", {
        "current-context": "c",
        "clusters": [cluster("k", "https://k", **{"certificate-authority": "/ca.crt"})],
        "contexts": [context("c", "k")]})])  # fmt: skip
    chosen = select(merged, overrides=Overrides(insecure_skip_tls_verify=True))
    assert chosen.config["clusters"] == [
        cluster("k", "https://k", **{"insecure-skip-tls-verify": True})  # type: ignore[arg-type]
    ]


def test_server_flag_needs_no_kubeconfig_entry() -> None:
    chosen = select(merge_kubeconfigs([]), overrides=Overrides(server="https://s", token="t"))
    assert chosen.config["clusters"] == [cluster("kschedctl-server", "https://s")]
    assert chosen.config["users"] == [user("kschedctl-token", token="t")]
    assert chosen.namespace == "default"
    # --cluster NAME still has to name a cluster the kubeconfig has
    with pytest.raises(NotFoundError, match="cluster 'nope' not found"):
        select(merge_kubeconfigs([]), cluster="nope", overrides=Overrides(server="https://s"))


def test_no_overrides_keep_the_entries_as_they_are() -> None:
    merged = merge_kubeconfigs([A, B])
    assert select(merged) == select(merged, overrides=Overrides())
