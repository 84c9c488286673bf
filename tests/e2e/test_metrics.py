"""Scheduler metrics on the lab: `status --metrics` reads a kube-scheduler's real /metrics
through pods/portforward (the lab runner maps the pod's port 10259 to the process with kwok's
PortForward) with a token minted for the pod, never the caller's credentials; the rendered
metrics Service and scraper RBAC are what a scraper needs."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import create_and_bind, exists, service_account_token, token_kubeconfig, wait_for
from test_deploy import managed_leftovers, run

from kschedctl.base.errors import ApiError, ForbiddenError
from kschedctl.k8s.logs import Replica, read
from kschedctl.k8s.scrape import Target, get_via_port_forward
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

pytestmark = pytest.mark.client

RBAC = "/apis/rbac.authorization.k8s.io/v1"


def _spec(tmp_path: Path, name: str, metrics: dict[str, object]) -> Path:
    workspace = tmp_path / name
    workspace.mkdir()
    (workspace / "scheduler.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kschedctl.io/v1alpha1",
                "kind": "Scheduler",
                "metadata": {"name": name},
                "spec": {"metrics": metrics},
            }
        )
    )
    return workspace


def _token(cluster: Cluster, namespace: str, account: str) -> str:
    return service_account_token(cluster, namespace, account, 600)


def _admin_kubeconfig(lab: Lab, cluster: Cluster, namespace: str, path: Path) -> tuple[str, str]:
    """A TOKEN kubeconfig at ``path`` for a ServiceAccount bound to cluster-admin (how most
    admins authenticate: OIDC, exec plugins, ServiceAccount tokens): (its token, the binding)."""
    cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "admin"}}
    )
    binding = f"{namespace}-admin"
    cluster.create(
        f"{RBAC}/clusterrolebindings",
        {"metadata": {"name": binding},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "cluster-admin"},
         "subjects": [{"kind": "ServiceAccount", "name": "admin", "namespace": namespace}]},
    )  # fmt: skip
    token_kubeconfig(lab, cluster, namespace, "admin", path)
    token = yaml.safe_load(path.read_text())["users"][0]["user"]["token"]
    return token, f"{RBAC}/clusterrolebindings/{binding}"


def _log(cluster: Cluster, namespace: str, pod: str) -> str:
    """The pod's whole log through the API server, as `kubectl logs` reads it."""
    return "\n".join(line.text for line in read(cluster, Replica(namespace, pod, None)))


def _reviewed_subjects(log: str) -> set[str]:
    """The ServiceAccounts whose tokens kube-scheduler sent to TokenReview (client-go logs the
    request body at --v=8 and more): each JWT's ``sub``."""
    subjects = set()
    for jwt in re.findall(r"eyJ[\w-]+\.(eyJ[\w-]+)\.[\w-]+", log.replace("\\", "")):
        claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(jwt + "=" * (-len(jwt) % 4)))
        subjects.add(str(claims.get("sub")))
    return subjects


def test_status_never_sends_the_callers_token_to_the_scheduler_pod(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """Issue 22, example 1: a scheduler at --v=10 logs every token it reviews; an admin with a
    token kubeconfig runs `status NAME --metrics`. The pod gets a token minted for this (of
    NAME-metrics-reader, which may only get /metrics), never the admin's; without --metrics
    nothing is forwarded at all."""
    name = "leaky-sched"
    workspace = tmp_path / name
    workspace.mkdir()
    (workspace / "scheduler.yaml").write_text(
        yaml.safe_dump(
            {"apiVersion": "kschedctl.io/v1alpha1", "kind": "Scheduler",
             "metadata": {"name": name}, "spec": {"pod": {"verbosity": 10}}}
        )
    )  # fmt: skip
    admin = tmp_path / "admin.kubeconfig"
    token, binding = _admin_kubeconfig(lab, cluster, namespace, admin)
    deployed = run(lab, "deploy", str(workspace), "--as-pod", cwd=tmp_path)
    try:
        assert deployed.returncode == 0, deployed.stderr
        pod = cluster.get(f"/api/v1/namespaces/kube-system/pods/{name}")
        assert "--v=10" in pod["spec"]["containers"][0]["command"]

        unasked = run(lab, "status", name, "--kubeconfig", str(admin), cwd=tmp_path)
        assert unasked.returncode == 0, unasked.stderr
        assert "Metrics: not read (pass --metrics" in unasked.stdout
        quiet = run(lab, "status", name, "-o", "json", "--kubeconfig", str(admin), cwd=tmp_path)
        assert json.loads(quiet.stdout)["metrics"] is None

        status = run(
            lab, "status", name, "--metrics", "-o", "json", "--kubeconfig", str(admin),
            cwd=tmp_path,
        )  # fmt: skip
        assert status.returncode == 0, status.stderr
        metrics = json.loads(status.stdout)["metrics"]
        assert metrics["reader"] == f"kube-system/{name}-metrics-reader"
        (replica,) = metrics["replicas"]
        assert replica["problem"] is None, replica["problem"]
        assert replica["summary"]["attempts"]["scheduled"] >= 1  # deploy's canary
        sent = replica["sent"]
        assert sent["token"] is True
        assert sent["serviceAccount"] == f"kube-system/{name}-metrics-reader"
        assert 0 < sent["lifetimeSeconds"] <= 600

        table = run(lab, "status", name, "--metrics", "--kubeconfig", str(admin), cwd=tmp_path)
        assert table.returncode == 0, table.stderr
        assert (
            f"sent: a token minted for ServiceAccount kube-system/{name}-metrics-reader "
            "(allowed only get /metrics, valid" in table.stdout
        )
        assert "your own credentials were not sent to any pod" in table.stdout
        assert token not in table.stdout + table.stderr

        # What the pod's editor reads with `kubectl logs`: the reviews of the minted tokens
        # (so the log does show what it is sent), never the admin's token.
        log = wait_for(
            lambda: (text := _log(cluster, "kube-system", name))
            and f"{name}-metrics-reader" in str(_reviewed_subjects(text))
            and text,
            60, "the scheduler's log of the TokenReview of the minted token",
        )  # fmt: skip
        assert token not in log
        assert token.split(".")[1] not in log  # nor its claims, however it is quoted
        assert _reviewed_subjects(log) == {
            f"system:serviceaccount:kube-system:{name}-metrics-reader"
        }
    finally:
        cluster.delete(binding)
        removed = run(lab, "remove", name, "--force", cwd=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert managed_leftovers(cluster, name) == []


def test_a_token_for_another_audience_is_refused_by_kube_scheduler(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    """Why kschedctl mints its tokens for the API server's own audiences (no audience asked)
    and binds them to no pod (kschedctl.k8s.tokens): kube-scheduler's delegated authentication
    reviews tokens without naming an audience, so the API server checks its own, and a token
    for "kschedctl-metrics" is refused with 401; a pod running as another ServiceAccount
    cannot be bound to."""
    name = "audience-sched"
    workspace = _spec(tmp_path, name, {})
    deployed = run(lab, "deploy", str(workspace), "--as-pod", cwd=tmp_path)
    try:
        assert deployed.returncode == 0, deployed.stderr
        pod = cluster.get(f"/api/v1/namespaces/kube-system/pods/{name}")
        target = Target("kube-system", name, 10259, https=True)

        def mint(audiences: list[str], pod_bound: bool = False) -> str:
            spec: dict[str, Any] = {"audiences": audiences, "expirationSeconds": 600}
            if pod_bound:
                spec["boundObjectRef"] = {"apiVersion": "v1", "kind": "Pod", "name": name,
                                          "uid": pod["metadata"]["uid"]}  # fmt: skip
            answer = cluster.create(
                f"/api/v1/namespaces/kube-system/serviceaccounts/{name}-metrics-reader/token",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec},
            )
            return str(answer["status"]["token"])

        # Why the token is not bound to the pod it is sent to (kschedctl.k8s.tokens).
        with pytest.raises(ApiError, match="pod running with different serviceaccount name"):
            mint([], pod_bound=True)
        with pytest.raises(ForbiddenError, match="answered 401"):
            get_via_port_forward(cluster, target, bearer=mint(["kschedctl-metrics"]))
        text = get_via_port_forward(cluster, target, bearer=mint([]))
        assert "scheduler_schedule_attempts_total" in text
        # No credentials at all: /metrics is refused, the health endpoints are anyone's.
        with pytest.raises(ForbiddenError, match="answered 403"):
            get_via_port_forward(cluster, target)
    finally:
        removed = run(lab, "remove", name, "--force", cwd=tmp_path)
    assert removed.returncode == 0, removed.stderr


def test_status_shows_a_kube_schedulers_attempts_and_latency_from_its_real_metrics(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = "metrics-sched"
    cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "scraper"}},
    )
    workspace = _spec(
        tmp_path, name,
        {"service": True, "scraper": {"namespace": namespace, "serviceAccount": "scraper"}},
    )  # fmt: skip
    deployed = run(lab, "deploy", str(workspace), "--as-pod", cwd=tmp_path)
    try:
        assert deployed.returncode == 0, deployed.stderr
        pods = [f"m{i}" for i in range(4)]
        create_and_bind(cluster, namespace, pods, name)

        status = run(lab, "status", name, "--metrics", "-o", "json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        metrics = json.loads(status.stdout)["metrics"]
        assert metrics["problem"] is None
        (replica,) = metrics["replicas"]
        assert replica["pod"] == f"kube-system/{name}" and replica["port"] == 10259
        assert replica["problem"] is None, replica["problem"]
        summary = replica["summary"]
        assert summary["program"] == "kube-scheduler"
        # The four pods and deploy's canary, all scheduled by this scheduler's only profile.
        assert summary["attempts"]["scheduled"] >= len(pods) + 1
        assert summary["attemptsByProfile"][name]["scheduled"] == summary["attempts"]["scheduled"]
        latency = summary["attemptLatency"]
        assert latency["count"] >= len(pods) + 1
        assert 0 < latency["p50"] <= latency["p99"] < 10
        assert set(summary["pending"]) == {"active", "backoff", "unschedulable", "gated"}
        assert replica["leader"] is True

        table = run(lab, "status", name, "--metrics", cwd=tmp_path)
        assert table.returncode == 0, table.stderr
        assert "Metrics (each replica's /metrics" in table.stdout
        assert f"kube-system/{name}" in table.stdout and "ATTEMPT P99" in table.stdout
        skipped = run(lab, "status", name, "-o", "json", "--no-metrics", cwd=tmp_path)
        assert json.loads(skipped.stdout)["metrics"] is None

        # The rendered Service selects the scheduler's pod (only it) on its metrics port. (No
        # EndpointSlice to look at: the lab runner's pods have the loopback IP, which
        # endpoints may not hold.)
        service = cluster.get(f"/api/v1/namespaces/kube-system/services/{name}-metrics")
        assert [p["targetPort"] for p in service["spec"]["ports"]] == [10259]
        selector = ",".join(f"{k}={v}" for k, v in service["spec"]["selector"].items())
        selected = cluster.list("/api/v1/pods", labelSelector=selector)
        assert [p["metadata"]["name"] for p in selected] == [name]

        # The rendered scraper RBAC is exactly what /metrics needs: the scraper's token reads
        # it, a ServiceAccount's without it is refused by kube-scheduler itself.
        cluster.create(
            f"/api/v1/namespaces/{namespace}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody"}},
        )
        target = Target("kube-system", name, 10259, https=True)
        text = get_via_port_forward(cluster, target, bearer=_token(cluster, namespace, "scraper"))
        assert f'scheduler_schedule_attempts_total{{profile="{name}",result="scheduled"}}' in text
        with pytest.raises(ForbiddenError, match="answered 403") as refused:
            get_via_port_forward(cluster, target, bearer=_token(cluster, namespace, "nobody"))
        assert "nonResourceURLs: [/metrics]" in (refused.value.hint or "")
    finally:
        removed = run(lab, "remove", name, "--force", cwd=tmp_path)  # its pods still name it
    assert removed.returncode == 0, removed.stderr
    assert not exists(cluster, f"/api/v1/namespaces/kube-system/services/{name}-metrics")
    assert not exists(cluster, f"{RBAC}/clusterroles/{name}-metrics-reader")
    assert not exists(cluster, f"{RBAC}/clusterrolebindings/{name}-metrics-reader")
    assert not exists(cluster, f"{RBAC}/clusterrolebindings/{name}-metrics-reader-status")
    assert not exists(
        cluster, f"/api/v1/namespaces/kube-system/serviceaccounts/{name}-metrics-reader"
    )


def test_a_service_monitor_without_its_crd_is_refused_before_anything_is_sent(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    name = "metrics-monitor"
    workspace = _spec(tmp_path, name, {"service": True, "serviceMonitor": True})
    deployed = run(lab, "deploy", str(workspace), "--as-pod", cwd=tmp_path)
    assert deployed.returncode == 4, deployed.stderr
    assert "monitoring.coreos.com/v1 ServiceMonitor" in deployed.stderr
    assert "nothing was sent" in deployed.stderr
    assert not exists(cluster, f"/api/v1/namespaces/kube-system/pods/{name}")
    assert not exists(cluster, f"/api/v1/namespaces/kube-system/serviceaccounts/{name}")


def test_a_static_pods_metrics_service_rbac_and_status_read_through_its_mirror_pod(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """deploy --as-static-pod applies the metrics Service over the mirror pod and the scraper
    RBAC (from host-rbac); status reads the real /metrics through the mirror pod's
    pods/portforward on the port the static pod serves; remove leaves nothing."""
    name = "metrics-static"
    cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "scraper"}},
    )
    workspace = _spec(
        tmp_path, name,
        {"service": True, "scraper": {"namespace": namespace, "serviceAccount": "scraper"}},
    )  # fmt: skip
    deployed = run(lab, "deploy", str(workspace), "--as-static-pod", cwd=tmp_path)
    cleanup: list[str] = []
    try:
        assert deployed.returncode == 0, deployed.stderr
        assert "bindAddress" not in deployed.stderr  # the lab's pods listen on loopback
        (mirror,) = cluster.list(
            "/api/v1/namespaces/kube-system/pods", labelSelector=f"kschedctl.io/scheduler={name}"
        )
        assert mirror["metadata"]["name"].startswith(f"{name}-")  # <name>-<node>
        port = next(
            int(arg.split("=", 1)[1])
            for arg in mirror["spec"]["containers"][0]["command"]
            if arg.startswith("--secure-port=")
        )
        create_and_bind(cluster, namespace, ["s0", "s1"], name)

        service = cluster.get(f"/api/v1/namespaces/kube-system/services/{name}-metrics")
        assert [p["targetPort"] for p in service["spec"]["ports"]] == [port]
        selector = ",".join(f"{k}={v}" for k, v in service["spec"]["selector"].items())
        selected = cluster.list("/api/v1/pods", labelSelector=selector)
        assert [p["metadata"]["name"] for p in selected] == [mirror["metadata"]["name"]]
        binding = cluster.get(f"{RBAC}/clusterrolebindings/{name}-metrics-reader")
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "scraper", "namespace": namespace}
        ]

        # No metrics reader is rendered for the host forms: only what anyone may read.
        status = run(lab, "status", name, "--metrics", "-o", "json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        metrics = json.loads(status.stdout)["metrics"]
        assert metrics["reader"] is None
        assert (
            f"ServiceAccount kube-system/{name}-metrics-reader does not exist"
            in (metrics["readerProblem"])
        )
        assert f"--metrics-reader {name}-metrics-reader" in metrics["readerProblem"]
        (replica,) = metrics["replicas"]
        assert replica["summary"] is None and replica["sent"]["token"] is False
        assert replica["health"] == {p: "200 ok" for p in ("/healthz", "/readyz", "/livez")}

        # The way the message gives: a ServiceAccount of the pod's namespace allowed /metrics
        # (here through the rendered ClusterRole), named with --metrics-reader.
        reader = f"{name}-reader"
        cluster.create(
            "/api/v1/namespaces/kube-system/serviceaccounts", {"metadata": {"name": reader}}
        )
        cleanup.append(f"/api/v1/namespaces/kube-system/serviceaccounts/{reader}")
        cluster.create(
            f"{RBAC}/clusterrolebindings",
            {"metadata": {"name": reader},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": f"{name}-metrics-reader"},
             "subjects": [{"kind": "ServiceAccount", "name": reader,
                           "namespace": "kube-system"}]},
        )  # fmt: skip
        cleanup.append(f"{RBAC}/clusterrolebindings/{reader}")
        status = run(lab, "status", name, "--metrics-reader", reader, "-o", "json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        metrics = json.loads(status.stdout)["metrics"]
        assert metrics["problem"] is None and metrics["reader"] == f"kube-system/{reader}"
        (replica,) = metrics["replicas"]
        assert replica["sent"]["serviceAccount"] == f"kube-system/{reader}"
        assert replica["pod"] == f"kube-system/{mirror['metadata']['name']}"
        assert replica["port"] == port and replica["problem"] is None, replica["problem"]
        summary = replica["summary"]
        assert summary["program"] == "kube-scheduler"
        assert summary["attempts"]["scheduled"] >= 3  # s0, s1 and deploy's canary
        assert replica["leader"] is True
    finally:
        for path in cleanup:
            cluster.delete(path)
        removed = run(lab, "remove", name, "--force", cwd=tmp_path)  # its pods still name it
    assert removed.returncode == 0, removed.stderr
    assert managed_leftovers(cluster, name) == []
    assert not exists(cluster, f"/api/v1/namespaces/kube-system/services/{name}-metrics")
    assert not (lab.dir / "manifests" / f"{name}.yaml").exists()


def test_a_systemd_service_gets_the_scraper_rbac_but_no_service(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    """A systemd service has no pod for a Service to select: deploy --as-service says so and
    applies only the scraper's right to /metrics; status says to read the host's port."""
    name = "metrics-unit"
    workspace = _spec(tmp_path, name, {"service": True})
    deployed = run(lab, "deploy", str(workspace), "--as-service", "--no-verify", cwd=tmp_path)
    try:
        assert deployed.returncode == 0, deployed.stderr
        assert (
            f"Service kube-system/{name}-metrics (v1) not applied: only deploy --as-static-pod "
            "has pods it selects" in deployed.stderr
        )
        assert not exists(cluster, f"/api/v1/namespaces/kube-system/services/{name}-metrics")
        assert exists(cluster, f"{RBAC}/clusterrolebindings/{name}-metrics-reader")
        status = run(lab, "status", name, "--metrics", "-o", "json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        problem = json.loads(status.stdout)["metrics"]["problem"]
        assert "systemd service on a host" in problem and "/metrics" in problem
    finally:
        removed = run(lab, "remove", name, "--force", cwd=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert managed_leftovers(cluster, name) == []
