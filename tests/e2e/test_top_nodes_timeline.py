"""`top nodes` and `events --timeline` on the session lab: pods placed by default-scheduler,
by a kschedctl scheduler and by hand show up per node under the scheduler responsible, with
the requests the pods make; the timeline counts the scheduler's decisions."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from e2e_helpers import pod_manifest, stop, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.processes import proxy_free_environment

Mi = 2**20


def _kschedctl(lab: Lab, *args: str) -> Any:
    result = subprocess.run(
        [sys.executable, "-m", "kschedctl", *args, f"--kubeconfig={lab.kubeconfig}"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, **proxy_free_environment()},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _pod(name: str, cpu: str, memory: str, **spec: Any) -> dict[str, Any]:
    body = pod_manifest(name, **spec)
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": memory}}
    return body


def test_top_nodes_and_timeline_split_by_scheduler(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    mine = f"pictures-{uuid.uuid4().hex[:6]}"
    log = tmp_path / "scheduler.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={mine}",
             "--strategy=binpack", f"--kubeconfig={lab.kubeconfig}", "--no-leader-elect",
             "--metrics-port=0", "--pod-initial-backoff=0.5", "--pod-max-backoff=2"],
            stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment(),
        )  # fmt: skip
    try:
        pods = f"/api/v1/namespaces/{namespace}/pods"
        for i in range(3):
            cluster.create(pods, _pod(f"packed-{i}", "200m", "64Mi", schedulerName=mine))
        for i in range(2):
            cluster.create(pods, _pod(f"default-{i}", "300m", "32Mi"))
        # a node chosen by hand, whatever the pod's schedulerName says: no scheduler placed it
        first_node = cluster.list("/api/v1/nodes")[0]["metadata"]["name"]
        cluster.create(pods, _pod("pinned", "150m", "16Mi", schedulerName=f"{mine}-x",
                                  nodeName=first_node))  # fmt: skip
        cluster.create(pods, _pod("too-big", "1000", "1Mi", schedulerName=mine))

        def placed() -> dict[str, str] | None:
            where = {p["metadata"]["name"]: p["spec"].get("nodeName")
                     for p in cluster.list(pods)}  # fmt: skip
            where.pop("too-big", None)
            return where if len(where) == 6 and all(where.values()) else None

        where = wait_for(placed, 120, "6 pods bound")
        data = _kschedctl(lab, "top", "nodes", "-o", "json")
        by_node = {item["metadata"]["name"]: item for item in data["items"]}

        ours = Counter(where[f"packed-{i}"] for i in range(3))
        for node, item in by_node.items():
            split = item["bySchedulers"]
            if node in ours:
                n = ours[node]
                assert split[mine] == {"cpu": 200 * n, "memory": 64 * Mi * n, "pods": n}
            else:
                assert mine not in split
            defaults = [i for i in range(2) if where[f"default-{i}"] == node]
            if defaults:  # other tests' pods may share the node: at least ours
                assert split["default-scheduler"]["cpu"] >= 300 * len(defaults)
                assert split["default-scheduler"]["pods"] >= len(defaults)
            assert f"{mine}-x" not in split
            requested = item["requested"]
            assert requested == {r: sum(s[r] for s in split.values()) for r in requested}
        assert by_node[first_node]["bySchedulers"]["(none)"]["cpu"] >= 150

        only_mine = _kschedctl(lab, "top", "nodes", "--scheduler", mine, "-o", "json")
        assert sorted(i["metadata"]["name"] for i in only_mine["items"]) == sorted(ours)

        def decided() -> list[dict[str, Any]] | None:
            minutes = _kschedctl(lab, "events", mine, "-n", namespace, "--timeline", "-o", "json")
            items = minutes["items"]
            total = Counter({k: sum(m[k] for m in items) for k in ("scheduled", "failed")})
            return items if total["scheduled"] == 3 and total["failed"] >= 1 else None

        items = wait_for(decided, 60, "3 Scheduled and a FailedScheduling event", interval=1)
        assert sum(m["preempted"] for m in items) == 0
        assert all(m["metadata"]["name"] == m["minute"][:16] + "Z" for m in items)
    finally:
        stop(proc)


def _run(lab: Lab, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args, f"--kubeconfig={lab.kubeconfig}"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, **proxy_free_environment(), "COLUMNS": "80"},
    )  # fmt: skip


def test_top_nodes_like_kube_capacity(lab: Lab, cluster: Cluster, namespace: str) -> None:
    """One row per node with requests and limits, the taints, usage said unknown (the lab
    runs no metrics-server), and the per-pod view: on a node of this test's own."""
    node = f"capacity-{uuid.uuid4().hex[:6]}"
    mark = "kschedctl.test/top-capacity"
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    cluster.create("/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node, "labels": {mark: node, "kubernetes.io/hostname": node}},
        "spec": {"taints": [{"key": "dedicated", "value": "capacity", "effect": "NoSchedule"}]},
        "status": {"capacity": capacity, "allocatable": dict(capacity)},
    })  # fmt: skip
    pods = f"/api/v1/namespaces/{namespace}/pods"
    try:
        body = pod_manifest("limited", nodeName=node)
        body["spec"]["containers"][0]["resources"] = {
            "requests": {"cpu": "500m", "memory": "256Mi"},
            "limits": {"cpu": "1", "memory": "512Mi"},
        }
        cluster.create(pods, body)
        shown = _run(lab, "top", "nodes", "-l", f"{mark}={node}")
        assert shown.returncode == 0, shown.stderr
        assert "usage: metrics-server not available" in shown.stderr
        lines = shown.stdout.splitlines()
        header = next(line for line in lines if line.startswith("NODE"))
        (row,) = [line for line in lines if line.startswith(node)]
        assert "CPU LIMITS" in header and "MEMORY LIMITS" in header
        for cell in ("500m (13%)", "1 (25%)", "256Mi (3%)", "512Mi (6%)", "1/110", "1 taint"):
            assert cell in row, (cell, row)
        assert all(line == line.rstrip() and "…" not in line for line in lines)

        wide = _run(lab, "top", "nodes", "-l", f"{mark}={node}", "-o", "wide")
        assert wide.returncode == 0, wide.stderr
        (row,) = [line for line in wide.stdout.splitlines() if line.startswith(node)]
        assert row.endswith("dedicated=capacity:NoSchedule")

        (item,) = _kschedctl(lab, "top", "nodes", "-l", f"{mark}={node}", "-o", "json")["items"]
        assert item["limits"] == {"cpu": 1000, "memory": 512 * Mi}
        assert item["taints"] == ["dedicated=capacity:NoSchedule"] and "usage" not in item

        per_pod = _kschedctl(lab, "top", "nodes", "-l", f"{mark}={node}", "--pods", "-o", "json")
        (pod,) = per_pod["items"]
        assert pod["kind"] == "PodUsage" and pod["metadata"] == {
            "name": "limited",
            "namespace": namespace,
        }
        assert (pod["node"], pod["scheduler"]) == (node, "(none)")  # given its node by hand
        assert pod["requests"] == {"cpu": 500, "memory": 256 * Mi}
        assert pod["limits"] == {"cpu": 1000, "memory": 512 * Mi}
        table = _run(lab, "top", "nodes", "-l", f"{mark}={node}", "--pods")
        assert table.returncode == 0, table.stderr
        assert table.stdout.splitlines()[1].split() == [
            namespace, "limited", node, "(none)", "500m", "1", "256Mi", "512Mi"]  # fmt: skip
    finally:
        with contextlib.suppress(NotFoundError):
            cluster.delete(f"{pods}/limited", gracePeriodSeconds=0)
        with contextlib.suppress(NotFoundError):
            cluster.delete(f"/api/v1/nodes/{node}")
