"""``feasible_nodes`` (the scheduler's fast path) agrees with ``evaluate`` node for node."""

from __future__ import annotations

import random
from typing import Any

import pytest
from test_filters_messages import SCENARIOS, _pod_from
from test_filters_support import container, expand_nodes, expr, host_port, node, node_affinity, pod

from kschedctl.model.filters import NodeInfoSnapshot, evaluate, feasible_nodes, nodes_to_find


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_same_feasible_nodes_as_evaluate_on_every_scenario(sc: dict[str, Any]) -> None:
    snap = NodeInfoSnapshot(
        expand_nodes(sc["nodes"]), [_pod_from(p, bound=True) for p in sc.get("existing", [])]
    )
    incoming = _pod_from(sc["pod"], bound=False)
    assert sorted(feasible_nodes(incoming, snap).names) == sorted(evaluate(incoming, snap).feasible)


def _random_cluster(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = []
    for i in range(rng.randint(1, 8)):
        taints = []
        if rng.random() < 0.3:
            taints.append(
                {
                    "key": rng.choice(["dedicated", "gpu"]),
                    "value": rng.choice(["a", "b"]),
                    "effect": rng.choice(["NoSchedule", "NoExecute", "PreferNoSchedule"]),
                }
            )
        labels = {"zone": rng.choice(["z1", "z2", "z3"]), "pool": rng.choice(["main", "spare"])}
        if rng.random() < 0.2:
            del labels["zone"]
        nodes.append(
            node(
                f"n{i}",
                cpu=rng.choice(["1", "2", "4"]),
                memory=rng.choice(["1Gi", "4Gi"]),
                pods=rng.choice(["2", "110"]),
                labels=labels,
                taints=taints,
                unschedulable=rng.random() < 0.1,
                extra={"example.com/dev": "1"} if rng.random() < 0.3 else None,
            )
        )
    pods = []
    for j in range(rng.randint(0, 12)):
        target = rng.choice(nodes)["metadata"]["name"]
        ports = [host_port(8080)] if rng.random() < 0.2 else None
        spec: dict[str, Any] = {}
        if rng.random() < 0.2:
            spec["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": rng.choice(["zone", "kubernetes.io/hostname"]),
                        }
                    ]
                }
            }
        bound = pod(
            f"p{j}",
            node_name=target,
            labels={"app": rng.choice(["web", "db"])},
            containers=[
                container(cpu=rng.choice(["100m", "500m", "1"]), memory="256Mi", ports=ports)
            ],
            **spec,
        )
        pods.append(bound)
    if rng.random() < 0.3:
        nominated = pod(
            "nominee",
            labels={"app": "web"},
            containers=[container(cpu="1")],
            priority=rng.choice([0, 100]),
        )
        nominated["status"]["nominatedNodeName"] = rng.choice(nodes)["metadata"]["name"]
        nominated["spec"]["schedulerName"] = "default-scheduler"
        pods.append(nominated)
    return nodes, pods


def _random_pod(rng: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"pool": rng.choice(["main", "spare"])}
    if rng.random() < 0.3:
        spec["affinity"] = node_affinity(
            {"matchExpressions": [expr("zone", rng.choice(["In", "NotIn"]), "z1")]}
        )
    if rng.random() < 0.4:
        spec["tolerations"] = [
            {
                "key": rng.choice(["dedicated", "gpu", "node.kubernetes.io/unschedulable"]),
                "operator": "Exists",
            }
        ]
    if rng.random() < 0.3:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    if rng.random() < 0.2:
        spec.setdefault("affinity", {})["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}
            ]
        }
    if rng.random() < 0.2:
        spec["nodeName"] = rng.choice(["n0", "n1"])
    requests: dict[str, str] = {}
    if rng.random() < 0.8:
        requests["cpu"] = rng.choice(["100m", "1", "3"])
    if rng.random() < 0.5:
        requests["memory"] = rng.choice(["64Mi", "2Gi"])
    if rng.random() < 0.2:
        requests["example.com/dev"] = "1"
    ports = [host_port(8080)] if rng.random() < 0.2 else None
    return pod(
        "incoming",
        labels={"app": "web"},
        containers=[container(requests=requests, ports=ports)],
        priority=rng.choice([0, 50, 100]),
        **spec,
    )


def test_same_feasible_nodes_as_evaluate_on_random_clusters() -> None:
    rng = random.Random(20261202)
    compared = fitting = 0
    for _ in range(600):
        nodes, pods = _random_cluster(rng)
        snap = NodeInfoSnapshot(nodes, pods)
        incoming = _random_pod(rng)
        want = evaluate(incoming, snap, preemption=False).feasible
        assert sorted(feasible_nodes(incoming, snap).names) == sorted(want), incoming
        compared += 1
        fitting += bool(want)
    # Both outcomes are well represented, so the comparison means something.
    assert compared == 600 and 100 < fitting < 550


def test_limit_and_rotating_start() -> None:
    snap = NodeInfoSnapshot([node(f"n{i}") for i in range(6)], [])
    p = pod("p", cpu="1")
    first = feasible_nodes(p, snap, limit=2, start=0)
    assert first.names == ("n0", "n1") and first.next_start == 2
    second = feasible_nodes(p, snap, limit=2, start=first.next_start)
    assert second.names == ("n2", "n3")
    wrapped = feasible_nodes(p, snap, limit=3, start=5)
    assert wrapped.names == ("n5", "n0", "n1") and wrapped.next_start == 2
    assert feasible_nodes(p, snap).names == tuple(f"n{i}" for i in range(6))


def test_examined_counts_rejected_nodes_too() -> None:
    snap = NodeInfoSnapshot([node("a", cpu="1"), node("b"), node("c")], [])
    found = feasible_nodes(pod("p", cpu="2"), snap, limit=1)
    assert found.names == ("b",) and found.examined == 2 and found.next_start == 2


def test_pods_needing_unevaluated_filters_are_rejected() -> None:
    p = pod(
        "p", cpu="1", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    )
    found = feasible_nodes(p, NodeInfoSnapshot([node("a")], []))
    assert found.rejected and found.names == ()
    assert "VolumeBinding" in found.not_evaluated


def test_prefilter_conflict_rejects() -> None:
    p = pod("p", affinity=node_affinity(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}],
         "matchExpressions": [expr("x", "Exists")]},
    ))  # fmt: skip
    found = feasible_nodes(p, NodeInfoSnapshot([node("a"), node("b")], []))
    # The union of names is {a, b}: no conflict; node b lacks label x.
    assert found.names == ("a",) and not found.rejected


def test_empty_snapshot() -> None:
    found = feasible_nodes(pod("p"), NodeInfoSnapshot([], []))
    assert found.names == () and found.examined == 0 and not found.rejected


@pytest.mark.parametrize(
    ("nodes", "percentage", "want"),
    [(0, 0, 0), (50, 0, 50), (99, 0, 99), (100, 0, 100), (500, 0, 230), (1000, 0, 420),
     (5000, 0, 500), (20000, 0, 1000), (1000, 10, 100), (1000, 30, 300), (1000, 100, 1000)],
)  # fmt: skip
def test_nodes_to_find_is_kube_schedulers(nodes: int, percentage: int, want: int) -> None:
    assert nodes_to_find(nodes, percentage) == want
