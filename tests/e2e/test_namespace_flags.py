"""-n/--namespace and -A/--all-namespaces on the namespaced reads (list, status, logs,
top nodes, remove) against the lab: one meaning everywhere, -A winning over -n."""

from __future__ import annotations

import json
from pathlib import Path

from e2e_helpers import create_and_bind, run, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab


def names(stdout: str, namespace: str | None = None) -> list[str]:
    return [
        item["metadata"]["name"]
        for item in json.loads(stdout)["items"]
        if namespace is None or item["metadata"].get("namespace") == namespace
    ]


def same_listing(lab: Lab, cwd: Path, *flags: str, namespace: str | None = None) -> bool:
    """`list FLAGS` names the schedulers a plain `list` names (in ``namespace``), both read
    now: other tests' schedulers may still be going away in the lab this test shares."""
    everywhere = run(lab, "list", "-o", "json", cwd=cwd)
    chosen = run(lab, "list", *flags, "-o", "json", cwd=cwd)
    assert everywhere.returncode == 0 and chosen.returncode == 0, chosen.stderr
    return names(chosen.stdout) == names(everywhere.stdout, namespace)


def test_list_status_and_logs_keep_to_one_namespace(
    lab: Lab, namespace: str, tmp_path: Path
) -> None:
    everywhere = run(lab, "list", "-o", "json", cwd=tmp_path)
    assert everywhere.returncode == 0, everywhere.stderr
    assert "default-scheduler" in names(everywhere.stdout)
    wait_for(
        lambda: same_listing(lab, tmp_path, "-n", "kube-system", namespace="kube-system"),
        60, "list -n kube-system to name the schedulers in kube-system",
    )  # fmt: skip
    elsewhere = run(lab, "list", "-n", namespace, cwd=tmp_path)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert f"no scheduler found in namespace {namespace}" in elsewhere.stderr
    wait_for(lambda: same_listing(lab, tmp_path, "-n", namespace, "-A"), 60, "-A to win over -n")

    for command in (("status", "default-scheduler"), ("logs", "default-scheduler", "--tail", "1")):
        missed = run(lab, *command, "-n", namespace, cwd=tmp_path)
        assert missed.returncode == 5, missed.stderr
        assert f"in namespace {namespace} (it runs in kube-system)" in missed.stderr
        assert "hint:" in missed.stderr
        found = run(lab, *command, "-n", namespace, "-A", cwd=tmp_path)
        assert found.returncode == 0, found.stderr
    status = run(
        lab, "status", "default-scheduler", "-n", "kube-system", "-o", "json", cwd=tmp_path
    )
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["scheduler"]["namespace"] == "kube-system"


def test_top_nodes_counts_one_namespaces_pods(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    bound = create_and_bind(cluster, namespace, ["a", "b"], "default-scheduler")

    def pods_by_node(*args: str) -> dict[str, int]:
        done = run(lab, "top", "nodes", "-o", "json", *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return {
            item["metadata"]["name"]: item["requested"]["pods"]
            for item in json.loads(done.stdout)["items"]
        }

    ours = pods_by_node("-n", namespace)
    expected = {node: list(bound.values()).count(node) for node in set(bound.values())}
    assert {node: count for node, count in ours.items() if count} == expected
    assert sum(pods_by_node("-n", "no-such-namespace").values()) == 0
    # read back to back until the lab holds still: other tests' pods may still be going away
    wait_for(lambda: pods_by_node("-n", namespace, "-A") == pods_by_node(), 60, "-A to win over -n")
    every = pods_by_node()
    assert all(every[node] >= count for node, count in ours.items())


def test_remove_keeps_to_its_namespace(lab: Lab, namespace: str, tmp_path: Path) -> None:
    name = "ns-flag-scheduler"
    assert run(lab, "create", name, "-n", namespace, cwd=tmp_path).returncode == 0
    try:
        deployed = run(
            lab, "deploy", name, "--as", "deployment", "--no-verify", "-n", namespace,
            cwd=tmp_path,
        )  # fmt: skip
        assert deployed.returncode == 0, deployed.stderr
        wrong = run(lab, "remove", name, "-n", "kube-system", cwd=tmp_path)
        assert wrong.returncode == 5, wrong.stderr
        assert f"in namespace 'kube-system' (it is in {namespace})" in wrong.stderr
        assert "hint: pass -n with the namespace it is in" in wrong.stderr
        listed = run(lab, "list", "-n", namespace, "-o", "json", cwd=tmp_path)
        assert names(listed.stdout) == [name]
        removed = run(lab, "remove", name, "-n", namespace, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
