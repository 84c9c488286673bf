"""`kschedctl why` against the real kube-scheduler v1.36.3: the scenario matrix.

Each scenario makes the lab's default scheduler try a pod, reads the FailedScheduling message
it wrote, and checks that `why`'s ``summary`` is that exact text and that `why`'s per-node
verdicts add up to its counts. The scenarios need special nodes (a tainted, a cordoned and a
small one), so they run in a lab of their own: the session lab's nodes stay untouched.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import (
    lab_of_its_own,
    latest_failure,
    pod_events,
    pod_manifest,
    pod_reader_kubeconfig,
    wait_for,
)
from typer.testing import CliRunner

from kschedctl.base.errors import NotFoundError
from kschedctl.cli import app
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.nodes import lab_node
from kschedctl.observe.failedscheduling import parse_failed_scheduling

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
TOLERATE = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def why_nodes() -> list[dict[str, Any]]:
    return [
        lab_node("why-taint", labels={"pool": "gpu", "gen": "3"}, zone="zone-a",
                    taints=[TAINT]),
        lab_node("why-cordon", labels={"pool": "general", "gen": "5"}, zone="zone-b",
                    unschedulable=True),
        lab_node("why-small", labels={"pool": "general", "gen": "4", "disk": "ssd"},
                    zone="zone-a", capacity={"cpu": "2", "memory": "2Gi", "pods": "3"}),
        lab_node("why-big", labels={"pool": "general", "gen": "6"}, zone="zone-b",
                    capacity={"cpu": "4", "memory": "8Gi", "pods": "110"}),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def why_lab(
    lab_binaries: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lab]:
    """Own control plane: kube-scheduler's messages count every node (`0/4 nodes are
    available: …`), so the cluster must hold exactly these four shapes."""
    with lab_of_its_own(tmp_path_factory.mktemp("why-lab"), why_nodes()) as the_lab:
        yield the_lab


@pytest.fixture(scope="module")
def why_cluster(why_lab: Lab) -> Iterator[Cluster]:
    connection = Cluster.connect(str(why_lab.kubeconfig))
    yield connection
    connection.close()


@pytest.fixture()
def ns(why_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace per scenario; deleted, and its pods gone, before the next one starts (their
    requests, ports and labels would change the next scenario's verdicts)."""
    slug = "".join(c for c in request.node.name.lower() if c.isalnum())[:30]
    name = f"why-{slug}"
    why_cluster.create("/api/v1/namespaces", {"metadata": {"name": name}})
    yield name
    why_cluster.delete(f"/api/v1/namespaces/{name}")
    wait_for(lambda: not why_cluster.list(f"/api/v1/namespaces/{name}/pods"), 60,
             f"the pods of {name} to go")  # fmt: skip


def kschedctl(lab: Lab, *args: str) -> Any:
    result = CliRunner().invoke(app, [*args, "--kubeconfig", str(lab.kubeconfig)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def why_json(lab: Lab, namespace: str, pod: str) -> tuple[int, dict[str, Any]]:
    result = kschedctl(lab, "why", pod, "-n", namespace, "-o", "json")
    assert result.exit_code in (0, 6), result.stderr
    return result.exit_code, json.loads(result.stdout)


def place(cluster: Cluster, namespace: str, name: str, node: str, **spec: Any) -> None:
    """A pod pinned (by nodeSelector, through the scheduler) to ``node``, bound and running."""
    labels = spec.pop("labels", None)
    manifest = pod_manifest(name, nodeSelector={HOST: node}, tolerations=TOLERATE, **spec)
    if labels:
        manifest["metadata"]["labels"] = labels
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", manifest)

    def running() -> bool:
        pod = cluster.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        return pod["spec"].get("nodeName") == node and pod["status"].get("phase") == "Running"

    wait_for(running, 60, f"{namespace}/{name} running on {node}")


def counted(verdicts: list[dict[str, Any]]) -> dict[str, int]:
    """kube-scheduler's histogram, rebuilt from why's per-node verdicts."""
    counts: dict[str, int] = {}
    for node in verdicts:
        for reason in node["reasons"][: node["counted"]]:
            counts[reason["message"]] = counts.get(reason["message"], 0) + 1
    return counts


def check_against_scheduler(
    lab: Lab, cluster: Cluster, namespace: str, pod: str
) -> tuple[dict[str, Any], str]:
    """why's summary equals kube-scheduler's latest FailedScheduling message, and its
    verdicts account for the counts. Returns (why's JSON, the message)."""
    wait_for(lambda: latest_failure(cluster, namespace, pod), 60, f"FailedScheduling for {pod}")
    # The scheduler retries with backoff; compare with the event that is latest after `why`.
    state: dict[str, Any] = {}

    def agree() -> bool:
        state["code"], state["why"] = why_json(lab, namespace, pod)
        state["event"] = latest_failure(cluster, namespace, pod)
        return bool(state["why"]["summary"] == state["event"])

    wait_for(agree, 20, f"why's summary to equal kube-scheduler's message for {pod}", 1.0)
    data, message = state["why"], state["event"]
    assert state["code"] == 6 and data["schedulable"] is False
    total, counts, _ = parse_failed_scheduling(message)
    assert total == len(data["nodes"])
    assert counted(data["nodes"]) == counts
    assert {f["code"] for f in data["findings"]} >= {"no-node-fits", "reported-matches"}
    print(f"\n[{pod}]\n  kube-scheduler: {message}\n  why summary:    {data['summary']}")
    return data, message


def verdict(data: dict[str, Any], node: str) -> dict[str, Any]:
    return next(n for n in data["nodes"] if n["name"] == node)


def first(data: dict[str, Any], node: str) -> dict[str, Any]:
    return dict(verdict(data, node)["reasons"][0])


def fixes(data: dict[str, Any]) -> str:
    return " ".join(f["fix"] or "" for f in data["findings"])


# -- the scenario matrix -------------------------------------------------------------------------


def test_untolerated_taint(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods",
                       pod_manifest("target", nodeSelector={"pool": "gpu"}))  # fmt: skip
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "1 node(s) had untolerated taint(s)" in message
    taint = first(data, "why-taint")
    assert taint["plugin"] == "TaintToleration"
    assert taint["detail"] == "taint dedicated=gpu:NoSchedule is not tolerated"
    assert "add the toleration {key: dedicated, operator: Equal, value: gpu" in taint["fix"]

    # `events` shows the same failure, filtered by scheduler on the server.
    events = kschedctl(why_lab, "events", "default-scheduler", "-n", ns, "--types", "Warning",
                       "-o", "json")  # fmt: skip
    assert events.exit_code == 0, events.stderr
    listed = json.loads(events.stdout)["items"]
    assert [(e["reason"], e["regarding"]["name"]) for e in listed][-1] == (
        "FailedScheduling", "target",
    )  # fmt: skip
    assert listed[-1]["message"] == message
    assert json.loads(kschedctl(why_lab, "events", "other-scheduler", "-n", ns, "-o",
                                "json").stdout)["items"] == []  # fmt: skip
    table = kschedctl(why_lab, "events", "--for", "pod/target", "-n", ns)
    assert "FailedScheduling" in table.stdout and "Pod/target" in table.stdout


def test_cordoned_node(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    pod = pod_manifest("target", nodeSelector={HOST: "why-cordon"}, tolerations=TOLERATE)
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "1 node(s) were unschedulable" in message
    cordon = first(data, "why-cordon")
    assert cordon["plugin"] == "NodeUnschedulable"
    assert "kubectl uncordon why-cordon" in cordon["fix"]


def test_node_selector_mismatch(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    pod = pod_manifest("target", nodeSelector={"disk": "nvme"}, tolerations=TOLERATE)
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "3 node(s) didn't match Pod's node affinity/selector" in message
    assert first(data, "why-small")["detail"] == "nodeSelector disk=nvme (node has disk=ssd)"
    assert "kubectl label node why-big disk=nvme" in fixes(data)


def test_required_node_affinity_not_in_and_gt(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    term = {"matchExpressions": [
        {"key": "gen", "operator": "Gt", "values": ["5"]},
        {"key": "pool", "operator": "NotIn", "values": ["general"]},
    ]}  # fmt: skip
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}  # fmt: skip
    pod = pod_manifest("target", affinity=affinity, tolerations=TOLERATE)
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, _ = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "gen Gt 5" in first(data, "why-taint")["detail"]  # gen=3
    assert "gen Gt 5" in first(data, "why-small")["detail"]  # gen=4
    assert "pool NotIn [general]" in first(data, "why-big")["detail"]  # gen=6 passes Gt


def test_insufficient_cpu_and_memory_on_one_node(
    why_lab: Lab, why_cluster: Cluster, ns: str
) -> None:
    requests = {"resources": {"requests": {"cpu": "1500m", "memory": "1536Mi"}}}
    place(why_cluster, ns, "hog", "why-small",
          containers=[{"name": "app", "image": "registry.k8s.io/pause:3.10", **requests}])  # fmt: skip
    want = {"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    pod = pod_manifest("target", nodeSelector={HOST: "why-small"},
                       containers=[{"name": "app", "image": "registry.k8s.io/pause:3.10", **want}])  # fmt: skip
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "1 Insufficient cpu, 1 Insufficient memory" in message
    small = verdict(data, "why-small")
    assert [r["message"] for r in small["reasons"]] == ["Insufficient cpu", "Insufficient memory"]
    assert small["reasons"][0]["detail"] == "cpu: requests 1, free 500m of 2"
    assert small["reasons"][1]["detail"] == "memory: requests 1Gi, free 512Mi of 2Gi"
    # The hog has the same priority: preemption finds no victims there.
    assert "1 No preemption victims found for incoming pod" in message
    assert data["preemption"]["nodeReasons"] == {
        "why-small": ["No preemption victims found for incoming pod"]
    }


def test_too_many_pods(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    for i in range(3):  # why-small takes 3 pods
        place(why_cluster, ns, f"filler-{i}", "why-small")
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods",
                       pod_manifest("target", nodeSelector={HOST: "why-small"}))  # fmt: skip
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "1 Too many pods" in message
    assert first(data, "why-small")["detail"] == "pods: 3 of 3 already on the node"


def test_host_port_conflict(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    port = {"name": "app", "image": "registry.k8s.io/pause:3.10",
            "ports": [{"containerPort": 8080, "hostPort": 8080}]}  # fmt: skip
    for node in ("why-small", "why-big"):
        place(why_cluster, ns, f"port-{node}", node, containers=[port])
    pod = pod_manifest("target", nodeSelector={"pool": "general"}, containers=[port])
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "2 node(s) didn't have free ports for the requested pod ports" in message
    assert first(data, "why-big")["detail"].startswith(
        "hostPort 8080/TCP on 0.0.0.0 is already in use"
    )


def test_topology_spread_do_not_schedule(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    place(why_cluster, ns, "spread-0", "why-small", labels={"app": "spread"})
    constraint = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                  "nodeAffinityPolicy": "Ignore",
                  "labelSelector": {"matchLabels": {"app": "spread"}}}  # fmt: skip
    pod = pod_manifest("target", nodeSelector={"disk": "ssd"},
                       topologySpreadConstraints=[constraint])  # fmt: skip
    pod["metadata"]["labels"] = {"app": "spread"}
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "1 node(s) didn't match pod topology spread constraints" in message
    assert first(data, "why-small")["plugin"] == "PodTopologySpread"


def test_required_pod_anti_affinity(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    for node in ("why-small", "why-big"):
        place(why_cluster, ns, f"anti-{node}", node, labels={"app": "anti"})
    term = {"labelSelector": {"matchLabels": {"app": "anti"}}, "topologyKey": HOST}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    pod = pod_manifest("target", nodeSelector={"pool": "general"}, affinity=affinity)
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "2 node(s) didn't match pod anti-affinity rules" in message
    assert first(data, "why-small")["plugin"] == "InterPodAffinity"


def test_existing_pods_anti_affinity(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    # A pod on why-big repels every pod labelled role=batch from its zone (zone-b).
    term = {"labelSelector": {"matchLabels": {"role": "batch"}}, "topologyKey": ZONE}
    place(why_cluster, ns, "loner", "why-big", labels={"app": "loner"},
          affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})  # fmt: skip
    pod = pod_manifest("target", nodeSelector={HOST: "why-big"})
    pod["metadata"]["labels"] = {"role": "batch"}
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "1 node(s) didn't satisfy existing pods anti-affinity rules" in message
    assert "anti-affinity" in first(data, "why-big")["detail"]


def test_required_pod_affinity_without_a_match(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    # The target wants to be in a zone with app=db pods; there are none, and it is not one.
    wants = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": ZONE}
    pod = pod_manifest("target", tolerations=TOLERATE, affinity={
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [wants]}})  # fmt: skip
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "3 node(s) didn't match pod affinity rules" in message
    assert first(data, "why-small")["code"] == "UnschedulableAndUnresolvable"


def test_extended_resource_no_node_has(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    gpu = {"resources": {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}}
    pod = pod_manifest("target", tolerations=TOLERATE,
                       containers=[{"name": "app", "image": "registry.k8s.io/pause:3.10", **gpu}])  # fmt: skip
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data, message = check_against_scheduler(why_lab, why_cluster, ns, "target")
    assert "3 Insufficient example.com/gpu" in message
    assert "4 Preemption is not helpful for scheduling" in message  # nobody has any: unresolvable
    assert first(data, "why-small")["detail"] == "example.com/gpu: requests 1, free 0 of 0"


def test_unknown_scheduler_name(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods",
                       pod_manifest("target", schedulerName="no-such-scheduler"))  # fmt: skip
    code, data = why_json(why_lab, ns, "target")
    assert code == 6 and data["schedulable"] is False
    assert data["findings"][0]["code"] == "scheduler-not-served"
    assert "Running: default-scheduler" in data["findings"][0]["message"]
    assert "kschedctl deploy no-such-scheduler" in data["findings"][0]["fix"]
    assert data["summary"] is None and data["scheduler"]["served"] is False
    # kube-scheduler indeed says nothing about it: a pod created after it gets scheduled, and
    # still no event names the first one.
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest("control"))
    wait_for(lambda: pod_events(why_cluster, ns, "control"), 60, "the control pod's events")
    assert pod_events(why_cluster, ns, "target") == []


def test_scheduling_gate(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    pod = pod_manifest("target", schedulingGates=[{"name": "example.com/hold"}])
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)

    def gated() -> bool:
        conditions = why_cluster.get(f"/api/v1/namespaces/{ns}/pods/target")["status"].get(
            "conditions") or []  # fmt: skip
        return any(c.get("reason") == "SchedulingGated" for c in conditions)

    wait_for(gated, 30, "the SchedulingGated condition")
    code, data = why_json(why_lab, ns, "target")
    assert code == 6
    assert data["findings"][0]["code"] == "scheduling-gated"
    assert "[example.com/hold]" in data["findings"][0]["message"]
    assert data["summary"] is None
    assert pod_events(why_cluster, ns, "target") == []


# -- the rest of the command's contract ----------------------------------------------------------


def test_all_lists_every_pending_pod(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods",
                       pod_manifest("gated", schedulingGates=[{"name": "x/y"}]))  # fmt: skip
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods",
                       pod_manifest("nowhere", nodeSelector={"disk": "nvme"}))  # fmt: skip
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest("fine"))
    wait_for(lambda: latest_failure(why_cluster, ns, "nowhere"), 60, "FailedScheduling")
    wait_for(lambda: why_cluster.get(f"/api/v1/namespaces/{ns}/pods/fine")["spec"].get("nodeName"),
             60, "fine to be bound")  # fmt: skip
    result = kschedctl(why_lab, "why", "--all", "-n", ns, "-o", "json")
    assert result.exit_code == 6, result.stderr
    pods = {p["pod"]["name"]: p for p in json.loads(result.stdout)["items"]}
    assert set(pods) == {"gated", "nowhere"}  # the bound one is not waiting
    assert pods["gated"]["findings"][0]["code"] == "scheduling-gated"
    table = kschedctl(why_lab, "why", "--all", "-n", ns)
    assert "scheduling-gated" in table.stdout and "node affinity/selector" in table.stdout
    assert "0/4 nodes are available" not in table.stdout  # per pod only with --pods
    per_pod = kschedctl(why_lab, "why", "--all", "-n", ns, "--pods")
    assert "0/4 nodes are available" in per_pod.stdout


def test_running_and_missing_pods(why_lab: Lab, why_cluster: Cluster, ns: str) -> None:
    place(why_cluster, ns, "runs", "why-big")
    running = kschedctl(why_lab, "why", "runs", "-n", ns)
    assert running.exit_code == 0
    assert "pod-running" in running.stdout and "nothing is pending" in running.stdout
    missing = kschedctl(why_lab, "why", "ghost", "-n", ns)
    assert missing.exit_code == 5
    assert f"pod {ns}/ghost not found" in missing.stderr


def test_missing_permissions_are_named(
    why_lab: Lab, why_cluster: Cluster, ns: str, tmp_path: Path
) -> None:
    why_cluster.create(f"/api/v1/namespaces/{ns}/pods",
                       pod_manifest("target", nodeSelector={"disk": "nvme"}))  # fmt: skip
    kubeconfig = pod_reader_kubeconfig(why_lab, why_cluster, ns, tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["why", "target", "-n", ns, "--kubeconfig", str(kubeconfig)])
    assert result.exit_code == 4, result.output
    assert "cannot list pods in all namespaces" in result.stderr
    assert 'cannot list resource "pods"' in result.stderr

    # With pods readable cluster-wide, the next missing permission is the nodes.
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    name = f"{ns}-pods"
    why_cluster.create(f"{rbac}/clusterroles", {"metadata": {"name": name}, "rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})  # fmt: skip
    why_cluster.create(f"{rbac}/clusterrolebindings", {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": ns}]})  # fmt: skip
    try:

        def nodes_refused() -> Any:
            again = runner.invoke(app, ["why", "target", "-n", ns, "--kubeconfig", str(kubeconfig)])
            return again if "cannot list nodes" in again.stderr else None

        again = wait_for(nodes_refused, 20, "the nodes permission to be the one missing", 1.0)
        assert again.exit_code == 4
        assert 'cannot list resource "nodes"' in again.stderr
    finally:
        for kind in ("clusterrolebindings", "clusterroles"):
            try:
                why_cluster.delete(f"{rbac}/{kind}/{name}")
            except NotFoundError:
                pass
