"""FailedScheduling messages: the scenario matrix, sorting, counting and version wording."""

from __future__ import annotations

from typing import Any

import pytest
from test_filters_support import (
    container,
    expand_nodes,
    expr,
    host_port,
    load_yaml,
    node,
    node_affinity,
    pod,
    pod_term,
)

from kschedctl.model.filters import (
    Evaluation,
    NodeInfoSnapshot,
    NodeVerdict,
    Preemption,
    Reason,
    evaluate,
    failed_scheduling_message,
    fit_error_message,
    histogram,
    reason_text,
)
from kschedctl.model.filters.verdicts import (
    REASON_TAINT,
    TAINT_TOLERATION,
    UNRESOLVABLE,
    UNSCHEDULABLE,
)

SCENARIOS = load_yaml("scenarios.yaml")["scenarios"]


def _pod_from(spec: dict[str, Any], *, bound: bool) -> dict[str, Any]:
    spec = dict(spec)
    name = spec.pop("name")
    ports = [
        host_port(p["port"], ip=p.get("ip"), protocol=p.get("protocol"))
        for p in spec.pop("hostPorts", [])
    ]
    c = container(cpu=spec.pop("cpu", None), memory=spec.pop("memory", None), ports=ports)
    labels = spec.pop("labels", None)
    phase = spec.pop("phase", None)
    node_name = spec.pop("nodeName", None)
    assert bound == (node_name is not None)
    return pod(name, node_name=node_name, labels=labels, containers=[c], phase=phase, **spec)


def _evaluate(sc: dict[str, Any]) -> Evaluation:
    nodes = expand_nodes(sc["nodes"])
    existing = [_pod_from(p, bound=True) for p in sc.get("existing", [])]
    return evaluate(_pod_from(sc["pod"], bound=False), NodeInfoSnapshot(nodes, existing))


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_scenario_matrix(sc: dict[str, Any]) -> None:
    ev = _evaluate(sc)
    assert [v.plugin for v in ev.nodes] == sc["plugins"]
    if "feasible" in sc:
        assert ev.feasible == sc["feasible"]
        assert failed_scheduling_message(ev, (1, 36)) is None
    else:
        assert failed_scheduling_message(ev, (1, 36, 3)) == sc["message"]
    if "message_1_33" in sc:
        assert failed_scheduling_message(ev, (1, 33)) == sc["message_1_33"]


def _verdicts(*reason_lists: list[str]) -> tuple[NodeVerdict, ...]:
    return tuple(
        NodeVerdict(f"n{i}", not rs, tuple(Reason("P", r, "", None, UNRESOLVABLE) for r in rs))
        for i, rs in enumerate(reason_lists)
    )


def test_histogram_sorts_lexicographically_so_10_comes_before_2() -> None:
    nodes = _verdicts(*([["Insufficient cpu"]] * 10 + [["node(s) were unschedulable"]] * 2))
    ev = Evaluation({"namespace": "d", "name": "p"}, nodes)
    assert failed_scheduling_message(ev, (1, 33)) == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) were unschedulable."
    )


def test_every_reason_of_the_first_failing_filter_counts_once_per_node() -> None:
    nodes = _verdicts(["Insufficient cpu", "Insufficient memory"], ["Insufficient cpu"])
    ev = Evaluation({"namespace": "d", "name": "p"}, nodes)
    assert histogram(ev) == {"Insufficient cpu": 2, "Insufficient memory": 1}
    assert fit_error_message(2, ["a", "b", "a"]) == "0/2 nodes are available: 1 b, 2 a."


def test_all_reasons_does_not_change_the_message() -> None:
    nodes = [
        node("n1", cpu="1", taints=[{"key": "k", "effect": "NoSchedule"}]),
        node("n2", cpu="1"),
    ]
    p = pod("p", cpu="2", nodeSelector={"x": "y"})
    first = evaluate(p, NodeInfoSnapshot(nodes))
    every = evaluate(p, NodeInfoSnapshot(nodes), all_reasons=True)
    assert [r.plugin for r in every.verdict("n1").reasons] == [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
    ]
    assert failed_scheduling_message(first) == failed_scheduling_message(every)


TAINT = Reason(TAINT_TOLERATION, REASON_TAINT, "", None, UNRESOLVABLE, {"key": "k", "value": "v"})


@pytest.mark.parametrize(
    ("version", "text"),
    [
        ((1, 36), "node(s) had untolerated taint(s)"),
        ((1, 35, 0), "node(s) had untolerated taint(s)"),
        ((1, 34), "node(s) had untolerated taint(s)"),
        ((1, 34, 2), "node(s) had untolerated taint(s)"),
        ((1, 34, 1), "node(s) had untolerated taint {k: v}"),
        ((1, 25), "node(s) had untolerated taint {k: v}"),
        ((1, 24), "node(s) had taint {k: v}, that the pod didn't tolerate"),
        ((1, 18), "node(s) had taint {k: v}, that the pod didn't tolerate"),
        ((1, 17), "node(s) had taints that the pod didn't tolerate"),
    ],
    ids=lambda x: ".".join(map(str, x)) if isinstance(x, tuple) else "",
)
def test_taint_wording_by_version(version: tuple[int, ...], text: str) -> None:
    assert reason_text(TAINT, version) == text


def _unfit(reason: str, code: str = UNSCHEDULABLE, n: int = 2) -> tuple[NodeVerdict, ...]:
    return tuple(
        NodeVerdict(f"n{i}", False, (Reason("P", reason, "", None, code),)) for i in range(n)
    )


@pytest.mark.parametrize(
    ("version", "preemption", "expected"),
    [
        (
            (1, 36),
            Preemption(num_nodes=2),
            "0/2 nodes are available: 2 X. no new claims to deallocate, preemption: "
            "0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        ),
        (
            (1, 33),
            Preemption(num_nodes=2),
            "0/2 nodes are available: 2 X. preemption: "
            "0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        ),
        (
            (1, 26),
            Preemption(num_nodes=2),
            "0/2 nodes are available: 2 X. preemption: "
            "0/2 nodes are available: 2 Preemption is not helpful for scheduling..",
        ),
        ((1, 23), Preemption(num_nodes=2), "0/2 nodes are available: 2 X."),
        (
            (1, 36),
            Preemption(ineligible="not eligible due to preemptionPolicy=Never.", num_nodes=2),
            "0/2 nodes are available: 2 X. no new claims to deallocate, "
            "preemption: not eligible due to preemptionPolicy=Never.",
        ),
        (
            (1, 36),
            Preemption(node_reasons={"n0": ("Insufficient cpu",)}, num_nodes=2),
            "0/2 nodes are available: 2 X. no new claims to deallocate, preemption: 0/2 nodes are "
            "available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling.",
        ),
        (
            (1, 36),
            Preemption(
                node_reasons={
                    "n0": (REASON_NO_VICTIMS := "No preemption victims found for incoming pod",),
                    "n1": (REASON_NO_VICTIMS,),
                },
                num_nodes=2,
            ),
            "0/2 nodes are available: 2 X. no new claims to deallocate, preemption: 0/2 nodes are "
            "available: 2 No preemption victims found for incoming pod.",
        ),
        (None, None, "0/2 nodes are available: 2 X. no new claims to deallocate"),
    ],
    ids=[
        "1.36",
        "1.33-no-dra",
        "1.26-double-period",
        "1.23-no-postfilter",
        "never",
        "dry-run-reason",
        "no-victims",
        "preemption-off",
    ],
)
def test_postfilter_part(
    version: tuple[int, int] | None, preemption: Preemption | None, expected: str
) -> None:
    ev = Evaluation({"namespace": "d", "name": "p"}, _unfit("X"), preemption=preemption)
    assert failed_scheduling_message(ev, version or (1, 36)) == expected


def test_successful_preemption_leaves_no_postfilter_text() -> None:
    nodes = [node("n1", cpu="2")]
    low = pod("low", node_name="n1", cpu="2", priority=0)
    high = pod("high", cpu="2", priority=1000)
    ev = evaluate(high, NodeInfoSnapshot(nodes, [low]))
    assert ev.preemption is not None and ev.preemption.helps
    assert ev.preemption.candidates[0].victims == ("default/low",)
    assert failed_scheduling_message(ev) == "0/1 nodes are available: 1 Insufficient cpu."


def test_pod_with_claims_gets_the_other_dra_text() -> None:
    p = pod("p", nodeSelector={"x": "y"}, resourceClaims=[{"name": "gpu"}])
    ev = evaluate(p, NodeInfoSnapshot([node("n1")]))
    assert [n.plugin for n in ev.not_evaluated] == ["DynamicResources"]
    assert failed_scheduling_message(ev) == (
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. "
        "still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not "
        "helpful for scheduling."
    )


def test_prefilter_rejection_has_no_histogram() -> None:
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["a"]},
                            {"key": "metadata.name", "operator": "In", "values": ["b"]},
                        ]
                    }
                ]
            }
        }
    }
    ev = evaluate(pod("p", affinity=aff), NodeInfoSnapshot([node("a"), node("b")]))
    assert ev.prefilter is not None
    # DynamicResources' PreFilter never ran, so its PostFilter cannot read its state.
    assert failed_scheduling_message(ev) == (
        "0/2 nodes are available: pod affinity terms conflict. not found"
    )
    assert failed_scheduling_message(ev, (1, 33)) == (
        "0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    )


def test_no_nodes_and_schedulable() -> None:
    assert failed_scheduling_message(evaluate(pod("p"), NodeInfoSnapshot())) == (
        "no nodes available to schedule pods"
    )
    assert failed_scheduling_message(evaluate(pod("p"), NodeInfoSnapshot([node("n")]))) is None


def test_event_note_is_truncated_to_1024_bytes() -> None:
    many = tuple(
        NodeVerdict(f"n{i}", False, (Reason("P", f"reason number {i:04d}", "", None),))
        for i in range(100)
    )
    ev = Evaluation({"namespace": "d", "name": "p"}, many)
    msg = failed_scheduling_message(ev)
    full = failed_scheduling_message(ev, truncate=False)
    assert msg is not None and full is not None
    assert len(msg.encode()) == 1024 and msg.endswith(" ...")
    assert full.startswith(msg[:-4]) and len(full) > 1024


def test_all_reasons_keeps_counts_for_narrowed_nodes_and_inter_pod_checks() -> None:
    aff = node_affinity({"matchFields": [expr("metadata.name", "In", "n1")]})
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        pod_term({"app": "web"})]}}  # fmt: skip
    guard = pod("guard", node_name="n1", labels={"app": "web"}, affinity=anti)
    p = pod("p", labels={"app": "web"}, affinity={**aff, **anti})
    snap = NodeInfoSnapshot([node("n1"), node("n2")], [guard])
    first, every = evaluate(p, snap), evaluate(p, snap, all_reasons=True)
    assert [r.message for r in every.verdict("n1").reasons] == [
        "node(s) didn't match pod anti-affinity rules",
        "node(s) didn't satisfy existing pods anti-affinity rules",
    ]
    assert [r.plugin for r in every.verdict("n2").reasons] == ["NodeAffinity", "NodeAffinity"]
    assert (
        histogram(first)
        == histogram(every)
        == {
            "node(s) didn't match pod anti-affinity rules": 1,
            "node(s) didn't satisfy plugin(s) [NodeAffinity]": 1,
        }
    )
    assert failed_scheduling_message(first) == failed_scheduling_message(every)
