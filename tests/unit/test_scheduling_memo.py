"""The scheduler's node memo (filters.nodememo, scheduling.memo): decisions with what earlier
pods of the same shape learnt are the decisions a full evaluation gives, while nodes, pods,
nominations and DRA names change under them."""

from __future__ import annotations

import random
from typing import Any

import pytest
from test_filters_support import expr, host_port, node, pod, pod_term

from kschedctl.model.filters import NodeInfoSnapshot, feasible_nodes
from kschedctl.model.filters import snapshot as snapshot_module
from kschedctl.model.filters.nodememo import ShapeMemo
from kschedctl.model.scheduling.algorithm import Algorithm, Decision
from kschedctl.model.scheduling.memo import SHAPES, NodeMemo, pod_shape
from kschedctl.model.scheduling.scoring import BINPACK, SPREAD

SOFT = {"key": "spot", "value": "1", "effect": "PreferNoSchedule"}
HARD = {"key": "gpu", "value": "1", "effect": "NoSchedule"}
IMAGE = "registry.example/app:1"


def cluster_node(rng: random.Random, name: str) -> dict[str, Any]:
    taints = [t for t in (SOFT, HARD) if rng.random() < 0.2]
    n = node(
        name,
        cpu=rng.choice(["1", "2", "4"]),
        memory=rng.choice(["2Gi", "8Gi"]),
        labels={
            "disk": rng.choice(["ssd", "hdd"]),
            "topology.kubernetes.io/zone": f"z{rng.randrange(3)}",
        },
        taints=taints or None,
        unschedulable=rng.random() < 0.05,
    )
    if rng.random() < 0.3:
        n["status"]["images"] = [{"names": [IMAGE], "sizeBytes": 300 * 1024 * 1024}]
    return n


def shapes() -> list[dict[str, Any]]:
    """Pods of a few workloads: some the memo serves, some it must leave alone."""
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [expr("disk", "In", "ssd")]}}]}}  # fmt: skip
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        pod_term({"app": "anti"})]}}  # fmt: skip
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
               "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "s"}}}]  # fmt: skip
    image = pod("x", cpu="100m")
    image["spec"]["containers"][0]["image"] = IMAGE
    return [
        pod("x", cpu="300m", memory="256Mi", labels={"app": "web"}),
        pod("x", cpu="1", nodeSelector={"disk": "ssd"}),
        pod("x", cpu="200m", affinity=preferred),
        pod("x", cpu="500m", tolerations=[{"key": "gpu", "operator": "Exists"}]),
        pod(
            "x",
            cpu="100m",
            containers=[
                {
                    "name": "c",
                    "ports": [host_port(8080)],
                    "resources": {"requests": {"cpu": "100m"}},
                }
            ],
        ),  # fmt: skip
        image,
        pod("x", cpu="100m", labels={"app": "anti"}, affinity=anti),
        pod("x", cpu="100m", labels={"app": "s"}, topologySpreadConstraints=spread),
    ]


def replica(shape: dict[str, Any], i: int) -> dict[str, Any]:
    md = {**shape["metadata"], "name": f"p{i}", "uid": f"uid-p{i}", "resourceVersion": str(i)}
    return {**shape, "metadata": md}


def outcome(d: Decision) -> tuple[Any, ...]:
    return d.node, d.score, d.feasible, d.next_start, d.message


@pytest.mark.parametrize("seed", range(6))
def test_remembered_decisions_are_the_full_evaluations(seed: int) -> None:
    rng = random.Random(seed)
    strategy = (SPREAD, BINPACK)[seed % 2]
    pct = (0, 10, 40)[seed % 3]
    names = [f"n{i:03d}" for i in range(rng.randrange(110, 180))]
    snap = NodeInfoSnapshot([cluster_node(rng, n) for n in names])
    remembering = Algorithm(strategy, pct)
    kinds = shapes()
    bound: list[dict[str, Any]] = []
    nominated: list[str] = []
    start = 0
    served = 0
    for i in range(400):
        action = rng.random()
        if action < 0.7:
            p = replica(kinds[rng.randrange(len(kinds))], i)
            remembered = remembering.decide(p, snap, start)
            full = Algorithm(strategy, pct).decide(p, snap, start)  # a new one: no memo
            assert outcome(remembered) == outcome(full), (seed, i, p["spec"])
            start = remembered.next_start
            if remembered.node is not None:
                snap.assume(p, remembered.node)
                bound.append({**p, "spec": {**p["spec"], "nodeName": remembered.node}})
        elif action < 0.8 and nominated:  # a nominated preemptor goes (bound elsewhere)
            snap.remove_pod(nominated.pop())
        elif action < 0.8 and bound:  # a pod goes, or the watch confirms one (Running)
            p = bound.pop(rng.randrange(len(bound)))
            if rng.random() < 0.5:
                snap.remove_pod(p["metadata"]["uid"])
            else:
                snap.upsert_pod({**p, "status": {"phase": "Running"}})
        elif action < 0.87:  # a node is relabelled, retainted or resized
            snap.upsert_node(cluster_node(rng, rng.choice(names)))
        elif action < 0.9:  # a node joins or leaves
            if rng.random() < 0.5:
                names.append(f"m{i:03d}")
                snap.upsert_node(cluster_node(rng, names[-1]))
            else:
                snap.remove_node(names.pop(rng.randrange(len(names))))
        elif action < 0.95:  # another scheduler's preemptor is nominated somewhere
            preemptor = pod(f"nom{i}", cpu="1", schedulerName="default-scheduler")
            preemptor["status"]["nominatedNodeName"] = rng.choice(names)
            preemptor["spec"]["priority"] = 10
            snap.upsert_pod(preemptor)
            nominated.append(preemptor["metadata"]["uid"])
        else:  # a DeviceClass makes an extended resource DRA-backed, or stops
            classes = [
                {"metadata": {"name": "c"}, "spec": {"extendedResourceName": "example.com/x"}}
            ]
            snap.set_dra(classes if rng.random() < 0.5 else [], None)
        served += sum(
            1 for m in remembering.memo._shapes.values() if m is not None and m.fits is not None
        )
    assert served, "the memo never served a decision: the comparison proved nothing"


def test_a_shape_is_the_pod_without_its_identity() -> None:
    a, b = replica(shapes()[0], 1), replica(shapes()[0], 2)
    b["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "message": "x"}]
    assert pod_shape(a) == pod_shape(b)
    c = replica(shapes()[0], 3)
    c["spec"] = {**c["spec"], "tolerations": [{"key": "gpu", "operator": "Exists"}]}
    assert pod_shape(a) != pod_shape(c)


def test_a_shape_gets_a_memo_the_second_time_and_old_shapes_go() -> None:
    snap = NodeInfoSnapshot([node("a"), node("b")])
    memo = NodeMemo()
    first = replica(shapes()[0], 1)
    assert memo.memo(first, snap) is None  # a one-off pod costs no memo
    kept = memo.memo(replica(shapes()[0], 2), snap)
    assert kept is not None and memo.memo(replica(shapes()[0], 3), snap) is kept
    for i in range(SHAPES):
        memo.memo(pod(f"other{i}", cpu=f"{i + 1}m"), snap)
    assert memo.memo(replica(shapes()[0], 4), snap) is None  # least recently used: gone
    snap.upsert_node(node("c"))  # a new node set: a new memo
    memo.memo(first, snap)
    assert memo.memo(first, snap) is not kept


def test_only_changed_nodes_are_filtered_again() -> None:
    snap = NodeInfoSnapshot([node(f"n{i}", cpu="1") for i in range(4)])
    p = pod("p", cpu="600m")
    memo = ShapeMemo(snap)
    assert feasible_nodes(p, snap, memo=memo).names == ("n0", "n1", "n2", "n3")
    snap.assume(pod("q", cpu="600m"), "n2")
    assert memo.current(snap)
    assert feasible_nodes(p, snap, memo=memo).names == ("n0", "n1", "n3")
    assert memo.refilter == set()
    snap.remove_pod("uid-default-q")
    assert feasible_nodes(p, snap, memo=memo, limit=2, start=3).names == ("n3", "n0")


def test_the_change_log_is_emptied_with_a_new_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_module, "_CHANGES_KEPT", 5)
    snap = NodeInfoSnapshot([node("a")])
    epoch = snap.node_epoch
    for i in range(12):
        snap.upsert_pod(pod(f"p{i}", node_name="a", cpu="1m"))
    assert snap.node_epoch > epoch and len(snap.changes) <= 6
