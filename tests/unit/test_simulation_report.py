"""`kschedctl simulate`'s report model: node groups, distributions, moved pods, the reason
histogram, --fail-if-worse, and the -o json|yaml contract (a golden file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from golden_compare import compare_golden

from kschedctl.observe.placement import placement
from kschedctl.observe.simulation import (
    UNSCHEDULED,
    CandidateResult,
    PodOutcome,
    PreemptedPod,
    ReasonCount,
    SimulationReport,
    is_worse,
    moved_pods,
    node_groups,
    reason_histogram,
)

GOLDEN = Path(__file__).parent.parent / "golden" / "simulate" / "report.json"


def node(
    name: str, zone: str, cpu: str = "4", taints: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}},
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": resources, "allocatable": resources},
    }


NODES = [
    node("a-1", "a"),
    node("a-2", "a"),
    node("a-3", "a"),
    node("b-1", "b"),
    node("big", "b", cpu="16"),
    node("gpu", "b", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
]


def bound(name: str, node_name: str, scheduler: str, cpu: str = "1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"nodeName": node_name, "schedulerName": scheduler,
                 "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]},
        "status": {"phase": "Running"},
    }  # fmt: skip


def result(name: str, where: dict[str, str | None], messages: dict[str, str] | None = None,
           steps: dict[str, str] | None = None, seconds: float = 1.5) -> CandidateResult:  # fmt: skip
    outcomes = [
        PodOutcome(
            f"ns/{pod}",
            node_name,
            (messages or {}).get(pod, ""),
            (steps or {}).get(pod),
            seconds if node_name else None,
        )  # fmt: skip
        for pod, node_name in where.items()
    ]
    pods = [bound(pod, n, name) for pod, n in where.items() if n]
    return CandidateResult(
        name=name,
        source=f"{name}/scheduler.yaml",
        program="builtin",
        scheduler_names=(name,),
        strategy=name,
        outcomes=outcomes,
        preemptions=[],
        before=placement(NODES, []),
        after=placement(NODES, pods, sort_by="cpu"),
        seconds=seconds,
    )


FULL = "0/6 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 5 Insufficient cpu. preemption: 0/6 nodes are available: 6 No preemption victims found for incoming pod."


def test_node_groups_ignore_the_hostname_but_not_shape_or_taints() -> None:
    groups = node_groups(NODES)
    assert [(g.name, g.nodes) for g in groups] == [
        ("group-1", ("a-1", "a-2", "a-3")),
        ("group-2", ("b-1",)),
        ("group-3", ("big",)),
        ("group-4", ("gpu",)),
    ]


def test_a_label_whose_value_is_the_node_name_is_per_node() -> None:
    one, two = node("x-1", "a"), node("x-2", "a")
    one["metadata"]["labels"]["example.com/name"] = "x-1"
    two["metadata"]["labels"]["example.com/name"] = "x-2"
    assert len(node_groups([one, two])) == 1


def test_placements_inside_one_group_are_not_moves() -> None:
    groups = node_groups(NODES)
    first = result("spread", {"p1": "a-1", "p2": "a-2", "p3": "big"})
    second = result("binpack", {"p1": "a-3", "p2": "a-3", "p3": "big"})
    assert moved_pods(first, second, groups) == []
    assert first.by_group(groups) == second.by_group(groups) == {"group-1": 2, "group-3": 1}


def test_moves_name_the_group_or_the_node_of_a_one_node_group() -> None:
    groups = node_groups(NODES)
    first = result("spread", {"p1": "a-1", "p2": "b-1", "p3": None})
    second = result("binpack", {"p1": "big", "p2": "b-1", "p3": "a-2"})
    moved = [(m.pod, m.baseline, m.candidate) for m in moved_pods(first, second, groups)]
    assert moved == [("ns/p1", "group-1", "big"), ("ns/p3", UNSCHEDULED, "group-1")]


def test_reason_histogram_counts_pods_and_the_most_nodes() -> None:
    other = "0/6 nodes are available: 6 Insufficient cpu."
    reasons = reason_histogram([FULL, other, "", "binding rejected: conflict"])
    assert reasons == [
        ReasonCount("Insufficient cpu", 2, 6),
        ReasonCount("binding rejected: conflict", 1, 0),
        ReasonCount("node(s) had untolerated taint {gpu: true}", 1, 1),
    ]


def test_fallback_lines_below_the_histogram_are_not_reasons() -> None:
    message = "0/6 nodes are available: 6 Insufficient cpu.\nfallback step 'spare': still 6 Insufficient cpu"
    assert reason_histogram([message]) == [ReasonCount("Insufficient cpu", 1, 6)]


@pytest.mark.parametrize(
    ("first", "second", "worse"),
    [
        pytest.param({"p1": "a-1", "p2": None}, {"p1": None, "p2": None}, True, id="more-left"),
        pytest.param({"p1": "a-1", "p2": None}, {"p1": "a-1", "p2": None}, False, id="as-many"),
        pytest.param({"p1": None, "p2": None}, {"p1": "a-1", "p2": None}, False, id="fewer"),
    ],
)
def test_fail_if_worse_compares_unschedulable_counts(first: dict[str, str | None],
                                                     second: dict[str, str | None], worse: bool) -> None:  # fmt: skip
    a, b = result("a", first), result("b", second)
    assert is_worse(a, b) is worse
    report = SimulationReport("snap.yaml", 6, 0, 2, 0, node_groups(NODES), [a, b])
    assert report.worse == (["b"] if worse else [])


def test_only_later_candidates_are_judged_against_the_first() -> None:
    a = result("a", {"p1": None})
    b = result("b", {"p1": "a-1"})
    report = SimulationReport("snap.yaml", 6, 0, 1, 0, node_groups(NODES), [a, b])
    assert report.worse == []  # b is better; a, the baseline, is never "worse"


def test_fallback_steps_and_nodes_used() -> None:
    r = result("fallback", {"p1": "gpu", "p2": "a-1", "p3": "a-1"}, steps={"p1": "gpu-pool"})
    assert r.fallback_steps == {"gpu-pool": 1}
    assert r.nodes_used() == 2


def golden_report() -> SimulationReport:
    groups = node_groups(NODES)
    spread = result("spread", {"web-0": "a-1", "web-1": "a-2", "web-2": "b-1", "train": None},
                    messages={"train": FULL}, seconds=2.25)  # fmt: skip
    binpack = result("binpack", {"web-0": "big", "web-1": "big", "web-2": "big", "train": None},
                     messages={"train": FULL}, seconds=1.75)  # fmt: skip
    binpack.preemptions = [PreemptedPod("ns/low", "Preempted by pod 1234 on node big")]
    binpack.why_reasons = [ReasonCount("Insufficient cpu", 1, 5)]
    fallback = result("fallback", {"web-0": "a-1", "web-1": "a-2", "web-2": "b-1", "train": "gpu"},
                      steps={"train": "gpu-pool"})  # fmt: skip
    return SimulationReport("snap.yaml", len(NODES), 3, 4, 0, groups, [spread, binpack, fallback],
                            lab="fresh for the first candidate, reset to the seeded state for the others")  # fmt: skip


def test_report_json_contract() -> None:
    text = json.dumps(golden_report().to_dict(), indent=2) + "\n"
    compare_golden(GOLDEN, text, __file__)


def test_report_keys_are_stable() -> None:
    data = golden_report().to_dict()
    assert list(data) == ["apiVersion", "kind", "snapshot", "lab", "determinism", "nodeGroups",
                          "candidates", "differences", "worse"]  # fmt: skip
    assert list(data["candidates"][0]) == [
        "name", "source", "program", "schedulerNames", "strategy", "submitted", "scheduled",
        "unschedulable", "secondsToSchedule", "reasons", "whyReasons", "received", "fallbackSteps",
        "preemptions", "byGroup", "nodesUsed", "nodesGivenPods", "utilisation", "pods",
    ]  # fmt: skip
    assert data["candidates"][1]["nodesUsed"] == {"before": 0, "after": 1}
    assert [c["nodesGivenPods"] for c in data["candidates"]] == [3, 1, 4]
    assert data["differences"][0]["moved"] == 3
    assert data["candidates"][2]["fallbackSteps"] == {"gpu-pool": 1}


def test_the_report_picture_shows_every_part() -> None:
    from kschedctl.cli.picture_export import render_export
    from kschedctl.cli.simulate_view import report_picture

    svg = render_export(report_picture(golden_report(), 3), ".svg", "kschedctl simulate")
    assert svg == render_export(report_picture(golden_report(), 3), ".svg", "kschedctl simulate")
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(report_picture(golden_report(), 3))
    text_out = console.file.getvalue()  # type: ignore[attr-defined]
    for text in ("candidates, side by side", "submitted pods per node group",
                 "spread: why pods stay unschedulable", "binpack vs spread: 3 pod(s)",
                 "fallback: per node after the run", "gpu-pool 1", "at random"):  # fmt: skip
        assert text in text_out
