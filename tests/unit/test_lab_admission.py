"""The runner's kubelet admission (kschedctl.lab.runner.admission) against a fake API."""

from __future__ import annotations

from typing import Any

from kschedctl.base.errors import ApiError
from kschedctl.lab.images import ADMITTED_ANNOTATION, kwok_admitted_expression
from kschedctl.lab.runner.admission import Admitter


class FakeCluster:
    def __init__(self) -> None:
        self.patches: list[tuple[str, dict[str, Any]]] = []
        self.fail = 0

    def patch(self, path: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        if self.fail:
            self.fail -= 1
            raise ApiError("the server is busy")
        self.patches.append((path, body))
        return {}


class FakeApi:
    def __init__(self, nodes: dict[str, dict[str, str]]) -> None:
        self.cluster = FakeCluster()
        self.nodes = nodes
        self.events: list[tuple[str, str, str]] = []

    def is_kwok_node(self, name: str) -> bool:
        return name in self.nodes

    def node(self, name: str) -> dict[str, Any]:
        return {"status": {"allocatable": self.nodes[name]}}

    def record_event(self, pod: Any, _path: str, kind: str, reason: str, message: str) -> None:
        self.events.append((pod["metadata"]["name"], kind, f"{reason}: {message}"))


def pod(name: str, cpu: str, node: str = "n1", **extra: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": "ns", "uid": f"uid-{name}",
            "creationTimestamp": extra.pop("created", "2026-01-01T00:00:00Z"),
            "annotations": extra.pop("annotations", {})}  # fmt: skip
    return {
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
        },  # fmt: skip
        "status": {"phase": extra.pop("phase", "Pending")},
    }


def flushed(admitter: Admitter) -> None:
    admitter._pool.shutdown(wait=True)


def test_the_pod_that_no_longer_fits_is_failed_like_the_kubelet_does() -> None:
    api = FakeApi({"n1": {"cpu": "1", "memory": "1Gi", "pods": "10"}})
    admitter = Admitter(api)  # type: ignore[arg-type]
    assert admitter.admitted(pod("a", "600m"))
    assert not admitter.admitted(pod("b", "600m"))
    assert admitter.admitted(pod("a", "600m"))  # the same verdict again, nothing re-written
    flushed(admitter)
    marks = {p: b for p, b in api.cluster.patches}
    assert marks["/api/v1/namespaces/ns/pods/a"] == {
        "metadata": {"uid": "uid-a", "annotations": {ADMITTED_ANNOTATION: "true"}}
    }
    assert marks["/api/v1/namespaces/ns/pods/b/status"] == {
        "metadata": {"uid": "uid-b"},
        "status": {
            "phase": "Failed",
            "reason": "OutOfcpu",
            "message": "Pod was rejected: Node didn't have enough resource: cpu, "
            "requested: 600, used: 600, capacity: 1000",
        },
    }
    assert api.events == [
        ("b", "Warning", "OutOfcpu: Node didn't have enough resource: cpu, requested: 600, "
         "used: 600, capacity: 1000")
    ]  # fmt: skip
    assert len(api.cluster.patches) == 2


def test_terminal_or_deleted_pods_free_their_room() -> None:
    api = FakeApi({"n1": {"cpu": "1", "pods": "10"}})
    admitter = Admitter(api)  # type: ignore[arg-type]
    assert admitter.admitted(pod("a", "600m"))
    assert not admitter.admitted(pod("a", "600m", phase="Succeeded"))
    assert admitter.admitted(pod("b", "600m"))
    admitter.gone(pod("b", "600m"))
    assert admitter.admitted(pod("c", "1"))
    flushed(admitter)


def test_pods_not_on_kwok_nodes_are_left_alone() -> None:
    api = FakeApi({})
    admitter = Admitter(api)  # type: ignore[arg-type]
    assert not admitter.admitted(pod("a", "1", node="real-node"))
    flushed(admitter)
    assert api.cluster.patches == []


def test_a_relist_counts_admitted_and_running_pods_then_admits_the_rest_oldest_first() -> None:
    api = FakeApi({"n1": {"cpu": "2", "pods": "10"}})
    admitter = Admitter(api)  # type: ignore[arg-type]
    running = pod("run", "1", phase="Running")
    marked = pod("marked", "500m", annotations={ADMITTED_ANNOTATION: "true"})
    newer = pod("newer", "500m", created="2026-01-01T00:00:09Z")
    older = pod("older", "500m", created="2026-01-01T00:00:01Z")
    admitter.resync([newer, running, older, marked])
    assert admitter.admitted(older) and not admitter.admitted(newer)
    assert admitter.admitted(running) and admitter.admitted(marked)
    flushed(admitter)
    assert sorted(p for p, _ in api.cluster.patches) == [
        "/api/v1/namespaces/ns/pods/newer/status",
        "/api/v1/namespaces/ns/pods/older",
    ]


def test_a_relist_keeps_verdicts_still_being_written() -> None:
    api = FakeApi({"n1": {"cpu": "1", "pods": "10"}})
    admitter = Admitter(api)  # type: ignore[arg-type]
    api.cluster.fail = 2  # both writes fail at first: the pods carry no mark yet
    a, b = pod("a", "600m"), pod("b", "600m")
    assert admitter.admitted(a) and not admitter.admitted(b)
    admitter.resync([b, a])  # the relist shows both unmarked: the verdicts stand
    assert admitter.admitted(a) and not admitter.admitted(b)
    admitter.retry()
    flushed(admitter)
    assert sorted(p for p, _ in api.cluster.patches) == [
        "/api/v1/namespaces/ns/pods/a",
        "/api/v1/namespaces/ns/pods/b/status",
    ]


def test_kwoks_pod_ready_stage_waits_for_the_mark() -> None:
    assert kwok_admitted_expression() == {
        "key": '.metadata.annotations["lab.kschedctl.io/admitted"]',
        "operator": "In",
        "values": ["true"],
    }


def test_a_static_pods_mirror_is_admitted_even_on_a_full_node() -> None:
    api = FakeApi({"n1": {"cpu": "1", "pods": "10"}})
    admitter = Admitter(api)  # type: ignore[arg-type]
    assert admitter.admitted(pod("a", "1"))
    mirror = pod("static-n1", "500m", annotations={"kubernetes.io/config.mirror": "h"})
    assert admitter.admitted(mirror)
    flushed(admitter)
    assert sorted(p for p, _ in api.cluster.patches) == [
        "/api/v1/namespaces/ns/pods/a",
        "/api/v1/namespaces/ns/pods/static-n1",
    ]
