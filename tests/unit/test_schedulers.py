"""Scheduler discovery from plain-dict snapshots (pure)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from kschedctl.observe.containers import (
    config_facts,
    config_source,
    is_kube_scheduler_container,
    is_kube_scheduler_image,
    scheduler_container,
)
from kschedctl.observe.discovery import ClusterReading, discover
from kschedctl.observe.schedulers import parse_time

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=timezone.utc)


def stamp(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def lease(namespace: str, name: str, holder: str | None, renewed_ago: float = 1) -> dict[str, Any]:
    return {
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"holderIdentity": holder, "renewTime": stamp(renewed_ago),
                 "leaseDurationSeconds": 15},
    }  # fmt: skip


def pod(
    name: str, scheduler: str | None = None, node: str | None = None, **extra: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    if node:
        spec["nodeName"] = node
    meta = {"namespace": "default", "name": name, **extra.pop("meta", {})}
    return {"metadata": meta, "spec": {**spec, **extra},
            "status": {"phase": "Running" if node else "Pending"}}  # fmt: skip


CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: true, resourceName: my-scheduler, resourceNamespace: kube-system}
profiles:
- schedulerName: my-scheduler
- schedulerName: my-other
"""

SCHEDULER_TEMPLATE = {
    "containers": [{
        "name": "kube-scheduler",
        "image": "registry.k8s.io/kube-scheduler:v1.36.3",
        "command": ["kube-scheduler", "--config=/etc/kubernetes/my-scheduler/config.yaml"],
        "volumeMounts": [{"name": "config", "mountPath": "/etc/kubernetes/my-scheduler"}],
    }],
    "volumes": [{"name": "config", "configMap": {"name": "my-scheduler-config"}}],
}  # fmt: skip


def deployment(managed: bool = True, ready: int = 1) -> dict[str, Any]:
    labels = {
        "app.kubernetes.io/managed-by": "kschedctl",
        "app.kubernetes.io/instance": "my-scheduler",
    }
    return {
        "metadata": {"namespace": "kube-system", "name": "my-scheduler", "uid": "dep-uid",
                     "labels": labels if managed else {}},
        "spec": {"replicas": 2, "template": {"spec": SCHEDULER_TEMPLATE}},
        "status": {"readyReplicas": ready},
    }  # fmt: skip


# The ReplicaSet of deployment()'s pods: a pod is the Deployment's through it (uids).
REPLICA_SET = {
    "metadata": {"namespace": "kube-system", "name": "my-scheduler-6d4", "uid": "rs-uid",
                 "ownerReferences": [{"kind": "Deployment", "name": "my-scheduler",
                                      "uid": "dep-uid", "controller": True}]},
}  # fmt: skip


def snapshot(**kw: Any) -> ClusterReading:
    kw.setdefault("replicasets", [REPLICA_SET])
    kw.setdefault("pods", [])
    kw.setdefault("deployments", [])
    kw.setdefault("configmaps", {})
    kw.setdefault("leases", [])
    return ClusterReading(now=NOW, **kw)


def by_name(snap: ClusterReading) -> dict[str, Any]:
    return {s.name: s for s in discover(snap)}


def test_default_scheduler_is_found_by_its_lease_when_it_is_a_host_process() -> None:
    found = by_name(snapshot(leases=[lease("kube-system", "kube-scheduler", "cp-1_abc")]))
    default = found["default-scheduler"]
    assert (default.form, default.leader, default.healthy) == ("process", "cp-1", True)


def test_stale_lease_makes_a_scheduler_unhealthy() -> None:
    found = by_name(snapshot(leases=[lease("kube-system", "kube-scheduler", "cp-1_abc", 60)]))
    assert not found["default-scheduler"].healthy
    assert found["default-scheduler"].leader is None


def test_deployment_profiles_come_from_its_configmap() -> None:
    snap = snapshot(
        deployments=[deployment()],
        configmaps={("kube-system", "my-scheduler-config"): {"data": {"config.yaml": CONFIG}}},
        leases=[lease("kube-system", "my-scheduler", "my-scheduler-6d4-x1_u")],
    )
    found = by_name(snap)
    assert set(found) == {"my-scheduler", "my-other"}
    mine = found["my-scheduler"]
    assert (mine.form, mine.managed, mine.desired, mine.ready) == ("deployment", True, 2, 1)
    assert mine.lease is not None and mine.lease.ref == "kube-system/my-scheduler"
    assert mine.leader == "my-scheduler-6d4-x1" and mine.healthy


def test_unmanaged_scheduler_without_its_configmap_defaults_to_default_scheduler() -> None:
    found = by_name(snapshot(deployments=[deployment(managed=False)]))
    assert found["default-scheduler"].form == "deployment"
    assert not found["default-scheduler"].managed


def test_names_pods_ask_for_that_nothing_serves_are_flagged() -> None:
    snap = snapshot(pods=[pod("a", "ghost"), pod("b", "ghost"), pod("c", "gone", node="n1")])
    found = by_name(snap)
    assert (found["ghost"].served, found["ghost"].pending, found["ghost"].form) == (
        False,
        2,
        "none",
    )
    assert (found["gone"].served, found["gone"].form) == (False, "unknown")
    assert not found["ghost"].healthy


def test_mirror_pod_of_static_pod_is_static_pod_form() -> None:
    mirror = pod(
        "kube-scheduler-cp-1", node="cp-1",
        meta={"namespace": "kube-system", "annotations": {"kubernetes.io/config.mirror": "x"}},
        containers=[{"name": "kube-scheduler", "image": "registry.k8s.io/kube-scheduler:v1.36.3",
                     "command": ["kube-scheduler", "--kubeconfig=/etc/kubernetes/scheduler.conf",
                                 "--leader-elect=true"]}],
    )  # fmt: skip
    mirror["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    found = by_name(
        snapshot(pods=[mirror], leases=[lease("kube-system", "kube-scheduler", "cp-1_x")])
    )
    default = found["default-scheduler"]
    assert (default.form, default.ready, default.desired) == ("static-pod", 1, 1)
    assert default.lease is not None and default.lease.name == "kube-scheduler"


def test_service_form_is_known_by_its_managed_role() -> None:
    role = {
        "metadata": {
            "namespace": "kube-system", "name": "svc-leader-election",
            "labels": {"app.kubernetes.io/managed-by": "kschedctl", "app.kubernetes.io/instance": "svc"},
            "annotations": {"kschedctl.io/form": "service", "kschedctl.io/lease": "kube-system/svc"},
        }
    }  # fmt: skip
    found = by_name(snapshot(managed=[role], leases=[lease("kube-system", "svc", "host_1")]))
    assert (found["svc"].form, found["svc"].managed, found["svc"].healthy) == (
        "service",
        True,
        True,
    )


@pytest.mark.parametrize(
    ("config", "argv", "names", "lease_ref"),
    [
        pytest.param(None, [], ["default-scheduler"], ("kube-system", "kube-scheduler"), id="defaults"),
        pytest.param(CONFIG, [], ["my-scheduler", "my-other"], ("kube-system", "my-scheduler"), id="config"),
        pytest.param(CONFIG, ["--leader-elect=false"], ["my-scheduler", "my-other"], None, id="flag-off"),
        pytest.param(
            "leaderElection: {leaderElect: false}\nprofiles: [{}]", [], ["default-scheduler"], None,
            id="unnamed-profile",
        ),
        pytest.param(
            None, ["--leader-elect-resource-name", "x"], ["default-scheduler"], ("kube-system", "x"),
            id="flag-lease-name",
        ),
    ],
)  # fmt: skip
def test_config_facts(
    config: str | None, argv: list[str], names: list[str], lease_ref: tuple[str, str] | None
) -> None:
    facts = config_facts(config, argv)
    assert facts.names == names
    assert facts.lease == lease_ref


def test_config_source_follows_mounts_and_items() -> None:
    container = SCHEDULER_TEMPLATE["containers"][0]
    assert config_source(SCHEDULER_TEMPLATE, container) == ("my-scheduler-config", "config.yaml")
    with_items = {
        **SCHEDULER_TEMPLATE,
        "volumes": [{"name": "config", "configMap": {
            "name": "cm", "items": [{"key": "sched.yaml", "path": "config.yaml"}]}}],
    }  # fmt: skip
    assert config_source(with_items, container) == ("cm", "sched.yaml")


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("registry.k8s.io/kube-scheduler:v1.36.3", True),
        ("my.registry:5000/k8s/kube-scheduler@sha256:abc", True),
        ("kube-scheduler", True),
        ("registry.k8s.io/kube-controller-manager:v1.36.3", False),
        ("example.com/kube-scheduler-extender:1", False),
        ("registry.k8s.io/scheduler-plugins/kube-scheduler:v0.34.7", True),
        ("kschedctl.local/custom-kube-scheduler:v1.36.3", True),
        ("example.com/kube-scheduler-custom:1", False),
    ],
)
def test_kube_scheduler_images(image: str, expected: bool) -> None:
    assert is_kube_scheduler_image(image) is expected


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ({"name": "s", "image": "registry.k8s.io/kube-scheduler:v1.36.3"}, True),
        ({"name": "s", "image": "example.com/sched:1", "command": ["/bin/kube-scheduler"]}, True),
        # program: custom with custom.binary: its own command name, kschedctl's container name
        (
            {"name": "kube-scheduler", "image": "example.com/sched:1",
             "command": ["/usr/local/bin/my-sched", "--config=/etc/kubernetes/s/config.yaml"]},
            True,
        ),
        (
            {"name": "s", "image": "example.com/sched:1",
             "command": ["/usr/local/bin/custom-kube-scheduler", "--config=/c.yaml"]},
            True,
        ),
        # the container name alone is no kube-scheduler: it reads no --config
        ({"name": "kube-scheduler", "image": "example.com/app:1", "command": ["app"]}, False),
        ({"name": "app", "image": "example.com/app:1", "args": ["--config=/c.yaml"]}, False),
        ({"name": "kube-scheduler", "image": "example.com/app:1", "args": [1, "--config", 2]}, True),
    ],
    ids=["image", "command", "custom-binary", "custom-command", "name-only", "config-only",
         "non-string-args"],
)  # fmt: skip
def test_kube_scheduler_containers(container: dict[str, Any], expected: bool) -> None:
    assert is_kube_scheduler_container(container) is expected
    assert (scheduler_container({"containers": [container]}) is container) is expected


@pytest.mark.parametrize(
    "text",
    ["2026-12-02T12:00:00Z", "2026-12-02T12:00:00.123456Z", "2026-12-02T12:00:00.123456789Z",
     "2026-12-02T13:00:00+01:00"],
)  # fmt: skip
def test_parse_time_accepts_time_and_microtime(text: str) -> None:
    assert abs((parse_time(text) - NOW).total_seconds()) < 1


# -- why its pods do not run ----------------------------------------------------------------------


def scheduler_pod(state: dict[str, Any], managed: bool = True) -> dict[str, Any]:
    labels = {"kschedctl.io/scheduler": "my-scheduler"} if managed else {}
    return {
        "metadata": {"namespace": "kube-system", "name": "my-scheduler-6d4-x1", "labels": labels,
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "my-scheduler-6d4",
                                          "uid": "rs-uid", "controller": True}]},
        "spec": {**SCHEDULER_TEMPLATE, "nodeName": "n1"},
        "status": {"phase": "Running" if "running" in state else "Pending",
                   "containerStatuses": [{"name": "kube-scheduler", "restartCount": 2,
                                          "state": state,
                                          "lastState": {"terminated": {"exitCode": 1}}}]},
    }  # fmt: skip


MY_CONFIG = {("kube-system", "my-scheduler-config"): {"data": {"config.yaml": CONFIG}}}


def test_a_crash_looping_pod_is_its_schedulers_problem() -> None:
    crashing = scheduler_pod({"waiting": {"reason": "CrashLoopBackOff"}})
    found = by_name(
        snapshot(deployments=[deployment(ready=0)], pods=[crashing], configmaps=MY_CONFIG)
    )
    mine = found["my-scheduler"]
    assert (mine.problem, mine.healthy) == ("CrashLoopBackOff", False)
    assert mine.to_dict()["problem"] == "CrashLoopBackOff"
    assert found["my-other"].problem == "CrashLoopBackOff"  # the same pods serve both


def test_running_pods_are_no_problem() -> None:
    running = scheduler_pod({"running": {"startedAt": stamp(5)}})
    found = by_name(snapshot(deployments=[deployment()], pods=[running], configmaps=MY_CONFIG))
    assert (
        found["my-scheduler"].problem is None and found["my-scheduler"].to_dict()["problem"] is None
    )


def test_a_managed_scheduler_whose_configmap_is_gone_keeps_its_name_and_says_why() -> None:
    creating = scheduler_pod({"waiting": {"reason": "ContainerCreating"}})
    found = by_name(snapshot(deployments=[deployment(ready=0)], pods=[creating]))
    # Not the default scheduler its unreadable config implies (that one only bound the pod).
    assert found["default-scheduler"].form == "unknown"
    mine = found["my-scheduler"]
    assert (mine.problem, mine.pods) == ("FailedMount", ["my-scheduler-6d4-x1"])


def test_a_bare_managed_pod_whose_configmap_is_gone() -> None:
    bare = scheduler_pod({"waiting": {"reason": "ContainerCreating"}})
    bare["metadata"].pop("ownerReferences")
    mine = by_name(snapshot(pods=[bare]))["my-scheduler"]
    assert (mine.form, mine.problem, mine.ready) == ("pod", "FailedMount", 0)
