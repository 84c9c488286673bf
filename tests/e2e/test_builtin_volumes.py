"""kschedctl's own scheduler with PersistentVolumes, on the session lab, against the lab's
kube-scheduler as the reference (its kube-controller-manager runs every default controller,
the PV binder included).

- a claim bound to a PersistentVolume with node affinity: the pod lands on the volume's node,
  like the identical pod kube-scheduler places; pinned elsewhere, both schedulers report the
  same reasons, and `kschedctl why` gives the scheduler's own message;
- a WaitForFirstConsumer claim and a local PersistentVolume: the claim is bound to that
  volume on the chosen node (by the PV controller, after the scheduler wrote the claimRef)
  before the pod is bound there — as kube-scheduler does for an identical pod;
- a claim that needs dynamic provisioning: a FailedScheduling naming what is not supported.

Cluster-scoped objects (PersistentVolumes, StorageClasses) are named after the test's
namespace and deleted at the end.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import latest_failure, pod_manifest, scheduled_event, stop, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.processes import proxy_free_environment
from kschedctl.ops.why import why_pod

HOST = "kubernetes.io/hostname"


@pytest.fixture(scope="module")
def scheduler_name(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `kschedctl scheduler run` for the module (stopped by its pid)."""
    name = f"vol-{uuid.uuid4().hex[:6]}"
    log = tmp_path_factory.mktemp("volumes") / "scheduler.log"
    argv = [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={name}",
            f"--kubeconfig={lab.kubeconfig}", "--metrics-port=0", "--metrics-address=127.0.0.1",
            "--pod-initial-backoff=0.5", "--pod-max-backoff=2"]  # fmt: skip
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment()
        )
    try:
        yield name
    finally:
        stop(proc)
        print(Path(log).read_text(errors="replace")[-3000:])


@pytest.fixture()
def cluster_objects(cluster: Cluster) -> Iterator[list[str]]:
    """Paths of cluster-scoped objects to delete after the test."""
    paths: list[str] = []
    yield paths
    for path in reversed(paths):
        try:
            cluster.delete(path)
        except NotFoundError:
            pass


def schedulable_nodes(cluster: Cluster) -> list[str]:
    return sorted(
        n["metadata"]["name"]
        for n in cluster.list("/api/v1/nodes")
        if not (n.get("spec") or {}).get("unschedulable")
        and not (n.get("spec") or {}).get("taints")
    )


def on_node(node: str) -> dict[str, Any]:
    terms = [{"matchExpressions": [{"key": HOST, "operator": "In", "values": [node]}]}]
    return {"required": {"nodeSelectorTerms": terms}}


def create_pv(
    cluster: Cluster, objects: list[str], name: str, node: str, cls: str, **spec: Any
) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": cls,
            "local": {"path": f"/mnt/{name}"},
            "nodeAffinity": on_node(node),
            **spec,
        },
    }
    cluster.create("/api/v1/persistentvolumes", body)
    objects.append(f"/api/v1/persistentvolumes/{name}")


def create_class(cluster: Cluster, objects: list[str], name: str, provisioner: str) -> None:
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    cluster.create("/apis/storage.k8s.io/v1/storageclasses", body)
    objects.append(f"/apis/storage.k8s.io/v1/storageclasses/{name}")


def create_claim(cluster: Cluster, namespace: str, name: str, cls: str, **spec: Any) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": cls,
            "resources": {"requests": {"storage": "1Gi"}},
            **spec,
        },
    }
    cluster.create(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", body)


def claim(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    return cluster.get(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}")


def create_pod(cluster: Cluster, namespace: str, name: str, scheduler: str, claim_name: str,
               **spec: Any) -> None:  # fmt: skip
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]
    body = pod_manifest(name, schedulerName=scheduler, volumes=volumes, **spec)
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", body)


def node_of(cluster: Cluster, namespace: str, name: str, timeout: float = 60) -> str:
    def bound() -> str | None:
        pod = cluster.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        return (pod.get("spec") or {}).get("nodeName")

    return str(wait_for(bound, timeout, f"pod {name} to be bound"))


def failure(
    cluster: Cluster, namespace: str, pod: str, by: str,
    until: Callable[[str], bool] = lambda _note: True, timeout: float = 60,
) -> str:  # fmt: skip
    """``by``'s latest FailedScheduling message for ``pod``, once ``until`` holds for it. A
    scheduler may judge a pod before a watch brought it an object created just before (a
    StorageClass: "unbound immediate PersistentVolumeClaims"), and says so again when it
    retries: the latest message is the one to check."""
    shown: list[str | None] = [None]

    def note() -> str | None:
        shown[0] = latest_failure(cluster, namespace, pod, by)
        return shown[0] if shown[0] is not None and until(shown[0]) else None

    return str(
        wait_for(note, timeout, lambda: f"{by}'s FailedScheduling for {pod} (latest: {shown[0]})")
    )


def histogram(message: str) -> str:
    """The reasons part: kube-scheduler's message goes on with its PostFilter (preemption)."""
    return message.split(". ", 1)[0].rstrip(".")


def test_a_bound_claim_follows_its_volumes_node_affinity(
    cluster: Cluster, namespace: str, scheduler_name: str, cluster_objects: list[str]
) -> None:
    nodes = schedulable_nodes(cluster)
    target, elsewhere = nodes[-1], nodes[0]
    pv = f"{namespace}-bound"
    create_pv(cluster, cluster_objects, pv, target, "")
    create_claim(cluster, namespace, "data", "", volumeName=pv)
    wait_for(
        lambda: (claim(cluster, namespace, "data").get("status") or {}).get("phase") == "Bound",
        60,
        "the PV controller to bind the pre-bound claim",
    )
    create_pod(cluster, namespace, "ours", scheduler_name, "data")
    create_pod(cluster, namespace, "kube", "default-scheduler", "data")
    assert node_of(cluster, namespace, "ours") == target
    assert node_of(cluster, namespace, "kube") == target

    # Pinned to another node: no node is left, and both schedulers say why in the same words.
    pin = {"nodeSelector": {HOST: elsewhere}}
    create_pod(cluster, namespace, "ours-pinned", scheduler_name, "data", **pin)
    create_pod(cluster, namespace, "kube-pinned", "default-scheduler", "data", **pin)
    affinity = "node(s) didn't match PersistentVolume's node affinity"
    ours = failure(cluster, namespace, "ours-pinned", scheduler_name, lambda n: affinity in n)
    kube = failure(cluster, namespace, "kube-pinned", "default-scheduler", lambda n: affinity in n)
    assert "node(s) didn't match PersistentVolume's node affinity" in ours
    assert histogram(ours) == histogram(kube)
    assert why_pod(cluster, namespace, "ours-pinned").summary == ours


def test_a_wait_for_first_consumer_local_volume_is_bound_on_the_chosen_node(
    cluster: Cluster, namespace: str, scheduler_name: str, cluster_objects: list[str]
) -> None:
    target = schedulable_nodes(cluster)[-1]
    cls = f"{namespace}-local"
    create_class(cluster, cluster_objects, cls, "kubernetes.io/no-provisioner")
    for who in ("ours", "kube"):
        create_pv(cluster, cluster_objects, f"{namespace}-{who}", target, cls)
        create_claim(cluster, namespace, f"{who}-data", cls)
    # Nothing binds a WaitForFirstConsumer claim before a pod needs it.
    assert (claim(cluster, namespace, "ours-data").get("status") or {}).get("phase") == "Pending"
    create_pod(cluster, namespace, "ours", scheduler_name, "ours-data")
    create_pod(cluster, namespace, "kube", "default-scheduler", "kube-data")
    volumes = set()
    for who in ("ours", "kube"):
        assert node_of(cluster, namespace, who, timeout=120) == target
        bound = claim(cluster, namespace, f"{who}-data")
        assert bound["status"]["phase"] == "Bound"
        # Either volume fits either claim (the smallest fitting one is chosen, first by name).
        volume = bound["spec"]["volumeName"]
        volumes.add(volume)
        pv = cluster.get(f"/api/v1/persistentvolumes/{volume}")
        assert pv["spec"]["claimRef"]["name"] == f"{who}-data"
    assert volumes == {f"{namespace}-ours", f"{namespace}-kube"}
    assert scheduled_event(cluster, namespace, "ours")["reportingController"] == scheduler_name


def test_dynamic_provisioning_is_refused_with_a_clear_message(
    cluster: Cluster, namespace: str, scheduler_name: str, cluster_objects: list[str]
) -> None:
    cls = f"{namespace}-dynamic"
    create_class(cluster, cluster_objects, cls, "example.com/no-such-provisioner")
    create_claim(cluster, namespace, "data", cls)
    create_pod(cluster, namespace, "ours", scheduler_name, "data")
    provisioning = "would need dynamic provisioning of a PersistentVolume"
    note = failure(cluster, namespace, "ours", scheduler_name, lambda n: provisioning in n)
    assert "use kube-scheduler for this pod" in note
    claimed = claim(cluster, namespace, "data")
    assert "volume.kubernetes.io/selected-node" not in (
        claimed["metadata"].get("annotations") or {}
    )
    assert why_pod(cluster, namespace, "ours").summary == note
