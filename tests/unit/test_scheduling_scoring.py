"""Each default score plugin of kube-scheduler v1.36 on plain-dict fixtures, with the figures
worked out by hand from the Go formulas (pkg/scheduler/framework/plugins/*): integer division,
NormalizeScore over the feasible nodes only, then the weights of default_plugins.go."""

from __future__ import annotations

import math
from typing import Any

import pytest
from test_filters_support import container, expr, node, pod

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.filters.spread import go_round
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.scoring import (
    BINPACK,
    SPREAD,
    WEIGHTS,
    best_node,
    normalized_image_name,
    score_nodes,
)

MB = 1024 * 1024
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def parts(
    p: dict[str, Any], snap: NodeInfoSnapshot, names: list[str], plugin: str
) -> dict[str, int]:
    return {s.name: s.parts[plugin] for s in score_nodes(p, snap, names)}


def zoned(name: str, zone: str | None, **kw: Any) -> dict[str, Any]:
    labels = dict(kw.pop("labels", {}))
    if zone is not None:
        labels[ZONE] = zone
    return node(name, labels=labels, **kw)


def running(name: str, where: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return pod(name, node_name=where, labels=labels, **spec)


def test_weights_are_kube_schedulers_defaults() -> None:
    assert WEIGHTS == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }


def test_taint_toleration_reverses_against_the_most_tainted_node() -> None:
    def soft(key: str) -> dict[str, str]:
        return {"key": key, "value": "x", "effect": "PreferNoSchedule"}

    snap = NodeInfoSnapshot(
        [node("a", taints=[soft("k1"), soft("k2")]), node("b", taints=[soft("k1")]), node("c")]
    )
    # raw 2, 1, 0; max 2: 100 - 100*2/2, 100 - 100*1/2, 100 - 0
    assert parts(pod("p"), snap, ["a", "b", "c"], "TaintToleration") == {"a": 0, "b": 50, "c": 100}
    tolerant = pod("t", tolerations=[{"key": "k2", "operator": "Exists"}])
    # k2 tolerated: raw 1, 1, 0; max 1
    assert parts(tolerant, snap, ["a", "b", "c"], "TaintToleration") == {"a": 0, "b": 0, "c": 100}


def test_node_affinity_normalises_against_the_best_node() -> None:
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 7, "preference": {"matchExpressions": [expr("zone", "In", "z1")]}},
        {"weight": 5, "preference": {"matchExpressions": [expr("disk", "In", "ssd")]}},
    ]}}  # fmt: skip
    snap = NodeInfoSnapshot(
        [
            node("a", labels={"zone": "z1"}),
            node("b", labels={"disk": "ssd"}),
            node("c", labels={"zone": "z1", "disk": "ssd"}),
            node("d"),
        ]
    )
    # raw 7, 5, 12, 0; max 12: 700//12 = 58, 500//12 = 41
    got = parts(pod("p", affinity=preferred), snap, ["a", "b", "c", "d"], "NodeAffinity")
    assert got == {"a": 58, "b": 41, "c": 100, "d": 0}


def test_fit_least_and_most_allocated_average_the_allocatable_resources() -> None:
    snap = NodeInfoSnapshot(
        [node("a", cpu="4", memory="8Gi"), node("nomem", cpu="4", memory="0")],
        [running("x", "a", {}, containers=[container(cpu="1", memory="2Gi")])],
    )
    p = pod("p", cpu="1", memory="1Gi")
    # a: cpu (4000-2000)*100/4000 = 50, memory (8-3)*100/8 = 62 -> (50+62)/2 = 56
    # nomem: memory has no allocatable and is left out: cpu (4000-1000)*100/4000 = 75
    assert parts(p, snap, ["a", "nomem"], "NodeResourcesFit") == {"a": 56, "nomem": 75}
    packed = {s.name: s.parts["NodeResourcesFit"] for s in score_nodes(p, snap, ["a"], BINPACK)}
    assert packed == {"a": (50 + 37) // 2}  # cpu 2000*100/4000, memory 3*100/8 = 37


def test_balanced_allocation_scores_the_improvement_and_skips_best_effort_pods() -> None:
    snap = NodeInfoSnapshot(
        [node("a", cpu="4", memory="8Gi")],
        [running("x", "a", {}, containers=[container(cpu="1", memory="4Gi")])],
    )
    # before: fractions .25, .5 -> std .125 -> int(87.5) = 87; after (cpu +1): .5, .5 -> 100
    # 50 + (50 + 100 - 87) / 2 = 50 + 31
    got = parts(pod("p", cpu="1"), snap, ["a"], "NodeResourcesBalancedAllocation")
    assert got == {"a": 81}
    assert parts(pod("be"), snap, ["a"], "NodeResourcesBalancedAllocation") == {"a": 0}


def with_images(n: dict[str, Any], *images: tuple[list[str], int]) -> dict[str, Any]:
    n["status"]["images"] = [{"names": names, "sizeBytes": size} for names, size in images]
    return n


def test_image_locality_scales_by_the_share_of_nodes_having_the_image() -> None:
    snap = NodeInfoSnapshot(
        [
            with_images(node("a"), (["docker.io/library/nginx:1.25", "nginx:1.25"], 500 * MB)),
            with_images(node("b"), (["nginx:1.25"], 500 * MB)),
            node("c"),
        ]
    )
    c = container()
    c["image"] = "nginx:1.25"
    p = pod("p", containers=[c])
    # 2 of 3 nodes: int(500MB * 2/3) = 349525333; (349525333 - 23MB) * 100 / (1000MB - 23MB)
    scaled = int(float(500 * MB) * (2.0 / 3.0))
    assert scaled == 349525333
    expected = 100 * (scaled - 23 * MB) // (1000 * MB - 23 * MB)
    assert expected == 31
    assert parts(p, snap, ["a", "b", "c"], "ImageLocality") == {"a": 31, "b": 31, "c": 0}


def test_image_names_without_a_tag_mean_latest() -> None:
    assert normalized_image_name("nginx") == "nginx:latest"
    assert normalized_image_name("localhost:5000/app") == "localhost:5000/app:latest"
    assert normalized_image_name("nginx:1") == "nginx:1"
    assert normalized_image_name("nginx@sha256:ab") == "nginx@sha256:ab"


def test_go_round_goes_half_away_from_zero() -> None:
    assert [go_round(x) for x in (2.5, 3.5, 0.49, -2.5)] == [3, 4, 0, -3]


WEB = {"app": "web"}


def soft_spread(key: str, max_skew: int = 1) -> dict[str, Any]:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": WEB},
    }


def test_topology_spread_scores_schedule_anyway_constraints() -> None:
    nodes = [
        zoned("a", "z1"),
        zoned("b", "z1"),
        zoned("c", "z2"),
        zoned("d", "z3"),
        zoned("e", None),
    ]
    pods = [running("w1", "a", WEB), running("w2", "a", WEB), running("w3", "c", WEB)]
    snap = NodeInfoSnapshot(nodes, pods)
    p = pod("p", labels=WEB, topologySpreadConstraints=[soft_spread(ZONE)])
    # e lacks the zone: ignored (0). 3 zones -> weight log(5); counts z1 2, z2 1, z3 0
    w = math.log(5)
    assert [round(2 * w, 4), round(w, 4)] == [3.2189, 1.6094]
    # raw a, b: round(3.22) = 3; c: round(1.61) = 2; d: 0. 100*(3+0-s)/3
    got = parts(p, snap, ["a", "b", "c", "d", "e"], "PodTopologySpread")
    assert got == {"a": 0, "b": 0, "c": 33, "d": 100, "e": 0}


def test_topology_spread_counts_only_domains_of_feasible_nodes() -> None:
    nodes = [zoned("a", "z1"), zoned("c", "z2"), zoned("d", "z3")]
    snap = NodeInfoSnapshot(nodes, [running("w1", "a", WEB), running("w3", "c", WEB)])
    p = pod("p", labels=WEB, topologySpreadConstraints=[soft_spread(ZONE, 2)])
    # only c and d feasible: 2 zones -> log(4); c: round(1*1.386 + 1) = 2, d: round(0 + 1) = 1
    assert parts(p, snap, ["c", "d"], "PodTopologySpread") == {"c": 50, "d": 100}


def test_no_constraints_and_no_selecting_workload_skips_topology_spread() -> None:
    snap = NodeInfoSnapshot([zoned("a", "z1"), zoned("b", "z2")], [running("w", "a", WEB)])
    assert parts(pod("p", labels=WEB), snap, ["a", "b"], "PodTopologySpread") == {"a": 0, "b": 0}


SERVICE = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": WEB}}
REPLICA_SET = {
    "metadata": {"name": "web-1", "namespace": "default"},
    "spec": {"selector": {"matchLabels": WEB}},
}


@pytest.mark.parametrize(
    "workloads, owner",
    [
        ({"Service": [SERVICE]}, None),
        ({"ReplicaSet": [REPLICA_SET]}, {"apiVersion": "apps/v1", "kind": "ReplicaSet"}),
    ],
    ids=["service", "replicaset-owner"],
)
def test_system_default_spreading_uses_the_selecting_workloads(
    workloads: dict[str, list[dict[str, Any]]], owner: dict[str, str] | None
) -> None:
    nodes = [zoned("a", "z1"), zoned("b", "z1"), zoned("c", "z2")]
    pods = [running("w1", "a", WEB), running("w2", "a", WEB), running("w3", "c", WEB)]
    snap = NodeInfoSnapshot(nodes, pods, workloads=workloads)
    p = pod("p", labels=WEB)
    if owner is not None:
        p["metadata"]["ownerReferences"] = [{**owner, "name": "web-1", "controller": True}]
    # hostname maxSkew 3 over 3 nodes: log(5); zone maxSkew 5 over 2 zones: log(4)
    # a: 2 log5 + 2 + 2 log4 + 4 = 11.99 -> 12; b: 0 + 2 + 2 log4 + 4 = 8.77 -> 9
    # c: log5 + 2 + log4 + 4 = 9.00 -> 9; then 100*(12+9-s)/12: 75, 100, 100
    got = parts(p, snap, ["a", "b", "c"], "PodTopologySpread")
    assert got == {"a": 75, "b": 100, "c": 100}


def test_inter_pod_affinity_sums_both_sides_then_min_max_normalises() -> None:
    affinity = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "db"}},
                        "topologyKey": ZONE,
                    },
                }
            ]
        },  # fmt: skip
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 5,
                    "podAffinityTerm": {"labelSelector": {"matchLabels": WEB}, "topologyKey": HOST},
                }
            ]
        },  # fmt: skip
    }
    client = {"role": "client"}
    term = {"labelSelector": {"matchLabels": client}, "topologyKey": ZONE}
    likes_clients = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 3, "podAffinityTerm": term}]}}  # fmt: skip
    needs_clients = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    snap = NodeInfoSnapshot(
        [zoned("a", "z1"), zoned("b", "z1"), zoned("c", "z2")],
        [
            running("db", "a", {"app": "db"}),
            running("web", "b", WEB),
            running("x", "c", {}, affinity=likes_clients),
            running("y", "c", {}, affinity=needs_clients),
        ],
    )
    p = pod("p", labels=client, affinity=affinity)
    # z1 +10 (db); b's hostname -5 (web); z2 +3 (x's preferred) +1 (y's required, hard weight 1)
    # raw a 10, b 5, c 4 -> int(100 * (s - 4) / 6): 100, 16, 0
    assert parts(p, snap, ["a", "b", "c"], "InterPodAffinity") == {"a": 100, "b": 16, "c": 0}
    # Without terms of its own, the pod still meets x's and y's: z2 4, z1 0 -> c 100
    plain = pod("q", labels=client)
    assert parts(plain, snap, ["a", "b", "c"], "InterPodAffinity") == {"a": 0, "b": 0, "c": 100}


def test_scores_normalise_over_the_feasible_nodes_then_weigh() -> None:
    snap = NodeInfoSnapshot(
        [zoned("a", "z1", cpu="8", memory="16Gi"), zoned("b", "z2"), zoned("c", "z3")],
        [running("w1", "b", WEB), running("w2", "c", WEB), running("w3", "c", WEB)],
    )
    p = pod("p", labels=WEB, cpu="1", memory="2Gi", topologySpreadConstraints=[soft_spread(ZONE)])
    scores = {s.name: s for s in score_nodes(p, snap, ["b", "c"])}
    # a is not feasible here: 2 zones -> log(4); b round(1.386) = 1, c round(2.77) = 3
    assert {n: s.parts["PodTopologySpread"] for n, s in scores.items()} == {
        "b": 100 * (3 + 1 - 1) // 3,
        "c": 100 * (3 + 1 - 3) // 3,
    }
    for s in scores.values():
        assert s.total == sum(WEIGHTS[k] * v for k, v in s.parts.items())
    # Over all three nodes the emptiest zone and the largest node win.
    assert best_node(p, snap, ["a", "b", "c"], SPREAD) is not None
    assert Algorithm().decide(p, snap).node == "a"


def test_remembered_counts_follow_pods_assumed_between_decisions() -> None:
    snap = NodeInfoSnapshot([zoned("a", "z1"), zoned("b", "z2")], [running("w1", "a", WEB)])
    spread = [soft_spread(ZONE)]
    first = pod("r1", labels=WEB, cpu="100m", topologySpreadConstraints=spread)
    assert Algorithm().decide(first, snap).node == "b"
    snap.assume(first, "b")
    # z1 and z2 now hold one each: PodTopologySpread ties, the name decides (a stale count of
    # z2 would pick b again)
    second = pod("r2", labels=WEB, cpu="100m", topologySpreadConstraints=spread)
    assert parts(second, snap, ["a", "b"], "PodTopologySpread") == {"a": 100, "b": 100}
    assert Algorithm().decide(second, snap).node == "a"


def test_preferred_terms_with_an_empty_namespace_selector_count_every_namespace() -> None:
    everywhere = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": {**term_of({"app": "db"}, ZONE), "namespaceSelector": {}}}]}}  # fmt: skip
    snap = NodeInfoSnapshot(
        [zoned("a", "z1"), zoned("b", "z2")],
        [pod("db", namespace="other", node_name="b", labels={"app": "db"})],
    )
    got = parts(pod("p", affinity=everywhere), snap, ["a", "b"], "InterPodAffinity")
    assert got == {"a": 0, "b": 100}
    own_namespace = pod("q", affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": term_of({"app": "db"}, ZONE)}]}})  # fmt: skip
    assert parts(own_namespace, snap, ["a", "b"], "InterPodAffinity") == {"a": 0, "b": 0}


def term_of(labels: dict[str, str], key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
