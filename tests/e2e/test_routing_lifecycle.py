"""spec.routing on the real API server (v1.36: MutatingAdmissionPolicy v1): deploy routes only
once the scheduler serves, pods of a matching namespace that name no scheduler go to it, others
do not; an overlapping routing and an API the server does not serve are refused; `why` names
the routing while the scheduler is down; remove stops the routing before the scheduler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from e2e_helpers import exists, new_namespace, pod_manifest, run, scheduled_event, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

POLICIES = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies"


def labelled_namespace(cluster: Cluster, name: str, labels: dict[str, str]) -> str:
    new_namespace(cluster, name)
    cluster.patch(f"/api/v1/namespaces/{name}", {"metadata": {"labels": labels}})
    return name


def bound_pods(cluster: Cluster, namespace: str, count: int) -> list[dict[str, Any]]:
    def bound() -> list[dict[str, Any]] | None:
        pods = cluster.list(f"/api/v1/namespaces/{namespace}/pods")
        done = [p for p in pods if p["spec"].get("nodeName")]
        return done if len(done) >= count else None

    return list(wait_for(bound, 90, f"{count} pod(s) bound in {namespace}"))


def test_policy_api_served_by_the_lab(cluster: Cluster) -> None:
    served = cluster.get("/apis/admissionregistration.k8s.io/v1")
    assert "mutatingadmissionpolicies" in {r["name"] for r in served["resources"]}


def test_routing_deploy_why_status_remove(
    lab: Lab, cluster: Cluster, kubectl: Callable[..., Any], tmp_path: Path
) -> None:
    name, rival = "routed-binpack", "routed-rival"
    team = f"ml-{uuid.uuid4().hex[:5]}"
    routed = labelled_namespace(cluster, f"e2e-routed-{team}", {"team": team})
    other = new_namespace(cluster, f"e2e-unrouted-{team}")
    try:
        created = run(lab, "create", name, "--route-namespace-label", f"team={team}", cwd=tmp_path)
        assert created.returncode == 0, created.stderr
        # stdout (objects) and stderr (progress) in one pipe: the order they happened in
        deployed = subprocess.run(
            [sys.executable, "-m", "kschedctl", "deploy", name, "--as-deployment",
             "--timeout", "180"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
            env={**os.environ, "KUBECONFIG": str(lab.kubeconfig)}, timeout=240,
        )  # fmt: skip
        log = deployed.stdout
        assert deployed.returncode == 0, log
        # the routing only once the canary pod was bound (deploy waits on it after this line)
        canary = log.index("canary pod default/")
        assert canary < log.index(f"mutatingadmissionpolicy/kschedctl-route-{name} created")
        assert canary < log.index(f"mutatingadmissionpolicybinding/kschedctl-route-{name} created")

        # a plain Deployment in the team namespace: routed and bound by the scheduler
        kubectl("create", "deployment", "web", "--image=registry.k8s.io/pause:3.10",
                "--replicas=2", "-n", routed)  # fmt: skip
        for pod in bound_pods(cluster, routed, 2):
            assert pod["spec"]["schedulerName"] == name
            assert pod["metadata"]["annotations"]["kschedctl.io/routed-by"] == f"kube-system/{name}"
            event = scheduled_event(cluster, routed, pod["metadata"]["name"])
            assert event["reportingController"] == name
        # elsewhere, and a pod that names its scheduler, are left alone
        kubectl("create", "deployment", "web", "--image=registry.k8s.io/pause:3.10", "-n", other)
        assert bound_pods(cluster, other, 1)[0]["spec"]["schedulerName"] == "default-scheduler"
        cluster.create(
            f"/api/v1/namespaces/{routed}/pods",
            pod_manifest("named", schedulerName="someone-else"),
        )
        named = cluster.get(f"/api/v1/namespaces/{routed}/pods/named")
        assert named["spec"]["schedulerName"] == "someone-else"
        assert "kschedctl.io/routed-by" not in (named["metadata"].get("annotations") or {})
        cluster.delete(f"/api/v1/namespaces/{routed}/pods/named")
        # the scheduler's own pods are scheduled by default-scheduler
        own = cluster.list("/api/v1/pods", labelSelector=f"kschedctl.io/scheduler={name}")
        assert own and {p["spec"]["schedulerName"] for p in own} == {"default-scheduler"}

        listing = run(lab, "list", "-o", "json", cwd=tmp_path)
        entry = next(s for s in json.loads(listing.stdout)["items"] if s["name"] == name)
        assert entry["routing"] == f"ns:team={team}"
        status = run(lab, "status", name, "-o", "json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        report = json.loads(status.stdout)["routing"]
        assert report["rule"] == f"ns:team={team}"
        assert report["namespaces"] == [routed] and report["routedPods"] == 2

        # an overlapping routing is refused, naming both and the namespace; nothing sent
        assert run(lab, "create", rival, "--route-namespace-label", f"team={team}",
                   cwd=tmp_path).returncode == 0  # fmt: skip
        refused = run(lab, "deploy", rival, "--as-deployment", cwd=tmp_path)
        assert refused.returncode == 1, refused.stderr
        assert name in refused.stderr and rival in refused.stderr and routed in refused.stderr
        assert not cluster.list(
            "/apis/apps/v1/deployments", labelSelector=f"kschedctl.io/scheduler={rival}"
        )

        # the scheduler down (scaled to zero): a new routed pod waits, why says so first
        kubectl("scale", "deployment", name, "-n", "kube-system", "--replicas=0")
        wait_for(
            lambda: not cluster.list("/api/v1/pods", labelSelector=f"kschedctl.io/scheduler={name},app.kubernetes.io/component=scheduler"),
            90, f"{name}'s pods gone",
        )  # fmt: skip
        cluster.create(f"/api/v1/namespaces/{routed}/pods", pod_manifest("waits"))
        why = run(lab, "why", "waits", "-n", routed, cwd=tmp_path)
        print(why.stdout, why.stderr)
        lines = why.stdout.splitlines()
        first = lines[lines.index("Findings:") + 1]  # the first thing to check
        assert f"routed-to-down-scheduler: routed to {name} by kschedctl routing of {name}" in first
        assert f"namespace {routed} matches team={team}" in why.stdout
        cluster.delete(f"/api/v1/namespaces/{routed}/pods/waits")
        kubectl("delete", "deployment", "web", "-n", routed, "--wait=true")
        wait_for(lambda: not cluster.list(f"/api/v1/namespaces/{routed}/pods"), 90, "no pods")

        # remove: the routing first; new pods go back to default-scheduler
        removed = run(lab, "remove", name, cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
        assert removed.stdout.index("kschedctl-route-") < removed.stdout.index(f"deployment/{name}")
        assert not cluster.list(POLICIES, labelSelector=f"kschedctl.io/scheduler={name}")
        cluster.create(f"/api/v1/namespaces/{routed}/pods", pod_manifest("after"))
        after = cluster.get(f"/api/v1/namespaces/{routed}/pods/after")
        assert after["spec"]["schedulerName"] == "default-scheduler"
    finally:
        for scheduler in (name, rival):
            run(lab, "remove", scheduler, "--force", cwd=tmp_path)
        for ns in (routed, other):
            cluster.delete(f"/api/v1/namespaces/{ns}")


def test_deploy_refuses_a_policy_api_the_server_does_not_serve(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    # 1.35 renders v1beta1, which a 1.36 API server serves only with runtime-config
    name = "routed-beta"
    served = cluster.get("/apis/admissionregistration.k8s.io")
    assert "v1beta1" not in {v["version"] for v in served["versions"]}
    assert run(lab, "create", name, "--route-namespace-label", "team=beta",
               "--kubernetes-version", "1.35", cwd=tmp_path).returncode == 0  # fmt: skip
    refused = run(lab, "deploy", name, "--as-deployment", cwd=tmp_path)
    assert refused.returncode == 4, refused.stderr
    assert "admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy" in refused.stderr
    assert "--feature-gates=MutatingAdmissionPolicy=true" in refused.stderr
    assert "nothing was sent" in refused.stderr
    assert not cluster.list(
        "/apis/apps/v1/deployments", labelSelector=f"kschedctl.io/scheduler={name}"
    )
    assert not cluster.list("/api/v1/configmaps", labelSelector=f"kschedctl.io/scheduler={name}")


def test_a_routing_dropped_from_the_spec_is_deleted_by_the_next_deploy(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    name = f"unrouted-{uuid.uuid4().hex[:5]}"
    policy = f"{POLICIES}/kschedctl-route-{name}"
    label = f"team=drop-{uuid.uuid4().hex[:5]}"
    assert run(lab, "create", name, "--route-namespace-label", label, cwd=tmp_path).returncode == 0
    try:
        first = run(lab, "deploy", name, "--as-deployment", "--timeout", "180", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        assert cluster.get(policy)["metadata"]["name"] == f"kschedctl-route-{name}"

        spec_file = tmp_path / name / "scheduler.yaml"
        document = yaml.safe_load(spec_file.read_text())
        del document["spec"]["routing"]
        spec_file.write_text(yaml.safe_dump(document, sort_keys=False))
        again = run(lab, "deploy", name, "--as-deployment", "--timeout", "180", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        said = (again.stdout + again.stderr).lower()
        assert f"mutatingadmissionpolicy/kschedctl-route-{name} deleted" in said, said
        binding = f"/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings/kschedctl-route-{name}"
        for path in (policy, binding):
            wait_for(lambda path=path: not exists(cluster, path), 60, f"{path} to be deleted")
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
