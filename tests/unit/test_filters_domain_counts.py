"""The snapshot's remembered per-domain pod counts (``NodeInfoSnapshot.domain_counts``), per-node
scoring inputs (``NodeInfo.scoring_inputs``) and nodes with (anti-)affinity pods against fresh
counts, after every kind of change a scheduler's cache makes between two decisions."""

from __future__ import annotations

import random
from typing import Any

from test_filters_support import node, pod

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.filters.nodeinfo import NodeInfo
from kschedctl.model.filters.selectors import EVERYTHING, label_selector

ZONE = "topology.kubernetes.io/zone"
APP_A = label_selector({"matchLabels": {"app": "a"}})


def fresh(
    snap: NodeInfoSnapshot, key: str, absent_as: str | None, required: tuple[str, ...]
) -> dict[str, int]:
    """What ``domain_counts(frozenset({"default"}), APP_A, True, ...)`` must be: every pod
    counted again."""
    out: dict[str, int] = {}
    for n in snap:
        value = n.labels.get(key, absent_as)
        if value is None or not all(k in n.labels for k in required):
            continue
        matching = sum(
            1
            for p in n.pods
            if p.namespace == "default" and not p.deleting and APP_A.matches(p.labels)
        )
        out[value] = out.get(value, 0) + matching
    return out


def test_domain_counts_follow_every_change_once_computed() -> None:
    rng = random.Random(7)
    zones = ["z0", "z1", "z2"]
    nodes = [node(f"n{i}", labels={ZONE: zones[i % 3]} if i % 4 else {}) for i in range(8)]
    pods = [
        pod(f"p{j}", node_name=f"n{rng.randrange(8)}", labels={"app": rng.choice("ab")})
        for j in range(30)
    ]
    snap = NodeInfoSnapshot(nodes, pods)
    pending = [pod(f"x{k}", labels={"app": rng.choice("ab")}) for k in range(40)]
    cases: list[tuple[str, str | None, tuple[str, ...]]] = [
        (ZONE, "", ()),
        (ZONE, None, ()),
        ("kubernetes.io/hostname", None, ()),
        ("kubernetes.io/hostname", None, (ZONE,)),
    ]
    for step in range(60):
        for key, absent_as, required in cases:
            got = snap.domain_counts(frozenset({"default"}), APP_A, True, key, absent_as, required)
            assert dict(got) == fresh(snap, key, absent_as, required), (step, key)
        names = [n.name for n in snap]
        change = step % 6
        if change == 0:
            snap.assume(pending[step % 40], rng.choice(names))
        elif change == 1:
            snap.forget(pending[(step - 1) % 40])
        elif change == 2:
            bound = [p for n in snap for p in n.pods]
            snap.remove_pod(rng.choice(bound).raw)
        elif change == 3:
            snap.upsert_node(node(rng.choice(names), labels={ZONE: rng.choice(zones)}))
        elif change == 4:
            snap.remove_node(rng.choice(names))
        else:
            snap.upsert_node(node(f"new{step}", labels={ZONE: rng.choice(zones)}))
            snap.upsert_pod(pod(f"q{step}", node_name=f"new{step}", labels={"app": "a"}))


def test_domain_counts_match_everything_and_any_namespace() -> None:
    snap = NodeInfoSnapshot(
        [node("n1", labels={ZONE: "z"}), node("n2", labels={ZONE: "z"}), node("n3")],
        [
            pod("a", node_name="n1"),
            pod("b", namespace="other", node_name="n2"),
            pod("c", node_name="n3"),
        ],
    )
    assert dict(snap.domain_counts(None, EVERYTHING, False, ZONE)) == {"z": 2}
    assert dict(snap.domain_counts(frozenset({"default"}), EVERYTHING, False, ZONE, "")) == {
        "z": 1,
        "": 1,
    }


def test_scoring_inputs_follow_every_change() -> None:
    snap = NodeInfoSnapshot([node("n", cpu="4", memory="8Gi")], [pod("a", node_name="n", cpu="1")])

    def expected(info: NodeInfo) -> tuple[int, int, int, int, int, int]:
        nz = info.non_zero_requested()
        return (
            info.allocatable.get("cpu", 0),
            info.allocatable.get("memory", 0),
            nz["cpu"],
            nz["memory"],
            info.requested.get("cpu", 0),
            info.requested.get("memory", 0),
        )

    info = snap.node("n")
    assert (
        info.scoring_inputs() == expected(info) == (4000, 8 * 1024**3, 1000, 200 * 1024**2, 1000, 0)
    )
    pending = pod("x", cpu="500m", memory="1Gi")
    snap.assume(pending, "n")
    assert info.scoring_inputs() == expected(info)
    assert info.scoring_inputs()[4:] == (1500, 1024**3)
    snap.forget(pending)
    assert info.scoring_inputs() == expected(info)
    assert info.scoring_inputs()[4:] == (1000, 0)
    snap.upsert_node(node("n", cpu="8"))
    assert snap.node("n").scoring_inputs()[0] == 8000


def _affinity(kind: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": ZONE}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def test_nodes_with_affinity_pods_follow_every_change() -> None:
    """The index the inter-pod affinity plugin visits instead of every node: the same nodes,
    in node order, as a scan of every node would find."""
    rng = random.Random(11)
    kinds = [None, "podAffinity", "podAntiAffinity"]

    def some_pod(name: str, node_name: str | None = None) -> dict[str, Any]:
        kind = rng.choice(kinds)
        extra = {"affinity": _affinity(kind)} if kind else {}
        return pod(name, node_name=node_name, labels={"app": "a"}, **extra)

    nodes = [node(f"n{i}", labels={ZONE: f"z{i % 3}"}) for i in range(8)]
    snap = NodeInfoSnapshot(nodes, [some_pod(f"p{j}", f"n{rng.randrange(8)}") for j in range(12)])
    pending = [some_pod(f"x{k}") for k in range(40)]
    for step in range(120):
        assert snap.nodes_with_affinity_pods() == [n for n in snap if n.affinity_pods], step
        assert snap.nodes_with_anti_affinity_pods() == [n for n in snap if n.anti_affinity_pods], (
            step
        )
        names = [n.name for n in snap]
        bound = [p for n in snap for p in n.pods]
        change = step % 6
        if change == 0:
            snap.assume(pending[step % 40], rng.choice(names))
        elif change == 1:
            snap.forget(pending[(step - 1) % 40])
        elif change == 2 and bound:
            snap.remove_pod(rng.choice(bound).raw)
        elif change == 3:
            snap.upsert_node(node(rng.choice(names), labels={ZONE: "z9"}))
        elif change == 4 and len(names) > 3:
            snap.remove_node(rng.choice(names))
        else:
            snap.upsert_node(node(f"new{step}", labels={ZONE: "z1"}))
            snap.upsert_pod(some_pod(f"q{step}", f"new{step}"))
            snap.upsert_node(node(f"n{step % 8}", labels={ZONE: "z0"}))  # back, if it was gone
    assert snap.nodes_with_affinity_pods() and snap.nodes_with_anti_affinity_pods()
