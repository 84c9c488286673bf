"""kschedctl's own scheduler packaged as THE default scheduler (issue 13, point 7).

The lab's kube-scheduler is stopped (by its recorded pid, and held stopped: the lab runner
would revive it otherwise), ``create default-scheduler --program builtin --replaces-default``
is deployed on the lab's host seam, plain pods (no schedulerName) are bound by it, and it holds
kube-system/kube-scheduler. Then it is removed and the lab's kube-scheduler is started again
and must be the default scheduler again before the test ends: the other tests of the session
share this lab and its default scheduler.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_helpers import pod_events, pod_manifest, run, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.observe.schedulers import BUILTIN_LEASE_ANNOTATION

NAME = "default-scheduler"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
FORM_FLAGS = {"service": "--as-service", "static-pod": "--as-static-pod"}


def lease(cluster: Cluster) -> dict[str, object]:
    try:
        return cluster.get(LEASE)
    except NotFoundError:
        return {}


def held_by_kschedctl(cluster: Cluster) -> bool:
    """The Lease is held by kschedctl's scheduler: its holder writes its own annotation."""
    current = lease(cluster)
    annotations = (current.get("metadata") or {}).get("annotations") or {}  # type: ignore[attr-defined]
    holder = (current.get("spec") or {}).get("holderIdentity")  # type: ignore[attr-defined]
    return bool(holder) and annotations.get(BUILTIN_LEASE_ANNOTATION) == NAME


def bound_node(cluster: Cluster, namespace: str, pod: str) -> str | None:
    got = cluster.get(f"/api/v1/namespaces/{namespace}/pods/{pod}")
    return (got.get("spec") or {}).get("nodeName") or None


def scheduled_event(cluster: Cluster, namespace: str, pod: str) -> dict[str, object] | None:
    return next(
        (e for e in pod_events(cluster, namespace, pod) if e["reason"] == "Scheduled"), None
    )


def scheduler_log(lab: Lab, namespace: str, tmp_path: Path) -> str:
    """The lines of kschedctl's scheduler (``kschedctl logs``: its unit's or its pod's) that
    bound a pod of ``namespace``."""
    logs = run(lab, "logs", NAME, "--grep", f"bound {namespace}/", cwd=tmp_path)
    assert logs.returncode == 0, logs.stderr
    return logs.stdout


@pytest.mark.parametrize("form", ["service", "static-pod"])
def test_builtin_replaces_the_default_scheduler(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path, form: str
) -> None:
    created = run(lab, "create", NAME, "--program", "builtin", "--replaces-default", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    # Validate accepts it because of replacesDefault, and only then.
    assert run(lab, "validate", NAME, cwd=tmp_path).returncode == 0
    spec = tmp_path / NAME / "scheduler.yaml"
    spec.write_text(spec.read_text().replace("replacesDefault: true", "replacesDefault: false"))
    refused = run(lab, "validate", NAME, cwd=tmp_path)
    assert refused.returncode == 3
    assert "'default-scheduler' is the cluster's own scheduler" in refused.stdout, refused.stdout
    spec.write_text(spec.read_text().replace("replacesDefault: false", "replacesDefault: true"))

    lab.hold("kube-scheduler")
    try:
        deployed = run(
            lab, "deploy", NAME, FORM_FLAGS[form], "--timeout", "300", cwd=tmp_path, timeout=400
        )
        assert deployed.returncode == 0, deployed.stderr
        assert f"canary pod was scheduled by {NAME}" in deployed.stderr
        wait_for(lambda: held_by_kschedctl(cluster), 60, "kschedctl holding kube-scheduler")

        pods = [f"plain-{i}" for i in range(3)]
        for pod in pods:  # plain pods: no schedulerName, as most of a cluster's are
            cluster.create(f"/api/v1/namespaces/{namespace}/pods", pod_manifest(pod))
        for pod in pods:
            node = wait_for(lambda p=pod: bound_node(cluster, namespace, p), 60, f"{pod} bound")
            event = wait_for(
                lambda p=pod: scheduled_event(cluster, namespace, p), 30, f"{pod}'s event"
            )
            assert event["reportingController"] == NAME
            assert node in str(event["note"])
            # Bound by kschedctl's scheduler, not by another default-scheduler: its own log.
            assert f"bound {namespace}/{pod} to {node}" in scheduler_log(lab, namespace, tmp_path)
        assert held_by_kschedctl(cluster)

        for pod in pods:
            cluster.delete(f"/api/v1/namespaces/{namespace}/pods/{pod}")
        wait_for(lambda: not cluster.list(f"/api/v1/namespaces/{namespace}/pods"), 60, "gone")
        removed = run(lab, "remove", NAME, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
    finally:
        run(lab, "remove", NAME, "--force", cwd=tmp_path)
        lab.release("kube-scheduler")
    # The lab's kube-scheduler is the default scheduler again, for the tests after this one.
    wait_for(
        lambda: lease(cluster) and not held_by_kschedctl(cluster), 90, "kube-scheduler's Lease"
    )
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", pod_manifest("after"))
    wait_for(lambda: bound_node(cluster, namespace, "after"), 90, "after bound")
