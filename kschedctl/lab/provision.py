"""What a CSI driver's external-provisioner does, for a simulation lab where no driver runs.

kube-scheduler puts a WaitForFirstConsumer claim's chosen node in its
``volume.kubernetes.io/selected-node`` annotation, then waits (PreBind) until a provisioner
has made a PersistentVolume for it and the volume controller has bound the two. Without that
the pod would never be bound. :func:`provision` makes the volume as a provisioner would: the
claim's size, access modes and class, a CSI source of the class's provisioner, reachable from
the chosen node only (its ``kubernetes.io/hostname``), pre-bound to the claim. It does not take
the space from the CSIStorageCapacity objects (a driver publishes new ones later).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedctl.base.errors import ConflictError
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.filters.volumebinding import NO_PROVISIONER, SELECTED_NODE

PROVISIONED_LABEL = "simulate.kschedctl.io/provisioned"  # reset deletes these volumes
HOSTNAME = "kubernetes.io/hostname"


def volume_for(claim: Mapping[str, Any], storage_class: Mapping[str, Any], node: Mapping[str, Any]
               ) -> dict[str, Any]:  # fmt: skip
    """The PersistentVolume a CSI provisioner makes for ``claim`` on ``node``."""
    md, spec = claim["metadata"], claim.get("spec") or {}
    name = f"pvc-{md['uid']}"  # what external-provisioner names them
    hostname = (node["metadata"].get("labels") or {}).get(HOSTNAME, node["metadata"]["name"])
    term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [hostname]}]}
    out_spec: dict[str, Any] = {
        "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {})["storage"]},
        "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
        "storageClassName": storage_class["metadata"]["name"],
        "persistentVolumeReclaimPolicy": "Delete",
        "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "namespace": md["namespace"], "name": md["name"], "uid": md["uid"]},
        "csi": {"driver": storage_class["provisioner"], "volumeHandle": name},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
    }  # fmt: skip
    if spec.get("volumeMode"):
        out_spec["volumeMode"] = spec["volumeMode"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "labels": {PROVISIONED_LABEL: "true"},
            "annotations": {"pv.kubernetes.io/provisioned-by": storage_class["provisioner"]},
        },
        "spec": out_spec,
    }


def provision(cluster: Cluster) -> int:
    """Make the volume of each claim a scheduler chose a node for and nothing bound yet;
    how many were made."""
    waiting = [
        c
        for c in cluster.list("/api/v1/persistentvolumeclaims")
        if (c["metadata"].get("annotations") or {}).get(SELECTED_NODE)
        and not (c.get("spec") or {}).get("volumeName")
        and ((c.get("spec") or {}).get("resources") or {}).get("requests", {}).get("storage")
    ]
    if not waiting:
        return 0
    classes = {c["metadata"]["name"]: c
               for c in cluster.list("/apis/storage.k8s.io/v1/storageclasses")}  # fmt: skip
    nodes = {n["metadata"]["name"]: n for n in cluster.list("/api/v1/nodes")}
    made = 0
    for claim in waiting:
        storage_class = classes.get(str((claim.get("spec") or {}).get("storageClassName") or ""))
        node = nodes.get(claim["metadata"]["annotations"][SELECTED_NODE])
        if storage_class is None or node is None:
            continue
        if storage_class.get("provisioner") in (None, "", NO_PROVISIONER):
            continue
        try:
            cluster.create("/api/v1/persistentvolumes", volume_for(claim, storage_class, node))
            made += 1
        except ConflictError:  # made on an earlier round: the volume controller binds it
            pass
    return made
