"""The lab runner: a kube-scheduler Pod on a kwok node really runs, schedules, logs, restarts."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import exists, pod_events, pod_manifest, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import processes
from kschedctl.lab.cluster import Lab
from kschedctl.lab.runner.spawn import pod_processes

RBAC = "/apis/rbac.authorization.k8s.io/v1"
IMAGE = "registry.k8s.io/kube-scheduler:v1.36.3"
Kubectl = Callable[..., subprocess.CompletedProcess[str]]


def scheduler_objects(namespace: str, name: str) -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object): what a kube-scheduler Pod needs, as a user would write it."""
    subject = [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]

    def binding(kind: str, role_kind: str, role: str, meta: dict[str, str]) -> dict[str, Any]:
        return {"kind": kind, "metadata": meta, "subjects": subject,
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind,
                            "name": role}}  # fmt: skip

    config = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"profiles: [{{schedulerName: {name}}}]\n"
        f"leaderElection: {{leaderElect: true, resourceName: {name}, "
        f"resourceNamespace: {namespace}}}\n"
    )
    lease = "coordination.k8s.io"
    pod = pod_manifest(name, serviceAccountName=name, schedulerName="default-scheduler",
                       terminationGracePeriodSeconds=10,
                       volumes=[{"name": "config", "configMap": {"name": f"{name}-config"}}])  # fmt: skip
    pod["spec"]["containers"] = [{
        "name": "kube-scheduler",
        "image": IMAGE,
        "command": ["kube-scheduler", f"--config=/etc/kubernetes/{name}/config.yaml"],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 10259, "scheme": "HTTPS"},
                           "periodSeconds": 1},
        "volumeMounts": [{"name": "config", "mountPath": f"/etc/kubernetes/{name}",
                          "readOnly": True}],
    }]  # fmt: skip
    ns = f"/api/v1/namespaces/{namespace}"
    return [
        (f"{ns}/serviceaccounts", {"metadata": {"name": name}}),
        (f"{RBAC}/clusterrolebindings",
         binding("ClusterRoleBinding", "ClusterRole", "system:kube-scheduler",
                 {"name": f"{name}-kube-scheduler"})),
        (f"{RBAC}/clusterrolebindings",
         binding("ClusterRoleBinding", "ClusterRole", "system:volume-scheduler",
                 {"name": f"{name}-volume-scheduler"})),
        (f"{RBAC}/namespaces/kube-system/rolebindings",
         binding("RoleBinding", "Role", "extension-apiserver-authentication-reader",
                 {"name": f"{name}-auth-reader", "namespace": "kube-system"})),
        (f"{RBAC}/namespaces/{namespace}/roles", {"metadata": {"name": f"{name}-lease"}, "rules": [
            {"apiGroups": [lease], "resources": ["leases"], "verbs": ["create"]},
            {"apiGroups": [lease], "resources": ["leases"], "resourceNames": [name],
             "verbs": ["get", "update"]}]}),
        (f"{RBAC}/namespaces/{namespace}/rolebindings",
         binding("RoleBinding", "Role", f"{name}-lease", {"name": f"{name}-lease"})),
        (f"{ns}/configmaps", {"metadata": {"name": f"{name}-config"},
                              "data": {"config.yaml": config}}),
        (f"{ns}/pods", pod),
    ]  # fmt: skip


def create_scheduler(cluster: Cluster, namespace: str, name: str) -> list[str]:
    """Create it all; returns the paths of what outlives the namespace (to delete at the end)."""
    outside = []
    for collection, obj in scheduler_objects(namespace, name):
        cluster.create(collection, obj)
        if not collection.startswith((f"/api/v1/namespaces/{namespace}/",
                                      f"{RBAC}/namespaces/{namespace}/")):  # fmt: skip
            outside.append(f"{collection}/{obj['metadata']['name']}")
    return outside


@pytest.fixture()
def scheduler(cluster: Cluster, namespace: str) -> Iterator[str]:
    """A kube-scheduler Pod in the test namespace; its cluster-scoped RBAC is removed after."""
    name = f"lab-sched-{uuid.uuid4().hex[:6]}"
    outside = create_scheduler(cluster, namespace, name)
    yield name
    for path in outside:
        try:
            cluster.delete(path)
        except NotFoundError:
            pass


def really_ready(cluster: Cluster, path: str) -> dict[str, Any] | None:
    """The pod once Ready by the runner's word (kwok marks bound pods Ready but sets no
    containerID; the runner's statuses carry one)."""
    pod = cluster.get(path)
    conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or []}
    statuses = pod["status"].get("containerStatuses") or []
    ok = (
        conditions.get("Ready") == "True"
        and statuses
        and all(
            s.get("ready") and str(s.get("containerID", "")).startswith("kschedctl-lab://")
            for s in statuses
        )
    )
    return pod if ok else None


def test_scheduler_pod_runs_schedules_logs_restarts_and_stops(
    cluster: Cluster, namespace: str, scheduler: str, lab: Lab, kubectl: Kubectl
) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods/{scheduler}"
    premature = []  # Ready before the process runs: what kwok alone would report

    def ready_and_never_too_early() -> dict[str, Any] | None:
        pod = cluster.get(path)
        conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or []}
        if conditions.get("Ready") == "True" and not really_ready(cluster, path):
            premature.append(pod["status"])
        return really_ready(cluster, path)

    pod = wait_for(ready_and_never_too_early, 60, f"scheduler pod {scheduler} Ready", 0.05)
    assert premature == []
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    assert pod["status"]["podIP"] == pod["status"]["hostIP"] == "127.0.0.1"
    (record,) = pod_processes(lab.dir, namespace, scheduler)
    assert record["hostname"] == scheduler and record["uid"] == pod["metadata"]["uid"]
    assert processes.is_running(record["pid"], record["exe"])

    # It schedules: a pod asking for it is bound, and the event names it.
    cluster.create(f"/api/v1/namespaces/{namespace}/pods",
                   pod_manifest("work", schedulerName=scheduler))  # fmt: skip
    wait_for(lambda: cluster.get(f"/api/v1/namespaces/{namespace}/pods/work")["spec"]
             .get("nodeName"), 30, "pod work bound")  # fmt: skip
    events = wait_for(
        lambda: [e for e in pod_events(cluster, namespace, "work") if e["reason"] == "Scheduled"],
        10, "the Scheduled event (recorded after the binding)",
    )  # fmt: skip
    assert events[0]["reportingController"] == scheduler

    # Its Lease identity starts with the pod name, as in a cluster (hostname = pod name).
    lease = cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{scheduler}")
    assert lease["spec"]["holderIdentity"].startswith(f"{scheduler}_")

    logs = kubectl("logs", "-n", namespace, scheduler)
    assert "successfully acquired lease" in logs.stdout.lower(), logs.stdout[-2000:]

    # Killed: restarted like a kubelet would (first restart at once), previous logs kept.
    os.kill(record["pid"], signal.SIGKILL)

    def restarted() -> dict[str, Any] | None:
        again = really_ready(cluster, path)
        return again if again and again["status"]["containerStatuses"][0]["restartCount"] else None

    pod = wait_for(restarted, 60, "the scheduler restarted and Ready again")
    status = pod["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1
    assert status["lastState"]["terminated"]["exitCode"] == 137
    (second,) = pod_processes(lab.dir, namespace, scheduler)
    assert second["pid"] != record["pid"] and processes.is_running(second["pid"], second["exe"])
    previous = kubectl("logs", "-n", namespace, scheduler, "--previous")
    assert "Starting Kubernetes Scheduler" in previous.stdout, previous.stderr
    assert {"Started"} <= kubelet_events(cluster, namespace, scheduler).keys()

    # Deleted: the process stops, and its records, directory and Logs object go.
    pod_dir = lab.dir / "pods" / f"{namespace}_{scheduler}_{pod['metadata']['uid']}"
    assert pod_dir.is_dir()
    cluster.delete(path)
    wait_for(lambda: not processes.is_running(second["pid"], second["exe"]), 30, "process gone")
    wait_for(lambda: not pod_processes(lab.dir, namespace, scheduler) and not pod_dir.exists(),
             10, "records and pod directory removed")  # fmt: skip
    logs_path = f"/apis/kwok.x-k8s.io/v1alpha1/namespaces/{namespace}/logs/{scheduler}"
    wait_for(lambda: not exists(cluster, logs_path), 10, "the kwok Logs object deleted")
    assert "Traceback" not in (lab.dir / "logs" / "runner.log").read_text()


def kubelet_events(cluster: Cluster, namespace: str, pod: str) -> dict[str, dict[str, Any]]:
    """The runner's events about a pod (it records them as the kubelet does), by reason."""
    events = pod_events(cluster, namespace, pod)
    return {e["reason"]: e for e in events if e.get("reportingController") == "kubelet"}


def test_crash_loop_and_config_error_show_as_a_kubelet_would(
    cluster: Cluster, namespace: str, kubectl: Kubectl
) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    cluster.create(f"/api/v1/namespaces/{namespace}/configmaps", {
        "metadata": {"name": "bad"},
        "data": {"config.yaml": "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Nope\n"},
    })  # fmt: skip
    crashing = pod_manifest("crashing", volumes=[{"name": "c", "configMap": {"name": "bad"}}])
    crashing["spec"]["containers"] = [{
        "name": "kube-scheduler", "image": IMAGE,
        "command": ["kube-scheduler", "--config=/config/config.yaml"],
        "volumeMounts": [{"name": "c", "mountPath": "/config"}],
    }]  # fmt: skip
    misconfigured = pod_manifest("misconfigured")
    misconfigured["spec"]["containers"] = [{
        "name": "kube-scheduler", "image": IMAGE, "command": ["kube-scheduler"],
        "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "bad", "key": "no"}}}],
    }]  # fmt: skip
    cluster.create(pods, crashing)
    cluster.create(pods, misconfigured)

    def container(name: str) -> dict[str, Any]:
        statuses = cluster.get(f"{pods}/{name}")["status"].get("containerStatuses") or [{}]
        return statuses[0]

    # Exit 1, restarted at once, exit 1 again: back-off (10 s, the kubelet's first window).
    crash = wait_for(
        lambda: (c := container("crashing")).get("state", {}).get("waiting", {}).get("reason")
        == "CrashLoopBackOff" and c,
        30, "crashing to be in CrashLoopBackOff",
    )  # fmt: skip
    assert crash["restartCount"] == 1 and not crash["ready"]
    assert crash["lastState"]["terminated"]["exitCode"] == 1
    pod = cluster.get(f"{pods}/crashing")
    assert pod["status"]["phase"] == "Running"
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "False"
    previous = kubectl("logs", "-n", namespace, "crashing", "--previous")
    assert "Nope" in previous.stdout, previous.stdout
    events = wait_for(lambda: "BackOff" in (e := kubelet_events(cluster, namespace, "crashing"))
                      and e, 10, "a BackOff event")  # fmt: skip
    assert events["BackOff"]["type"] == "Warning" and "Started" in events

    waiting = wait_for(lambda: container("misconfigured").get("state", {}).get("waiting"), 30,
                       "misconfigured to report why it waits")  # fmt: skip
    assert waiting["reason"] == "CreateContainerConfigError"
    assert "couldn't find key no" in waiting["message"]
    assert cluster.get(f"{pods}/misconfigured")["status"]["phase"] == "Pending"
    failed = wait_for(lambda: kubelet_events(cluster, namespace, "misconfigured").get("Failed"),
                      10, "a Failed event")  # fmt: skip
    assert "couldn't find key no" in failed["note"]


def kschedctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kschedctl", *args],
                          capture_output=True, text=True, timeout=180)  # fmt: skip


def test_runner_crash_is_adopted_and_lab_down_leaves_no_process(own_lab_dir: Path) -> None:
    directory = own_lab_dir
    up = kschedctl("lab", "up", "--dir", str(directory), "--nodes", "1")
    assert up.returncode == 0, up.stderr
    lab = Lab(directory)
    cluster = Cluster.connect(str(lab.kubeconfig))
    try:
        namespace, name = "runner-crash", "crash-sched"
        cluster.create("/api/v1/namespaces", {"metadata": {"name": namespace}})
        wait_for(lambda: exists(cluster, f"/api/v1/namespaces/{namespace}/serviceaccounts/default"),
                 60, "the default ServiceAccount")  # fmt: skip
        create_scheduler(cluster, namespace, name)
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
        wait_for(lambda: really_ready(cluster, path), 60, "the scheduler pod Ready")
        (record,) = pod_processes(directory, namespace, name)

        state = lab.state()
        assert state is not None
        runner = state.components["runner"]
        os.kill(runner.pid, signal.SIGKILL)
        wait_for(lambda: not runner.running(), 10, "the runner gone")
        assert processes.is_running(record["pid"], record["exe"])  # a kubelet crash kills nothing
        lab.restart_runner()
        log = (directory / "logs" / "runner.log").read_text()
        assert f"adopted kube-scheduler (pid {record['pid']})" in log
        assert "Traceback" not in log

        pod = wait_for(lambda: really_ready(cluster, path), 30, "the adopted pod still Ready")
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
        assert pod_processes(directory, namespace, name) == [record]
        state = lab.state()
        assert state is not None
        every = [(c.pid, c.exe) for c in state.components.values()]

        # Its ServiceAccount token and every directory made for the pod are private.
        pod_dir = next((directory / "pods").glob(f"{namespace}_{name}_*"))
        token = next(pod_dir.glob("volumes/kube-api-access-*/token"))
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
        assert {stat.S_IMODE(d.stat().st_mode) for d in [directory, directory / "pods",
                *(p for p in pod_dir.rglob("*") if p.is_dir())]} == {0o700}  # fmt: skip
        # It carries the lab's mark: `lab down` finds it even when every record is lost.
        identity = processes.read_identity(directory)
        assert identity is not None
        assert record["pid"] in {m.pid for m in processes.marked(identity)}
        (directory / "lab.json").write_text("lost")
        for path in (directory / "procs").glob("*.json"):
            path.unlink()
    finally:
        cluster.close()
        down = kschedctl("lab", "down", "--dir", str(directory))
    assert down.returncode == 0, down.stderr
    assert not directory.exists()
    assert not [p for p in [*every, (record["pid"], record["exe"])] if processes.is_running(*p)]
