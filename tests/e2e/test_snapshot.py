"""`kschedctl snapshot` of the lab: its nodes, our bound pods on the nodes the scheduler chose,
our pending pods, a PodDisruptionBudget, the PriorityClasses; then, with a ServiceAccount that
may read pods of one namespace only, the refusals it meets, each naming the resource and the
verb (exit 4), and what it leaves out when only the optional reads are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from e2e_helpers import create_and_bind, pod_manifest, pod_reader_kubeconfig, wait_for
from typer.testing import CliRunner

from kschedctl.base.errors import NotFoundError
from kschedctl.cli import app
from kschedctl.clustersnapshot import load_snapshot
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

RBAC = "/apis/rbac.authorization.k8s.io/v1"


def snapshot(kubeconfig: Path, target: Path, *args: str) -> Any:
    return CliRunner().invoke(
        app, ["snapshot", "-f", str(target), "--kubeconfig", str(kubeconfig), *args]
    )


def test_snapshot_of_the_lab(lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    bound = create_and_bind(cluster, namespace, ["bound-0", "bound-1"], "default-scheduler")
    pods = f"/api/v1/namespaces/{namespace}/pods"
    cluster.create(pods, pod_manifest("nowhere", nodeSelector={"example.com/none": "x"}))
    cluster.create(pods, pod_manifest("unserved", schedulerName="no-such-scheduler"))
    cluster.create(f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets", {
        "metadata": {"name": "keep-one"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}})  # fmt: skip

    target = tmp_path / "lab.yaml"
    result = snapshot(lab.kubeconfig, target, "-n", namespace)
    assert result.exit_code == 0, result.output
    snap = load_snapshot(str(target))
    live_nodes = {n["metadata"]["name"] for n in cluster.list("/api/v1/nodes")}
    assert {n.name for n in snap.nodes} == live_nodes
    ours = {p.name: p.node_name for p in snap.pods if p.namespace == namespace}
    assert ours == bound
    assert [p.name for p in snap.pending_pods] == ["nowhere", "unserved"]  # -n: ours only
    assert snap.pending_pods[1].scheduler_name == "no-such-scheduler"
    assert [(b.name, b.min_available) for b in snap.pod_disruption_budgets] == [("keep-one", 1)]
    assert "system-node-critical" in {pc.name for pc in snap.priority_classes}
    assert snap.metadata.source.version.startswith("v1.")
    assert target.stat().st_mode & 0o777 == 0o600
    assert f"wrote {target}: {len(live_nodes)} nodes" in result.stderr

    anonymous = tmp_path / "anon.json"
    assert snapshot(lab.kubeconfig, anonymous, "--anonymize").exit_code == 0
    text = anonymous.read_text()
    assert namespace not in text and "bound-0" not in text
    assert len(load_snapshot(str(anonymous)).nodes) == len(live_nodes)


def test_refusals_name_the_resource_and_the_verb(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    kubeconfig = pod_reader_kubeconfig(lab, cluster, namespace, tmp_path)
    target = tmp_path / "snap.yaml"
    refused = snapshot(kubeconfig, target)
    assert refused.exit_code == 4, refused.output
    assert refused.stderr.startswith("error: cannot list nodes: forbidden: ")
    assert 'cannot list resource "nodes"' in refused.stderr
    assert not target.exists()

    name = f"{namespace}-snapshot"
    rules: list[dict[str, Any]] = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]
    cluster.create(f"{RBAC}/clusterroles", {"metadata": {"name": name}, "rules": rules})
    cluster.create(f"{RBAC}/clusterrolebindings", {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": namespace}]})  # fmt: skip
    try:
        # RBAC changes reach the authorizer's cache within a moment: poll for each step.
        def refused_for(what: str) -> Any:
            again = snapshot(kubeconfig, target)
            return again if f"cannot list {what}:" in again.stderr else None

        again = wait_for(lambda: refused_for("pods in all namespaces"), 20, "pods refused", 1.0)
        assert again.exit_code == 4
        assert 'cannot list resource "pods"' in again.stderr

        rules.append({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]})
        cluster.patch(f"{RBAC}/clusterroles/{name}", {"rules": rules})

        def taken() -> Any:
            again = snapshot(kubeconfig, target)
            return again if again.exit_code == 0 else None

        done = wait_for(taken, 20, "a snapshot with nodes and pods readable", 1.0)
        for what in ("PodDisruptionBudgets", "PriorityClasses", "Namespaces"):
            assert f"left out {what}: forbidden or not served" in done.stderr
        omitted = {o.what: o.reason for o in load_snapshot(str(target)).metadata.omitted}
        assert omitted["PodDisruptionBudgets"].startswith("forbidden (list): ")
    finally:
        for kind in ("clusterrolebindings", "clusterroles"):
            try:
                cluster.delete(f"{RBAC}/{kind}/{name}")
            except NotFoundError:
                pass
