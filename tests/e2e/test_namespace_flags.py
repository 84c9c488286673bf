"""-n/--namespace and -A/--all-namespaces on the namespaced reads (list, status, logs,
top nodes, remove) against the lab: one meaning everywhere, -A winning over -n."""

from __future__ import annotations

import json
from pathlib import Path

from e2e_helpers import create_and_bind, run

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab


def names(stdout: str) -> list[str]:
    return [item["metadata"]["name"] for item in json.loads(stdout)["items"]]


def test_list_status_and_logs_keep_to_one_namespace(
    lab: Lab, namespace: str, tmp_path: Path
) -> None:
    everywhere = run(lab, "list", "-o", "json", cwd=tmp_path)
    assert everywhere.returncode == 0, everywhere.stderr
    assert "default-scheduler" in names(everywhere.stdout)
    home = run(lab, "list", "-n", "kube-system", "-o", "json", cwd=tmp_path)
    assert home.returncode == 0 and names(home.stdout) == names(everywhere.stdout)
    elsewhere = run(lab, "list", "-n", namespace, cwd=tmp_path)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert f"no scheduler found in namespace {namespace}" in elsewhere.stderr
    wins = run(lab, "list", "-n", namespace, "-A", "-o", "json", cwd=tmp_path)
    assert names(wins.stdout) == names(everywhere.stdout)

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
    every = pods_by_node()
    assert pods_by_node("-n", namespace, "-A") == every
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
