"""Drift (observe/drift.py): only the fields the render sets are compared, each difference
names its path, both values, and the field manager that last wrote it (managedFields)."""

from __future__ import annotations

import copy
from typing import Any

from kschedctl.observe.drift import drifts, manager

RENDERED: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "s1", "namespace": "kube-system", "labels": {"app": "s1"}},
    "spec": {
        "replicas": 1,
        "template": {"spec": {"containers": [
            {"name": "kube-scheduler", "image": "k8s/kube-scheduler:v1.36.3",
             "ports": [{"containerPort": 10259}]},
        ]}},
    },
}  # fmt: skip

KSCHEDCTL = {
    "manager": "kschedctl", "operation": "Apply", "time": "2026-01-01T00:00:00Z",
    "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        'k:{"name":"kube-scheduler"}': {"f:image": {}}}}}}},
}  # fmt: skip
SCALE = {
    "manager": "kubectl", "operation": "Update", "subresource": "scale",
    "time": "2026-01-02T00:00:00Z", "fieldsV1": {"f:spec": {"f:replicas": {}}},
}  # fmt: skip


def live(**changes: Any) -> dict[str, Any]:
    obj = copy.deepcopy(RENDERED)
    obj["metadata"].update(uid="u", resourceVersion="9", managedFields=[KSCHEDCTL, SCALE],
                           annotations={"deployment.kubernetes.io/revision": "3"})  # fmt: skip
    obj["spec"].update(strategy={"type": "RollingUpdate"}, **changes)  # server defaults
    obj["status"] = {"readyReplicas": 1}
    return obj


def test_server_defaults_and_status_are_not_drift() -> None:
    assert drifts([RENDERED], [live()]) == []


def test_a_scaled_deployment_names_the_field_both_values_and_the_manager() -> None:
    (found,) = drifts([RENDERED], [live(replicas=3)])
    assert found.to_dict() == {
        "object": "deployment/s1 -n kube-system",
        "path": "spec.replicas",
        "revision": 1,
        "live": 3,
        "manager": "kubectl (scale)",
    }


def test_list_items_are_matched_by_name() -> None:
    changed = live()
    container = changed["spec"]["template"]["spec"]["containers"][0]
    container["image"] = "evil/scheduler:1"
    changed["spec"]["template"]["spec"]["containers"].insert(0, {"name": "sidecar"})
    (found,) = drifts([RENDERED], [changed])
    assert found.path == "spec.template.spec.containers[name=kube-scheduler].image"
    assert (found.recorded, found.live, found.manager) == (
        "k8s/kube-scheduler:v1.36.3", "evil/scheduler:1", "kschedctl",
    )  # fmt: skip


def test_a_removed_label_and_a_deleted_object() -> None:
    changed = live()
    changed["metadata"]["labels"] = {}
    (label,) = drifts([RENDERED], [changed])
    assert (label.path, label.live, label.manager) == ("metadata.labels.app", None, None)
    (gone,) = drifts([RENDERED], [])
    assert (gone.path, gone.live) == ("(object)", None)


def test_an_int_kept_as_a_string_is_the_same_value() -> None:
    changed = live()
    changed["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "10259"
    assert drifts([RENDERED], [changed]) == []


def test_the_manager_name_is_sanitised_and_only_the_owner_of_the_field_counts() -> None:
    hostile = {**SCALE, "manager": "kubectl\x1b[2J", "subresource": ""}
    shown = manager([KSCHEDCTL, hostile], ["f:spec", "f:replicas"])
    assert shown is not None and shown.startswith("kubectl") and "\x1b" not in shown
    assert manager([KSCHEDCTL], ["f:spec", "f:replicas"]) is None  # it owns other spec fields
    assert manager([], ["f:spec"]) is None
