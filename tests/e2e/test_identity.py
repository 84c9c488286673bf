"""A scheduler is identified by what owns it, never by its name alone (issue 22, example 2).

A namespace editor can create a pod that claims any scheduler name: a bare kube-scheduler with
``component: kube-scheduler`` and no profiles *says* it is default-scheduler; a pod or a
ConfigMap labelled ``kschedctl.io/scheduler: NAME`` says it is kschedctl's NAME. None of it
makes it that scheduler: status, logs and list must name it an impostor (with its namespace)
and act only on the scheduler that is, and remove must never delete it. Two claims that
kschedctl cannot tell apart are a conflict, reported, never picked at random.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import exists, new_namespace, run, token_kubeconfig, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

RBAC = "/apis/rbac.authorization.k8s.io/v1"
IMAGE = "registry.k8s.io/kube-scheduler:v1.36.3"


@pytest.fixture()
def other_namespace(cluster: Cluster) -> Iterator[str]:
    """A second namespace (the `namespace` fixture's twin)."""
    name = f"e2e-identity-b-{uuid.uuid4().hex[:5]}"
    yield new_namespace(cluster, name)
    cluster.delete(f"/api/v1/namespaces/{name}")


def editor(lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path) -> Cluster:
    """A connection as ``namespace``'s editor: the built-in ``edit`` role there, nothing else."""
    cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "editor"}}
    )
    cluster.create(f"{RBAC}/namespaces/{namespace}/rolebindings", {
        "metadata": {"name": "editor"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"kind": "ServiceAccount", "name": "editor", "namespace": namespace}],
    })  # fmt: skip
    path = tmp_path / "editor.kubeconfig"
    token_kubeconfig(lab, cluster, namespace, "editor", path)
    return Cluster.connect(str(path))


def bare_scheduler(name: str, labels: dict[str, str], command: list[str]) -> dict[str, Any]:
    """A bare pod running the kube-scheduler image (the lab runner runs it as a process)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "containers": [{"name": "kube-scheduler", "image": IMAGE, "command": command}],
            "terminationGracePeriodSeconds": 0,
        },
    }


def running(cluster: Cluster, namespace: str, name: str) -> bool:
    pod = cluster.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
    return (pod.get("status") or {}).get("phase") == "Running"


def test_an_editors_bare_kube_scheduler_is_not_default_scheduler(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """Example 2: an editor's bare kube-scheduler pod labelled ``component: kube-scheduler``,
    no profiles. status default-scheduler reports the lab's kube-scheduler (the holder of the
    Lease kube-system/kube-scheduler: a host process) and names the pod an impostor with its
    namespace; list shows it as such; nothing is scraped in the pod."""
    as_editor = editor(lab, cluster, namespace, tmp_path)
    try:
        as_editor.create(
            f"/api/v1/namespaces/{namespace}/pods",
            bare_scheduler("kube-scheduler", {"component": "kube-scheduler"}, ["kube-scheduler"]),
        )
    finally:
        as_editor.close()
    wait_for(lambda: running(cluster, namespace, "kube-scheduler"), 120, "the impostor running")

    status = run(lab, "status", "default-scheduler", "--metrics", "-o", "json", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    entry = report["scheduler"]
    assert (entry["form"], entry["namespace"]) == ("process", "kube-system"), entry
    assert entry["identity"] == "lease"
    assert [(c["namespace"], c["instance"], c["verdict"]) for c in entry["claims"]] == [
        (namespace, "pod/kube-scheduler", "impostor")
    ]
    assert entry["pods"] == []
    assert all(namespace not in r["pod"] for r in report["metrics"]["replicas"])
    assert any("impostor" in w and namespace in w for w in report["warnings"])

    table = run(lab, "status", "default-scheduler", "--no-metrics", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "Namespace:  kube-system" in table.stdout and "Form:       process" in table.stdout
    assert "impostor" in table.stderr and f"namespace {namespace}" in table.stderr

    listing = run(lab, "list", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    rows = [line.split() for line in listing.stdout.splitlines()]
    impostors = [r for r in rows if r[0] == "default-scheduler" and r[-1] == "IMPOSTOR"]
    assert [r[1:3] for r in impostors] == [["pod", namespace]], listing.stdout
    assert f"pod/kube-scheduler in namespace {namespace}" in listing.stderr

    # -n names the place: the impostor's namespace is refused, naming why.
    chosen = run(lab, "status", "default-scheduler", "-n", namespace, cwd=tmp_path)
    assert chosen.returncode == 1 and "is not it" in chosen.stderr, chosen.stderr


def _claim(cluster: Cluster, namespace: str, name: str, *, recorded: bool) -> None:
    """kschedctl's marks for scheduler ``name`` in ``namespace``: a ConfigMap naming its
    profile, a bare kube-scheduler pod reading it, and (``recorded``) the ClusterRoleBinding
    kschedctl renders, whose ServiceAccount subject records the namespace."""
    labels = {"kschedctl.io/scheduler": name, "app.kubernetes.io/component": "scheduler"}
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False}, "profiles": [{"schedulerName": name}],
    }  # fmt: skip
    cluster.create(f"/api/v1/namespaces/{namespace}/configmaps", {
        "metadata": {"name": f"{name}-config", "labels": labels},
        "data": {"config.yaml": yaml.safe_dump(config)},
    })  # fmt: skip
    pod = bare_scheduler(name, labels, ["kube-scheduler", "--config=/etc/kschedctl/config.yaml"])
    pod["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "config", "mountPath": "/etc/kschedctl"}
    ]
    pod["spec"]["volumes"] = [{"name": "config", "configMap": {"name": f"{name}-config"}}]
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", pod)
    if recorded:
        cluster.create(f"{RBAC}/clusterrolebindings", {
            "metadata": {"name": f"{name}-{namespace}", "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "system:kube-scheduler"},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
        })  # fmt: skip


def test_two_kschedctl_schedulers_of_one_name_are_a_conflict_never_picked(
    lab: Lab, cluster: Cluster, namespace: str, other_namespace: str, tmp_path: Path
) -> None:
    """kschedctl's scheduler ``twin-<id>`` deployed in two namespaces: list shows both as a
    conflict with their namespaces; status and logs refuse to pick, naming both and -n; -n
    picks one, and only its pods."""
    name = f"twin-{uuid.uuid4().hex[:5]}"
    try:
        for where in (namespace, other_namespace):
            _claim(cluster, where, name, recorded=True)

        listing = run(lab, "list", "-o", "json", cwd=tmp_path)
        assert listing.returncode == 0, listing.stderr
        (item,) = [i for i in json.loads(listing.stdout)["items"] if i["name"] == name]
        assert item["form"] == "conflict" and not item["healthy"]
        assert sorted((c["namespace"], c["verdict"]) for c in item["claims"]) == sorted(
            [(namespace, "candidate"), (other_namespace, "candidate")]
        )
        table = run(lab, "list", cwd=tmp_path)
        rows = [line.split() for line in table.stdout.splitlines() if line.startswith(name)]
        assert sorted(r[2] for r in rows) == sorted([namespace, other_namespace])
        assert all(r[-1] == "CONFLICT" for r in rows), table.stdout
        assert "conflict" in table.stderr

        for command in (["status", name], ["logs", name]):
            refused = run(lab, *command, cwd=tmp_path)
            assert refused.returncode == 1, refused.stderr
            assert namespace in refused.stderr and other_namespace in refused.stderr
            assert "-n NAMESPACE" in refused.stderr and "Traceback" not in refused.stderr

        chosen = run(lab, "status", name, "-n", other_namespace, "-o", "json", cwd=tmp_path)
        assert chosen.returncode == 0, chosen.stderr
        picked = json.loads(chosen.stdout)["scheduler"]
        assert (picked["namespace"], picked["identity"], picked["pods"]) == (
            other_namespace, "kschedctl", [name],
        )  # fmt: skip
    finally:
        for where in (namespace, other_namespace):
            path = f"{RBAC}/clusterrolebindings/{name}-{where}"
            if exists(cluster, path):
                cluster.delete(path)


def test_remove_never_deletes_what_kschedctl_did_not_create(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """An editor's pod and ConfigMap labelled as kschedctl's scheduler ``lookalike`` (no
    record of kschedctl's): list names them an impostor, remove finds nothing kschedctl
    deployed (exit 5), names them, and deletes nothing."""
    name = f"lookalike-{uuid.uuid4().hex[:5]}"
    _claim(cluster, namespace, name, recorded=False)

    removed = run(lab, "remove", name, "--force", cwd=tmp_path)
    assert removed.returncode == 5, removed.stdout + removed.stderr
    assert f"pod/{name} -n {namespace}" in removed.stderr
    assert exists(cluster, f"/api/v1/namespaces/{namespace}/pods/{name}")
    assert exists(cluster, f"/api/v1/namespaces/{namespace}/configmaps/{name}-config")

    listing = run(lab, "list", "-o", "json", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    (item,) = [i for i in json.loads(listing.stdout)["items"] if i["name"] == name]
    assert (item["served"], item["identity"]) == (False, None)
    assert [(c["namespace"], c["verdict"]) for c in item["claims"]] == [(namespace, "impostor")]
