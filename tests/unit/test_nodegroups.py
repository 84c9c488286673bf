"""`why` on large clusters, on plain-dict fixtures: nodes grouped by verdict (the reason strings
kube-scheduler records), the default table shape, and `why --all`'s pods by scheduler and
reason."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_filters_support import node, pod

from kschedctl.model.filters import NodeInfoSnapshot, evaluate, failed_scheduling_message
from kschedctl.observe.diagnosis import diagnose
from kschedctl.observe.failedscheduling import parse_failed_scheduling
from kschedctl.observe.nodegroups import ALL, GROUPED, group_nodes, node_layout
from kschedctl.observe.pending import pending_reasons
from kschedctl.observe.schedulers import Lease, Scheduler

GPU = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
INFRA = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TAINTED = "node(s) had untolerated taint(s)"


def lab(extra: list[dict[str, Any]] = ()) -> NodeInfoSnapshot:  # type: ignore[assignment]
    """36 nodes in five verdicts for the pod below, created in reverse name order (so sorting
    is the grouping's work, not the input's)."""
    nodes = (
        [node(f"fit-{i:02d}", labels={"disk": "ssd"}) for i in range(5)]
        + [node(f"small-{i:02d}", cpu="1", labels={"disk": "ssd"}) for i in range(12)]
        + [node(f"hdd-{i:02d}") for i in range(8)]
        + [node(f"gpu-{i:02d}", taints=[GPU], labels={"disk": "ssd"}) for i in range(8)]
        + [node(f"off-{i:02d}", unschedulable=True) for i in range(3)]
        + list(extra)
    )
    return NodeInfoSnapshot(list(reversed(nodes)))


def wants(cpu: str = "2", **extra: Any) -> dict[str, Any]:
    return pod("p", cpu=cpu, nodeSelector={"disk": "ssd"}, **extra)


def default_scheduler() -> Scheduler:
    lease = Lease("kube-system", "kube-scheduler", holder="cp-1_abc", renew_age=2, duration=15)
    return Scheduler(name="default-scheduler", form="process", lease=lease)


def rows(groups: Any) -> list[tuple[int, str]]:
    return [(g.count, g.text) for g in groups]


# -- grouping ------------------------------------------------------------------------------------


def test_one_group_per_reason_largest_first_then_by_reason() -> None:
    groups = group_nodes(evaluate(wants(), lab()).nodes)
    assert rows(groups) == [
        (12, "Insufficient cpu"),
        (8, AFFINITY),  # ties: by reason text ("node(s) didn't" < "node(s) had")
        (8, TAINTED),
        (5, "fits"),
        (3, "node(s) were unschedulable"),
    ]
    assert sum(g.count for g in groups) == 36
    assert [r.plugin for g in groups for r in g.reasons] == [
        "NodeResourcesFit", "NodeAffinity", "TaintToleration", "NodeUnschedulable",
    ]  # fmt: skip
    fits = groups[3]
    assert fits.fits and fits.reasons == () and fits.examples == ("fit-00", "fit-01", "fit-02")


def test_examples_are_the_first_names_in_order_and_every_member_is_kept() -> None:
    small = group_nodes(evaluate(wants(), lab()).nodes)[0]
    assert small.examples == ("small-00", "small-01", "small-02")
    assert small.names == tuple(f"small-{i:02d}" for i in range(12))


def test_the_groups_count_what_kube_scheduler_counts() -> None:
    """Every reason string of the FailedScheduling histogram is a group's, with its count."""
    ev = evaluate(wants(cpu="8"), lab())  # now no node fits: the fit-* nodes join small-*
    total, counts, _post = parse_failed_scheduling(failed_scheduling_message(ev))
    groups = group_nodes(ev.nodes)
    assert total == sum(g.count for g in groups)
    assert {r.message: g.count for g in groups for r in g.reasons} == counts


def test_several_reasons_of_one_filter_make_their_own_group() -> None:
    short = node("tiny-00", cpu="1", memory="1Gi", labels={"disk": "ssd"})
    groups = group_nodes(evaluate(wants(memory="2Gi"), lab([short])).nodes)
    both = next(g for g in groups if len(g.reasons) == 2)
    assert both.text == "Insufficient cpu, Insufficient memory" and both.names == ("tiny-00",)
    assert rows(groups)[0] == (12, "Insufficient cpu")  # the cpu-only nodes stay apart


def test_details_shared_or_counted() -> None:
    groups = group_nodes(evaluate(wants(), lab()).nodes)
    taint = next(g for g in groups if g.text == TAINTED).reasons[0]
    assert (taint.detail, taint.details) == ("taint dedicated=gpu:NoSchedule is not tolerated", 1)
    other = node("big-00", cpu="1500m", labels={"disk": "ssd"})
    cpu = group_nodes(evaluate(wants(), lab([other])).nodes)[0].reasons[0]
    assert cpu.details == 2  # 1 and 1500m free: two different numbers
    assert cpu.detail.startswith("cpu: requests 2, free 1")  # the first example's


def test_taints_group_as_the_server_words_them() -> None:
    """Servers before 1.34.2 name the taint: different taints are different reasons there."""
    infra = [node(f"infra-{i}", taints=[INFRA], labels={"disk": "ssd"}) for i in range(2)]
    nodes = evaluate(wants(), lab(infra)).nodes
    assert (10, TAINTED) in rows(group_nodes(nodes, (1, 36, 3)))
    old = rows(group_nodes(nodes, (1, 30, 0)))
    assert (8, "node(s) had untolerated taint {dedicated: gpu}") in old
    assert (2, "node(s) had untolerated taint {dedicated: infra}") in old


def test_all_reasons_groups_by_every_failing_filter() -> None:
    ev = evaluate(wants(), lab(), all_reasons=True)
    groups = group_nodes(ev.nodes, all_reasons=True)
    # hdd-* fail NodeAffinity only; off-* are cordoned AND lack the label.
    off = next(g for g in groups if g.names[0] == "off-00")
    assert [r.plugin for r in off.reasons] == ["NodeUnschedulable", "NodeAffinity"]
    assert rows(group_nodes(ev.nodes))[-1] == (3, "node(s) were unschedulable")


def test_prefilter_rejection_is_one_group() -> None:
    p = wants(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
        ]}}})  # fmt: skip
    groups = group_nodes(evaluate(p, lab()).nodes)
    assert len(groups) == 1 and groups[0].count == 36


def test_an_empty_cluster_has_no_groups() -> None:
    assert group_nodes(evaluate(wants(), NodeInfoSnapshot([])).nodes) == ()


# -- the JSON keeps every node and adds the groups ----------------------------------------------


def test_json_keeps_every_node_and_adds_stable_groups() -> None:
    data = diagnose(wants(), lab(), [default_scheduler()]).to_dict()
    json.dumps(data)
    assert len(data["nodes"]) == 36  # every node, grouped or not
    assert list(data)[list(data).index("nodes") + 1] == "nodeGroups"
    groups = data["nodeGroups"]
    assert sum(g["count"] for g in groups) == 36
    assert all(list(g) == ["fits", "count", "reasons", "examples"] for g in groups)
    assert groups[0] == {
        "fits": False,
        "count": 12,
        "reasons": [{"plugin": "NodeResourcesFit", "message": "Insufficient cpu",
                     "detail": "cpu: requests 2, free 1 of 1", "distinctDetails": 1}],
        "examples": ["small-00", "small-01", "small-02"],
    }  # fmt: skip
    # Every node of the JSON is in exactly one group (by the example names and the counts).
    by_name = {n["name"]: n for n in data["nodes"]}
    for g in groups:
        for name in g["examples"]:
            assert by_name[name]["fits"] is g["fits"]


def test_pods_not_evaluated_have_no_groups() -> None:
    data = diagnose(pod("p", node_name="fit-00", phase="Running"), lab(), None).to_dict()
    assert data["nodes"] == [] and data["nodeGroups"] == []


# -- the default table -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "nodes", "shape"),
    [
        (None, 4, ALL),
        (None, 10, ALL),
        (None, 11, GROUPED),
        (None, 2000, GROUPED),
        ("grouped", 4, GROUPED),
        ("all", 2000, ALL),
        (50, 2000, 50),
        (50, 50, ALL),
        (50, 4, ALL),
    ],
    ids=["small", "ten", "eleven", "large", "grouped-small", "all", "first-n", "n-is-all",
         "n-above"],
)  # fmt: skip
def test_node_layout(choice: str | int | None, nodes: int, shape: str | int) -> None:
    assert node_layout(choice, nodes) == shape


# -- why --all: pods by scheduler and reason -----------------------------------------------------


def _pending(snap: NodeInfoSnapshot) -> list[Any]:
    scheds = [default_scheduler()]
    pods = [
        wants(),  # fits on fit-*
        pod("cpu-a", cpu="8", nodeSelector={"disk": "ssd"}),
        pod("cpu-b", cpu="8", nodeSelector={"disk": "ssd"}, namespace="other"),
        pod("label", nodeSelector={"disk": "nvme"}),
        pod("gated", schedulingGates=[{"name": "example.com/hold"}]),
        pod("lost-1", schedulerName="nowhere"),
        pod("lost-2", schedulerName="nowhere"),
    ]
    return [diagnose(p, snap, scheds) for p in pods]


def test_summary_by_scheduler_and_reason() -> None:
    table = [
        (r.scheduler, r.code, r.reason, len(r.pods), r.nodes)
        for r in pending_reasons(_pending(lab()))
    ]
    assert table == [
        # cpu-a, cpu-b: hdd-*; label: fit-*, small-*, hdd-* (gpu-* fail on the taint first)
        ("default-scheduler", "rejected-by-NodeAffinity", AFFINITY, 3, 25),
        ("default-scheduler", "rejected-by-TaintToleration", TAINTED, 3, 8),
        ("default-scheduler", "rejected-by-NodeUnschedulable", "node(s) were unschedulable", 3,
         3),
        ("default-scheduler", "rejected-by-NodeResourcesFit", "Insufficient cpu", 2, 17),
        ("default-scheduler", "fits", "can be scheduled", 1, 5),
        ("default-scheduler", "scheduling-gated", "scheduling-gated", 1, 0),
        ("nowhere", "scheduler-not-served", "scheduler-not-served", 2, 0),
    ]  # fmt: skip


def test_summary_rows_name_their_pods_sorted() -> None:
    rows_ = {(r.scheduler, r.code): r for r in pending_reasons(_pending(lab()))}
    cpu = rows_[("default-scheduler", "rejected-by-NodeResourcesFit")]
    assert cpu.pods == ("default/cpu-a", "other/cpu-b")
    lost = rows_[("nowhere", "scheduler-not-served")].to_dict()
    assert lost == {"scheduler": "nowhere", "code": "scheduler-not-served",
                    "reason": "scheduler-not-served", "pods": 2, "nodes": 0,
                    "examples": ["default/lost-1", "default/lost-2"]}  # fmt: skip
    assert list(lost) == ["scheduler", "code", "reason", "pods", "nodes", "examples"]


def test_summary_of_no_pods_is_empty() -> None:
    assert pending_reasons([]) == ()


# -- why --all evaluates each shape of pod once -----------------------------------------------------


def _replica(name: str, base: dict[str, Any], **status: Any) -> dict[str, Any]:
    p = json.loads(json.dumps(base))
    p["metadata"].update(name=name, uid=f"uid-{name}")
    p["status"] = {"phase": "Pending", **status}
    return p


SHAPES = {
    "fits": wants(),
    "no-fit": wants(cpu="8"),
    "tolerates": wants(tolerations=[{"key": "dedicated", "operator": "Exists"}]),
    "anti-affinity": pod("a", labels={"app": "x"}, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}},
             "topologyKey": "kubernetes.io/hostname"}]}}),
    "gated": pod("g", schedulingGates=[{"name": "example.com/hold"}]),
}  # fmt: skip


@pytest.mark.parametrize("shape", list(SHAPES))
def test_replicas_share_one_evaluation_and_say_the_same(shape: str) -> None:
    snap = lab()
    snap.upsert_pod(pod("x-1", node_name="fit-00", labels={"app": "x"}))
    scheds = [default_scheduler()]
    cache: dict[str, Any] = {}
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    first = _replica("r-1", SHAPES[shape], conditions=[{**condition, "message": "a"}])
    second = _replica("r-2", SHAPES[shape], conditions=[
        {**condition, "message": "b", "lastTransitionTime": "2026-01-01T00:00:00Z"}])  # fmt: skip
    one = diagnose(first, snap, scheds, evaluations=cache)
    two = diagnose(second, snap, scheds, evaluations=cache)
    assert len(cache) == 1 and two.evaluation is not None
    assert two.evaluation.pod["name"] == "r-2"
    alone = diagnose(second, snap, scheds)
    assert two.to_dict() == alone.to_dict()  # the shared evaluation changes nothing
    assert one.to_dict()["nodeGroups"] == alone.to_dict()["nodeGroups"]


def test_pods_whose_verdicts_depend_on_their_identity_are_evaluated_alone() -> None:
    cache: dict[str, Any] = {}
    nominated = _replica("n", wants(), nominatedNodeName="fit-00")
    ephemeral = _replica("e", wants(volumes=[{"name": "scratch", "ephemeral": {}}]))
    for p in (nominated, ephemeral):
        diagnose(p, lab(), [default_scheduler()], evaluations=cache)
    assert cache == {}
    # A different resize state is a different shape: it changes the requests counted.
    resize = {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
    diagnose(_replica("a", wants()), lab(), None, evaluations=cache)
    diagnose(_replica("b", wants(), conditions=[resize]), lab(), None, evaluations=cache)
    assert len(cache) == 2
