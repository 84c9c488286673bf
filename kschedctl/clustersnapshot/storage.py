"""The storage objects the volume filters read, reduced for a snapshot and turned back into API
objects: PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSIDrivers, CSINodes and
CSIStorageCapacities (VolumeBinding with its storage capacity check, VolumeRestrictions,
VolumeZone, NodeVolumeLimits).

Pure. Kept: what those filters read. Dropped: uids, resource versions, annotations but the
volume binding's own, StorageClass parameters and mount options, a PV's secret references,
volume attributes and mount options, a CSINode's driver node IDs (the node's ID at the
storage system; a lab writes the node's name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedctl.clustersnapshot.model import (
    ClusterSnapshot,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kschedctl.model.filters.volumebinding import (
    BETA_CLASS_ANNOTATION,
    BIND_COMPLETED,
    BOUND_BY_CONTROLLER,
    SELECTED_NODE,
    claim_class,
    volume_class,
)

__all__ = [
    "REDUCERS",
    "STORAGE_KINDS",
    "reduce_csi_driver",
    "reduce_csi_node",
    "reduce_csi_storage_capacity",
    "reduce_persistent_volume",
    "reduce_persistent_volume_claim",
    "reduce_storage_class",
    "storage_objects",
    "string_map",
]

_CLAIM_ANNOTATIONS = (SELECTED_NODE, BIND_COMPLETED, BOUND_BY_CONTROLLER)
# A PV's source: the fields that say which volume it is (VolumeRestrictions compares them,
# NodeVolumeLimits counts by kind); everything else (secretRef, volumeAttributes, …) dropped.
SOURCE_FIELDS: dict[str, tuple[str, ...]] = {
    "csi": ("driver", "volumeHandle", "readOnly", "fsType"),
    "gcePersistentDisk": ("pdName", "partition", "readOnly", "fsType"),
    "awsElasticBlockStore": ("volumeID", "partition", "readOnly", "fsType"),
    "azureDisk": ("diskName", "diskURI", "kind", "readOnly"),
    "cinder": ("volumeID", "readOnly"),
    "vsphereVolume": ("volumePath",),
    "portworxVolume": ("volumeID", "readOnly"),
    "rbd": ("monitors", "pool", "image", "readOnly"),
    "iscsi": ("targetPortal", "iqn", "lun", "readOnly"),
    "local": ("path",),
    "hostPath": ("path", "type"),
    "nfs": ("server", "path", "readOnly"),
}
# What a lab creates for a PV whose source kind the snapshot does not keep: the API server
# needs one, and no filter reads a hostPath.
PLACEHOLDER_SOURCE = {"hostPath": {"path": "/var/lib/kschedctl-simulated"}}
_CSINODE_DRIVER_KEYS = ("name", "allocatable", "topologyKeys")
_STORAGE = "storage.k8s.io/v1"

# snapshot field, API kind, its collection's name, apiVersion; in the order a lab creates
# them (classes and volumes before the claims bound to them)
STORAGE_KINDS = (
    ("storage_classes", "StorageClass", "StorageClasses", _STORAGE),
    ("csi_drivers", "CSIDriver", "CSIDrivers", _STORAGE),
    ("csi_nodes", "CSINode", "CSINodes", _STORAGE),
    ("persistent_volumes", "PersistentVolume", "PersistentVolumes", "v1"),
    ("persistent_volume_claims", "PersistentVolumeClaim", "PersistentVolumeClaims", "v1"),
    ("csi_storage_capacities", "CSIStorageCapacity", "CSIStorageCapacities", _STORAGE),
)


def string_map(raw: Any) -> dict[str, str]:
    """A string map from the API (labels, quantities): values as strings, None dropped."""
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): str(v) for k, v in raw.items() if v is not None}


def _dict(raw: Any) -> dict[str, Any] | None:
    return dict(raw) if isinstance(raw, Mapping) and raw else None


def _modes(raw: Any) -> list[str]:
    return [str(m) for m in raw] if isinstance(raw, list) else []


def _parts(obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    return tuple(obj.get(k) or {} for k in ("metadata", "spec", "status"))


def reduce_persistent_volume_claim(pvc: Mapping[str, Any]) -> PersistentVolumeClaim:
    md, spec, status = _parts(pvc)
    annotations = string_map(md.get("annotations"))
    explicit = "storageClassName" in spec or BETA_CLASS_ANNOTATION in annotations
    return PersistentVolumeClaim(
        namespace=str(md.get("namespace") or "default"),
        name=str(md.get("name") or ""),
        storage_class_name=claim_class(pvc) if explicit else None,
        volume_name=str(spec.get("volumeName") or ""),
        access_modes=_modes(spec.get("accessModes")),
        volume_mode=str(spec.get("volumeMode") or ""),
        requests=string_map((spec.get("resources") or {}).get("requests")),
        selector=_dict(spec.get("selector")),
        volume_attributes_class_name=str(spec.get("volumeAttributesClassName") or ""),
        annotations={k: annotations[k] for k in _CLAIM_ANNOTATIONS if k in annotations},
        phase=str(status.get("phase") or ""),
        deleting=bool(md.get("deletionTimestamp")),
    )


def _source(spec: Mapping[str, Any]) -> dict[str, Any]:
    for kind, keys in SOURCE_FIELDS.items():
        raw = spec.get(kind)
        if isinstance(raw, Mapping):
            return {kind: {k: raw[k] for k in keys if raw.get(k) not in (None, "")}}
    return {}


def reduce_persistent_volume(pv: Mapping[str, Any]) -> PersistentVolume:
    md, spec, status = _parts(pv)
    raw_ref = spec.get("claimRef")
    ref: Mapping[str, Any] = raw_ref if isinstance(raw_ref, Mapping) else {}
    return PersistentVolume(
        name=str(md.get("name") or ""),
        labels=string_map(md.get("labels")),
        storage_class_name=volume_class(pv),
        capacity=string_map(spec.get("capacity")),
        access_modes=_modes(spec.get("accessModes")),
        volume_mode=str(spec.get("volumeMode") or ""),
        node_affinity=_dict(spec.get("nodeAffinity")),
        claim_ref={k: str(ref[k]) for k in ("namespace", "name") if ref.get(k)},
        source=_source(spec),
        phase=str(status.get("phase") or ""),
    )


def reduce_storage_class(sc: Mapping[str, Any]) -> StorageClass:
    topologies = sc.get("allowedTopologies")
    return StorageClass(
        name=str((sc.get("metadata") or {}).get("name") or ""),
        provisioner=str(sc.get("provisioner") or ""),
        volume_binding_mode=str(sc.get("volumeBindingMode") or ""),
        allowed_topologies=[dict(t) for t in topologies if isinstance(t, Mapping)]
        if isinstance(topologies, list)
        else [],
    )


def reduce_csi_driver(driver: Mapping[str, Any]) -> CSIDriver:
    md, spec, _ = _parts(driver)
    attach = spec.get("attachRequired")
    return CSIDriver(
        name=str(md.get("name") or ""),
        storage_capacity=spec.get("storageCapacity") is True,
        attach_required=attach if isinstance(attach, bool) else None,
    )


def reduce_csi_node(node: Mapping[str, Any]) -> CSINode:
    md, spec, _ = _parts(node)
    drivers = spec.get("drivers")
    return CSINode(
        name=str(md.get("name") or ""),
        drivers=[
            {k: d[k] for k in _CSINODE_DRIVER_KEYS if d.get(k) not in (None, "", [], {})}
            for d in (drivers if isinstance(drivers, list) else [])
            if isinstance(d, Mapping)
        ],
    )


def reduce_csi_storage_capacity(cap: Mapping[str, Any]) -> CSIStorageCapacity:
    md = cap.get("metadata") or {}
    return CSIStorageCapacity(
        namespace=str(md.get("namespace") or "default"),
        name=str(md.get("name") or ""),
        storage_class_name=str(cap.get("storageClassName") or ""),
        capacity=str(cap.get("capacity") or ""),
        maximum_volume_size=str(cap.get("maximumVolumeSize") or ""),
        node_topology=_dict(cap.get("nodeTopology")),
    )


REDUCERS = {
    "persistent_volume_claims": reduce_persistent_volume_claim,
    "persistent_volumes": reduce_persistent_volume,
    "storage_classes": reduce_storage_class,
    "csi_drivers": reduce_csi_driver,
    "csi_nodes": reduce_csi_node,
    "csi_storage_capacities": reduce_csi_storage_capacity,
}


# --- back to API objects ---------------------------------------------------------------------


def _kept(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v not in (None, "", [], {})}


def _claim_object(c: PersistentVolumeClaim) -> dict[str, Any]:
    md: dict[str, Any] = {"name": c.name, "namespace": c.namespace}
    if c.annotations:
        md["annotations"] = dict(c.annotations)
    if c.deleting:
        md["deletionTimestamp"] = "1970-01-01T00:00:00Z"  # being deleted (time not kept)
    spec = _kept(
        {
            "volumeName": c.volume_name,
            "accessModes": list(c.access_modes),
            "volumeMode": c.volume_mode,
            "resources": {"requests": dict(c.requests)} if c.requests else None,
            "selector": c.selector,
            "volumeAttributesClassName": c.volume_attributes_class_name,
        }
    )
    if c.storage_class_name is not None:
        spec["storageClassName"] = c.storage_class_name  # "" too: no class, not the default
    out = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec}
    if c.phase:
        out["status"] = {"phase": c.phase}
    return out


def _volume_object(v: PersistentVolume) -> dict[str, Any]:
    md: dict[str, Any] = {"name": v.name}
    if v.labels:
        md["labels"] = dict(v.labels)
    spec = _kept(
        {
            "storageClassName": v.storage_class_name,
            "capacity": dict(v.capacity),
            "accessModes": list(v.access_modes),
            "volumeMode": v.volume_mode,
            "nodeAffinity": v.node_affinity,
            "claimRef": dict(v.claim_ref),  # no uid: pre-bound to the claim of that name
        }
    )
    kind = next(iter(v.source), None)
    spec.update(v.source if kind and v.source[kind] else PLACEHOLDER_SOURCE)
    out = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": spec}
    if v.phase:
        out["status"] = {"phase": v.phase}
    return out


def storage_objects(snap: ClusterSnapshot) -> dict[str, list[dict[str, Any]] | None]:
    """The snapshot's storage objects as API dicts, by snapshot field (None: not taken);
    the keyword arguments of :class:`kschedctl.model.filters.snapshot.NodeInfoSnapshot`."""

    def each(items: list[Any] | None, make: Any) -> list[dict[str, Any]] | None:
        return None if items is None else [make(i) for i in items]

    return {
        "storage_classes": each(snap.storage_classes, lambda c: {
            "apiVersion": _STORAGE, "kind": "StorageClass", "metadata": {"name": c.name},
            "provisioner": c.provisioner or "kubernetes.io/no-provisioner",
            **_kept({"volumeBindingMode": c.volume_binding_mode,
                     "allowedTopologies": [dict(t) for t in c.allowed_topologies]})}),
        "csi_drivers": each(snap.csi_drivers, lambda d: {
            "apiVersion": _STORAGE, "kind": "CSIDriver", "metadata": {"name": d.name},
            "spec": _kept({"storageCapacity": d.storage_capacity or None,
                           "attachRequired": d.attach_required})}),
        "csi_nodes": each(snap.csi_nodes, lambda n: {
            "apiVersion": _STORAGE, "kind": "CSINode", "metadata": {"name": n.name},
            "spec": {"drivers": [{**d, "nodeID": n.name} for d in n.drivers]}}),
        "persistent_volumes": each(snap.persistent_volumes, _volume_object),
        "persistent_volume_claims": each(snap.persistent_volume_claims, _claim_object),
        "csi_storage_capacities": each(snap.csi_storage_capacities, lambda c: {
            "apiVersion": _STORAGE, "kind": "CSIStorageCapacity",
            "metadata": {"name": c.name, "namespace": c.namespace},
            "storageClassName": c.storage_class_name,
            **_kept({"capacity": c.capacity, "maximumVolumeSize": c.maximum_volume_size,
                     "nodeTopology": c.node_topology})}),
    }  # fmt: skip
