"""`top nodes`' model (kschedctl/observe/placement.py) on plain dicts: effective requests per
node split by the scheduler responsible, terminal and unbound pods left out, selection, order,
limit and the -o json contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.observe.placement import (
    BOUND_NON_TERMINAL,
    NO_SCHEDULER,
    placement,
    responsible_scheduler,
)
from kschedctl.ops.top import placement_dict

SNAPSHOT = Path(__file__).parent / "fixtures" / "pictures" / "snapshot.yaml"
Gi, Mi = 2**30, 2**20


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Any]:
    return yaml.safe_load(SNAPSHOT.read_text(encoding="utf-8"))


def test_requests_split_by_scheduler(snapshot: dict[str, Any]) -> None:
    shown = placement(snapshot["nodes"], snapshot["pods"])
    by_node = {u.name: u.by_scheduler for u in shown.nodes}
    assert by_node == {
        # batch-1: its init container's 2 cpu; batch-2: 750m + 250m overhead
        "node-a": {"binpack": {"cpu": 3000, "memory": 2 * Gi + 128 * Mi, "pods": 2},
                   "spread": {"cpu": 500, "memory": 512 * Mi, "pods": 1}},
        # the Succeeded pod holds nothing; the hand-placed pod and the mirror pod: (none)
        "node-b": {"spread": {"cpu": 500, "memory": 512 * Mi, "pods": 1},
                   NO_SCHEDULER: {"cpu": 350, "memory": 356 * Mi, "pods": 2}},
        # no schedulerName is default-scheduler
        "node-c": {"default-scheduler": {"cpu": 2500, "memory": 3 * Gi, "pods": 2}},
    }  # fmt: skip
    assert shown.schedulers == ["binpack", "default-scheduler", "spread", NO_SCHEDULER]
    assert shown.totals["spread"] == {"cpu": 1000, "memory": 1 * Gi, "pods": 2}
    assert shown.allocatable == {"cpu": 10000, "memory": 20 * Gi, "pods": 230}
    assert shown.overcommitted_nodes == 1


def test_overcommit_and_cordon(snapshot: dict[str, Any]) -> None:
    shown = placement(snapshot["nodes"], snapshot["pods"])
    node_c = next(u for u in shown.nodes if u.name == "node-c")
    assert node_c.overcommitted == ["cpu"]
    assert node_c.unschedulable
    assert node_c.fraction("cpu") == 1.25


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        ({"spec": {"schedulerName": "spread"}}, "spread"),
        ({"spec": {}}, "default-scheduler"),
        (
            {
                "metadata": {"annotations": {"kubernetes.io/config.mirror": "x"}},
                "spec": {"schedulerName": "a"},
            },
            NO_SCHEDULER,
        ),
        (
            {
                "metadata": {
                    "managedFields": [
                        {"operation": "Update", "fieldsV1": {"f:spec": {"f:nodeName": {}}}}
                    ]
                },
                "spec": {"schedulerName": "a"},
            },
            NO_SCHEDULER,
        ),
        (
            {
                "metadata": {
                    "managedFields": [
                        {"operation": "Apply", "fieldsV1": {"f:spec": {"f:nodeName": {}}}}
                    ]
                },
                "spec": {},
            },
            NO_SCHEDULER,
        ),
        # a scheduler's status patch (PodScheduled condition) does not own spec.nodeName
        (
            {
                "metadata": {
                    "managedFields": [
                        {
                            "operation": "Update",
                            "subresource": "status",
                            "fieldsV1": {"f:status": {"f:conditions": {}}},
                        }
                    ]
                },
                "spec": {"schedulerName": "a"},
            },
            "a",
        ),
        (
            {
                "metadata": {
                    "managedFields": [
                        {"operation": "Update", "fieldsV1": {"f:spec": {"f:containers": {}}}}
                    ]
                },
                "spec": {"schedulerName": "a"},
            },
            "a",
        ),
    ],
    ids=[
        "named",
        "default",
        "mirror pod",
        "nodeName written",
        "nodeName applied",
        "status patch",
        "spec without nodeName",
    ],
)
def test_responsible_scheduler(pod: dict[str, Any], expected: str) -> None:
    assert responsible_scheduler(pod) == expected


def test_scheduler_selects_its_nodes(snapshot: dict[str, Any]) -> None:
    shown = placement(snapshot["nodes"], snapshot["pods"], scheduler="spread")
    assert [u.name for u in shown.nodes] == ["node-a", "node-b"]
    # the other schedulers' pods still count on those nodes
    assert shown.schedulers == ["binpack", "spread", NO_SCHEDULER]
    assert placement(snapshot["nodes"], snapshot["pods"], scheduler="ghost").nodes == []


@pytest.mark.parametrize(
    ("sort_by", "order"),
    [
        ("name", ["node-a", "node-b", "node-c"]),
        ("cpu", ["node-c", "node-a", "node-b"]),  # 125%, 88%, 21%
        ("memory", ["node-c", "node-a", "node-b"]),  # 75%, 33%, 11%
        ("pods", ["node-c", "node-a", "node-b"]),  # 2/10, 3/110, 3/110 (tie: by name)
    ],
)
def test_sort(snapshot: dict[str, Any], sort_by: str, order: list[str]) -> None:
    shown = placement(snapshot["nodes"], snapshot["pods"], sort_by=sort_by)
    assert [u.name for u in shown.nodes] == order


def test_limit_keeps_the_totals(snapshot: dict[str, Any]) -> None:
    whole = placement(snapshot["nodes"], snapshot["pods"], sort_by="cpu")
    first = whole.first(1)
    assert [u.name for u in first.nodes] == ["node-c"]
    assert first.total_nodes == 3 and first.omitted == 2
    assert first.totals == whole.totals
    assert whole.first(0).nodes == whole.nodes == whole.first(None).nodes
    assert placement(snapshot["nodes"], snapshot["pods"], limit=2).omitted == 1


def test_unknown_sort_key() -> None:
    with pytest.raises(ValueError, match="unknown sort key 'age'"):
        placement([], [], sort_by="age")


def test_node_without_allocatable_counts_as_infinitely_full() -> None:
    nodes = [{"metadata": {"name": "n"}, "status": {}}]
    pods = [{"metadata": {"name": "p"}, "spec": {"nodeName": "n", "containers": [{"name": "c"}]}}]
    usage = placement(nodes, pods).nodes[0]
    assert usage.fraction("pods") == float("inf")
    assert usage.overcommitted == ["pods"]
    assert placement(nodes, []).nodes[0].fraction("cpu") == 0.0


def test_field_selector_is_kubectls() -> None:
    # staging/src/k8s.io/kubectl/pkg/describe/describe.go: the pods a node's requests count
    assert BOUND_NON_TERMINAL == "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"


def test_json_contract(snapshot: dict[str, Any]) -> None:
    data = placement_dict(placement(snapshot["nodes"], snapshot["pods"]).first(1))
    assert data["kind"] == "List" and len(data["items"]) == 1
    assert data["items"][0] == {
        "kind": "NodeUsage",
        "metadata": {"name": "node-a"},
        "allocatable": {"cpu": 4000, "memory": 8 * Gi, "pods": 110},
        "requested": {"cpu": 3500, "memory": 2 * Gi + 640 * Mi, "pods": 3},
        "bySchedulers": {
            "binpack": {"cpu": 3000, "memory": 2 * Gi + 128 * Mi, "pods": 2},
            "spread": {"cpu": 500, "memory": 512 * Mi, "pods": 1},
        },
        "overcommitted": [],
        "unschedulable": False,
        "limits": {"cpu": 0, "memory": 0},
        "taints": [],
    }


# -- limits, taints, usage, the per-pod view (top nodes like kube-capacity) -------------------


def _node(name: str, **spec: Any) -> dict[str, Any]:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {"metadata": {"name": name}, "spec": spec, "status": {"allocatable": alloc}}


def _pod(name: str, node: str, *containers: dict[str, Any], scheduler: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": node, "containers": list(containers)}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"metadata": {"name": name, "namespace": "team"}, "spec": spec,
            "status": {"phase": "Running"}}  # fmt: skip


def _c(
    requests: dict[str, str] | None = None, limits: dict[str, str] | None = None
) -> dict[str, Any]:
    return {"name": "c", "resources": {"requests": requests or {}, "limits": limits or {}}}


def test_limits_add_up_per_node_and_per_pod() -> None:
    pods = [
        _pod(
            "a",
            "n1",
            _c({"cpu": "500m"}, {"cpu": "1", "memory": "1Gi"}),
            _c(limits={"cpu": "250m"}),
        ),
        _pod("b", "n1", _c({"cpu": "100m", "memory": "64Mi"}), scheduler="bin"),
    ]
    shown = placement([_node("n1")], pods)
    (node,) = shown.nodes
    assert node.limits == {"cpu": 1250, "memory": Gi}
    assert node.by_scheduler["bin"]["cpu"] == 100  # the per scheduler split of requests stays
    by_name = {p.name: p for p in shown.pods}
    assert by_name["a"].requests == {"cpu": 500, "memory": 0}
    assert by_name["a"].limits == {"cpu": 1250, "memory": Gi}
    assert by_name["b"].to_dict() == {
        "namespace": "team", "node": "n1", "scheduler": "bin",
        "requests": {"cpu": 100, "memory": 64 * Mi}, "limits": {"cpu": 0, "memory": 0},
    }  # fmt: skip


def test_an_init_container_s_limit_counts_when_larger() -> None:
    pod = _pod("a", "n1", _c(limits={"cpu": "1"}))
    pod["spec"]["initContainers"] = [{"name": "i", "resources": {"limits": {"cpu": "3"}}}]
    assert placement([_node("n1")], [pod]).nodes[0].limits["cpu"] == 3000


def test_taints_are_shown_as_kubectl_describes_them() -> None:
    taints = [{"key": "gpu", "value": "a100", "effect": "NoSchedule"},
              {"key": "spot", "effect": "PreferNoSchedule"}]  # fmt: skip
    (node,) = placement([_node("n1", taints=taints)], []).nodes
    assert node.taints == ["gpu=a100:NoSchedule", "spot:PreferNoSchedule"]
    assert node.to_dict()["taints"] == node.taints


def test_usage_comes_from_metrics_when_they_answer() -> None:
    node_metrics = [
        {"metadata": {"name": "n1"}, "usage": {"cpu": "250000000n", "memory": "1024Ki"}}
    ]
    pod_metrics = [{"metadata": {"name": "a", "namespace": "team"},
                    "containers": [{"usage": {"cpu": "10m", "memory": "1Mi"}},
                                   {"usage": {"cpu": "5m", "memory": "1Mi"}}]}]  # fmt: skip
    pods = [_pod("a", "n1", _c()), _pod("b", "n1", _c())]
    shown = placement([_node("n1"), _node("n2")], pods, node_metrics=node_metrics,
                      pod_metrics=pod_metrics)  # fmt: skip
    assert shown.metrics
    assert [n.usage for n in shown.nodes] == [{"cpu": 250, "memory": 1024 * 1024}, None]
    assert {p.name: p.usage for p in shown.pods} == {"a": {"cpu": 15, "memory": 2 * Mi}, "b": None}
    assert shown.nodes[0].to_dict()["usage"] == {"cpu": 250, "memory": Mi}


def test_without_metrics_usage_is_unknown_not_zero() -> None:
    shown = placement([_node("n1")], [_pod("a", "n1", _c())])
    assert not shown.metrics and shown.nodes[0].usage is None and shown.pods[0].usage is None
    assert "usage" not in shown.nodes[0].to_dict()


def test_the_pods_follow_the_nodes_shown() -> None:
    pods = [_pod("z", "n1", _c({"cpu": "3"})), _pod("a", "n2", _c()), _pod("b", "n1", _c())]
    shown = placement([_node("n1"), _node("n2")], pods, sort_by="cpu", limit=1)
    assert [n.name for n in shown.nodes] == ["n1"]
    assert [p.name for p in shown.pods] == ["b", "z"]
