"""API objects (plain dicts) reduced to the snapshot's forms, and what was left out.

Pure. Keeps what kube-scheduler's plugins read and nothing else: no uid, no annotations, no
env, commands or probes, no status but the phase and ``nominatedNodeName``. A :class:`Reducer`
takes the objects page by page (the pods of a large cluster never sit in memory as API
dicts all at once) and counts what it drops, for the snapshot's ``metadata.omitted``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.clustersnapshot.model import (
    ClusterSnapshot,
    DeviceClass,
    Omission,
    PodDisruptionBudget,
    PriorityClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    SnapshotContainer,
    SnapshotNamespace,
    SnapshotNode,
    SnapshotPod,
)
from kschedctl.clustersnapshot.storage import REDUCERS, string_map

__all__ = [
    "Reducer",
    "reduce_namespace",
    "reduce_node",
    "reduce_pdb",
    "reduce_pod",
    "reduce_priority_class",
]

_TERMINAL = ("Succeeded", "Failed")
_TAINT_KEYS = ("key", "value", "effect")  # timeAdded only matters to the taint manager
_PORT_KEYS = ("containerPort", "hostPort", "protocol", "hostIP")


def _dicts(raw: Any) -> list[dict[str, Any]]:
    return [dict(x) for x in raw if isinstance(x, Mapping)] if isinstance(raw, list) else []


def reduce_node(node: Mapping[str, Any], *, images: bool = False) -> SnapshotNode:
    md, spec, status = (node.get(k) or {} for k in ("metadata", "spec", "status"))
    taints = [
        {k: t[k] for k in _TAINT_KEYS if t.get(k) not in (None, "")}
        for t in _dicts(spec.get("taints"))
    ]
    kept_images = []
    if images:
        for image in _dicts(status.get("images")):
            entry: dict[str, Any] = {"names": [str(n) for n in image.get("names") or []]}
            if isinstance(image.get("sizeBytes"), int):
                entry["sizeBytes"] = image["sizeBytes"]
            kept_images.append(entry)
    return SnapshotNode(
        name=str(md.get("name") or ""),
        labels=string_map(md.get("labels")),
        capacity=string_map(status.get("capacity")),
        allocatable=string_map(status.get("allocatable")),
        taints=taints,
        unschedulable=bool(spec.get("unschedulable")),
        images=kept_images,
    )


def _container(raw: Mapping[str, Any]) -> SnapshotContainer:
    resources = raw.get("resources") or {}
    ports = [
        {k: p[k] for k in _PORT_KEYS if p.get(k) not in (None, "")}
        for p in _dicts(raw.get("ports"))
        if p.get("hostPort")  # only host ports constrain placement (NodePorts)
    ]
    return SnapshotContainer(
        name=str(raw.get("name") or ""),
        image=str(raw.get("image") or ""),
        requests=string_map(resources.get("requests")),
        limits=string_map(resources.get("limits")),
        ports=ports,
        restart_policy=str(raw.get("restartPolicy") or ""),
    )


def _owner_kind(md: Mapping[str, Any]) -> str:
    owners = _dicts(md.get("ownerReferences"))
    controller = [o for o in owners if o.get("controller")]
    chosen = (controller or owners)[:1]
    return str(chosen[0].get("kind") or "") if chosen else ""


def _claims(pod_name: str, volumes: Any) -> list[str]:
    """The PVCs a pod uses: named ones, and those of generic ephemeral volumes (named
    ``<pod>-<volume>``, as the ephemeral volume controller names them)."""
    out = []
    for v in _dicts(volumes):
        pvc = v.get("persistentVolumeClaim")
        if isinstance(pvc, Mapping) and pvc.get("claimName"):
            out.append(str(pvc["claimName"]))
        elif isinstance(v.get("ephemeral"), Mapping):
            out.append(f"{pod_name}-{v.get('name') or ''}")
    return out


def reduce_pod(pod: Mapping[str, Any]) -> SnapshotPod:
    md, spec, status = (pod.get(k) or {} for k in ("metadata", "spec", "status"))
    name = str(md.get("name") or "")
    priority = spec.get("priority")
    affinity = spec.get("affinity")
    resources = spec.get("resources")
    return SnapshotPod(
        namespace=str(md.get("namespace") or "default"),
        name=name,
        node_name=str(spec.get("nodeName") or ""),
        phase=str(status.get("phase") or ""),
        scheduler_name=str(spec.get("schedulerName") or ""),
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
        priority_class_name=str(spec.get("priorityClassName") or ""),
        preemption_policy=str(spec.get("preemptionPolicy") or ""),
        owner_kind=_owner_kind(md),
        labels=string_map(md.get("labels")),
        node_selector=string_map(spec.get("nodeSelector")),
        affinity=dict(affinity) if isinstance(affinity, Mapping) and affinity else None,
        tolerations=_dicts(spec.get("tolerations")),
        topology_spread_constraints=_dicts(spec.get("topologySpreadConstraints")),
        scheduling_gates=[str(g.get("name") or "") for g in _dicts(spec.get("schedulingGates"))],
        overhead=string_map(spec.get("overhead")),
        resources=dict(resources) if isinstance(resources, Mapping) and resources else None,
        containers=[_container(c) for c in _dicts(spec.get("containers"))],
        init_containers=[_container(c) for c in _dicts(spec.get("initContainers"))],
        persistent_volume_claims=_claims(name, spec.get("volumes")),
        nominated_node_name=str(status.get("nominatedNodeName") or ""),
        resource_claims=_dicts(spec.get("resourceClaims")),
        resource_claim_statuses=_dicts(status.get("resourceClaimStatuses")),
    )


def reduce_device_class(dc: Mapping[str, Any]) -> DeviceClass:
    md, spec = (dc.get(k) or {} for k in ("metadata", "spec"))
    return DeviceClass(
        name=str(md.get("name") or ""),
        selectors=_dicts(spec.get("selectors")),
        extended_resource_name=str(spec.get("extendedResourceName") or ""),
    )


def reduce_resource_slice(rs: Mapping[str, Any]) -> ResourceSlice:
    md, spec = (rs.get(k) or {} for k in ("metadata", "spec"))
    selector = spec.get("nodeSelector")
    pool = spec.get("pool")
    return ResourceSlice(
        name=str(md.get("name") or ""),
        driver=str(spec.get("driver") or ""),
        pool=dict(pool) if isinstance(pool, Mapping) else {},
        node_name=str(spec.get("nodeName") or ""),
        all_nodes=spec.get("allNodes") is True,
        node_selector=dict(selector) if isinstance(selector, Mapping) else None,
        per_device_node_selection=spec.get("perDeviceNodeSelection") is True,
        shared_counters=_dicts(spec.get("sharedCounters")),
        devices=_dicts(spec.get("devices")),
    )


def _devices(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = spec.get("devices")
    return raw if isinstance(raw, Mapping) else {}


def reduce_resource_claim_template(t: Mapping[str, Any]) -> ResourceClaimTemplate:
    md, spec = (t.get(k) or {} for k in ("metadata", "spec"))
    inner = spec.get("spec") if isinstance(spec.get("spec"), Mapping) else {}
    devices = _devices(inner or {})
    return ResourceClaimTemplate(
        namespace=str(md.get("namespace") or "default"),
        name=str(md.get("name") or ""),
        requests=_dicts(devices.get("requests")),
        constraints=_dicts(devices.get("constraints")),
    )


def reduce_resource_claim(rc: Mapping[str, Any]) -> ResourceClaim:
    md, spec, status = (rc.get(k) or {} for k in ("metadata", "spec", "status"))
    devices = _devices(spec)
    allocation = status.get("allocation")
    return ResourceClaim(
        namespace=str(md.get("namespace") or "default"),
        name=str(md.get("name") or ""),
        requests=_dicts(devices.get("requests")),
        constraints=_dicts(devices.get("constraints")),
        allocation=dict(allocation) if isinstance(allocation, Mapping) and allocation else None,
        deleting=bool(md.get("deletionTimestamp")),
    )


def reduce_pdb(pdb: Mapping[str, Any]) -> PodDisruptionBudget:
    md, spec, status = (pdb.get(k) or {} for k in ("metadata", "spec", "status"))
    allowed = status.get("disruptionsAllowed")
    return PodDisruptionBudget(
        namespace=str(md.get("namespace") or "default"),
        name=str(md.get("name") or ""),
        selector=dict(spec["selector"]) if isinstance(spec.get("selector"), Mapping) else None,
        min_available=spec.get("minAvailable"),
        max_unavailable=spec.get("maxUnavailable"),
        disruptions_allowed=allowed if isinstance(allowed, int) else None,
    )


def reduce_priority_class(pc: Mapping[str, Any]) -> PriorityClass:
    value = pc.get("value")
    return PriorityClass(
        name=str((pc.get("metadata") or {}).get("name") or ""),
        value=value if isinstance(value, int) and not isinstance(value, bool) else 0,
        global_default=bool(pc.get("globalDefault")),
        preemption_policy=str(pc.get("preemptionPolicy") or ""),
    )


def reduce_namespace(ns: Mapping[str, Any]) -> SnapshotNamespace:
    md = ns.get("metadata") or {}
    return SnapshotNamespace(name=str(md.get("name") or ""), labels=string_map(md.get("labels")))


@dataclass
class Reducer:
    """Builds a :class:`ClusterSnapshot` from pages of API objects, counting what it drops.

    ``pending_namespace``: keep the pending pods of that namespace only (bound pods are all
    kept: they take room on their nodes whatever their namespace).
    """

    images: bool = False
    pending_namespace: str | None = None
    snapshot: ClusterSnapshot = field(default_factory=ClusterSnapshot)
    terminal: int = 0
    orphans: int = 0  # bound to a node that is not in the snapshot
    other_namespaces: int = 0
    gated: int = 0
    with_claims: int = 0  # pods using DRA resource claims
    with_volumes: int = 0
    daemonset_pods: int = 0

    def add_nodes(self, nodes: Iterable[Mapping[str, Any]]) -> None:
        self.snapshot.nodes.extend(reduce_node(n, images=self.images) for n in nodes)

    def add_pods(self, pods: Iterable[Mapping[str, Any]]) -> None:
        """Pods of any phase, in any order relative to the nodes (see :meth:`finish`)."""
        for raw in pods:
            if (raw.get("status") or {}).get("phase") in _TERMINAL:
                self.terminal += 1
                continue
            pod = reduce_pod(raw)
            if not pod.node_name and self.pending_namespace not in (None, pod.namespace):
                self.other_namespaces += 1
                continue
            if (raw.get("spec") or {}).get("resourceClaims"):
                self.with_claims += 1
            if pod.persistent_volume_claims:
                self.with_volumes += 1
            if pod.node_name:
                self.daemonset_pods += pod.owner_kind == "DaemonSet"
                self.snapshot.pods.append(pod)
            else:
                self.gated += bool(pod.scheduling_gates)
                self.snapshot.pending_pods.append(pod)

    def finish(self) -> ClusterSnapshot:
        """The snapshot, without the bound pods whose node is not in it (the node list and
        the pod list are two reads: a node may come or go between them), its omissions set."""
        nodes = self.snapshot.node_names()
        kept = [p for p in self.snapshot.pods if p.node_name in nodes]
        self.orphans = len(self.snapshot.pods) - len(kept)
        self.snapshot.pods = kept
        for pod in self.snapshot.pending_pods:  # a nomination for a node now gone means nothing
            if pod.nominated_node_name and pod.nominated_node_name not in nodes:
                pod.nominated_node_name = ""
        self.snapshot.metadata.omitted.extend(self.omissions())
        return self.snapshot

    def add_pdbs(self, pdbs: Iterable[Mapping[str, Any]]) -> None:
        self.snapshot.pod_disruption_budgets.extend(reduce_pdb(p) for p in pdbs)

    def add_priority_classes(self, pcs: Iterable[Mapping[str, Any]]) -> None:
        self.snapshot.priority_classes.extend(reduce_priority_class(p) for p in pcs)

    def add_namespaces(self, namespaces: Iterable[Mapping[str, Any]]) -> None:
        self.snapshot.namespaces.extend(reduce_namespace(n) for n in namespaces)

    def add_claim_templates(self, templates: Iterable[Mapping[str, Any]]) -> None:
        self.snapshot.resource_claim_templates.extend(
            reduce_resource_claim_template(t) for t in templates
        )

    def add_dra(
        self,
        classes: Iterable[Mapping[str, Any]],
        slices: Iterable[Mapping[str, Any]],
        claims: Iterable[Mapping[str, Any]],
    ) -> None:
        """The DynamicResources plugin's objects: all three, or none (not evaluated)."""
        self.snapshot.device_classes = [reduce_device_class(c) for c in classes]
        self.snapshot.resource_slices = [reduce_resource_slice(s) for s in slices]
        self.snapshot.resource_claims = [reduce_resource_claim(c) for c in claims]

    def add_storage(self, field_name: str, objects: Iterable[Mapping[str, Any]]) -> None:
        """One kind of storage object (``field_name``: a snapshot field of
        :data:`kschedctl.clustersnapshot.storage.STORAGE_KINDS`)."""
        setattr(self.snapshot, field_name, [REDUCERS[field_name](o) for o in objects])

    def omissions(self) -> list[Omission]:
        """What the snapshot leaves out or does not model, from what the reducer saw."""
        out = [
            Omission(
                "terminal pods (Succeeded, Failed)",
                "they hold no resources and are never scheduled again",
                self.terminal,
            ),
            Omission(
                "pod and node details the scheduler does not read",
                "uids, annotations, env, commands, probes, statuses other than the phase and "
                "nominatedNodeName, node conditions (a NotReady node carries a taint, kept)",
            ),
        ]
        if self.snapshot.persistent_volume_claims is not None:
            out.append(
                Omission(
                    "storage details the volume filters do not read",
                    "StorageClass parameters, mount options, a PersistentVolume's secret "
                    "references and volume attributes, CSINode driver node IDs",
                )
            )
        else:
            out.append(
                Omission(
                    "PersistentVolumeClaims",
                    "not read: the volume filters are not evaluated for the pods using claims "
                    "(count)",
                    self.with_volumes,
                )
            )
        if self.snapshot.resource_claims is None:
            out.append(
                Omission(
                    "ResourceClaims, ResourceSlices, DeviceClasses (DRA)",
                    "not read: dynamic resource allocation is not evaluated for the pods "
                    "referencing resource claims (count)",
                    self.with_claims,
                )
            )
        if not self.images:
            out.append(
                Omission(
                    "node images (status.images)",
                    "ImageLocality scores them; take them with --images",
                    len(self.snapshot.nodes),
                )
            )
        if self.orphans:
            out.append(
                Omission(
                    "pods bound to a node not in the snapshot",
                    "the node was deleted or added while the snapshot was taken",
                    self.orphans,
                )
            )
        if self.other_namespaces:
            out.append(
                Omission(
                    "pending pods of other namespaces",
                    "--namespace keeps the pending pods of one namespace only (bound pods of "
                    "every namespace are kept)",
                    self.other_namespaces,
                )
            )
        return out
