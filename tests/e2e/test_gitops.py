"""GitOps: a scheduler applied from exported files (kubectl apply -k, helm install) serves on a
real control plane, and list/status/remove recognise it as kschedctl's."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from e2e_helpers import exists, pod_manifest, wait_for
from test_deploy import managed_leftovers, run, scheduled_by, scheduler_entry

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import binaries
from kschedctl.lab.cluster import Lab

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


def test_a_kustomize_base_applied_with_kubectl_is_recognised_and_removed(
    lab: Lab, cluster: Cluster, namespace: str, kubectl: Kubectl, tmp_path: Path
) -> None:
    name = "gitops-kz"
    rendered = run(lab, "render", name, "--as", "kustomize", "base", cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr
    try:
        kubectl("apply", "-k", str(tmp_path / "base"))
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest("app", schedulerName=name)
        )
        assert wait_for(lambda: scheduled_by(cluster, namespace, "app"), 180, "app") == name

        entry = wait_for(
            lambda: (e := scheduler_entry(lab, name, tmp_path))["healthy"] and e, 60, "healthy"
        )
        assert (entry["form"], entry["managed"]) == ("deployment", True)
        assert entry["lease"] == {**entry["lease"], "namespace": "kube-system", "name": name}
        status = run(lab, "status", name, "-o", "json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["scheduler"]["form"] == "deployment"

        cluster.delete(f"/api/v1/namespaces/{namespace}/pods/app")
        wait_for(lambda: not cluster.list(f"/api/v1/namespaces/{namespace}/pods"), 30, "app gone")
        removed = run(lab, "remove", name, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
        assert "not applied by `kschedctl deploy`" in removed.stderr
        assert "GitOps tool" in removed.stderr and "re-create" in removed.stderr
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    assert managed_leftovers(cluster, name) == []


def test_helm_install_of_the_chart_is_recognised_and_removed(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """Helm's recommended labels (managed-by Helm, instance = the release, helm.sh/chart) on
    every object it installs: kschedctl's own label still marks them as the scheduler's. The
    scheduler goes to the release namespace, as charts do."""
    helm = binaries.locate().get("helm")
    if helm is None:
        pytest.skip("helm is not built: run `kschedctl lab build` to test the chart with it")
    name, release = "gitops-helm", "sched-release"
    assert run(lab, "render", name, "--as", "helm-chart", "chart", cwd=tmp_path).returncode == 0
    kubeconfig = f"--kubeconfig={lab.kubeconfig}"

    def helm_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(helm), kubeconfig, *args], capture_output=True, text=True, timeout=180,
            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip

    try:
        # The release and the scheduler's objects live in the test namespace (its Lease too);
        # the authentication RoleBinding stays in kube-system.
        installed = helm_run("install", release, str(tmp_path / "chart"), "-n", namespace)
        assert installed.returncode == 0, installed.stderr
        assert f"kschedctl status {name}" in installed.stdout  # NOTES.txt
        binding = cluster.get(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/"
            f"{name}-extension-apiserver-authentication-reader"
        )
        assert binding["metadata"]["annotations"]["meta.helm.sh/release-name"] == release
        deployment = cluster.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
        labels = deployment["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert labels["app.kubernetes.io/instance"] == release
        assert labels["helm.sh/chart"] == f"{name}-0.1.0"
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest("app", schedulerName=name)
        )
        assert wait_for(lambda: scheduled_by(cluster, namespace, "app"), 180, "app") == name
        entry = wait_for(
            lambda: (e := scheduler_entry(lab, name, tmp_path))["healthy"] and e, 60, "healthy"
        )
        assert (entry["form"], entry["managed"], entry["served"]) == ("deployment", True, True)
        assert entry["lease"] == {**entry["lease"], "namespace": namespace, "name": name}
        status = run(lab, "status", name, "-n", namespace, "-o", "json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        report = json.loads(status.stdout)
        assert report["scheduler"]["healthy"] and report["scheduler"]["form"] == "deployment"
        assert {o["kind"] for o in report["objects"]} >= {"Deployment", "ConfigMap", "Role"}

        # deploy does not fight Helm for the objects: it says which release holds them.
        (tmp_path / "w").mkdir()
        deployed = run(
            lab, "deploy", name, "--as", "deployment", "-n", namespace, "--no-wait",
            cwd=tmp_path / "w",
        )  # fmt: skip
        assert deployed.returncode == 1, deployed.stderr
        assert f"Helm release {release} in namespace {namespace}" in deployed.stderr
        assert f"helm uninstall {release} -n {namespace}" in deployed.stderr

        cluster.delete(f"/api/v1/namespaces/{namespace}/pods/app")
        app = f"/api/v1/namespaces/{namespace}/pods/app"  # the scheduler's pod runs there too
        wait_for(lambda: not exists(cluster, app), 30, "app gone")
        removed = run(lab, "remove", name, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
        assert f"`helm uninstall {release} -n {namespace}` is the right tool" in " ".join(
            removed.stderr.split()
        )
        assert managed_leftovers(cluster, name) == []
    finally:
        helm_run("uninstall", release, "-n", namespace, "--wait", "--timeout", "120s")
        run(lab, "remove", name, "--force", cwd=tmp_path)
    assert managed_leftovers(cluster, name) == []


def test_a_kustomize_overlay_moving_the_namespace_moves_the_lease_status_and_remove_follow(
    lab: Lab, cluster: Cluster, namespace: str, kubectl: Kubectl, tmp_path: Path
) -> None:
    """The kschedctl.io/lease annotation keeps the rendered namespace; the scheduler holds its
    Lease where its pod runs: status and remove go by what it runs."""
    name = "gitops-moved"
    rendered = run(lab, "render", name, "--as", "kustomize", "base", cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr
    overlay = tmp_path / "overlay"
    (overlay / "scheduler").mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(
        "resources: [scheduler]\ncomponents: [../base/kube-system]\n"
    )
    (overlay / "scheduler" / "kustomization.yaml").write_text(
        f"namespace: {namespace}\nresources: [../../base/scheduler]\n"
    )
    try:
        kubectl("apply", "-k", str(overlay))
        deployment = cluster.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
        assert deployment["metadata"]["annotations"]["kschedctl.io/lease"] == f"kube-system/{name}"
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest("app", schedulerName=name)
        )
        assert wait_for(lambda: scheduled_by(cluster, namespace, "app"), 180, "app") == name
        held = cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}")
        holder = held["spec"]["holderIdentity"]
        assert holder.startswith(f"{name}-")  # one of its pods

        def healthy_status() -> dict | None:
            # every replica Ready can lag the first binding (the lab admits, then runs, each pod)
            status = run(lab, "status", name, "-o", "json", cwd=tmp_path)
            assert status.returncode == 0, status.stderr
            found = json.loads(status.stdout)["scheduler"]
            return found if found["healthy"] else None

        scheduler = wait_for(healthy_status, 90, "status healthy")
        assert scheduler["lease"]["namespace"] == namespace
        assert scheduler["lease"]["holder"] == holder

        cluster.delete(f"/api/v1/namespaces/{namespace}/pods/app")
        # (the scheduler's own pods run in this namespace too)
        wait_for(
            lambda: not exists(cluster, f"/api/v1/namespaces/{namespace}/pods/app"), 30, "app gone"
        )
        removed = run(lab, "remove", name, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
        assert f"lease/{name} -n {namespace} deleted" in removed.stdout + removed.stderr
        assert managed_leftovers(cluster, name, lease_namespace=namespace) == []
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    assert managed_leftovers(cluster, name, lease_namespace=namespace) == []
