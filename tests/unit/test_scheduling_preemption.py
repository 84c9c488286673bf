"""DefaultPreemption (kschedctl.model.filters.preemption) rule by rule on plain dicts, and what
kschedctl's scheduler does with it: only after the fallback steps, the nominated node, the
victims it evicts, the events, and `why` saying the same."""

from __future__ import annotations

from typing import Any

import pytest
from test_filters_support import node, pod, pod_term

from kschedctl.model.filters import (
    NodeInfoSnapshot,
    PreemptionCandidate,
    evaluate,
    failed_scheduling_message,
    pick_node,
)
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.policy import FallbackPolicy
from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.observe.diagnosis import diagnose


def running(
    name: str,
    node_name: str,
    cpu: str,
    priority: int,
    start: str = "2026-01-01T00:00:00Z",
    **kw: Any,
) -> dict[str, Any]:
    p = pod(name, node_name=node_name, cpu=cpu, priority=priority, **kw)
    p["status"]["startTime"] = start
    return p


def pdb(name: str, labels: dict[str, str], allowed: int, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": labels}},
        "status": {"disruptionsAllowed": allowed, **status},
    }


def preemption(p: dict[str, Any], snap: NodeInfoSnapshot) -> Any:
    ev = evaluate(p, snap)
    assert not ev.schedulable and ev.preemption is not None
    return ev.preemption


# --- SelectVictimsOnNode ---------------------------------------------------------------------


def test_the_victim_set_is_minimal_and_most_important_first() -> None:
    snap = NodeInfoSnapshot(
        [node("n", cpu="4")],
        [
            running("a", "n", "1", 1),
            running("b", "n", "1", 2),
            running("c", "n", "2", 3),
        ],
    )
    pre = preemption(pod("p", cpu="2", priority=10), snap)
    # c (most important) is reprieved first and fits beside p; b and a must go.
    assert pre.chosen.node == "n"
    assert pre.chosen.victims == ("default/b", "default/a")
    assert pre.chosen.victim_priorities == (2, 1)
    # the dry run leaves the snapshot as it was
    assert [p.name for p in snap.node("n").pods] == ["a", "b", "c"]
    assert snap.node("n").requested["cpu"] == 4000


def test_equal_priority_the_earlier_started_pod_is_reprieved() -> None:
    snap = NodeInfoSnapshot(
        [node("n", cpu="2")],
        [
            running("late", "n", "1", 1, start="2026-01-01T00:00:09Z"),
            running("early", "n", "1", 1, start="2026-01-01T00:00:01Z"),
        ],
    )
    assert preemption(pod("p", cpu="1", priority=5), snap).chosen.victims == ("default/late",)


def test_only_lower_priority_pods_are_victims() -> None:
    snap = NodeInfoSnapshot(
        [node("n", cpu="2")],
        [running("same", "n", "1", 5), running("higher", "n", "1", 9)],
    )
    pre = preemption(pod("p", cpu="1", priority=5), snap)
    assert not pre.helps and pre.chosen is None
    assert pre.node_reasons == {"n": ("No preemption victims found for incoming pod",)}


def test_a_node_where_evicting_every_lower_pod_is_not_enough_is_no_candidate() -> None:
    snap = NodeInfoSnapshot(
        [node("n", cpu="4")],
        [running("low", "n", "1", 1), running("big", "n", "3", 10)],
    )
    pre = preemption(pod("p", cpu="3", priority=5), snap)
    assert pre.node_reasons == {"n": ("Insufficient cpu",)} and not pre.candidates


def test_the_reason_left_after_evicting_is_what_the_postfilter_reports() -> None:
    web = running("web", "n", "1", 9, labels={"app": "web"})
    p = pod(
        "p",
        cpu="1",
        priority=5,
        affinity={
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_term({"app": "db"})]},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [pod_term({"app": "web"})]},
        },
    )  # fmt: skip
    snap = NodeInfoSnapshot([node("n", cpu="2")], [web, running("low", "n", "1", 1)])
    # evicting "low" frees the cpu; InterPodAffinity still fails, recorded once
    assert preemption(p, snap).node_reasons == {"n": ("node(s) didn't match pod affinity rules",)}


def test_unresolvable_nodes_are_not_candidates() -> None:
    tainted = node("t", cpu="1", taints=[{"key": "k", "effect": "NoSchedule"}])
    snap = NodeInfoSnapshot(
        [tainted, node("n", cpu="1")], [running("low-t", "t", "1", 1), running("peer", "n", "1", 5)]
    )
    pre = preemption(pod("p", cpu="1", priority=5), snap)
    # t fails TaintToleration (UnschedulableAndUnresolvable): not even tried.
    assert pre.node_reasons == {"n": ("No preemption victims found for incoming pod",)}
    assert failed_scheduling_message(evaluate(pod("p", cpu="1", priority=5), snap)) == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 1 No preemption "
        "victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )


# --- PodDisruptionBudgets ----------------------------------------------------------------------


def test_a_pdb_protected_pod_is_reprieved_first() -> None:
    pods = [
        running("guarded", "n", "1", 1, labels={"app": "guarded"}),
        running("free", "n", "1", 2),
    ]
    plain = preemption(pod("p", cpu="1", priority=5), NodeInfoSnapshot([node("n", cpu="2")], pods))
    assert plain.chosen.victims == ("default/guarded",)  # the less important one
    budget = pdb("keep", {"app": "guarded"}, 0)
    snap = NodeInfoSnapshot([node("n", cpu="2")], pods, pod_disruption_budgets=[budget])
    steered = preemption(pod("p", cpu="1", priority=5), snap)
    assert steered.chosen.victims == ("default/free",) and steered.chosen.pdb_violations == 0


def test_violations_are_counted_when_unavoidable() -> None:
    pods = [running("a", "n", "1", 1, labels={"app": "x"}), running("b", "n", "1", 1)]
    pods[1]["metadata"]["labels"] = {"app": "x"}
    snap = NodeInfoSnapshot(
        [node("n", cpu="2")], pods, pod_disruption_budgets=[pdb("one", {"app": "x"}, 1)]
    )
    pre = preemption(pod("p", cpu="2", priority=5), snap)
    # the budget allows one disruption: the second pod spent against it violates
    assert set(pre.chosen.victims) == {"default/a", "default/b"}
    assert pre.chosen.pdb_violations == 1


@pytest.mark.parametrize(
    "budget",
    [
        pytest.param(pdb("other-ns", {"app": "x"}, 0) | {"metadata": {"name": "o", "namespace": "elsewhere"}}, id="other-namespace"),
        pytest.param({"metadata": {"name": "e", "namespace": "default"}, "spec": {"selector": {}}, "status": {"disruptionsAllowed": 0}}, id="empty-selector"),
        pytest.param(pdb("gone", {"app": "x"}, 0, disruptedPods={"a": "2026-01-01T00:00:00Z"}), id="already-disrupted"),
    ],
)  # fmt: skip
def test_budgets_that_do_not_count(budget: dict[str, Any]) -> None:
    pods = [running("a", "n", "1", 1, labels={"app": "x"})]
    snap = NodeInfoSnapshot([node("n", cpu="1")], pods, pod_disruption_budgets=[budget])
    assert preemption(pod("p", cpu="1", priority=5), snap).chosen.pdb_violations == 0


# --- pickOneNodeForPreemption ------------------------------------------------------------------


def cand(
    name: str, prios: tuple[int, ...], violations: int = 0, start: str = "2026-01-01T00:00:00Z"
) -> PreemptionCandidate:
    return PreemptionCandidate(
        name, tuple(f"ns/{name}-{i}" for i in prios), violations, prios, start
    )


@pytest.mark.parametrize(
    ("candidates", "chosen"),
    [
        pytest.param([cand("a", (1,), 1), cand("b", (9,), 0)], "b", id="fewest-pdb-violations"),
        pytest.param([cand("a", (5, 1)), cand("b", (4, 4))], "b", id="lowest-highest-priority"),
        pytest.param([cand("a", (5, 3)), cand("b", (5, 1))], "b", id="smallest-priority-sum"),
        pytest.param([cand("a", (5, -1, -1)), cand("b", (5, -2))], "b", id="sum-counts-pods"),
        pytest.param(
            [cand("a", (5,), start="2026-01-01T00:00:01Z"), cand("b", (5,), start="2026-01-01T00:00:09Z")],
            "b",
            id="latest-start",
        ),
        pytest.param([cand("a", (5,)), cand("b", (5,))], "a", id="tie-first"),
    ],
)  # fmt: skip
def test_pick_node_order(candidates: list[PreemptionCandidate], chosen: str) -> None:
    picked = pick_node(candidates)
    assert picked is not None and picked.node == chosen


def test_fewest_victims_after_equal_sums() -> None:
    # sum(priority + 2^31) makes more victims a larger sum: (0, 0) loses to (0,)
    assert pick_node([cand("a", (0, 0)), cand("b", (0,))]).node == "b"  # type: ignore[union-attr]


def test_the_chosen_node_over_a_real_snapshot() -> None:
    nodes = [node("n1", cpu="2"), node("n2", cpu="2"), node("n3", cpu="2")]
    pods = [
        running("n1-mid", "n1", "2", 50),
        running("n2-low", "n2", "1", 10),
        running("n2-low2", "n2", "1", 10),
        running("n3-low", "n3", "2", 10, labels={"app": "db"}),
    ]
    p = pod("p", cpu="2", priority=100)
    # n2 and n3 tie on the highest victim priority (10); n3 has the smaller sum (one pod).
    assert preemption(p, NodeInfoSnapshot(nodes, pods)).chosen.node == "n3"
    # a budget on n3's pod steers the choice to n2
    guarded = NodeInfoSnapshot(nodes, pods, pod_disruption_budgets=[pdb("db", {"app": "db"}, 0)])
    chosen = preemption(p, guarded).chosen
    assert (chosen.node, chosen.victims) == ("n2", ("default/n2-low", "default/n2-low2"))


# --- eligibility ---------------------------------------------------------------------------------


def test_preemption_policy_never() -> None:
    snap = NodeInfoSnapshot([node("n", cpu="1")], [running("low", "n", "1", 1)])
    never = pod("p", cpu="1", priority=5, preemptionPolicy="Never")
    pre = preemption(never, snap)
    assert pre.ineligible == "not eligible due to preemptionPolicy=Never." and pre.chosen is None
    d = Algorithm().decide(never, snap)
    assert d.node is None and d.nominate is None and d.victims is None
    assert d.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


def test_a_terminating_victim_on_the_nominated_node_blocks_preempting_again() -> None:
    low = running("low", "n", "1", 1)
    low["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    low["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
    p = pod("p", cpu="1", priority=5)
    p["status"]["nominatedNodeName"] = "n"
    snap = NodeInfoSnapshot(
        [node("n", cpu="1"), node("m", cpu="1")], [low, running("other", "m", "1", 1)]
    )
    pre = preemption(p, snap)
    assert pre.ineligible == "not eligible due to a terminating pod on the nominated node."
    # without the nomination it would preempt again
    p["status"].pop("nominatedNodeName")
    assert preemption(p, snap).helps


# --- nominated pods ----------------------------------------------------------------------------


def test_nominated_pods_of_higher_or_equal_priority_are_counted() -> None:
    nominated = pod("first", cpu="2", priority=5, schedulerName="mine")
    nominated["status"]["nominatedNodeName"] = "n"
    snap = NodeInfoSnapshot([node("n", cpu="2")], [running("low", "n", "1", 1), nominated])
    algo = Algorithm()
    # an equal-priority pod does not get the room the nominated one waits for …
    d = algo.decide(pod("second", cpu="1", priority=5, schedulerName="mine"), snap)
    assert d.node is None
    # … and its own preemption counts the nominated pod too: even without "low" it does not
    # fit beside "first", so preemption does not help (and clears any nomination)
    assert d.victims is None and d.nominate == ""
    # a lower-priority pod of another scheduler does not see our nomination
    assert algo.decide(pod("x", cpu="1", priority=5), snap).node == "n"
    # a higher-priority pod ignores the lower nomination
    assert algo.decide(pod("vip", cpu="1", priority=9, schedulerName="mine"), snap).node == "n"


# --- the scheduler's decision --------------------------------------------------------------------


def test_preemption_only_after_the_fallback_steps() -> None:
    nodes = [node("n", cpu="1"), node("spare", cpu="1", labels={"pool": "spare"})]
    snap = NodeInfoSnapshot(nodes, [running("low", "n", "1", 1)])
    p = pod("p", cpu="1", priority=5, nodeSelector={"kubernetes.io/hostname": "n"})
    policy = parse_policy(
        {"fallbacks": [{"name": "spare", "nodeSelector": {"pool": "spare"}}]},
        "policy.yaml",
        type_meta=False,
    )
    d = Algorithm(policy=policy).decide(p, snap)
    assert (d.node, d.step.name if d.step else None, d.victims) == ("spare", "spare", None)
    d = Algorithm(policy=FallbackPolicy()).decide(p, snap)
    assert d.node is None and d.nominate == "n"
    assert d.victims is not None and d.victims.victims == ("default/low",)
    # preemption found a node: kube-scheduler's message then has no PostFilter part
    assert d.message == (
        "0/2 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't match Pod's node affinity/selector."
    )


def test_the_nominated_node_is_taken_once_it_fits() -> None:
    p = pod("p", cpu="1", priority=5)
    p["status"]["nominatedNodeName"] = "b"
    snap = NodeInfoSnapshot([node("a", cpu="4"), node("b", cpu="1")])
    # kube-scheduler tries the nominated node first and takes it without scoring
    assert Algorithm(strategy="spread").decide(p, snap).node == "b"


def test_why_says_what_the_scheduler_does() -> None:
    nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    pods = [running("l1", "n1", "2", 1), running("l2", "n2", "1", 2), running("l3", "n2", "1", 3)]
    budgets = [pdb("b", {"app": "none"}, 0)]
    snap = NodeInfoSnapshot(nodes, pods, pod_disruption_budgets=budgets)
    for p in (pod("p", cpu="2", priority=9, schedulerName="mine"),
              pod("q", cpu="3", priority=9, schedulerName="mine"),
              pod("r", cpu="2", priority=9, schedulerName="mine", preemptionPolicy="Never")):  # fmt: skip
        d = Algorithm().decide(p, snap)
        diag = diagnose(p, snap, None, fallback=FallbackPolicy())
        assert diag.summary == d.message
        assert diag.evaluation is not None and diag.evaluation.preemption == d.preemption


# --- what the scheduler asks of the API, and what `why` reads --------------------------------------


class _Recorder:
    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.error = error

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        self.calls.append((method, path, kwargs.get("body")))
        if self.error is not None:
            raise self.error
        return {}


def test_victims_are_deleted_with_their_own_grace_period_and_uid() -> None:
    from kschedctl.base.errors import ConflictError
    from kschedctl.k8s.scheduler_api import ClusterSchedulerApi
    from kschedctl.model.scheduling.port import ApiConflict

    api = ClusterSchedulerApi.__new__(ClusterSchedulerApi)
    api.cluster = _Recorder()  # type: ignore[assignment]
    victim = running("low", "n", "1", 1)
    api.delete_pod(victim)
    (call,) = api.cluster.calls  # type: ignore[attr-defined]
    assert call[:2] == ("DELETE", "/api/v1/namespaces/default/pods/low")
    assert call[2]["preconditions"] == {"uid": "uid-default-low"}
    assert "gracePeriodSeconds" not in call[2]  # terminationGracePeriodSeconds applies
    api.cluster = _Recorder(ConflictError(409, "Conflict", "uid precondition failed"))  # type: ignore[assignment]
    with pytest.raises(ApiConflict):
        api.delete_pod(victim)


def test_why_reads_budgets_only_when_preemption_may_run() -> None:
    from kschedctl.ops.why_cluster import _may_preempt

    bound = [running("low", "n", "1", 1)]
    assert _may_preempt([pod("p", priority=5)], bound)
    assert not _may_preempt([pod("p", priority=1)], bound)
    assert not _may_preempt([pod("p")], [running("zero", "n", "1", 0)])
