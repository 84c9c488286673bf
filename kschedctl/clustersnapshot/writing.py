"""Writing a snapshot file (YAML or JSON), and turning its reduced nodes and pods back into
API objects (for :class:`kschedctl.model.filters.snapshot.Snapshot` and for a lab built from
the snapshot)."""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any

from kschedctl.base.yamltext import to_yaml
from kschedctl.clustersnapshot.model import (
    API_VERSION,
    KIND,
    ClusterSnapshot,
    SnapshotContainer,
    SnapshotNode,
    SnapshotPod,
    yaml_fields,
)


@functools.cache
def _written(cls: type) -> tuple[tuple[str, str, Any, bool], ...]:
    """(attribute, YAML key, default, required) of a model dataclass, for writing."""
    return tuple(
        (
            f.name,
            key,
            f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default,
            bool(f.metadata.get("required")),
        )
        for f, key, _ in yaml_fields(cls)
    )


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encode_model(value)
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _encode_model(obj: Any) -> dict[str, Any]:
    """The fields that differ from their default (files stay small), in declaration order."""
    out: dict[str, Any] = {}
    cls: type = type(obj)
    for name, key, default, required in _written(cls):
        value = getattr(obj, name)
        if value == default and not required:
            continue
        out[key] = _encode(value)
    return out


def snapshot_to_dict(snap: ClusterSnapshot) -> dict[str, Any]:
    spec = _encode_model(snap)
    spec.pop("metadata", None)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": _encode_model(snap.metadata),
        "spec": spec,
    }


def dump(snap: ClusterSnapshot, *, as_json: bool = False) -> str:
    """The file's text: YAML, or JSON (``as_json``: faster to write and read back).

    YAML through libyaml's emitter (the template-slot form of :func:`to_yaml`, which quotes
    every value that needs it and escapes non-ASCII): PyYAML's own emitter takes minutes for
    20,000 pods."""
    doc = snapshot_to_dict(snap)
    if as_json:
        return json.dumps(doc, separators=(",", ":")) + "\n"  # the C encoder: no indent
    return to_yaml(doc) + "\n"


# --- back to API objects ---------------------------------------------------------------------


def node_object(node: SnapshotNode) -> dict[str, Any]:
    """A Node API object with what the snapshot holds (Ready, as the scheduler assumes)."""
    spec: dict[str, Any] = {}
    if node.taints:
        spec["taints"] = [dict(t) for t in node.taints]
    if node.unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {
        "capacity": dict(node.capacity),
        "allocatable": dict(node.allocatable),
    }
    if node.images:
        status["images"] = [dict(i) for i in node.images]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": dict(node.labels)},
        "spec": spec,
        "status": status,
    }


def _container_object(c: SnapshotContainer, index: int, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name or f"{prefix}{index}", "image": c.image or "pause"}
    resources: dict[str, Any] = {}
    if c.requests:
        resources["requests"] = dict(c.requests)
    if c.limits:
        resources["limits"] = dict(c.limits)
    if resources:
        out["resources"] = resources
    if c.ports:
        out["ports"] = [dict(p) for p in c.ports]
    if c.restart_policy:
        out["restartPolicy"] = c.restart_policy
    return out


def pod_object(pod: SnapshotPod) -> dict[str, Any]:
    """A Pod API object with what the snapshot holds (bound: ``spec.nodeName`` set)."""
    spec: dict[str, Any] = {
        "containers": [_container_object(c, i, "c") for i, c in enumerate(pod.containers)]
    }
    if pod.init_containers:
        spec["initContainers"] = [
            _container_object(c, i, "init") for i, c in enumerate(pod.init_containers)
        ]
    optional = {
        "nodeName": pod.node_name,
        "schedulerName": pod.scheduler_name,
        "priority": pod.priority,
        "priorityClassName": pod.priority_class_name,
        "preemptionPolicy": pod.preemption_policy,
        "nodeSelector": dict(pod.node_selector),
        "affinity": pod.affinity,
        "tolerations": [dict(t) for t in pod.tolerations],
        "topologySpreadConstraints": [dict(t) for t in pod.topology_spread_constraints],
        "schedulingGates": [{"name": g} for g in pod.scheduling_gates],
        "overhead": dict(pod.overhead),
        "resources": pod.resources,
        "volumes": [
            {"name": f"pvc-{i}", "persistentVolumeClaim": {"claimName": claim}}
            for i, claim in enumerate(pod.persistent_volume_claims)
        ],
    }
    optional["resourceClaims"] = [dict(c) for c in pod.resource_claims]
    spec.update({k: v for k, v in optional.items() if v not in (None, "", [], {})})
    metadata: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
    if pod.labels:
        metadata["labels"] = dict(pod.labels)
    status: dict[str, Any] = {"phase": pod.phase or ("Running" if pod.node_name else "Pending")}
    if pod.nominated_node_name:
        status["nominatedNodeName"] = pod.nominated_node_name
    if pod.resource_claim_statuses:
        status["resourceClaimStatuses"] = [dict(s) for s in pod.resource_claim_statuses]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


_RESOURCE = "resource.k8s.io/v1"


def claim_template_objects(snap: ClusterSnapshot) -> list[dict[str, Any]]:
    """The ResourceClaimTemplates as API dicts (kube-controller-manager makes pods' claims
    from them)."""
    out = []
    for t in snap.resource_claim_templates:
        devices: dict[str, Any] = {"requests": [dict(r) for r in t.requests]}
        if t.constraints:
            devices["constraints"] = [dict(x) for x in t.constraints]
        out.append({"apiVersion": _RESOURCE, "kind": "ResourceClaimTemplate",
                    "metadata": {"name": t.name, "namespace": t.namespace},
                    "spec": {"spec": {"devices": devices}}})  # fmt: skip
    return out


def dra_objects(snap: ClusterSnapshot) -> dict[str, Any]:
    """The snapshot's DRA objects as API dicts, as ``NodeInfoSnapshot``'s keyword arguments
    (empty when the snapshot has none: DynamicResources is then not evaluated)."""
    if snap.device_classes is None or snap.resource_slices is None:
        return {}
    if snap.resource_claims is None:
        return {}
    classes = [
        {"apiVersion": _RESOURCE, "kind": "DeviceClass", "metadata": {"name": c.name},
         "spec": {"selectors": [dict(s) for s in c.selectors],
                  **({"extendedResourceName": c.extended_resource_name}
                     if c.extended_resource_name else {})}}
        for c in snap.device_classes
    ]  # fmt: skip
    slices = []
    for s in snap.resource_slices:
        spec: dict[str, Any] = {"driver": s.driver, "pool": dict(s.pool),
                                "devices": [dict(d) for d in s.devices]}  # fmt: skip
        optional = {
            "nodeName": s.node_name,
            "allNodes": s.all_nodes,
            "nodeSelector": s.node_selector,
            "perDeviceNodeSelection": s.per_device_node_selection,
            "sharedCounters": [dict(c) for c in s.shared_counters],
        }
        spec.update({k: v for k, v in optional.items() if v not in (None, "", [], False)})
        slices.append({"apiVersion": _RESOURCE, "kind": "ResourceSlice",
                       "metadata": {"name": s.name}, "spec": spec})  # fmt: skip
    claims = []
    for c in snap.resource_claims:
        devices: dict[str, Any] = {"requests": [dict(r) for r in c.requests]}
        if c.constraints:
            devices["constraints"] = [dict(x) for x in c.constraints]
        md: dict[str, Any] = {"name": c.name, "namespace": c.namespace}
        if c.deleting:
            md["deletionTimestamp"] = "1970-01-01T00:00:00Z"  # being deleted (time not kept)
        claim: dict[str, Any] = {"apiVersion": _RESOURCE, "kind": "ResourceClaim",
                                 "metadata": md, "spec": {"devices": devices}}  # fmt: skip
        if c.allocation:
            claim["status"] = {"allocation": dict(c.allocation)}
        claims.append(claim)
    return {"device_classes": classes, "resource_slices": slices, "resource_claims": claims}
