"""remove's reading of what a scheduler's removal would leave without one (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.observe.orphans import Orphans, bounded, orphans


def pod(name: str, node: str = "", scheduler: str = "mine", **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": "ns", "name": name, **extra.pop("meta", {})}
    spec = {"schedulerName": scheduler, **({"nodeName": node} if node else {})}
    return {"metadata": meta, "spec": spec, "status": extra.pop("status", {"phase": "Pending"})}


def controller(kind: str, name: str, scheduler: str = "mine", **spec: Any) -> dict[str, Any]:
    template = {"spec": {"schedulerName": scheduler, "containers": []}}
    body = {"jobTemplate": {"spec": {"template": template}}} if kind == "CronJob" else {
        "template": template}  # fmt: skip
    return {"kind": kind, "metadata": {"namespace": "ns", "name": name},
            "spec": {**body, **spec}}  # fmt: skip


def test_bound_pods_keep_running_and_are_only_counted() -> None:
    left = orphans(
        "mine",
        [
            pod("running", node="n1", status={"phase": "Running"}),
            pod("waiting"),
            pod("done", status={"phase": "Succeeded"}),
            pod("failed", node="n1", status={"phase": "Failed"}),
            pod("leaving", meta={"deletionTimestamp": "2026-01-01T00:00:00Z"}),
            pod("canary", meta={"labels": {"app.kubernetes.io/component": "canary"}}),
            pod("other", scheduler="someone-else"),
        ],
        [],
    )
    assert left == Orphans(waiting=("pod/ns/waiting",), bound=1)
    assert left.stranded == ("pod/ns/waiting",)


@pytest.mark.parametrize(
    ("obj", "stranded"),
    [
        (controller("Deployment", "web"), True),
        (controller("Deployment", "idle", replicas=0), False),
        (controller("Deployment", "theirs", scheduler="default-scheduler"), False),
        (controller("StatefulSet", "db", replicas=2), True),
        (controller("ReplicaSet", "bare"), True),
        (controller("DaemonSet", "agent"), True),
        (controller("Job", "batch"), True),
        (controller("CronJob", "nightly"), True),
        (controller("CronJob", "paused", suspend=True), False),
    ],
    ids=lambda v: v["metadata"]["name"] if isinstance(v, dict) else str(v),
)
def test_controllers_that_will_create_pods_for_it(obj: dict[str, Any], stranded: bool) -> None:
    want = (f"{obj['kind'].lower()}/ns/{obj['metadata']['name']}",) if stranded else ()
    assert orphans("mine", [], [obj]).controllers == want


def test_owned_and_finished_controllers_are_not_counted_twice() -> None:
    rs = controller("ReplicaSet", "web-5d8f")
    rs["metadata"]["ownerReferences"] = [{"kind": "Deployment", "name": "web", "controller": True}]
    job = controller("Job", "done")
    job["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    assert orphans("mine", [], [rs, job, controller("Deployment", "web")]).controllers == (
        "deployment/ns/web",
    )


def test_a_replacement_of_the_default_scheduler_orphans_nothing() -> None:
    # its pods, every pod that names no scheduler, go back to kube-scheduler
    left = orphans("default-scheduler", [pod("p", scheduler="default-scheduler")], [])
    assert left == Orphans()


def test_bounded_names_the_first_ones_then_counts() -> None:
    names = [f"pod/ns/p{i}" for i in range(47)]
    assert bounded(names) == ", ".join(names[:10]) + " and 37 more"
    assert bounded(names[:2]) == "pod/ns/p0, pod/ns/p1"
