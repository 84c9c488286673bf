"""One decision: scoring strategies, preferences, ties, and fallback steps only when needed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_filters_support import expr, node, node_affinity, pod

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.scheduling.algorithm import REASON_STRICT_PREFER, Algorithm
from kschedctl.model.scheduling.explain import explain
from kschedctl.model.scheduling.policy import POD_POLICY_ANNOTATION
from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.model.scheduling.scoring import (
    BINPACK,
    SPREAD,
    STRATEGIES,
    best,
    best_node,
    score_nodes,
)
from kschedctl.model.scheduling.strategies import DEFAULT_STRATEGY

HEAD = {"apiVersion": "kschedctl.io/v1alpha1", "kind": "FallbackPolicy"}


def policy(*steps: dict[str, Any], **top: Any) -> Any:
    return parse_policy({**HEAD, **top, "fallbacks": list(steps)}, "policy.yaml")


def busy(name: str, node_name: str, cpu: str, memory: str = "0") -> dict[str, Any]:
    return pod(name, node_name=node_name, cpu=cpu, memory=memory)


def test_spread_prefers_the_emptiest_node_binpack_the_fullest() -> None:
    nodes = [node("a"), node("b"), node("c")]
    existing = [busy("x", "a", "3", "6Gi"), busy("y", "b", "1", "2Gi")]
    snap = NodeInfoSnapshot(nodes, existing)
    p = pod("p", cpu="500m", memory="1Gi")
    assert Algorithm(SPREAD).decide(p, snap).node == "c"
    assert Algorithm(BINPACK).decide(p, snap).node == "a"


def test_binpack_still_respects_capacity() -> None:
    snap = NodeInfoSnapshot([node("a"), node("b")], [busy("x", "a", "3900m")])
    assert Algorithm(BINPACK).decide(pod("p", cpu="500m"), snap).node == "b"


def test_ties_go_to_the_first_name_so_decisions_repeat() -> None:
    snap = NodeInfoSnapshot([node("n3"), node("n1"), node("n2")], [])
    decisions = {Algorithm().decide(pod("p", cpu="1"), snap).node for _ in range(5)}
    assert decisions == {"n1"}


def test_preferred_node_affinity_outweighs_a_little_free_capacity() -> None:
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "preference": {"matchExpressions": [expr("disktype", "In", "ssd")]}}]}}  # fmt: skip
    snap = NodeInfoSnapshot(
        [node("hdd"), node("ssd", labels={"disktype": "ssd"})], [busy("x", "ssd", "1")]
    )
    assert Algorithm().decide(pod("p", cpu="100m", affinity=preferred), snap).node == "ssd"
    assert Algorithm().decide(pod("q", cpu="100m"), snap).node == "hdd"


def test_prefer_no_schedule_taints_push_pods_away() -> None:
    soft = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
    snap = NodeInfoSnapshot([node("a", taints=soft), node("b")], [busy("x", "b", "2")])
    assert Algorithm().decide(pod("p", cpu="100m"), snap).node == "b"
    tolerant = pod("t", cpu="100m", tolerations=[{"key": "spot", "operator": "Exists"}])
    assert Algorithm().decide(tolerant, snap).node == "a"


def test_scores_are_kube_schedulers_weighted_sum() -> None:
    snap = NodeInfoSnapshot([node("a", cpu="4", memory="8Gi")], [busy("x", "a", "1", "2Gi")])
    (score,) = score_nodes(pod("p", cpu="1", memory="2Gi"), snap, ["a"], SPREAD)
    # cpu 2/4 and memory 4Gi/8Gi used after placing: 50 free each; balanced before and
    # after (100 both): 50 + (50 + 100 - 100) / 2 = 75.
    assert score.parts == {
        "TaintToleration": 100,
        "NodeAffinity": 0,
        "NodeResourcesFit": 50,
        "PodTopologySpread": 0,
        "InterPodAffinity": 0,
        "NodeResourcesBalancedAllocation": 75,
        "ImageLocality": 0,
    }
    assert score.total == 3 * 100 + 2 * 0 + 50 + 2 * 0 + 2 * 0 + 75 + 0
    (packed,) = score_nodes(pod("p", cpu="1", memory="2Gi"), snap, ["a"], BINPACK)
    assert packed.parts["NodeResourcesFit"] == 50
    assert best([]) is None


def test_containers_without_requests_count_as_100m_and_200mi_for_scoring() -> None:
    snap = NodeInfoSnapshot([node("a", cpu="1", memory="1000Mi")], [pod("x", node_name="a")])
    (score,) = score_nodes(pod("p"), snap, ["a"], BINPACK)
    assert score.parts["NodeResourcesFit"] == (200 * 100 // 1000 + 400 * 100 // 1000) // 2


# -- fallbacks -----------------------------------------------------------------------------


SPARE_TAINT = {"key": "pool", "value": "spare", "effect": "NoSchedule"}
SPARE_STEP = {
    "name": "spare-pool",
    "nodePool": {"pool": "spare"},
    "tolerate": [{"key": "pool", "operator": "Equal", "value": "spare", "effect": "NoSchedule"}],
}


def cluster() -> NodeInfoSnapshot:
    return NodeInfoSnapshot(
        [node("main-1", labels={"pool": "main"}, cpu="2"), node("spare-1", labels={"pool": "spare"}, taints=[SPARE_TAINT])],
        [busy("x", "main-1", "1500m")],
    )  # fmt: skip


def test_no_fallback_while_the_pods_own_rules_fit() -> None:
    algo = Algorithm(policy=policy(SPARE_STEP))
    d = algo.decide(pod("p", cpu="100m", nodeSelector={"pool": "main"}), cluster())
    assert d.node == "main-1" and d.step is None and d.tried == ()


def test_fallback_step_places_a_pod_no_node_fits() -> None:
    algo = Algorithm(
        policy=policy({"name": "nothing-here", "nodeSelector": {"pool": "gold"}}, SPARE_STEP)
    )
    d = algo.decide(pod("p", cpu="1", nodeSelector={"pool": "main"}), cluster())
    assert d.node == "spare-1" and d.step is not None and d.step.name == "spare-pool"
    assert d.tried == ("nothing-here", "spare-pool")
    assert d.scheduled_message("ns/p") == (
        "Successfully assigned ns/p to spare-1 by fallback step 'spare-pool' of the scheduler's "
        "policy (node pool pool=spare; tolerate pool=spare:NoSchedule): no node fits under the "
        "pod's own rules"
    )


def test_unlisted_hard_rules_stay_hard() -> None:
    # The pool step does not tolerate the taint: the spare node stays out of reach.
    algo = Algorithm(policy=policy({"name": "pool-only", "nodePool": {"pool": "spare"}}))
    d = algo.decide(pod("p", cpu="1", nodeSelector={"pool": "main"}), cluster())
    assert d.node is None
    assert d.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling. "
        "Fallback steps of the scheduler's policy tried: pool-only: 1 Insufficient cpu, 1 node(s) "
        "had untolerated taint(s)."
    )
    # Resources are never relaxed, whatever the steps.
    huge = Algorithm(policy=policy(SPARE_STEP)).decide(pod("h", cpu="64"), cluster())
    assert huge.node is None and huge.tried == ("spare-pool",)


def test_pod_annotation_policy_wins_and_bad_annotations_are_reported() -> None:
    algo = Algorithm(policy=policy({"name": "from-file", "nodeSelector": {"pool": "gold"}}))
    p = pod("p", cpu="1", nodeSelector={"pool": "main"})
    p["metadata"]["annotations"] = {POD_POLICY_ANNOTATION: json.dumps({"fallbacks": [SPARE_STEP]})}
    d = algo.decide(p, cluster())
    assert d.node == "spare-1" and d.step is not None and d.step.name == "spare-pool"
    p["metadata"]["annotations"] = {POD_POLICY_ANNOTATION: "fallbacks: [{name: x}]"}
    d = algo.decide(p, cluster())
    assert d.node is None and d.tried == ()
    assert d.policy_error == (
        "invalid annotation kschedctl.io/fallback-policy: fallbacks[0]: relaxes nothing: give "
        "nodeSelector, nodeSelectorTerms, nodePool, tolerate, dropPreferred or relax"
    )
    assert (
        d.message is not None
        and "Invalid annotation kschedctl.io/fallback-policy: fallbacks[0]: relaxes nothing"
        in d.message
    )


def test_strict_preferences_until_a_step_drops_them() -> None:
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [expr("disktype", "In", "ssd")]}}]}}  # fmt: skip
    strict = policy({"name": "anywhere", "dropPreferred": True}, strictPreferences=True)
    ssd = node("ssd", labels={"disktype": "ssd"}, cpu="1")
    snap = NodeInfoSnapshot([ssd, node("hdd")], [busy("x", "ssd", "1")])
    p = pod("p", cpu="500m", affinity=preferred)
    d = Algorithm(policy=strict).decide(p, snap)
    assert d.node == "hdd" and d.step is not None and d.step.name == "anywhere"
    roomy = NodeInfoSnapshot(
        [node("ssd", labels={"disktype": "ssd"}), node("hdd")], [busy("x", "ssd", "1")]
    )
    assert Algorithm(policy=strict).decide(p, roomy).node == "ssd"  # no fallback needed


def test_strict_prefer_no_schedule_is_named_in_the_message() -> None:
    soft = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
    strict = policy(
        {"name": "spot-ok", "tolerate": [{"key": "spot", "operator": "Exists"}]},
        strictPreferences=True,
    )
    snap = NodeInfoSnapshot([node("spot", taints=soft)], [])
    d = Algorithm(policy=strict).decide(pod("p", cpu="100m"), snap)
    assert d.node == "spot" and d.step is not None
    none = Algorithm(policy=policy(strictPreferences=True)).decide(pod("p", cpu="100m"), snap)
    assert (
        none.node is None and none.message == f"0/1 nodes are available: 1 {REASON_STRICT_PREFER}."
    )


def test_pods_with_unevaluated_filters_are_refused_with_a_reason() -> None:
    p = pod("p", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "d"}}])
    d = Algorithm().decide(p, NodeInfoSnapshot([node("a")], []))
    assert d.node is None and d.message is not None
    assert "does not evaluate" in d.message and "VolumeBinding" in d.message


def test_no_nodes() -> None:
    d = Algorithm().decide(pod("p"), NodeInfoSnapshot([], []))
    assert d.node is None and d.message == "no nodes available to schedule pods"


def test_sampling_rotates_the_start_like_kube_scheduler() -> None:
    snap = NodeInfoSnapshot([node(f"n{i:03d}") for i in range(200)], [])
    algo = Algorithm()
    first = algo.decide(pod("p", cpu="1"), snap)
    # 200 nodes: kube-scheduler stops after 100 feasible ones, then starts after them.
    assert first.feasible == 100 and first.next_start == 100
    second = algo.decide(pod("p", cpu="1"), snap, first.next_start)
    assert second.node == "n100"


@pytest.mark.parametrize("strategy", [SPREAD, BINPACK])
def test_explain_lists_every_stage(strategy: str) -> None:
    p = pod("p", cpu="1", nodeSelector={"pool": "main"})
    used, error, stages = explain(
        p,
        cluster(),
        policy({"name": "gold", "nodeSelector": {"pool": "gold"}}, SPARE_STEP),
        strategy,
    )
    assert error is None and used.source == "policy.yaml"
    assert [(s.step.name if s.step else None, s.chosen) for s in stages] == [
        (None, None),
        ("gold", None),
        ("spare-pool", "spare-1"),
    ]
    assert (
        stages[0].message
        == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."
    )
    assert stages[2].to_dict()["feasible"] == ["spare-1"]


def test_explain_with_affinity_terms() -> None:
    p = pod("p", affinity=node_affinity({"matchExpressions": [expr("pool", "In", "gold")]}))
    _used, _error, stages = explain(p, cluster(), policy(SPARE_STEP))
    assert stages[0].chosen is None and stages[1].chosen == "spare-1"


def test_the_fast_pick_is_the_best_score() -> None:
    import random

    from kschedctl.model.scheduling.scoring import best_node

    rng = random.Random(7)
    soft = [{"key": "spot", "value": "1", "effect": "PreferNoSchedule"}]
    for _ in range(50):
        nodes = [
            node(f"n{i}", cpu=rng.choice(["2", "4"]), labels={"disk": rng.choice(["ssd", "hdd"])},
                 taints=soft if rng.random() < 0.3 else None)
            for i in range(8)
        ]  # fmt: skip
        busy_pods = [
            busy(f"b{j}", f"n{rng.randrange(8)}", rng.choice(["100m", "1"])) for j in range(6)
        ]
        snap = NodeInfoSnapshot(nodes, busy_pods)
        preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [expr("disk", "In", "ssd")]}}]}}  # fmt: skip
        p = pod("p", cpu="200m", affinity=preferred if rng.random() < 0.5 else None)
        names = [n["metadata"]["name"] for n in nodes]
        for strategy in (SPREAD, BINPACK):
            slow = best(score_nodes(p, snap, names, strategy))
            assert slow is not None
            assert best_node(p, snap, names, strategy) == (slow.name, slow.total)


# --- the STRATEGIES table ---------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda snap: Algorithm("random"),
        lambda snap: Algorithm(strategy="Spread"),
        lambda snap: score_nodes(pod("p"), snap, ["a"], "random"),
        lambda snap: best_node(pod("p"), snap, ["a"], "random"),
        lambda snap: best_node(pod("p"), snap, [], "random"),
        lambda snap: explain(pod("p"), snap, policy(), "random"),
    ],
    ids=[
        "algorithm",
        "algorithm-case",
        "score_nodes",
        "best_node",
        "best_node-no-nodes",
        "explain",
    ],
)
def test_an_unknown_strategy_is_refused_never_treated_as_spread(call: Any) -> None:
    snap = NodeInfoSnapshot([node("a")], [])
    with pytest.raises(
        ValueError, match=r"unknown scoring strategy .*: known strategies are spread, binpack"
    ):
        call(snap)


def test_the_strategy_table_is_what_the_cli_and_the_spec_offer() -> None:
    from kschedctl.cli.scheduler import DEFAULT_CHOICE, Strategy
    from kschedctl.spec import BuiltinSettings

    assert list(STRATEGIES) == [SPREAD, BINPACK]
    assert [s.value for s in Strategy] == list(STRATEGIES)
    assert DEFAULT_CHOICE.value == DEFAULT_STRATEGY == BuiltinSettings().strategy
    assert Algorithm().strategy == DEFAULT_STRATEGY


@pytest.mark.parametrize("allocatable", [0, 1, 3, 1000, 4000])
def test_strategy_scorers_are_kube_schedulers_least_and_most_requested(allocatable: int) -> None:
    for requested in (0, 1, 2, 999, 1000, 4000, 5000):
        least = (
            0
            if allocatable <= 0 or requested > allocatable
            else (allocatable - requested) * 100 // allocatable
        )
        most = 0 if allocatable <= 0 else min(requested, allocatable) * 100 // allocatable
        assert STRATEGIES[SPREAD].fraction(requested, allocatable) == least
        assert STRATEGIES[BINPACK].fraction(requested, allocatable) == most
