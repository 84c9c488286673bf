"""The seed's flow on a real control plane: create → deploy → a pod is scheduled by it →
list/status show it healthy → remove leaves nothing → a new pod for it stays Pending."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import exists, pod_events, pod_manifest, run, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

FORM_FLAGS = {
    "service": "--as-service",
    "pod": "--as-pod",
    "deployment": "--as-deployment",
    "static-pod": "--as-static-pod",
}


def managed_leftovers(
    cluster: Cluster, name: str, lease_namespace: str = "kube-system"
) -> list[str]:
    # kschedctl's own label, and the recommended labels of objects older kschedctl deployed.
    selectors = [
        f"kschedctl.io/scheduler={name}",
        f"app.kubernetes.io/managed-by=kschedctl,app.kubernetes.io/instance={name}",
    ]
    paths = [
        "/api/v1/pods", "/api/v1/configmaps", "/api/v1/serviceaccounts",
        "/apis/apps/v1/deployments", "/apis/rbac.authorization.k8s.io/v1/roles",
        "/apis/rbac.authorization.k8s.io/v1/rolebindings",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    ]  # fmt: skip
    left = sorted(
        {
            f"{path.rsplit('/', 1)[-1]}/{item['metadata']['name']}"
            for path in paths
            for selector in selectors
            for item in cluster.list(path, labelSelector=selector)
        }
    )
    try:
        cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/{lease_namespace}/leases/{name}")
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
    return next(s for s in json.loads(listing.stdout)["items"] if s["name"] == name)


@pytest.mark.parametrize("form", ["service", "pod", "deployment", "static-pod"])
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

        # app is bound: it keeps running without its scheduler, so remove does not refuse
        removed = run(lab, "remove", name, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
        # app, and maybe the previous form's app: its namespace is deleted asynchronously
        bound = re.search(r"(\d+) pod\(s\) my-scheduler placed are bound to nodes", removed.stderr)
        assert bound and int(bound.group(1)) >= 1, removed.stderr
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
    # Gone before the next form's test: namespaces are deleted asynchronously, and a pod that
    # still names my-scheduler would make that test's `remove` refuse.
    cluster.delete(f"/api/v1/namespaces/{namespace}/pods/later")
    wait_for(
        lambda: not exists(cluster, f"/api/v1/namespaces/{namespace}/pods/later"), 30, "later gone"
    )


def lease_holder(cluster: Cluster, name: str) -> str:
    lease = cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}")
    return str(lease["spec"].get("holderIdentity") or "")


def test_ha_three_replicas_hand_over_the_lease(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = "ha-sched"
    try:
        deployed = run(lab, "deploy", name, "--as-deployment", "--replicas", "3", cwd=tmp_path)
        assert deployed.returncode == 0, deployed.stderr
        entry = scheduler_entry(lab, name, tmp_path)
        assert (entry["desired"], entry["ready"]) == (3, 3)
        leader = lease_holder(cluster, name).split("_", 1)[0]
        assert leader in entry["pods"]

        # The leader's process dies: the lab runner restarts it at once (as a kubelet does)
        # and whoever wins the Lease next, it is a new process holding it.
        old_holder = lease_holder(cluster, name)
        record = next((lab.dir / "procs").glob(f"kube-system_{leader}_*.json"))
        os.kill(json.loads(record.read_text())["pid"], signal.SIGKILL)
        wait_for(
            lambda: (h := lease_holder(cluster, name)) != old_holder and h, 40,
            "a new process to hold the Lease",
        )  # fmt: skip

        # The leader pod goes away (drain, rollout): it releases the Lease on SIGTERM and
        # another replica takes it over.
        current = lease_holder(cluster, name).split("_", 1)[0]
        cluster.delete(f"/api/v1/namespaces/kube-system/pods/{current}")
        new = wait_for(
            lambda: (h := lease_holder(cluster, name).split("_", 1)[0]) != current and h,
            40, "another replica to take the Lease",
        )  # fmt: skip
        replicas = {
            p["metadata"]["name"]
            for p in cluster.list(
                "/api/v1/namespaces/kube-system/pods",
                labelSelector=f"app.kubernetes.io/instance={name}",
            )
        }
        assert new in replicas, (new, replicas)  # a standby, or the Deployment's replacement
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest("after", schedulerName=name)
        )
        assert wait_for(lambda: scheduled_by(cluster, namespace, "after"), 60, "scheduled") == name
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    assert managed_leftovers(cluster, name) == []


def test_two_schedulers_side_by_side(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    names = ("left-sched", "right-sched")
    try:
        for name, flag in zip(names, ("--as-pod", "--as-deployment"), strict=True):
            deployed = run(lab, "deploy", name, flag, cwd=tmp_path)
            assert deployed.returncode == 0, deployed.stderr
        for name in names:
            cluster.create(
                f"/api/v1/namespaces/{namespace}/pods",
                pod_manifest(f"for-{name}", schedulerName=name),
            )
        for name in names:
            assert (
                wait_for(lambda n=name: scheduled_by(cluster, namespace, f"for-{n}"), 60, name)
                == name
            )
        listing = {
            s["name"]: s
            for s in json.loads(run(lab, "list", "-o", "json", cwd=tmp_path).stdout)["items"]
        }
        assert (
            listing["left-sched"]["form"] == "pod"
            and listing["right-sched"]["form"] == "deployment"
        )
        assert all(listing[n]["healthy"] for n in names)
        assert lease_holder(cluster, "left-sched") != lease_holder(cluster, "right-sched")
        taken = run(lab, "deploy", "left-sched", "--as-deployment", cwd=tmp_path)
        assert taken.returncode == 1 and "already deployed as pod" in taken.stderr
    finally:
        for name in names:
            run(lab, "remove", name, "--force", cwd=tmp_path)
    assert (
        managed_leftovers(cluster, "left-sched") == managed_leftovers(cluster, "right-sched") == []
    )


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


def test_api_server_restart_during_deploy_wait_converges(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = "restart-sched"
    env = {**os.environ, "KUBECONFIG": str(lab.kubeconfig)}
    try:
        deploying = subprocess.Popen(
            [sys.executable, "-m", "kschedctl", "deploy", name, "--as-deployment", "--timeout", "90"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        wait_for(lambda: _applied(cluster, name), 60, "the Deployment to be applied")
        lab.restart("kube-apiserver", down_for=3)
        _out, err = deploying.communicate(timeout=150)
        if deploying.returncode != 0:  # failing is fine, but clearly, naming what did not happen
            assert "error:" in err and "Traceback" not in err, err
        again = run(lab, "deploy", name, "--as-deployment", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert f"{name} is serving" in again.stderr
        # The default kube-scheduler lost its Lease in the outage and exited, as it does in
        # any cluster; the lab started it again (like systemd or a kubelet), so it schedules.
        cluster.create(f"/api/v1/namespaces/{namespace}/pods", pod_manifest("after-outage"))
        assert (
            wait_for(
                lambda: scheduled_by(cluster, namespace, "after-outage"),
                60,
                "the default scheduler",
            )
            == "default-scheduler"
        )
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    assert managed_leftovers(cluster, name) == []


def _applied(cluster: Cluster, name: str) -> bool:
    try:
        cluster.get(f"/apis/apps/v1/namespaces/kube-system/deployments/{name}")
        return True
    except NotFoundError:
        return False


def test_dry_runs_and_a_changed_config_rolls_the_pods(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    name = "roll-sched"
    assert run(lab, "create", name, cwd=tmp_path).returncode == 0
    client = run(lab, "deploy", name, "--as-deployment", "--dry-run=client", cwd=tmp_path)
    assert client.returncode == 0, client.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(client.stdout) if d]
    assert "Deployment" in kinds and "ClusterRoleBinding" in kinds
    server = run(lab, "deploy", name, "--as-deployment", "--dry-run=server", cwd=tmp_path)
    assert server.returncode == 0, server.stderr
    assert "deployment/roll-sched -n kube-system would create (server dry run)" in server.stdout
    assert managed_leftovers(cluster, name) == []
    try:
        first = run(lab, "deploy", name, "--as-deployment", "--no-verify", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        before = {p["metadata"]["name"] for p in _scheduler_pods(cluster, name)}

        spec_file = tmp_path / name / "scheduler.yaml"
        spec = yaml.safe_load(spec_file.read_text())
        spec["spec"]["percentageOfNodesToScore"] = 70
        spec_file.write_text(yaml.safe_dump(spec))
        second = run(lab, "deploy", name, "--as-deployment", cwd=tmp_path)
        assert second.returncode == 0, second.stderr
        assert f"configmap/{name}-config -n kube-system configured" in second.stdout
        after = {p["metadata"]["name"] for p in _scheduler_pods(cluster, name)}
        assert after and not after & before, "the pods were replaced by ones with the new config"
        config = cluster.get(f"/api/v1/namespaces/kube-system/configmaps/{name}-config")
        assert "percentageOfNodesToScore: 70" in next(iter(config["data"].values()))
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)


def _scheduler_pods(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    pods = cluster.list(
        "/api/v1/namespaces/kube-system/pods", labelSelector=f"app.kubernetes.io/instance={name}"
    )
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def test_forbidden_midway_reports_what_exists_and_remove_cleans_up(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    """A user who may manage kube-system but not cluster-scoped RBAC: deploy stops at the first
    ClusterRole (least privilege) with exit 4, says what it applied, and `remove` (as admin)
    cleans up."""
    name = "half-sched"
    user = "deployer"
    rbac = [
        ("/api/v1/namespaces/kube-system/serviceaccounts", {"metadata": {"name": user}}),
        ("/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings", {
            "metadata": {"name": f"{user}-admin"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
            "subjects": [{"kind": "ServiceAccount", "name": user, "namespace": "kube-system"}]}),
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "metadata": {"name": f"{user}-read"},
            "rules": [{"apiGroups": ["", "apps", "coordination.k8s.io", "rbac.authorization.k8s.io"],
                       "resources": ["pods", "deployments", "leases", "roles", "clusterroles",
                                     "clusterrolebindings"],
                       "verbs": ["get", "list"]}]}),
        ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": f"{user}-read"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{user}-read"},
            "subjects": [{"kind": "ServiceAccount", "name": user, "namespace": "kube-system"}]}),
    ]  # fmt: skip
    for path, body in rbac:
        cluster.create(path, body)
    try:
        token = cluster.create(
            f"/api/v1/namespaces/kube-system/serviceaccounts/{user}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        )["status"]["token"]
        admin = yaml.safe_load(lab.kubeconfig.read_text())
        admin["users"] = [{"name": user, "user": {"token": token}}]
        admin["contexts"][0]["context"]["user"] = user
        kubeconfig = tmp_path / "deployer.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(admin))

        half = run(
            lab, "deploy", name, "--as-deployment", "--kubeconfig", str(kubeconfig), cwd=tmp_path
        )
        assert half.returncode == 4, half.stderr
        assert f"serviceaccount/{name} -n kube-system created" in half.stdout
        assert "clusterrole/" in half.stderr and "forbidden" in half.stderr
        assert "kschedctl remove" in half.stderr
        assert managed_leftovers(cluster, name) == [f"serviceaccounts/{name}"]

        removed = run(lab, "remove", name, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
        assert managed_leftovers(cluster, name) == []
    finally:
        for path, body in reversed(rbac):
            cluster.delete(f"{path}/{body['metadata']['name']}")
