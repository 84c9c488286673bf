"""Objects slimmed on the way into the scheduler's cache: the filters read a few dozen fields,
and dropping managedFields, images, env and the rest keeps 50,000 cached pods well inside the
memory budget. The values are shared with the API's copy, not copied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from kschedctl.model.kubetypes import Node, Pod

__all__ = [
    "slim_namespace",
    "slim_node",
    "slim_pdb",
    "slim_pod",
    "slim_volume",
    "slim_workload",
]

# Per-pod fields the filters, scoring, fallback policy and the loop read.
_POD_SPEC = (
    "nodeName", "schedulerName", "priority", "preemptionPolicy", "nodeSelector", "affinity",
    "tolerations", "topologySpreadConstraints", "overhead", "resources", "hostNetwork",
    "hostUsers", "resourceClaims", "schedulingGates",
)  # fmt: skip
_CONTAINER = ("name", "image", "resources", "restartPolicy", "restartPolicyRules")
_VOLUME_KINDS = (
    "persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore", "rbd",
    "iscsi", "azureDisk", "cinder", "vsphereVolume", "portworxVolume",
)  # fmt: skip
_CONDITIONS = ("PodScheduled", "DisruptionTarget", "PodResizePending")
_VOLUME_META = (
    "name", "namespace", "uid", "resourceVersion", "labels", "annotations", "deletionTimestamp",
    "ownerReferences",
)  # fmt: skip
_KEEP_ANNOTATIONS = ("kschedctl.io/fallback-policy",)
# Kept from the annotations when plugins read them all: a copy of the whole object, large.
_DROP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def _slim_container(c: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: c[k] for k in _CONTAINER if k in c}
    ports = [p for p in c.get("ports") or [] if p.get("hostPort")]
    if ports:
        out["ports"] = ports
    return out


def _annotations(md: Mapping[str, Any], every: bool) -> dict[str, Any]:
    found = md.get("annotations") or {}
    if every:
        return {k: v for k, v in found.items() if k not in _DROP_ANNOTATIONS}
    return {k: v for k, v in found.items() if k in _KEEP_ANNOTATIONS}


def slim_pod(pod: Mapping[str, Any], *, annotations: bool = False) -> Pod:
    """The parts of a pod the scheduler reads (the values are shared, not copied).

    ``annotations``: keep every annotation (but kubectl's last-applied copy), for plugins."""
    md = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    meta: dict[str, Any] = {
        k: md[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels",
                  "deletionTimestamp", "ownerReferences")
        if k in md
    }  # fmt: skip
    kept = _annotations(md, annotations)
    if kept:
        meta["annotations"] = kept
    slim_spec: dict[str, Any] = {k: spec[k] for k in _POD_SPEC if k in spec}
    slim_spec["containers"] = [_slim_container(c) for c in spec.get("containers") or []]
    if spec.get("initContainers"):
        slim_spec["initContainers"] = [_slim_container(c) for c in spec["initContainers"]]
    volumes = [
        {k: v[k] for k in ("name", "image", *_VOLUME_KINDS) if k in v}
        for v in spec.get("volumes") or []
        if any(k in v for k in ("image", *_VOLUME_KINDS))
    ]
    if volumes:
        slim_spec["volumes"] = volumes
    slim_status: dict[str, Any] = {
        k: status[k]
        for k in ("phase", "nominatedNodeName", "startTime", "resources", "allocatedResources")
        if k in status
    }
    conditions = [c for c in status.get("conditions") or [] if c.get("type") in _CONDITIONS]
    if conditions:
        slim_status["conditions"] = conditions
    for key in ("containerStatuses", "initContainerStatuses"):
        statuses = [
            {k: cs[k] for k in ("name", "resources", "allocatedResources") if k in cs}
            for cs in status.get(key) or []
            if "resources" in cs or "allocatedResources" in cs
        ]
        if statuses:
            slim_status[key] = statuses
    # Where the scheduler's pods enter the model (the watch's transform, the cache's events):
    # the API's untyped dict, read through the Pod shape from here on.
    return cast(Pod, {"metadata": meta, "spec": slim_spec, "status": slim_status})


def slim_node(node: Mapping[str, Any], *, annotations: bool = False) -> Node:
    """The parts of a node the scheduler reads; ``annotations``: with them, for plugins."""
    md = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    meta = {k: md[k] for k in ("name", "uid", "labels", "resourceVersion") if k in md}
    kept = _annotations(md, annotations)
    if kept:
        meta["annotations"] = kept
    slim_status: dict[str, Any] = {"allocatable": status.get("allocatable") or {}}
    images = [
        {k: i[k] for k in ("names", "sizeBytes") if k in i} for i in status.get("images") or []
    ]
    if images:
        slim_status["images"] = images  # ImageLocality
    if status.get("declaredFeatures"):
        slim_status["declaredFeatures"] = status["declaredFeatures"]  # NodeDeclaredFeatures
    slim = {
        "metadata": meta,
        "spec": {k: spec[k] for k in ("taints", "unschedulable") if k in spec},
        "status": slim_status,
    }
    return cast(Node, slim)  # where the scheduler's nodes enter the model: the Node shape


def slim_workload(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A Service or controller as DefaultSelector reads it: its name and selector."""
    md = obj.get("metadata") or {}
    return {
        "metadata": {k: md[k] for k in ("name", "namespace", "uid") if k in md},
        "spec": {"selector": (obj.get("spec") or {}).get("selector")},
    }


def slim_volume(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A PVC, PV or StorageClass without managedFields (their specs are small and read whole)."""
    md = obj.get("metadata") or {}
    out = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
    out["metadata"] = {k: md[k] for k in _VOLUME_META if k in md}
    status = obj.get("status")
    if isinstance(status, Mapping):
        out["status"] = {k: status[k] for k in ("phase",) if k in status}
    return out


def slim_pdb(pdb: Mapping[str, Any]) -> dict[str, Any]:
    """What preemption reads of a PodDisruptionBudget (default_preemption.go
    filterPodsWithPDBViolation): its namespace, selector, allowed and disrupted pods."""
    md = pdb.get("metadata") or {}
    status = pdb.get("status") or {}
    return {
        "metadata": {k: md[k] for k in ("name", "namespace", "uid") if k in md},
        "spec": {"selector": (pdb.get("spec") or {}).get("selector")},
        "status": {k: status[k] for k in ("disruptionsAllowed", "disruptedPods") if k in status},
    }


def slim_namespace(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """A namespace's name and labels: all a namespaceSelector reads."""
    md = namespace.get("metadata") or {}
    return {"metadata": {k: md[k] for k in ("name", "labels") if k in md}}
