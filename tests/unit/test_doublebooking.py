"""Double-booking detection (kschedctl.observe.doublebooking) on plain dicts."""

from __future__ import annotations

from typing import Any

from kschedctl.observe import doublebooking
from kschedctl.observe.events import normalize

MESSAGE = (
    "Pod was rejected: Node didn't have enough resource: cpu, requested: 600, used: 3700, "
    "capacity: 4000"
)


def pod(name: str, node: str, scheduler: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "shop", "name": name, "uid": f"uid-{name}",
                     "creationTimestamp": "2026-12-03T10:00:00Z"},
        "spec": {"nodeName": node, "schedulerName": scheduler, "containers": []},
        "status": status or {"phase": "Running"},
    }  # fmt: skip


def rejected(name: str, node: str, scheduler: str) -> dict[str, Any]:
    return pod(name, node, scheduler, phase="Failed", reason="OutOfcpu", message=MESSAGE)


def scheduled(name: str, node: str, controller: str, at: str) -> Any:
    """kube-scheduler's Scheduled event (events.k8s.io/v1)."""
    return normalize({
        "apiVersion": "events.k8s.io/v1",
        "metadata": {"namespace": "shop", "name": f"{name}.1", "uid": f"ev-{name}"},
        "eventTime": at, "reason": "Scheduled", "type": "Normal",
        "note": f"Successfully assigned shop/{name} to {node}",
        "reportingController": controller, "reportingInstance": f"{controller}-abc",
        "regarding": {"kind": "Pod", "namespace": "shop", "name": name, "uid": f"uid-{name}"},
    })  # fmt: skip


def test_two_schedulers_on_one_node_at_once_are_a_collision() -> None:
    pods = [pod("a", "n1", "alpha"), rejected("b", "n1", "beta"), pod("c", "n2", "alpha")]
    events = [
        scheduled("a", "n1", "alpha", "2026-12-03T10:00:01.100000Z"),
        scheduled("b", "n1", "beta", "2026-12-03T10:00:01.120000Z"),
        scheduled("c", "n2", "alpha", "2026-12-03T10:00:01.130000Z"),
    ]
    (found,) = doublebooking.find_rejections(pods, events)
    assert found.node == "n1" and found.collision
    assert found.schedulers == ("alpha", "beta")
    assert found.resources == ("cpu",)
    assert [r.name for r in found.rejected] == ["b"]
    assert found.rejected[0].message == MESSAGE
    assert found.rejected[0].scheduler == "beta"
    assert "alpha and beta bound pods to it at the same time" in found.message
    assert found.fix.startswith("serve alpha and beta as profiles of one kube-scheduler")
    assert "kschedctl render beta --as config --add-to <alpha's config file>" in found.fix
    assert doublebooking.for_scheduler([found], "alpha") == [found]
    assert doublebooking.for_scheduler([found], "gamma") == []
    assert doublebooking.for_pod([found], "shop", "b") is found
    assert doublebooking.for_pod([found], "shop", "a") is None
    as_dict = found.to_dict()
    assert list(as_dict) == [
        "node", "collision", "resources", "schedulers", "rejected", "bindings", "message", "fix",
    ]  # fmt: skip
    assert as_dict["bindings"] == [
        {"pod": "shop/a", "scheduler": "alpha", "time": "2026-12-03T10:00:01.100000Z"},
        {"pod": "shop/b", "scheduler": "beta", "time": "2026-12-03T10:00:01.120000Z"},
    ]


def test_default_scheduler_hosts_the_merged_profiles() -> None:
    fix = doublebooking.merge_fix(["default-scheduler", "zeta", "alpha"])
    assert (
        "kschedctl render alpha --as config --add-to /etc/kubernetes/kube-scheduler-config" in fix
    )
    assert "kschedctl render zeta --as config --add-to" in fix
    assert "serve alpha, default-scheduler and zeta" in fix


def test_bindings_outside_the_window_do_not_count() -> None:
    pods = [pod("old", "n1", "alpha"), rejected("b", "n1", "beta")]
    events = [
        scheduled("old", "n1", "alpha", "2026-12-03T09:00:00Z"),
        scheduled("b", "n1", "beta", "2026-12-03T10:00:00Z"),
    ]
    (found,) = doublebooking.find_rejections(pods, events)
    assert not found.collision and found.schedulers == ("beta",)
    assert "no other scheduler bound pods there meanwhile" in found.message
    assert doublebooking.for_scheduler([found], "beta") == []


def test_without_events_the_pods_say_who_bound_them() -> None:
    """Events expire after an hour: spec.schedulerName and the PodScheduled time stand in."""
    cond = [{"type": "PodScheduled", "status": "True",
             "lastTransitionTime": "2026-12-03T10:00:01Z"}]  # fmt: skip
    a = pod("a", "n1", "alpha", phase="Running", conditions=cond)
    b = rejected("b", "n1", "beta")
    b["status"]["conditions"] = cond
    by_hand = pod("h", "n1", "gamma")  # nodeName set directly: no PodScheduled, no scheduler
    (found,) = doublebooking.find_rejections([a, b, by_hand], [])
    assert found.collision and found.schedulers == ("alpha", "beta")


def test_other_failures_are_not_admission_rejections() -> None:
    evicted = pod("e", "n1", "alpha", phase="Failed", reason="Evicted", message="low memory")
    unbound = rejected("u", "", "alpha")
    assert doublebooking.find_rejections([evicted, unbound], []) == []
    assert doublebooking.is_rejected(rejected("b", "n1", "beta"))


class FakeCluster:
    """The API as why/status read it: pods, nodes, Scheduled events (events.k8s.io/v1)."""

    def __init__(self, pods: list[dict[str, Any]], events: list[dict[str, Any]]) -> None:
        self.pods, self.events = pods, events
        self.asked: list[tuple[str, Any]] = []

    def get(self, path: str, **_query: Any) -> dict[str, Any]:
        if path.startswith("/api/v1/namespaces/shop/pods/"):
            return next(p for p in self.pods if p["metadata"]["name"] == path.rsplit("/", 1)[1])
        if path.startswith("/api/v1/nodes/"):
            return {"metadata": {"name": path.rsplit("/", 1)[1]}, "status": {}}
        return {}

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        self.asked.append((path, query.get("fieldSelector")))
        return self.events if path.endswith("/events") else self.pods


def _event_obj(name: str, node: str, controller: str, at: str) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "metadata": {"namespace": "shop", "name": f"{name}.1", "uid": f"ev-{name}"},
        "eventTime": at, "reason": "Scheduled", "type": "Normal",
        "note": f"Successfully assigned shop/{name} to {node}", "reportingController": controller,
        "regarding": {"kind": "Pod", "namespace": "shop", "name": name, "uid": f"uid-{name}"},
    }  # fmt: skip


def test_why_a_rejected_pod_names_the_kubelet_the_collision_and_the_fix() -> None:
    from kschedctl.ops.why import why_pod

    fake = FakeCluster(
        [pod("a", "n1", "alpha"), rejected("b", "n1", "beta")],
        [_event_obj("a", "n1", "alpha", "2026-12-03T10:00:01Z"),
         _event_obj("b", "n1", "beta", "2026-12-03T10:00:01Z")],
    )  # fmt: skip
    diagnosis = why_pod(fake, "shop", "b")  # type: ignore[arg-type]
    codes = [f.code for f in diagnosis.findings]
    assert codes == ["kubelet-rejected", "double-booked"]
    assert not diagnosis.schedulable
    first, second = diagnosis.findings
    assert "the kubelet on node n1 rejected the pod after it was bound (OutOfcpu)" in first.message
    assert MESSAGE in first.message
    assert "alpha and beta bound pods to it at the same time" in second.message
    assert second.fix and "kschedctl render beta --as config --add-to" in second.fix
    data = diagnosis.to_dict()
    assert data["doubleBooking"]["schedulers"] == ["alpha", "beta"]
    assert ("/apis/events.k8s.io/v1/events", "regarding.kind=Pod,reason=Scheduled") in fake.asked


def test_status_lists_events_only_when_a_pod_was_rejected() -> None:
    from kschedctl.ops.doublebooking import detect

    fake = FakeCluster([pod("a", "n1", "alpha")], [])
    assert detect(fake, fake.pods) == []  # type: ignore[arg-type]
    assert fake.asked == []


def test_a_running_pod_keeps_its_diagnosis() -> None:
    from kschedctl.ops.why import why_pod

    fake = FakeCluster([pod("a", "n1", "alpha")], [])
    diagnosis = why_pod(fake, "shop", "a")  # type: ignore[arg-type]
    assert [f.code for f in diagnosis.findings] == ["pod-running"]
    assert diagnosis.to_dict()["doubleBooking"] is None
