"""Least-privilege RBAC on a real control plane: the rendered ClusterRole covers the lab's live
bootstrap scheduler roles except the default scheduler's Lease, and SubjectAccessReviews prove
what the ServiceAccount can and cannot do in each ``spec.rbac`` mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import pod_events, pod_manifest, run, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.k8s.access import review, service_account_identity
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.model.config import rbac
from kschedctl.model.config.versions import parse_version
from kschedctl.observe.permissions import Access
from kschedctl.render.forms import render
from kschedctl.spec import default_spec

COORD = "coordination.k8s.io"
RBAC_API = "/apis/rbac.authorization.k8s.io/v1"


def server_minor(cluster: Cluster) -> str:
    major, minor = cluster.server_version()["gitVersion"].lstrip("v").split(".")[:2]
    return f"{major}.{minor}"


def test_rendered_rules_cover_the_live_bootstrap_roles_but_the_default_lock(
    cluster: Cluster,
) -> None:
    version = parse_version(server_minor(cluster))
    live = [
        rule
        for role in rbac.BOOTSTRAP_ROLES
        for rule in cluster.get(f"{RBAC_API}/clusterroles/{role}")["rules"]
    ]
    spec = default_spec("cover", kubernetes_version=version.minor_version)
    (role,) = [
        d
        for d in yaml.safe_load_all(render(spec, "deployment"))
        if isinstance(d, dict)
        and d["kind"] == "ClusterRole"
        and d["metadata"]["name"] == "cover-scheduler"  # not the metrics reader's
    ]
    rendered = role["rules"]
    missing = rbac.uncovered(rendered, live)
    print(f"\nlive bootstrap permissions not granted by {role['metadata']['name']}:")
    for permission in sorted(missing):
        print("  ", permission)
    # Everything the cluster's roles grant, except exactly the default scheduler's lock ...
    assert missing == rbac.permissions(rbac.lock_rules(version))
    assert ("update", COORD, "leases", "kube-scheduler") in missing
    assert ("create", COORD, "leases", "") in missing
    # ... and nothing they do not grant.
    assert rbac.uncovered(live, rendered) == set()


def _work(namespace: str, lease: str) -> list[Access]:
    """What the scheduler does: kube-scheduler's informers, binds, events, its Lease."""
    return [
        Access("list", "pods"), Access("watch", "pods"), Access("delete", "pods"),
        Access("list", "nodes"), Access("watch", "nodes"),
        Access("create", "pods", subresource="binding"),
        Access("patch", "pods", subresource="status"),
        Access("create", "events", group="events.k8s.io", namespace=namespace),
        Access("create", "events", namespace=namespace),
        Access("create", "leases", group=COORD, namespace=namespace),
        Access("get", "leases", group=COORD, namespace=namespace, name=lease),
        Access("update", "leases", group=COORD, namespace=namespace, name=lease),
        Access("get", "configmaps", namespace="kube-system",
               name="extension-apiserver-authentication"),
        Access("create", "tokenreviews", group="authentication.k8s.io"),
        Access("create", "subjectaccessreviews", group="authorization.k8s.io"),
        Access("list", "persistentvolumes"), Access("update", "persistentvolumes"),
        Access("list", "persistentvolumeclaims"), Access("patch", "persistentvolumeclaims"),
        Access("list", "storageclasses", group="storage.k8s.io"),
        Access("list", "csinodes", group="storage.k8s.io"),
        Access("list", "csidrivers", group="storage.k8s.io"),
        Access("list", "csistoragecapacities", group="storage.k8s.io"),
        Access("list", "volumeattachments", group="storage.k8s.io"),
        Access("list", "resourceslices", group="resource.k8s.io"),
        Access("list", "poddisruptionbudgets", group="policy"),
        Access("list", "namespaces"),
    ]  # fmt: skip


DEFAULT_LOCK = [
    Access("update", "leases", group=COORD, namespace="kube-system", name="kube-scheduler"),
    Access("get", "leases", group=COORD, namespace="kube-system", name="kube-scheduler"),
    Access("create", "leases", group=COORD, namespace="default"),
    Access("create", "leasecandidates", group=COORD, namespace="kube-system"),
]


def _sar(cluster: Cluster, namespace: str, name: str, checks: list[Access]) -> dict[str, bool]:
    user, groups = service_account_identity(namespace, name)
    return {str(check): allowed for check, allowed in review(cluster, user, groups, checks)}


def _status(lab: Lab, name: str, cwd: Path) -> dict[str, Any]:
    status = run(lab, "status", name, "-o", "json", cwd=cwd)
    assert status.returncode == 0, status.stderr
    return dict(json.loads(status.stdout))


def _set_rbac(workspace: Path, mode: str) -> None:
    path = workspace / "scheduler.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["spec"]["rbac"] = mode
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def test_service_account_can_work_but_not_take_the_default_lease(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = "rbac-sched"
    flags = ("--as-deployment", "--namespace", namespace, "--no-verify", "--timeout", "150")
    assert run(lab, "create", name, cwd=tmp_path).returncode == 0
    try:
        # Before: the built-in roles (spec.rbac: builtinRoles).
        _set_rbac(tmp_path / name, "builtinRoles")
        deployed = run(lab, "deploy", name, *flags, cwd=tmp_path)
        assert deployed.returncode == 0, deployed.stderr
        before = _sar(cluster, namespace, name, DEFAULT_LOCK)
        report = _status(lab, name, tmp_path)
        assert report["rbac"] == {
            "mode": "builtinRoles",
            "clusterRoles": ["system:kube-scheduler", "system:volume-scheduler"],
            "defaultLeaseUpdate": True,
        }
        assert all(c["allowed"] for c in report["access"]["checks"]), report["access"]

        # Switched to least privilege: deploy deletes the built-in bindings it no longer renders.
        _set_rbac(tmp_path / name, "leastPrivilege")
        deployed = run(lab, "deploy", name, *flags, cwd=tmp_path)
        assert deployed.returncode == 0, deployed.stderr
        for stale in ("as-kube-scheduler", "as-volume-scheduler"):
            assert f"clusterrolebinding/{name}-{stale} deleted (no longer rendered)" in (
                deployed.stdout
            ), deployed.stdout
            with pytest.raises(NotFoundError):
                cluster.get(f"{RBAC_API}/clusterrolebindings/{name}-{stale}")

        # After: least privilege only.
        after = _sar(cluster, namespace, name, DEFAULT_LOCK)
        work = _sar(cluster, namespace, name, _work(namespace, name))
        report = _status(lab, name, tmp_path)
        print("\nSARs of the default scheduler's lock, builtinRoles → leastPrivilege:")
        for check in before:
            print(f"   {check}: {before[check]} → {after[check]}")
        print(f"work: {sum(work.values())}/{len(work)} allowed")
        assert report["rbac"] == {
            "mode": "leastPrivilege",
            "clusterRoles": [f"{name}-scheduler"],
            "defaultLeaseUpdate": False,
        }
        assert not [w for w in report["warnings"] if "RBAC" in w], report["warnings"]
        assert all(c["allowed"] for c in report["access"]["checks"]), report["access"]
        assert report["scheduler"]["healthy"]
        assert work == dict.fromkeys(work, True), [c for c, ok in work.items() if not ok]
        assert after == dict.fromkeys(after, False), after
        assert before[str(DEFAULT_LOCK[0])] is True  # the documented trade-off

        # And it still schedules: watch, bind, events, with the rights it has now.
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest("lp", schedulerName=name)
        )
        scheduled = wait_for(
            lambda: next(
                (e["reportingController"] for e in pod_events(cluster, namespace, "lp")
                 if e["reason"] == "Scheduled"), None,
            ),
            60, "pod lp scheduled",
        )  # fmt: skip
        assert scheduled == name
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    selector = f"app.kubernetes.io/managed-by=kschedctl,app.kubernetes.io/instance={name}"
    for kind in ("clusterroles", "clusterrolebindings"):
        assert cluster.list(f"{RBAC_API}/{kind}", labelSelector=selector) == []
