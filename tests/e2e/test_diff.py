"""`kschedctl diff` on the lab: what deploy would change, exit 0/1 as kubectl diff, nothing
changed by it; `deploy --diff` prints the same before applying."""

from __future__ import annotations

from pathlib import Path

from e2e_helpers import run

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

MANAGED = [
    "/api/v1/configmaps", "/api/v1/serviceaccounts", "/api/v1/pods",
    "/apis/apps/v1/deployments", "/apis/rbac.authorization.k8s.io/v1/roles",
    "/apis/rbac.authorization.k8s.io/v1/rolebindings",
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
]  # fmt: skip


def versions(cluster: Cluster, name: str) -> dict[str, str]:
    """resourceVersion of every object kschedctl deployed for ``name``."""
    return {
        f"{path}/{item['metadata'].get('namespace')}/{item['metadata']['name']}":
            item["metadata"]["resourceVersion"]
        for path in MANAGED
        for item in cluster.list(path, labelSelector=f"kschedctl.io/scheduler={name}")
    }  # fmt: skip


def test_diff_deployment_before_and_after_deploy(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    name = "diff-sched"
    header = f"diff -u -N LIVE/apps.v1.Deployment.kube-system.{name} MERGED/"
    try:
        fresh = run(lab, "diff", name, "--as-deployment", cwd=tmp_path)
        assert fresh.returncode == 1, fresh.stderr
        assert header in fresh.stdout and "+kind: Deployment" in fresh.stdout
        assert f"+++ MERGED/rbac.authorization.k8s.io.v1.Role.kube-system.{name}" in fresh.stdout
        assert versions(cluster, name) == {}  # a dry run created nothing

        deployed = run(lab, "deploy", name, "--as-deployment", "--diff", "--no-verify",
                       "--timeout", "150", cwd=tmp_path)  # fmt: skip
        assert deployed.returncode == 0, deployed.stderr
        assert header in deployed.stdout and f"{name} is serving" in deployed.stderr

        same = run(lab, "diff", name, "--as-deployment", cwd=tmp_path)
        assert same.returncode == 0, same.stderr
        assert same.stdout == "" and "no differences" in same.stderr

        before = versions(cluster, name)
        more = run(lab, "diff", name, "--as-deployment", "--replicas", "2", cwd=tmp_path)
        print(more.stdout)
        assert more.returncode == 1, more.stderr
        assert "-  replicas: 1" in more.stdout and "+  replicas: 2" in more.stdout
        assert more.stdout.count("diff -u -N") == 1, more.stdout  # only the Deployment

        image = "registry.example/kube-scheduler:dev"
        other = run(lab, "diff", name, "--as-deployment", "--image", image, cwd=tmp_path)
        assert other.returncode == 1, other.stderr
        assert f"+        image: {image}" in other.stdout
        assert versions(cluster, name) == before  # diff changed nothing
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)


def test_diff_of_a_bare_pod_says_deploy_replaces_it(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    name = "diff-pod"
    try:
        deployed = run(lab, "deploy", name, "--as-pod", "--no-verify", "--timeout", "150",
                       cwd=tmp_path)  # fmt: skip
        assert deployed.returncode == 0, deployed.stderr
        assert run(lab, "diff", name, "--as", "pod", cwd=tmp_path).returncode == 0
        before = versions(cluster, name)
        image = "registry.example/kube-scheduler:dev"
        changed = run(lab, "diff", name, "--as-pod", "--image", image, cwd=tmp_path)
        assert changed.returncode == 1, changed.stderr
        assert f"pod/{name} -n kube-system: replaced by deploy" in changed.stderr
        assert f"+    image: {image}" in changed.stdout, changed.stdout
        assert versions(cluster, name) == before
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)


def test_diff_static_pod_compares_the_lab_hosts_files(lab: Lab, tmp_path: Path) -> None:
    name = "diff-static"
    manifest = lab.dir / "manifests" / f"{name}.yaml"
    try:
        fresh = run(lab, "diff", name, "--as-static-pod", cwd=tmp_path)
        assert fresh.returncode == 1, fresh.stderr
        assert f"+++ MERGED/{str(manifest).lstrip('/')}" in fresh.stdout
        assert "+kind: Pod" in fresh.stdout
        assert not manifest.exists()  # nothing written

        deployed = run(lab, "deploy", name, "--as-static-pod", "--no-verify", "--timeout", "150",
                       cwd=tmp_path)  # fmt: skip
        assert deployed.returncode == 0, deployed.stderr
        same = run(lab, "diff", name, "--as-static-pod", cwd=tmp_path)
        assert same.returncode == 0, same.stdout + same.stderr
        text = manifest.read_text()
        manifest.write_text(text + "# edited by hand\n")  # a comment: the kubelet ignores it
        edited = run(lab, "diff", name, "--as-static-pod", cwd=tmp_path)
        assert edited.returncode == 1, edited.stderr
        assert "\n-# edited by hand\n" in edited.stdout, edited.stdout
        assert manifest.read_text() == text + "# edited by hand\n"  # diff wrote nothing
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)


def test_an_error_is_never_read_as_differences(lab: Lab, tmp_path: Path) -> None:
    # A scheduler newer than the API server is refused (exit 1 for deploy); diff's 1 means
    # "differences" (kubectl diff), so its errors of that kind exit 8.
    newer = run(lab, "diff", "skewed", "--as-pod", "--kubernetes-version", "1.37", cwd=tmp_path)
    assert newer.returncode == 8, newer.stderr
    assert "cannot run against this API server" in newer.stderr and newer.stdout == ""
    deploy = run(lab, "deploy", "skewed", "--as-pod", "--kubernetes-version", "1.37", cwd=tmp_path)
    assert deploy.returncode == 1, deploy.stderr
