"""Issue 28, storage, on the session lab against its kube-scheduler v1.36.3: for each
scenario the lab's kube-scheduler and kschedctl's own scheduler (`kschedctl scheduler run`)
each try an identical pod; `kschedctl why` must give kube-scheduler's FailedScheduling
message word for word, and kschedctl's scheduler the same reasons (the same whole message
where kube-scheduler's has no DynamicResources PostFilter part).

- CSI storage capacity: a WaitForFirstConsumer claim of a StorageClass whose provisioner is a
  CSIDriver with ``storageCapacity: true``, and a CSIStorageCapacity too small (on one node);
- inline disks: a GCE PD and an iSCSI volume already mounted read-write on a node;
- ReadWriteOncePod: a claim another pod uses;
- an unbound immediate claim: kube-scheduler's message ends in "not found".

No driver runs: scheduling decisions read only these objects. Cluster-scoped objects
(CSIDrivers, StorageClasses, PersistentVolumes) are named after the test's namespace and
deleted at the end; disks are named after it too (inline disk conflicts span namespaces).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import latest_failure, pod_manifest, stop, token_kubeconfig, wait_for
from test_builtin_volumes import (  # the same scheduler fixture and volume helpers
    HOST,
    claim,
    cluster_objects,
    create_claim,
    create_pv,
    failure,
    histogram,
    node_of,
    schedulable_nodes,
    scheduler_name,
)

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.processes import proxy_free_environment
from kschedctl.ops.why import why_pod
from kschedctl.render.builtin import RBAC_RULES

__all__ = ["cluster_objects", "scheduler_name"]  # fixtures, imported to be used here
KUBE = "default-scheduler"
STORAGE = "/apis/storage.k8s.io/v1"


def create(cluster: Cluster, path: str, body: dict[str, Any], objects: list[str] | None) -> None:
    cluster.create(path, body)
    if objects is not None:
        objects.append(f"{path}/{body['metadata']['name']}")


def make_pod(cluster: Cluster, namespace: str, name: str, scheduler: str, **spec: Any) -> None:
    create(cluster, f"/api/v1/namespaces/{namespace}/pods",
           pod_manifest(name, schedulerName=scheduler, **spec), None)  # fmt: skip


def uses(claim_name: str) -> list[dict[str, Any]]:
    return [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]


def both_fail_alike(cluster: Cluster, namespace: str, ours: str, kube: str, scheduler: str,
                    saying: str) -> str:  # fmt: skip
    """kube-scheduler's message for ``kube``, which says ``saying``; why says it word for
    word, and kschedctl's scheduler gives ``ours`` the same one (the DynamicResources
    PostFilter's part included)."""
    # Either may first judge with a watch behind the objects made just before the pods (a
    # StorageClass not yet seen reads as Immediate binding); each retries when they arrive:
    # their latest messages are the ones to compare.
    last: list[tuple[str | None, str | None]] = [(None, None)]

    def alike() -> str | None:
        pair = (
            latest_failure(cluster, namespace, kube, KUBE),
            latest_failure(cluster, namespace, ours, scheduler),
        )
        last[0] = pair
        return pair[0] if pair[0] is not None and saying in pair[0] and pair[0] == pair[1] else None

    expected = wait_for(
        alike, 60, lambda: f"the same message, saying {saying!r}, from both (kube, ours: {last[0]})"
    )
    print(f"\n  kube-scheduler and kschedctl: {expected}")

    def agrees() -> bool:  # kube-scheduler retries; its latest message is the one to match
        return why_pod(cluster, namespace, kube).summary == failure(cluster, namespace, kube, KUBE)

    wait_for(agrees, 30, f"why's summary for {kube} to equal kube-scheduler's message", 1.0)
    assert why_pod(cluster, namespace, ours).summary == expected
    return str(expected)


def capacity_class(cluster: Cluster, namespace: str, objects: list[str], node: str,
                   size: str) -> str:  # fmt: skip
    """A WaitForFirstConsumer class of a CSIDriver with ``storageCapacity: true`` that
    publishes ``size`` for ``node`` only."""
    # a driver name is at most 63 bytes: the namespace's random suffix keeps it apart
    driver, cls = f"{namespace[-5:]}.csi.example.com", f"{namespace}-capacity"
    create(cluster, f"{STORAGE}/csidrivers", {"metadata": {"name": driver},
           "spec": {"attachRequired": False, "storageCapacity": True}}, objects)  # fmt: skip
    create(cluster, f"{STORAGE}/storageclasses", {"metadata": {"name": cls}, "provisioner": driver,
           "volumeBindingMode": "WaitForFirstConsumer"}, objects)  # fmt: skip
    create(cluster, f"{STORAGE}/namespaces/{namespace}/csistoragecapacities", {
        "metadata": {"name": "pool"}, "storageClassName": cls, "capacity": size,
        "nodeTopology": {"matchLabels": {HOST: node}}}, None)  # fmt: skip
    for who in ("ours", "kube"):
        create_claim(cluster, namespace, f"{who}-data", cls,
                     resources={"requests": {"storage": "5Gi"}})  # fmt: skip
    return cls


def test_csi_storage_capacity_too_small_everywhere(
    cluster: Cluster, namespace: str, scheduler_name: str, cluster_objects: list[str]
) -> None:
    capacity_class(cluster, namespace, cluster_objects, schedulable_nodes(cluster)[0], "1Gi")
    for who, scheduler in (("ours", scheduler_name), ("kube", KUBE)):
        make_pod(cluster, namespace, who, scheduler, volumes=uses(f"{who}-data"))
    both_fail_alike(cluster, namespace, "ours", "kube", scheduler_name,
                    "node(s) did not have enough free storage")  # fmt: skip


def test_csi_storage_capacity_on_one_node(
    cluster: Cluster, namespace: str, scheduler_name: str, cluster_objects: list[str]
) -> None:
    """kube-scheduler picks the one node with room (its claim gets that selected-node; no
    driver provisions, so the pod waits in PreBind); kschedctl's scheduler, which provisions
    nothing, says so for that node and the shortage for the others."""
    nodes = schedulable_nodes(cluster)
    capacity_class(cluster, namespace, cluster_objects, nodes[0], "10Gi")
    for who, scheduler in (("ours", scheduler_name), ("kube", KUBE)):
        make_pod(cluster, namespace, who, scheduler, volumes=uses(f"{who}-data"))
    selected = wait_for(lambda: (claim(cluster, namespace, "kube-data")["metadata"]
                        .get("annotations") or {}).get("volume.kubernetes.io/selected-node"),
                        60, "kube-scheduler to select a node for the claim")  # fmt: skip
    assert selected == nodes[0]
    mine = failure(cluster, namespace, "ours", scheduler_name, lambda n: "provisioning" in n)
    print(f"\n  kschedctl: {mine}")
    short = len(cluster.list("/api/v1/nodes")) - 1
    assert histogram(mine).endswith(
        f"1 node(s) would need dynamic provisioning of a PersistentVolume, which kschedctl's "
        f"scheduler does not do (use kube-scheduler for this pod), {short} node(s) did not have "
        "enough free storage"
    )
    assert why_pod(cluster, namespace, "ours").summary == mine


@pytest.mark.parametrize(
    "disk",
    [
        pytest.param(lambda ns: {"gcePersistentDisk": {"pdName": f"{ns}-pd"}}, id="gce-pd"),
        pytest.param(
            lambda ns: {
                "iscsi": {
                    "targetPortal": "10.0.0.1:3260",
                    "lun": 0,
                    "iqn": f"iqn.2026-01.io.kschedctl:{ns}",
                }
            },
            id="iscsi",
        ),  # fmt: skip
    ],
)
def test_inline_disk_in_use(
    cluster: Cluster, namespace: str, scheduler_name: str, disk: Any
) -> None:
    volumes = [{"name": "disk", **disk(namespace)}]
    make_pod(cluster, namespace, "holder", KUBE, volumes=volumes)
    there = node_of(cluster, namespace, "holder")
    wait_for(lambda: cluster.get(f"/api/v1/namespaces/{namespace}/pods/holder")["status"]
             .get("phase") == "Running", 60, "the disk's holder to run")  # fmt: skip
    # Pinned to the holder's node: the disk is what keeps the pod off it.
    for who, scheduler in (("ours", scheduler_name), ("kube", KUBE)):
        make_pod(cluster, namespace, who, scheduler, volumes=volumes, nodeSelector={HOST: there})
    both_fail_alike(cluster, namespace, "ours", "kube", scheduler_name,
                    "1 node(s) had no available disk")  # fmt: skip


def test_read_write_once_pod_claim_in_use(
    cluster: Cluster, namespace: str, scheduler_name: str, cluster_objects: list[str]
) -> None:
    rwop = {"accessModes": ["ReadWriteOncePod"]}
    pv = f"{namespace}-rwop"
    create_pv(cluster, cluster_objects, pv, schedulable_nodes(cluster)[-1], "", **rwop)
    create_claim(cluster, namespace, "data", "", volumeName=pv, **rwop)
    wait_for(lambda: (claim(cluster, namespace, "data").get("status") or {}).get("phase")
             == "Bound", 60, "the PV controller to bind the claim")  # fmt: skip
    make_pod(cluster, namespace, "holder", KUBE, volumes=uses("data"))
    node_of(cluster, namespace, "holder")
    for who, scheduler in (("ours", scheduler_name), ("kube", KUBE)):
        make_pod(cluster, namespace, who, scheduler, volumes=uses("data"))
    both_fail_alike(cluster, namespace, "ours", "kube", scheduler_name,
                    "ReadWriteOncePod access mode already in-use by another pod")  # fmt: skip


def test_unbound_immediate_claim(
    cluster: Cluster, namespace: str, scheduler_name: str, cluster_objects: list[str]
) -> None:
    cls = f"{namespace}-immediate"
    create(cluster, f"{STORAGE}/storageclasses", {"metadata": {"name": cls},
           "provisioner": "example.com/nobody", "volumeBindingMode": "Immediate"},
           cluster_objects)  # fmt: skip
    create_claim(cluster, namespace, "data", cls)
    for who, scheduler in (("ours", scheduler_name), ("kube", KUBE)):
        make_pod(cluster, namespace, who, scheduler, volumes=uses("data"))
    message = both_fail_alike(cluster, namespace, "ours", "kube", scheduler_name,
                              "unbound immediate PersistentVolumeClaims")  # fmt: skip
    assert message.endswith("pod has unbound immediate PersistentVolumeClaims. not found")


def test_required_node_features(cluster: Cluster, namespace: str, scheduler_name: str) -> None:
    """A container restart rule RestartAllContainers needs the node feature
    RestartAllContainersOnContainerExits; the lab's kwok nodes declare none."""
    rule = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    app = {"name": "app", "image": "registry.k8s.io/pause:3.10", "restartPolicy": "Never",
           "restartPolicyRules": [rule]}  # fmt: skip
    for who, scheduler in (("ours", scheduler_name), ("kube", KUBE)):
        make_pod(cluster, namespace, who, scheduler, containers=[app])
    both_fail_alike(cluster, namespace, "ours", "kube", scheduler_name,
                    "node(s) didn't match Pod's required features")  # fmt: skip


def test_a_node_declaring_the_feature_gets_the_pod(
    cluster: Cluster, namespace: str, scheduler_name: str
) -> None:
    """Both schedulers place such a pod on the one node that declares the feature (declared
    for this test only, and taken back after)."""
    target = schedulable_nodes(cluster)[-1]
    status = f"/api/v1/nodes/{target}/status"
    rule = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    app = {"name": "app", "image": "registry.k8s.io/pause:3.10", "restartPolicy": "Never",
           "restartPolicyRules": [rule]}  # fmt: skip
    cluster.patch(
        status, {"status": {"declaredFeatures": ["RestartAllContainersOnContainerExits"]}}
    )
    try:
        for who, scheduler in (("ours", scheduler_name), ("kube", KUBE)):
            make_pod(cluster, namespace, who, scheduler, containers=[app])
        assert node_of(cluster, namespace, "kube") == target
        assert node_of(cluster, namespace, "ours") == target
    finally:
        cluster.patch(status, {"status": {"declaredFeatures": None}})


def test_a_scheduler_with_an_older_cluster_role_starts_and_says_what_it_cannot_check(
    lab: Lab, cluster: Cluster, namespace: str, cluster_objects: list[str], tmp_path: Path
) -> None:
    """Deployed with the ClusterRole of a kschedctl before CSIDrivers, CSIStorageCapacities
    and CSINodes were read, kschedctl's scheduler still schedules; a pod whose claim may need
    the storage capacity check is refused saying so, never placed as if no driver published
    capacity."""
    rbac, name = "/apis/rbac.authorization.k8s.io/v1", f"{namespace}-old"
    csi = {"csidrivers", "csistoragecapacities", "csinodes"}
    older = [r for r in RBAC_RULES if not csi & set(r["resources"])]
    assert len(older) == len(RBAC_RULES) - 1
    create(cluster, f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "old"}},
           None)  # fmt: skip
    create(cluster, f"{rbac}/clusterroles", {"metadata": {"name": name}, "rules": older},
           cluster_objects)  # fmt: skip
    create(cluster, f"{rbac}/clusterrolebindings", {"metadata": {"name": name},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                       "name": name},
           "subjects": [{"kind": "ServiceAccount", "name": "old", "namespace": namespace}]},
           cluster_objects)  # fmt: skip
    kubeconfig, log = tmp_path / "old.kubeconfig", tmp_path / "scheduler.log"
    token_kubeconfig(lab, cluster, namespace, "old", kubeconfig)
    cls = f"{namespace}-provisioned"
    create(cluster, f"{STORAGE}/storageclasses", {"metadata": {"name": cls},
           "provisioner": "example.com/csi", "volumeBindingMode": "WaitForFirstConsumer"},
           cluster_objects)  # fmt: skip
    create_claim(cluster, namespace, "data", cls)
    argv = [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={name}",
            f"--kubeconfig={kubeconfig}", "--no-leader-elect", "--metrics-port=0",
            "--metrics-address=127.0.0.1", "--pod-initial-backoff=0.5", "--pod-max-backoff=2"]  # fmt: skip
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment()
        )
    try:
        make_pod(cluster, namespace, "plain", name)
        make_pod(cluster, namespace, "claims", name, volumes=uses("data"))
        node_of(cluster, namespace, "plain", timeout=120)
        note = failure(cluster, namespace, "claims", name)
        assert "kschedctl's scheduler does not evaluate VolumeBinding for this pod" in note
        assert "CSIDrivers and CSIStorageCapacities, which were not given" in note
    finally:
        stop(proc)
        printed = log.read_text(errors="replace")
        print(printed[-3000:])
    assert "cannot list csidrivers" in printed
