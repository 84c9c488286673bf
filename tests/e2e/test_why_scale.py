"""`why` on a 2,000-node cluster: nodes grouped by reason, every node still in the JSON, and
`why --all` by scheduler and reason, against the real kube-scheduler.

2,000 Nodes join the session lab for this module only. They carry no kwok annotation (nothing
simulates them: no heartbeats to pay for) and a NoSchedule taint of their own, so no other
test's pod can land on them; they are deleted afterwards. The controller-manager marks them
not-ready/unreachable after its grace period: the pods here tolerate those taints, so the
verdicts do not change while the test runs.

    tier=a  1,000 nodes, 1 cpu
    tier=b    600 nodes, 4 cpu
    tier=c    400 nodes, tainted dedicated=gpu (not tolerated)
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from e2e_helpers import pod_manifest, wait_for
from typer.testing import CliRunner

from kschedctl.base.errors import NotFoundError
from kschedctl.cli import app
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.observe.failedscheduling import parse_failed_scheduling

pytestmark = pytest.mark.scale

MARK = "kschedctl.test/why-scale"
TIERS = (("a", 1000, "1"), ("b", 600, "4"), ("c", 400, "4"))
NODES = sum(count for _tier, count, _cpu in TIERS)
GPU = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
TOLERATE = [
    {"key": MARK, "operator": "Exists"},
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists"},
]
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TAINTED = "node(s) had untolerated taint(s)"


def _node(name: str, tier: str, cpu: str) -> dict[str, Any]:
    taints = [{"key": MARK, "value": "true", "effect": "NoSchedule"}]
    if tier == "c":
        taints.append(GPU)
    capacity = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {MARK: "true", "tier": tier,
                                              "kubernetes.io/hostname": name}},
        "spec": {"taints": taints},
        "status": {"capacity": capacity, "allocatable": dict(capacity)},
    }  # fmt: skip


@pytest.fixture(scope="module")
def many_nodes(cluster: Cluster) -> Iterator[int]:
    """The 2,000 nodes; yields how many nodes the cluster has in all."""
    bodies = [
        _node(f"why-{tier}-{i:04d}", tier, cpu) for tier, count, cpu in TIERS for i in range(count)
    ]
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda body: cluster.create("/api/v1/nodes", body), bodies))
        print(f"\n{NODES} nodes created in {time.monotonic() - started:.1f}s")
        yield len(cluster.list("/api/v1/nodes"))
    finally:
        # One request per node, in parallel: a deletecollection of 2,000 nodes is served one
        # node at a time and outlasts the client's read timeout.
        mine = [n["metadata"]["name"] for n in cluster.list("/api/v1/nodes", labelSelector=MARK)]
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda name: _delete(cluster, f"/api/v1/nodes/{name}"), mine))
        wait_for(lambda: not cluster.list("/api/v1/nodes", labelSelector=MARK), 120,
                 "the test's nodes to go")  # fmt: skip


def _delete(cluster: Cluster, path: str) -> None:
    with contextlib.suppress(NotFoundError):
        cluster.delete(path)


def kschedctl(lab: Lab, *args: str) -> Any:
    started = time.monotonic()
    result = CliRunner().invoke(app, [*args, "--kubeconfig", str(lab.kubeconfig)])
    print(f"kschedctl {' '.join(args[:4])}: {time.monotonic() - started:.1f}s")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return pod_manifest(name, tolerations=TOLERATE, **spec)


def _cpu(name: str, cpu: str, tier: str) -> dict[str, Any]:
    body = _pod(name, nodeSelector={"tier": tier})
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    return body


def test_why_groups_two_thousand_nodes(
    lab: Lab, cluster: Cluster, namespace: str, many_nodes: int
) -> None:
    total = many_nodes
    others = total - NODES  # the session lab's own nodes
    pods = f"/api/v1/namespaces/{namespace}/pods"
    cluster.create(pods, _cpu("cpu-a", "2", "a"))  # tier a is short of cpu
    cluster.create(pods, _cpu("cpu-b", "8", "b"))  # tier b too, for 8 cpu
    cluster.create(pods, _pod("lost", schedulerName=f"nobody-{namespace}"))
    wait_for(
        lambda: cluster.get(f"{pods}/cpu-b")["status"].get("conditions"), 120,
        "kube-scheduler to try cpu-b",
    )  # fmt: skip

    # The default table: one row per reason, counts adding up to every node.
    result = kschedctl(lab, "why", "cpu-a", "-n", namespace)
    assert result.exit_code == 6, result.stderr
    table = result.stdout.split("\n\n")[-1].strip().splitlines()
    assert table[0].split() == ["NODES", "FITS", "FILTER", "REASON", "DETAIL", "EXAMPLES"]
    assert len(table) - 1 < 10  # a handful of rows, not 2,000
    counted = sum(int(line.split()[0]) for line in table[1:] if line.split()[0].isdigit())
    assert counted == total
    cpu_row = next(line for line in table[1:] if "Insufficient cpu" in line)
    assert cpu_row.split()[:3] == ["1000", "no", "NodeResourcesFit"]
    assert "why-a-0000, why-a-0001, why-a-0002, …" in cpu_row
    taint_row = next(line for line in table[1:] if TAINTED in line)
    assert int(taint_row.split()[0]) >= 400 and "why-c-0000, why-c-0001, why-c-0002" in taint_row
    assert f"{total} nodes in " in result.stderr
    # The summary is kube-scheduler's own histogram: the groups say the same.
    summary = next(line for line in result.stdout.splitlines() if line.startswith("Summary:"))
    n, counts, _post = parse_failed_scheduling(summary.removeprefix("Summary:").strip())
    assert n == total and counts["Insufficient cpu"] == 1000
    assert counts[AFFINITY] == 600 + others

    # --nodes all: one row per node.
    every = kschedctl(lab, "why", "cpu-a", "-n", namespace, "--nodes", "all")
    rows_all = every.stdout.split("\n\n")[-1].strip().splitlines()
    assert rows_all[0].split()[:2] == ["NODE", "FITS"] and len(rows_all) == 1 + total
    assert {line.split()[0] for line in rows_all[1:]} >= {"why-a-0999", "why-b-0599", "why-c-0399"}

    # The JSON keeps every node and adds the groups.
    data = json.loads(kschedctl(lab, "why", "cpu-a", "-n", namespace, "-o", "json").stdout)
    assert len(data["nodes"]) == total
    assert sum(g["count"] for g in data["nodeGroups"]) == total
    first = data["nodeGroups"][0]
    assert (first["count"], first["reasons"][0]["message"]) == (1000, "Insufficient cpu")
    assert first["examples"] == ["why-a-0000", "why-a-0001", "why-a-0002"]

    # why --all: by scheduler and reason.
    every_pod = kschedctl(lab, "why", "--all", "-n", namespace, "-o", "json")
    assert every_pod.exit_code == 6
    listed = json.loads(every_pod.stdout)
    assert {i["pod"]["name"] for i in listed["items"]} == {"cpu-a", "cpu-b", "lost"}
    by_reason = {(r["scheduler"], r["reason"]): r for r in listed["summary"]}
    cpu = by_reason[("default-scheduler", "Insufficient cpu")]
    assert (cpu["pods"], cpu["nodes"]) == (2, 1600)
    assert cpu["examples"] == [f"{namespace}/cpu-a", f"{namespace}/cpu-b"]
    affinity = by_reason[("default-scheduler", AFFINITY)]
    assert (affinity["pods"], affinity["nodes"]) == (2, 1600 + others)
    assert by_reason[("default-scheduler", TAINTED)]["nodes"] >= 400
    lost = by_reason[(f"nobody-{namespace}", "scheduler-not-served")]
    assert (lost["pods"], lost["nodes"]) == (1, 0)
    summary_table = kschedctl(lab, "why", "--all", "-n", namespace)
    lines = summary_table.stdout.strip().splitlines()
    assert lines[0].split() == ["SCHEDULER", "REASON", "PODS", "NODES", "EXAMPLES"]
    assert any(line.split()[:5] == ["default-scheduler", "Insufficient", "cpu", "2", "1600"]
               for line in lines)  # fmt: skip
    assert len(lines) <= 6
