"""The snapshot file: a portable copy of what scheduling needs from a cluster.

``kschedctl snapshot`` writes it, ``kschedctl simulate`` reads it. A versioned format
(``apiVersion: kschedctl.io/v1alpha1``, ``kind: Snapshot``) whose JSON Schema ships as
``kschedctl/_generated/schemas/snapshot.schema.json`` (generated from these dataclasses by
:mod:`kschedctl.render.schemas`). Named ``ClusterSnapshot`` (not ``Snapshot``): the filters'
indexed cluster state is :class:`kschedctl.model.filters.snapshot.Snapshot`, scheduler discovery's
reads are :class:`kschedctl.observe.discovery.ClusterReading`.

Pure. Nodes and pods are reduced to the fields kube-scheduler's plugins read (no uid, no
status but the phase, no annotations, no env, no commands); the Kubernetes-shaped parts
(affinity, tolerations, taints, topology spread constraints) are kept as the API spells them.
:mod:`.reading` loads and checks a file, :mod:`.writing` writes one and turns the reduced
forms back into API objects.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from kschedctl.printers.formats import camel

API_VERSION = "kschedctl.io/v1alpha1"
KIND = "Snapshot"

RawDict = dict[str, Any]


# --- the model -------------------------------------------------------------------------------


@dataclass
class SnapshotSource:
    """The cluster it was read from: a hash of the API server URL (not the URL), its version."""

    server_hash: str = ""
    version: str = ""


@dataclass
class Omission:
    """Something the snapshot leaves out, how many objects if counted, and why."""

    what: str = field(default="", metadata={"required": True})
    reason: str = ""
    count: int | None = None


@dataclass
class SnapshotMetadata:
    """When and how the snapshot was taken, and what it leaves out."""

    created: str = ""
    kschedctl_version: str = ""
    source: SnapshotSource = field(default_factory=SnapshotSource)
    anonymized: bool = False
    omitted: list[Omission] = field(default_factory=list)


@dataclass
class SnapshotNode:
    """A node as the scheduler sees it (``status.capacity``/``allocatable``, ``spec``)."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    labels: dict[str, str] = field(default_factory=dict)
    capacity: dict[str, str] = field(default_factory=dict)
    allocatable: dict[str, str] = field(default_factory=dict)
    taints: list[RawDict] = field(default_factory=list)
    unschedulable: bool = False
    images: list[RawDict] = field(default_factory=list)  # status.images: names, sizeBytes


@dataclass
class SnapshotContainer:
    """A container's scheduling part: resources, host ports, image (ImageLocality)."""

    name: str = ""
    image: str = ""
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    ports: list[RawDict] = field(default_factory=list)  # those with a hostPort only
    restart_policy: str = ""  # "Always" on an init container: a sidecar


@dataclass
class SnapshotPod:
    """A pod reduced to what scheduling reads; ``nodeName`` empty for a pending pod."""

    namespace: str = field(default="", metadata={"required": True, "name": "label"})
    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    node_name: str = ""
    phase: str = ""
    scheduler_name: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str = ""
    owner_kind: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: RawDict | None = None
    tolerations: list[RawDict] = field(default_factory=list)
    topology_spread_constraints: list[RawDict] = field(default_factory=list)
    scheduling_gates: list[str] = field(default_factory=list)
    overhead: dict[str, str] = field(default_factory=dict)
    resources: RawDict | None = None  # pod-level resources (PodLevelResources)
    containers: list[SnapshotContainer] = field(default_factory=list)
    init_containers: list[SnapshotContainer] = field(default_factory=list)
    persistent_volume_claims: list[str] = field(default_factory=list)
    nominated_node_name: str = ""
    # DRA: spec.resourceClaims, and status.resourceClaimStatuses (claims made from templates)
    resource_claims: list[RawDict] = field(default_factory=list)
    resource_claim_statuses: list[RawDict] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class SnapshotNamespace:
    """A namespace's labels: what ``namespaceSelector`` in pod affinity terms matches."""

    name: str = field(default="", metadata={"required": True, "name": "label"})
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class PodDisruptionBudget:
    """A PDB as preemption reads it (``selector``, the budget, ``status.disruptionsAllowed``)."""

    namespace: str = field(default="", metadata={"required": True, "name": "label"})
    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    selector: RawDict | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disruptions_allowed: int | None = None


@dataclass
class DeviceClass:
    """A DeviceClass as DRA allocation reads it: CEL selectors, the extended resource name."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    selectors: list[RawDict] = field(default_factory=list)
    extended_resource_name: str = ""


@dataclass
class ResourceSlice:
    """A ResourceSlice: its pool, the nodes that see it, its devices as the API spells them."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    driver: str = field(default="", metadata={"required": True})
    pool: RawDict = field(default_factory=dict)
    node_name: str = ""
    all_nodes: bool = False
    node_selector: RawDict | None = None
    per_device_node_selection: bool = False
    shared_counters: list[RawDict] = field(default_factory=list)
    devices: list[RawDict] = field(default_factory=list)


@dataclass
class ResourceClaim:
    """A ResourceClaim: its device requests and constraints, and its allocation if any."""

    namespace: str = field(default="", metadata={"required": True, "name": "label"})
    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    requests: list[RawDict] = field(default_factory=list)
    constraints: list[RawDict] = field(default_factory=list)
    allocation: RawDict | None = None
    deleting: bool = False


@dataclass
class ResourceClaimTemplate:
    """A ResourceClaimTemplate: the claim kube-controller-manager makes for each pod using it."""

    namespace: str = field(default="", metadata={"required": True, "name": "label"})
    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    requests: list[RawDict] = field(default_factory=list)
    constraints: list[RawDict] = field(default_factory=list)


@dataclass
class PersistentVolumeClaim:
    """A PVC as VolumeBinding reads it (the beta class annotation folded into the class name;
    ``storageClassName`` absent: none set, "" : no class)."""

    namespace: str = field(default="", metadata={"required": True, "name": "label"})
    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    storage_class_name: str | None = None
    volume_name: str = ""
    access_modes: list[str] = field(default_factory=list)
    volume_mode: str = ""
    requests: dict[str, str] = field(default_factory=dict)
    selector: RawDict | None = None
    volume_attributes_class_name: str = ""
    annotations: dict[str, str] = field(default_factory=dict)  # the binding's own only
    phase: str = ""
    deleting: bool = False


@dataclass
class PersistentVolume:
    """A PV: class, capacity, node affinity, the claim it is bound to, and its source with the
    fields that identify the volume only (no secret references, no volume attributes)."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    labels: dict[str, str] = field(default_factory=dict)  # VolumeZone reads the zone labels
    storage_class_name: str = ""
    capacity: dict[str, str] = field(default_factory=dict)
    access_modes: list[str] = field(default_factory=list)
    volume_mode: str = ""
    node_affinity: RawDict | None = None
    claim_ref: dict[str, str] = field(default_factory=dict)  # namespace and name
    source: RawDict = field(default_factory=dict)  # {"csi": {"driver": …, "volumeHandle": …}}
    phase: str = ""


@dataclass
class StorageClass:
    """A StorageClass: provisioner, binding mode, allowed topologies (no parameters)."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    provisioner: str = ""
    volume_binding_mode: str = ""
    allowed_topologies: list[RawDict] = field(default_factory=list)


@dataclass
class CSIDriver:
    """A CSIDriver: whether it publishes storage capacity, whether it attaches."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    storage_capacity: bool = False
    attach_required: bool | None = None


@dataclass
class CSINode:
    """A CSINode (named after its node): each driver's attach limit and topology keys."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    drivers: list[RawDict] = field(default_factory=list)  # name, allocatable, topologyKeys


@dataclass
class CSIStorageCapacity:
    """A CSIStorageCapacity: a class's free space on the nodes its topology selects."""

    namespace: str = field(default="", metadata={"required": True, "name": "label"})
    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    storage_class_name: str = ""
    capacity: str = ""
    maximum_volume_size: str = ""
    node_topology: RawDict | None = None


@dataclass
class PriorityClass:
    """A PriorityClass: ``value``, ``globalDefault``, ``preemptionPolicy``."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    value: int = 0
    global_default: bool = False
    preemption_policy: str = ""


@dataclass
class ClusterSnapshot:
    """Everything a snapshot file holds (``spec`` of the document)."""

    metadata: SnapshotMetadata = field(default_factory=SnapshotMetadata, metadata={"top": True})
    nodes: list[SnapshotNode] = field(default_factory=list)
    pods: list[SnapshotPod] = field(default_factory=list)
    pending_pods: list[SnapshotPod] = field(default_factory=list)
    namespaces: list[SnapshotNamespace] = field(default_factory=list)
    pod_disruption_budgets: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    # DRA objects; None: not taken (DynamicResources is then "not evaluated")
    device_classes: list[DeviceClass] | None = None
    resource_slices: list[ResourceSlice] | None = None
    resource_claims: list[ResourceClaim] | None = None
    resource_claim_templates: list[ResourceClaimTemplate] = field(default_factory=list)
    # What the volume filters read; None: not taken (those filters are then "not evaluated")
    persistent_volume_claims: list[PersistentVolumeClaim] | None = None
    persistent_volumes: list[PersistentVolume] | None = None
    storage_classes: list[StorageClass] | None = None
    csi_drivers: list[CSIDriver] | None = None
    csi_nodes: list[CSINode] | None = None
    csi_storage_capacities: list[CSIStorageCapacity] | None = None

    def node_names(self) -> set[str]:
        return {n.name for n in self.nodes}


# --- field names and types (shared with the JSON Schema) --------------------------------------


# Cached: resolving annotations costs far more than reading a pod (20,000 pods per file).
@functools.cache
def yaml_fields(cls: type) -> tuple[tuple[dataclasses.Field[Any], str, Any], ...]:
    """(field, YAML key, type) of a model dataclass, in file order."""
    hints = typing.get_type_hints(cls)
    return tuple((f, camel(f.name), hints[f.name]) for f in dataclasses.fields(cls))


def is_model(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


@functools.cache
def union_members(tp: Any) -> tuple[tuple[Any, ...], bool]:
    """The non-None members of a union type, and whether None is one."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        return tuple(a for a in args if a is not type(None)), type(None) in args
    return (tp,), False
