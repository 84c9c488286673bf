"""The kubelet's resource admission (kschedctl.model.filters.admission) on plain dicts."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.model.filters import node_allocatable
from kschedctl.model.filters.admission import NodeAdmission, Rejection, admission_request, admit


def node(**allocatable: str) -> dict[str, Any]:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110", **allocatable}
    return {"metadata": {"name": "n1"}, "status": {"allocatable": alloc, "capacity": alloc}}


def pod(
    *containers: dict[str, str],
    init: tuple[dict[str, Any], ...] = (),
    overhead: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "image": "x", "resources": {"requests": r}}
            for i, r in enumerate(containers)
        ]
    }
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": "x", **c} for i, c in enumerate(init)]
    if overhead:
        spec["overhead"] = overhead
    return {"metadata": {"name": "p", "uid": "u"}, "spec": spec}


def test_the_kubelet_message_and_reason() -> None:
    r = Rejection("cpu", 600, 3700, 4000)
    assert r.reason == "OutOfcpu"
    assert r.message == (
        "Node didn't have enough resource: cpu, requested: 600, used: 3700, capacity: 4000"
    )
    assert r.status_message == "Pod was rejected: " + r.message
    assert Rejection("nvidia.com/gpu", 1, 1, 1).reason == "OutOfnvidia.com/gpu"


@pytest.mark.parametrize(
    ("request_", "used", "count", "expected"),
    [
        pytest.param({"cpu": 300}, {"cpu": 3700}, 3, None, id="cpu-exactly-fits"),
        pytest.param({"cpu": 600}, {"cpu": 3700}, 3, Rejection("cpu", 600, 3700, 4000), id="cpu"),
        pytest.param(
            {"memory": 2**30},
            {"memory": 8 * 2**30},
            1,
            Rejection("memory", 2**30, 8 * 2**30, 8 * 2**30),
            id="memory",
        ),  # fmt: skip
        pytest.param({}, {}, 110, Rejection("pods", 1, 110, 110), id="pods-before-anything"),
        pytest.param({}, {"cpu": 9000}, 5, None, id="requests-nothing-only-counts-pods"),
        pytest.param(
            {"cpu": 600, "memory": 2**40},
            {"cpu": 3700},
            3,
            Rejection("cpu", 600, 3700, 4000),
            id="cpu-named-before-memory",
        ),  # fmt: skip
        pytest.param(
            {"example.com/dongle": 2},
            {"example.com/dongle": 1},
            0,
            Rejection("example.com/dongle", 2, 1, 2),
            id="extended",
        ),  # fmt: skip
    ],
)
def test_admit(
    request_: dict[str, int], used: dict[str, int], count: int, expected: Rejection | None
) -> None:
    alloc = node_allocatable(node(**{"example.com/dongle": "2"}))
    assert admit(request_, alloc, used, count) == expected


def test_extended_resources_the_node_lacks_are_not_checked() -> None:
    alloc = node_allocatable(node())
    p = pod({"cpu": "1", "example.com/cluster-wide": "3"})
    assert admission_request(p, alloc) == {"cpu": 1000}
    # hugepages are native: a node without them rejects
    h = pod({"hugepages-2Mi": "4Mi"})
    assert admit(admission_request(h, alloc), alloc, {}, 0) == Rejection(
        "hugepages-2Mi", 4 * 2**20, 0, 0
    )


def test_arrival_order_decides_who_is_rejected() -> None:
    """Two pods that each fit the empty remainder: the first one the kubelet sees wins."""
    node_state = NodeAdmission(node_allocatable(node()))
    node_state.add("old", pod({"cpu": "3500m"}))
    assert node_state.try_admit("a", pod({"cpu": "400m"})) is None
    rejected = node_state.try_admit("b", pod({"cpu": "400m"}))
    assert rejected == Rejection("cpu", 400, 3900, 4000)
    assert "b" not in node_state and len(node_state) == 2
    node_state.remove("a")  # a finished: b would fit now
    assert node_state.try_admit("b", pod({"cpu": "400m"})) is None
    assert node_state.used["cpu"] == 3900


def test_init_containers_sidecars_and_overhead_use_the_schedulers_rule() -> None:
    """Effective request = max(Σ containers + Σ sidecars, max(init + sidecars before)) + overhead,
    the rule of kschedctl.model.filters.resources (shared, not copied)."""
    p = pod(
        {"cpu": "500m"},
        init=(
            {"resources": {"requests": {"cpu": "200m"}}, "restartPolicy": "Always"},
            {"resources": {"requests": {"cpu": "2"}}},
        ),
        overhead={"cpu": "100m"},
    )
    alloc = node_allocatable(node())
    assert admission_request(p, alloc)["cpu"] == 2200 + 100
    state = NodeAdmission(alloc)
    state.add("big", pod({"cpu": "1800m"}))
    assert state.try_admit("p", p) == Rejection("cpu", 2300, 1800, 4000)
    assert state.try_admit("q", pod({"cpu": "2200m"})) is None


def test_readding_or_removing_unknown_pods_changes_nothing() -> None:
    state = NodeAdmission(node_allocatable(node()))
    state.add("a", pod({"cpu": "1"}))
    state.add("a", pod({"cpu": "1"}))
    state.remove("missing")
    assert state.used == {"cpu": 1000} and len(state) == 1
    assert state.try_admit("a", pod({"cpu": "100"})) is None  # already admitted
