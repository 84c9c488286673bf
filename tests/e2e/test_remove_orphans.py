"""`remove` refuses only for what its removal would really strand: Pending pods that wait for
the scheduler and controllers that will create more; pods it already bound keep running."""

from __future__ import annotations

from pathlib import Path

from e2e_helpers import create_and_bind, exists, pod_manifest, run, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

NOWHERE = {"nodeSelector": {"e2e.kschedctl.io/no-such-node": "true"}}  # stays Pending


def test_remove_refuses_for_pending_pods_and_controllers_not_for_bound_pods(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = "orphan-check"
    pods = f"/api/v1/namespaces/{namespace}/pods"
    deployments = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    try:
        deployed = run(lab, "deploy", name, "--as-pod", "--timeout", "150", cwd=tmp_path)
        assert deployed.returncode == 0, deployed.stderr
        create_and_bind(cluster, namespace, ["placed-a", "placed-b"], name)
        cluster.create(pods, pod_manifest("waiting", schedulerName=name, **NOWHERE))
        template = pod_manifest("x", schedulerName=name, **NOWHERE)
        cluster.create(deployments, {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "feeder"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "feeder"}},
                     "template": {"metadata": {"labels": {"app": "feeder"}},
                                  "spec": template["spec"]}},
        })  # fmt: skip

        refused = run(lab, "remove", name, cwd=tmp_path)
        print(refused.stderr)
        assert refused.returncode == 1, refused.stderr
        assert f"pod/{namespace}/waiting" in refused.stderr
        assert f"deployment/{namespace}/feeder" in refused.stderr
        assert "placed-a" not in refused.stderr and "placed-b" not in refused.stderr
        assert "2 pod(s)" in refused.stderr and "keep running" in refused.stderr
        assert "--force" in refused.stderr and "stay Pending" in refused.stderr
        assert exists(cluster, f"/api/v1/namespaces/kube-system/pods/{name}")  # nothing removed

        cluster.delete(f"{deployments}/feeder", propagationPolicy="Foreground")
        cluster.delete(f"{pods}/waiting")
        wait_for(
            lambda: {p["metadata"]["name"] for p in cluster.list(pods)} == {"placed-a", "placed-b"},
            60, "only the bound pods left",
        )  # fmt: skip
        removed = run(lab, "remove", name, cwd=tmp_path)
        print(removed.stderr)
        assert removed.returncode == 0, removed.stderr
        assert "2 pod(s)" in removed.stderr and "keep running" in removed.stderr
        assert {p["status"].get("phase") for p in cluster.list(pods)} == {"Running"}
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
