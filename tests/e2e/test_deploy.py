"""The seed's flow on a real control plane: create → deploy → a pod is scheduled by it →
list/status show it healthy → remove leaves nothing → a new pod for it stays Pending."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import pod_events, pod_manifest, wait_for

from kschedctl.errors import NotFoundError
from kschedctl.k8s.client import Cluster
from kschedctl.lab.cluster import Lab

FORM_FLAGS = {
    "service": "--as-service",
    "pod": "--as-pod",
    "deployment": "--as-deployment",
    "static-pod": "--as-static-pod",
}


def run(lab: Lab, *args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(lab.kubeconfig)}
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout,
    )  # fmt: skip


def managed_leftovers(cluster: Cluster, name: str) -> list[str]:
    selector = f"app.kubernetes.io/managed-by=kschedctl,app.kubernetes.io/instance={name}"
    paths = [
        "/api/v1/pods", "/api/v1/configmaps", "/api/v1/serviceaccounts",
        "/apis/apps/v1/deployments", "/apis/rbac.authorization.k8s.io/v1/roles",
        "/apis/rbac.authorization.k8s.io/v1/rolebindings",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    ]  # fmt: skip
    left = [
        f"{path.rsplit('/', 1)[-1]}/{item['metadata']['name']}"
        for path in paths
        for item in cluster.list(path, labelSelector=selector)
    ]
    try:
        cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}")
        left.append(f"lease/{name}")
    except NotFoundError:
        pass
    return left


def scheduled_by(cluster: Cluster, namespace: str, pod: str) -> str | None:
    for event in pod_events(cluster, namespace, pod):
        if event["reason"] == "Scheduled":
            return str(event["reportingController"])
    return None


def scheduler_entry(lab: Lab, name: str, tmp_path: Path) -> dict[str, Any]:
    listing = run(lab, "list", "-o", "json", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    return next(s for s in json.loads(listing.stdout)["schedulers"] if s["name"] == name)


@pytest.mark.parametrize("form", ["service"])
def test_seed_flow(lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path, form: str) -> None:
    name = "my-scheduler"
    created = run(lab, "create", name, cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    try:
        deployed = run(lab, "deploy", name, FORM_FLAGS[form], "--timeout", "120", cwd=tmp_path)
        assert deployed.returncode == 0, deployed.stderr
        assert f"{name} is serving" in deployed.stderr
        assert "canary pod was scheduled by my-scheduler" in deployed.stderr

        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest("app", schedulerName=name)
        )
        assert (
            wait_for(lambda: scheduled_by(cluster, namespace, "app"), 60, "app scheduled") == name
        )

        entry = scheduler_entry(lab, name, tmp_path)
        assert (entry["form"], entry["managed"], entry["healthy"]) == (form, True, True)
        assert entry["lease"]["holder"] and entry["leader"]
        status = run(lab, "status", name, "-o", "json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        report = json.loads(status.stdout)
        assert report["scheduler"]["healthy"] and report["access"] is not None
        assert all(c["allowed"] for c in report["access"]["checks"]), report["access"]

        again = run(lab, "deploy", name, FORM_FLAGS[form], "--no-verify", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert f"{name}: unchanged" in again.stderr

        refused = run(lab, "remove", name, cwd=tmp_path)
        assert refused.returncode == 1 and f"{namespace}/app" in refused.stderr
        cluster.delete(f"/api/v1/namespaces/{namespace}/pods/app")
        wait_for(lambda: not cluster.list(f"/api/v1/namespaces/{namespace}/pods"), 30, "app gone")
        removed = run(lab, "remove", name, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    assert managed_leftovers(cluster, name) == []
    assert run(lab, "remove", name, cwd=tmp_path).returncode == 5

    cluster.create(
        f"/api/v1/namespaces/{namespace}/pods", pod_manifest("later", schedulerName=name)
    )
    time.sleep(3)
    later = cluster.get(f"/api/v1/namespaces/{namespace}/pods/later")
    assert later["status"]["phase"] == "Pending" and not later["spec"].get("nodeName")
    assert pod_events(cluster, namespace, "later") == []


def test_refusals(lab: Lab, cluster: Cluster, tmp_path: Path) -> None:
    default = run(lab, "deploy", "default-scheduler", "--as-deployment", cwd=tmp_path)
    assert default.returncode in (2, 3) and "default-scheduler" in default.stderr
    no_form = run(lab, "deploy", "x-sched", cwd=tmp_path)
    assert no_form.returncode == 2 and "--as-deployment" in no_form.stderr

    # An object of the same name that kschedctl does not manage is never overwritten.
    cluster.create(
        "/api/v1/namespaces/kube-system/serviceaccounts", {"metadata": {"name": "taken-sched"}}
    )
    try:
        taken = run(lab, "deploy", "taken-sched", "--as-deployment", cwd=tmp_path)
        assert taken.returncode == 1
        assert (
            "refusing to overwrite" in taken.stderr and "serviceaccount/taken-sched" in taken.stderr
        )
        sa = cluster.get("/api/v1/namespaces/kube-system/serviceaccounts/taken-sched")
        assert "labels" not in sa["metadata"]
        assert managed_leftovers(cluster, "taken-sched") == []
    finally:
        cluster.delete("/api/v1/namespaces/kube-system/serviceaccounts/taken-sched")

    newer = run(
        lab, "deploy", "skew-sched", "--as-deployment", "--kubernetes-version", "1.37", cwd=tmp_path
    )
    assert newer.returncode == 1 and "must not be newer" in newer.stderr

    unreachable = run(lab, "list", "--kubeconfig", str(tmp_path / "missing"), cwd=tmp_path)
    assert unreachable.returncode == 4 and "does not exist" in unreachable.stderr
