"""Double booking reproduced: two kube-schedulers fill the same nodes at once, the lab's kubelet
admission rejects the pods that no longer fit (Failed, OutOfcpu), and `status`/`why` name both
schedulers and the fix (kubernetes#72043).

Eight nodes of its own (tainted and labelled, so no other test's pod lands there), each with room
for exactly one pod. Sixteen pods — eight per scheduler — are created at the same instant, then
two kube-scheduler processes (the lab's v1.36.3 binary, one profile each) start at the same
instant. Both decide from the same empty nodes; their client QPS is low, so each decides all its
pods (its cache assumes them) long before the other's bindings reach it: every scheduler spreads
its pods one per node, and nodes get two pods. The kubelet rejects the second of each pair.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import pod_manifest, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.components import free_port
from kschedctl.lab.nodes import lab_node
from kschedctl.lab.processes import proxy_free_environment

NODES = 8
SCHEDULERS = ("dbook-alpha", "dbook-beta")
LABEL = {"e2e.kschedctl.io/pool": "double-booking"}
TAINT = {"key": "e2e.kschedctl.io/double-booking", "value": "true", "effect": "NoSchedule"}
NODE_NAMES = [f"dbook-{i}" for i in range(NODES)]
KUBELET_MESSAGE = (
    "Pod was rejected: Node didn't have enough resource: cpu, requested: 600, used: 600, "
    "capacity: 1000"
)


@pytest.fixture()
def nodes(cluster: Cluster, namespace: str) -> Iterator[list[str]]:
    for name in NODE_NAMES:
        body = lab_node(name, labels=LABEL, taints=[TAINT],
                           capacity={"cpu": "1", "memory": "4Gi", "pods": "110"})  # fmt: skip
        cluster.create("/api/v1/nodes", body)
    try:
        wait_for(lambda: all(_ready(cluster, n) for n in NODE_NAMES), 120, "the nodes Ready")
        yield NODE_NAMES
    finally:
        # The pods go first: kwok finishes a pod's deletion only while it manages the node.
        pods = f"/api/v1/namespaces/{namespace}/pods"
        for pod in cluster.list(pods):
            try:
                cluster.request("DELETE", f"{pods}/{pod['metadata']['name']}",
                                body={"gracePeriodSeconds": 0})  # fmt: skip
            except NotFoundError:
                pass
        wait_for(lambda: not cluster.list(pods), 60, "the test's pods deleted")
        for name in NODE_NAMES:
            try:
                cluster.request("DELETE", f"/api/v1/nodes/{name}")
            except NotFoundError:
                pass


def _ready(cluster: Cluster, name: str) -> bool:
    """Ready, and the node lifecycle controller has lifted its not-ready taint."""
    node = cluster.get(f"/api/v1/nodes/{name}")
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    taints = (node.get("spec") or {}).get("taints") or []
    return ready and all(t["key"] != "node.kubernetes.io/not-ready" for t in taints)


def _pod(name: str, scheduler: str) -> dict[str, Any]:
    body = pod_manifest(
        name,
        schedulerName=scheduler,
        nodeSelector=LABEL,
        tolerations=[{"key": TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}],
    )
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "600m", "memory": "64Mi"}}
    return body


def _start_scheduler(lab: Lab, binary: Path, name: str, tmp_path: Path) -> subprocess.Popen[str]:
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        # Two requests a second: the decisions are made at once, the bindings trickle out.
        "clientConnection": {"kubeconfig": str(lab.dir / "scheduler.kubeconfig"),
                             "qps": 2, "burst": 1},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": name}],
    }))  # fmt: skip
    log = (tmp_path / f"{name}.log").open("w")
    return subprocess.Popen(
        [str(binary), f"--config={config}", "--bind-address=127.0.0.1",
         f"--secure-port={free_port()}"],
        stdout=log, stderr=subprocess.STDOUT, text=True, env=proxy_free_environment(),
    )  # fmt: skip


def _kschedctl(lab: Lab, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args],
        capture_output=True, text=True, timeout=120,
        env={**proxy_free_environment(), "KUBECONFIG": str(lab.kubeconfig)},
    )  # fmt: skip


def test_two_schedulers_double_book_and_status_and_why_say_so(
    lab: Lab,
    lab_binaries: dict[str, Path],
    cluster: Cluster,
    namespace: str,
    nodes: list[str],
    tmp_path: Path,
) -> None:
    pods = {f"{s[len('dbook-') :]}-{i}": s for s in SCHEDULERS for i in range(NODES)}
    path = f"/api/v1/namespaces/{namespace}/pods"
    with ThreadPoolExecutor(len(pods)) as pool:  # every pod in the same instant
        list(pool.map(lambda item: cluster.create(path, _pod(*item)), pods.items()))
    with ThreadPoolExecutor(2) as pool:  # and both schedulers at the same instant
        procs = list(pool.map(
            lambda s: _start_scheduler(lab, lab_binaries["kube-scheduler"], s, tmp_path),
            SCHEDULERS,
        ))  # fmt: skip
    try:

        def settled() -> list[dict[str, Any]] | None:
            """Every pod decided: bound with the kubelet's verdict, or found unschedulable."""
            listed = cluster.list(path)
            for pod in listed:
                status = pod["status"]
                if pod["spec"].get("nodeName"):
                    if status.get("phase") not in ("Running", "Failed"):
                        return None
                elif not any(c["type"] == "PodScheduled" and c["status"] == "False"
                             for c in status.get("conditions") or []):  # fmt: skip
                    return None
            return listed

        bound = len(
            [p for p in wait_for(settled, 180, "every pod decided") if p["spec"].get("nodeName")]
        )
        # The Scheduled events name who bound what (the event recorder is throttled too).
        wait_for(
            lambda: len(cluster.list(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
                                     fieldSelector="reason=Scheduled")) >= bound,
            60, "the Scheduled events",
        )  # fmt: skip
        listed = wait_for(settled, 60, "every pod decided")
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(20)

    rejected = [p for p in listed if p["status"].get("phase") == "Failed"]
    running = [p for p in listed if p["status"].get("phase") == "Running"]
    assert rejected, "no collision: both schedulers saw each other's bindings in time"
    print(f"\n{len(rejected)} of {len(pods)} pods rejected by the kubelet (OutOfcpu)")
    # The kubelet's admission: one pod per node runs, every other is rejected as a kubelet does.
    assert sorted(p["spec"]["nodeName"] for p in running) == sorted(nodes)
    for pod in rejected:
        assert pod["status"]["reason"] == "OutOfcpu"
        assert pod["status"]["message"] == KUBELET_MESSAGE
    victim = rejected[0]["metadata"]["name"]
    warning = wait_for(
        lambda: [e for e in cluster.list(f"/api/v1/namespaces/{namespace}/events",
                                         fieldSelector=f"involvedObject.name={victim}")
                 if e["reason"] == "OutOfcpu"],
        30, "the kubelet's OutOfcpu event",
    )[0]  # fmt: skip
    assert warning["type"] == "Warning" and warning["source"]["component"] == "kubelet"
    assert warning["message"] == KUBELET_MESSAGE.removeprefix("Pod was rejected: ")

    for name in SCHEDULERS:
        result = _kschedctl(lab, "status", name, "-o", "json")
        assert result.returncode == 0, result.stderr
        found = json.loads(result.stdout)["doubleBooking"]
        assert found, f"status {name} shows no double booking"
        assert all(n["collision"] and n["schedulers"] == list(SCHEDULERS) for n in found)
        assert {r["pod"] for n in found for r in n["rejected"]} == {
            f"{namespace}/{p['metadata']['name']}" for p in rejected
        }
    table = _kschedctl(lab, "status", SCHEDULERS[0])
    assert table.returncode == 0, table.stderr
    assert "Double booking:" in table.stdout
    assert f"schedulers {SCHEDULERS[0]} and {SCHEDULERS[1]} bound pods to it" in table.stdout
    assert f"kschedctl render {SCHEDULERS[1]} --as config --add-to" in table.stdout

    why = _kschedctl(lab, "why", victim, "-n", namespace, "-o", "json")
    assert why.returncode == 6, why.stderr
    diagnosis = json.loads(why.stdout)
    assert [f["code"] for f in diagnosis["findings"]][:2] == ["kubelet-rejected", "double-booked"]
    assert KUBELET_MESSAGE in diagnosis["findings"][0]["message"]
    assert diagnosis["doubleBooking"]["schedulers"] == list(SCHEDULERS)
    assert "--as config --add-to" in diagnosis["findings"][1]["fix"]
    text = _kschedctl(lab, "why", victim, "-n", namespace)
    assert "kubelet-rejected" in text.stdout and "double-booked" in text.stdout
