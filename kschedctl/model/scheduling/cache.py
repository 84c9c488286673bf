"""The scheduler's view of the cluster: nodes, pods and PodDisruptionBudgets from the watches,
plus its own decisions not yet confirmed (assumed pods, nominations).

Pure: watch events go in as plain dicts, answers come out (which pods to queue, whether a
change could help unschedulable pods). The caller serialises access (one lock).

Assumed pods are counted on their node from the moment of the decision until the watch shows
the pod bound (then the API's copy replaces the assumed one) or the binding fails
(:meth:`SchedulerCache.forget`). Updates of the pending copy that arrive meanwhile (our own
status patch, say) must not erase the assumption, or the next decision could double-book.

Objects are slimmed on the way in (:mod:`.slim`), which keeps 50,000 cached pods well inside
the memory budget.

PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSIDrivers, CSIStorageCapacities
and CSINodes (``VOLUME_KINDS``) reach the
snapshot once each kind's first list arrived; until then pods with claims are "not evaluated".
A PersistentVolume chosen for a WaitForFirstConsumer claim is assumed bound to it (like
kube-scheduler's assume cache) until the API's copy moves past the version we started from,
so two pods never get the same volume.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.model.filters import NodeInfoSnapshot, pod_key
from kschedctl.model.filters.drabind import ClaimWrite
from kschedctl.model.filters.snapshot import WORKLOAD_KINDS, volume_key
from kschedctl.model.filters.volumebinding import bind_volume_to_claim
from kschedctl.model.kubetypes import Node, Pod, PodStatus

from .dracache import DraCache
from .queue import pod_uid
from .slim import slim_node, slim_pdb, slim_pod, slim_volume, slim_workload

__all__ = [
    "VOLUME_KINDS",
    "CSI_RESOURCES",
    "SchedulerCache",
    "PodChanges",
    "WORKLOAD_RESOURCES",
    "is_pending_for",
    "relevant_pod_change",
]

# Watched resource -> kind, for the volume objects the volume filters read.
VOLUME_KINDS = {
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "persistentvolumes": "PersistentVolume",
    "storageclasses": "StorageClass",
    # VolumeBinding's storage capacity check of claims to provision
    "csidrivers": "CSIDriver",
    "csistoragecapacities": "CSIStorageCapacity",
    # whether any node declares a CSI attach limit (NodeVolumeLimits is not modelled)
    "csinodes": "CSINode",
}
# Read only for some pods: a scheduler whose older ClusterRole cannot list them is told so
# (an UNLISTED event), is Ready without them, and refuses the pods that need them, saying
# why ("not evaluated"), until the role grants them.
CSI_RESOURCES = ("csidrivers", "csistoragecapacities", "csinodes")
# Watched resource -> kind, for the system-default topology spreading's selector.
WORKLOAD_RESOURCES = dict(
    zip(("services", "replicationcontrollers", "replicasets", "statefulsets"), WORKLOAD_KINDS,
        strict=True)
)  # fmt: skip


def is_pending_for(pod: Mapping[str, Any], scheduler_name: str) -> bool:
    """A pod this scheduler should place: its name, no node, not terminal or deleting, and
    no scheduling gates left."""
    spec = pod.get("spec") or {}
    if spec.get("schedulerName") != scheduler_name or spec.get("nodeName"):
        return False
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    return not spec.get("schedulingGates")


def relevant_pod_change(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Could this update of a pending pod change where it fits (not just its status)?"""
    if old is None:
        return True
    o, n = old.get("metadata") or {}, new.get("metadata") or {}
    return (
        o.get("labels") != n.get("labels")
        or o.get("annotations") != n.get("annotations")
        or old.get("spec") != new.get("spec")
    )


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _node_shape(node: Mapping[str, Any] | None) -> tuple[Any, ...] | None:
    if node is None:
        return None
    md, spec = node.get("metadata") or {}, node.get("spec") or {}
    return (
        md.get("labels"),
        md.get("annotations"),  # kept only for plugins, which may read them
        spec.get("taints"),
        bool(spec.get("unschedulable")),
        (node.get("status") or {}).get("allocatable"),
        (node.get("status") or {}).get("declaredFeatures"),  # NodeDeclaredFeatures
    )


def _node_scoring(node: Mapping[str, Any] | None) -> Any:
    """What only scoring reads: a change is applied but helps no unschedulable pod."""
    return None if node is None else (node.get("status") or {}).get("images")


def _namespace_name(namespace: Mapping[str, Any]) -> str:
    return str((namespace.get("metadata") or {}).get("name") or "")


def _labels(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


@dataclass
class PodChanges:
    """What a pod event means for the queue."""

    queue: list[Pod] = field(default_factory=list)  # (newer) pending pods
    updated: list[tuple[Pod, bool]] = field(default_factory=list)  # (pod, relevant)
    dequeue: list[str] = field(default_factory=list)  # uids no longer pending for us
    helps: bool = False  # a bound pod went away: unschedulable pods may fit now


class SchedulerCache:
    def __init__(self, scheduler_name: str, *, annotations: bool = False) -> None:
        self.name = scheduler_name
        self.annotations = annotations  # keep every annotation: plugins may read them
        self.snapshot = NodeInfoSnapshot()
        self.nodes: dict[str, Node] = {}
        self.pending: dict[str, Pod] = {}  # uid -> our pending pod
        self.bound: set[str] = set()  # uids of pods the snapshot counts on a node
        self.assumed: dict[str, tuple[Pod, str]] = {}  # uid -> (pod, node)
        self.pdbs: dict[str, Mapping[str, Any]] = {}  # namespace/name -> slimmed budget
        self.nodes_synced = False
        self.pods_synced = False
        # kind -> name key -> object; a kind is absent until its first list.
        self.volumes: dict[str, dict[Any, Mapping[str, Any]]] = {}
        # kinds the scheduler may not list (CSI_RESOURCES with an older role): unknown
        self.volumes_unlisted: set[str] = set()
        # PV name -> (the API's copy when we assumed it, our assumed copy)
        self.assumed_pvs: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any]]] = {}
        self.workloads: dict[str, dict[str, Mapping[str, Any]]] = {k: {} for k in WORKLOAD_KINDS}
        self.workloads_synced: set[str] = set()
        self.pdbs_synced = False
        # name -> labels: the namespaceSelector of pod (anti-)affinity terms selects by them
        self.namespaces: dict[str, Mapping[str, str]] = {}
        self.namespaces_synced = False
        self.dra = DraCache()  # DeviceClasses, ResourceSlices, ResourceClaims (+ assumed)

    # -- nodes ---------------------------------------------------------------------------

    def replace_nodes(self, nodes: Iterable[Mapping[str, Any]]) -> bool:
        """A (re)list. Returns whether anything changed that could help pending pods."""
        fresh = {
            n["metadata"]["name"]: n
            for n in (slim_node(x, annotations=self.annotations) for x in nodes)
        }
        helps = False
        for name in list(self.nodes):
            if name not in fresh:
                self.snapshot.remove_node(name)
                del self.nodes[name]
        for name, node in fresh.items():
            helps = helps or _node_shape(self.nodes.get(name)) != _node_shape(node)
            self.nodes[name] = node
            self.snapshot.upsert_node(node)
        self.nodes_synced = True
        return helps

    def node_event(self, kind: str, node: Mapping[str, Any]) -> bool:
        """ADDED/MODIFIED/DELETED. True when it could help: a node appeared, or its labels,
        taints, cordon, allocatable or declared features changed (heartbeats do not count)."""
        node = slim_node(node, annotations=self.annotations)
        name = node["metadata"]["name"]
        if kind == "DELETED":
            self.nodes.pop(name, None)
            self.snapshot.remove_node(name)
            return False
        old = self.nodes.get(name)
        self.nodes[name] = node
        if _node_shape(old) == _node_shape(node):
            if _node_scoring(old) != _node_scoring(node):
                self.snapshot.upsert_node(node)
            return False
        self.snapshot.upsert_node(node)
        return True

    # -- services and controllers (the default spreading's selector) ----------------------

    def replace_workloads(self, resource: str, objs: Iterable[Mapping[str, Any]]) -> None:
        kind = WORKLOAD_RESOURCES[resource]
        for old in self.workloads[kind].values():
            self.snapshot.remove_workload(kind, old)
        self.workloads[kind] = {}
        for obj in objs:
            self.workload_event(resource, "ADDED", obj)
        self.workloads_synced.add(resource)

    def workload_event(self, resource: str, kind_of_event: str, obj: Mapping[str, Any]) -> None:
        kind = WORKLOAD_RESOURCES[resource]
        obj = slim_workload(obj)
        md = obj["metadata"]
        key = f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"
        if kind_of_event == "DELETED":
            self.workloads[kind].pop(key, None)
            self.snapshot.remove_workload(kind, obj)
        else:
            self.workloads[kind][key] = obj
            self.snapshot.upsert_workload(kind, obj)

    # -- namespaces (the namespaceSelector of pod affinity terms) ------------------------

    def replace_namespaces(self, namespaces: Iterable[Mapping[str, Any]]) -> bool:
        """A (re)list. True when a label changed: an affinity term may select differently."""
        fresh: dict[str, Mapping[str, str]] = {
            _namespace_name(ns): _labels(ns) for ns in namespaces
        }
        helps = fresh != self.namespaces
        for name in set(self.namespaces) - set(fresh):
            self.snapshot.remove_namespace(name)
        for name, labels in fresh.items():
            self.snapshot.set_namespace(name, labels)
        self.namespaces = fresh
        self.namespaces_synced = True
        return helps

    def namespace_event(self, kind: str, namespace: Mapping[str, Any]) -> bool:
        name = _namespace_name(namespace)
        if kind == "DELETED":
            self.namespaces.pop(name, None)
            self.snapshot.remove_namespace(name)
            return False
        labels = _labels(namespace)
        helps = self.namespaces.get(name) != labels
        self.namespaces[name] = labels
        self.snapshot.set_namespace(name, labels)
        return helps

    # -- pods ----------------------------------------------------------------------------

    def replace_pods(self, pods: Iterable[Mapping[str, Any]]) -> PodChanges:
        """A (re)list of every non-terminal pod: rebuild the snapshot, keeping those of our
        assumptions whose pods are still pending (their bindings are in flight)."""
        changes = PodChanges(helps=True)
        listed = [slim_pod(p, annotations=self.annotations) for p in pods]
        self.snapshot = NodeInfoSnapshot(
            self.nodes.values(),
            namespaces=self.namespaces if self.namespaces_synced else None,
            workloads={k: list(v.values()) for k, v in self.workloads.items()},
            pod_disruption_budgets=self.pdbs.values(),
        )
        self._attach_volumes()
        self._attach_dra()
        self.bound.clear()
        assumed, self.assumed = self.assumed, {}
        seen = set()
        for pod in listed:
            uid = pod_uid(pod)
            seen.add(uid)
            if uid in assumed and not (pod.get("spec") or {}).get("nodeName"):
                self.assume(*assumed[uid])
            self._apply(pod, changes)
        # Pods gone during the gap: no DELETED event will ever come for them.
        for uid in list(self.pending):
            if uid not in seen:
                del self.pending[uid]
                changes.dequeue.append(uid)
        self.pods_synced = True
        return changes

    def pod_event(self, kind: str, pod: Mapping[str, Any]) -> PodChanges:
        changes = PodChanges()
        pod = slim_pod(pod, annotations=self.annotations)
        uid = pod_uid(pod)
        if kind == "DELETED":
            if uid in self.pending:
                del self.pending[uid]
                changes.dequeue.append(uid)
            self.assumed.pop(uid, None)
            changes.helps = uid in self.bound
            self.bound.discard(uid)
            self.snapshot.remove_pod(uid)
            return changes
        self._apply(pod, changes)
        return changes

    def _apply(self, pod: Pod, changes: PodChanges) -> None:
        uid = pod_uid(pod)
        spec = pod.get("spec") or {}
        if spec.get("nodeName"):
            self.assumed.pop(uid, None)  # confirmed: the API's copy replaces ours
            if uid in self.pending:
                del self.pending[uid]
                changes.dequeue.append(uid)
            self.snapshot.upsert_pod(pod)
            self.bound.add(uid)
            return
        if uid not in self.assumed:
            self.snapshot.upsert_pod(pod)  # nominated pods of other schedulers count
        if is_pending_for(pod, self.name):
            old = self.pending.get(uid)
            self.pending[uid] = pod
            if uid in self.assumed:
                return  # decided, binding in flight: queueing it again could bind it twice
            if old is None:
                changes.queue.append(pod)
            else:
                changes.updated.append((pod, relevant_pod_change(old, pod)))
        elif uid in self.pending:
            del self.pending[uid]
            changes.dequeue.append(uid)

    # -- volumes ---------------------------------------------------------------------------

    def _attach_volumes(self) -> None:
        """Give the snapshot the volume tables (the same dicts, kept current by the watches)."""
        snap = self.snapshot
        snap.pvcs = self.volumes.get("PersistentVolumeClaim")
        snap.pvs = self.volumes.get("PersistentVolume")
        snap.storage_classes = self.volumes.get("StorageClass")
        snap.csi_drivers = self.volumes.get("CSIDriver")
        snap.csi_capacities = self.volumes.get("CSIStorageCapacity")
        snap.csi_nodes = self.volumes.get("CSINode")

    @staticmethod
    def _volume_key(kind: str, obj: Mapping[str, Any]) -> Any:
        return volume_key(kind, obj)

    def replace_volumes(self, kind: str, objects: Iterable[Mapping[str, Any]]) -> bool:
        """A (re)list of one volume kind. Always "could help": pods waiting for a claim or a
        volume are retried."""
        table: dict[Any, Mapping[str, Any]] = {}
        for obj in map(slim_volume, objects):
            table[self._volume_key(kind, obj)] = obj
        self.volumes[kind] = table
        self.volumes_unlisted.discard(kind)
        if kind == "PersistentVolume":
            for name in list(self.assumed_pvs):
                self._reconcile_pv(name, table.get(name))
        self._attach_volumes()
        return True

    def volumes_synced(self) -> bool:
        """Every volume kind listed once, or known to be unlisted (kube-scheduler too waits
        for its informers)."""
        return all(k in self.volumes or k in self.volumes_unlisted for k in VOLUME_KINDS.values())

    def volume_event(self, kind: str, event: str, obj: Mapping[str, Any]) -> bool:
        """ADDED/MODIFIED/DELETED of a claim, volume or class (ignored before the kind's first
        list). True: pods waiting for volumes may fit now."""
        table = self.volumes.get(kind)
        if table is None:
            return False
        obj = slim_volume(obj)
        key = self._volume_key(kind, obj)
        if event == "DELETED":
            table.pop(key, None)
            if kind == "PersistentVolume":
                self.assumed_pvs.pop(key, None)
            return True
        table[key] = obj
        if kind == "PersistentVolume" and key in self.assumed_pvs:
            self._reconcile_pv(key, obj)
        return True

    def _reconcile_pv(self, name: str, api: Mapping[str, Any] | None) -> None:
        """Keep our assumed copy while the API still shows the version we assumed from."""
        base, assumed = self.assumed_pvs[name]
        table = self.volumes.get("PersistentVolume")
        if table is None:
            return
        if api is not None and base is not None and _rv(api) == _rv(base):
            table[name] = assumed
        else:
            del self.assumed_pvs[name]  # the API moved on (our update, or someone else's)

    def assume_volumes(
        self, bindings: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]
    ) -> None:
        """Count each chosen PV as bound to its claim (``GetBindVolumeToClaim``)."""
        table = self.volumes.get("PersistentVolume")
        if table is None:
            return
        for pvc, pv in bindings:
            name = (pv.get("metadata") or {}).get("name") or ""
            base = self.assumed_pvs[name][0] if name in self.assumed_pvs else table.get(name)
            self.assumed_pvs[name] = (base, bind_volume_to_claim(pv, pvc))
            table[name] = self.assumed_pvs[name][1]

    def forget_volumes(
        self, bindings: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]
    ) -> None:
        """Undo :meth:`assume_volumes` for volumes whose API copy did not move on."""
        table = self.volumes.get("PersistentVolume")
        for _pvc, pv in bindings:
            name = (pv.get("metadata") or {}).get("name") or ""
            entry = self.assumed_pvs.pop(name, None)
            if entry is not None and table is not None and entry[0] is not None:
                table[name] = entry[0]

    def volume(self, kind: str, key: Any) -> Mapping[str, Any] | None:
        table = self.volumes.get(kind)
        return None if table is None else table.get(key)

    # -- Dynamic Resource Allocation -----------------------------------------------------

    def _attach_dra(self) -> None:
        self.snapshot.set_dra(self.dra.device_classes(), self.dra.world())

    def replace_dra(self, kind: str, objects: Iterable[Mapping[str, Any]]) -> bool:
        helps = self.dra.replace(kind, objects)
        self._attach_dra()
        return helps

    def dra_event(self, kind: str, event: str, obj: Mapping[str, Any]) -> bool:
        helps = self.dra.event(kind, event, obj)
        if helps:
            self._attach_dra()
        return helps

    def assume_claims(self, writes: Iterable[ClaimWrite]) -> None:
        self.dra.assume(writes)
        self._attach_dra()

    def forget_claims(self, writes: Iterable[ClaimWrite]) -> None:
        self.dra.forget(writes)
        self._attach_dra()

    # -- PodDisruptionBudgets (read by preemption only: no pod waits for one) -------------

    def replace_pdbs(self, pdbs: Iterable[Mapping[str, Any]]) -> None:
        fresh = [slim_pdb(b) for b in pdbs]
        self.pdbs = {pod_key(b): b for b in fresh}
        self.snapshot.replace_pdbs(fresh)
        self.pdbs_synced = True

    def pdb_event(self, kind: str, pdb: Mapping[str, Any]) -> None:
        slim = slim_pdb(pdb)
        if kind == "DELETED":
            self.pdbs.pop(pod_key(slim), None)
            self.snapshot.remove_pdb(slim)
        else:
            self.pdbs[pod_key(slim)] = slim
            self.snapshot.upsert_pdb(slim)

    # -- our decisions -------------------------------------------------------------------

    def nominate(self, pod: Pod, node: str) -> None:
        """Count ``pod`` as nominated to ``node`` (or no longer nominated: "") from now on,
        before the API echoes the status patch (kube-scheduler's AddNominatedPod), so the
        next decision does not give away the room preemption makes."""
        uid = pod_uid(pod)
        current = self.pending.get(uid)
        if current is None:
            return
        status: PodStatus = {**(current.get("status") or {})}
        if node:
            status["nominatedNodeName"] = node
        else:
            status.pop("nominatedNodeName", None)
        updated: Pod = {**current, "status": status}
        self.pending[uid] = updated
        if uid not in self.assumed:
            self.snapshot.upsert_pod(updated)

    def assume(self, pod: Pod, node: str) -> None:
        uid = pod_uid(pod)
        self.assumed[uid] = (pod, node)
        self.snapshot.assume(pod, node)

    def forget(self, uid: str) -> None:
        """The binding failed or the pod vanished: stop counting it on the node."""
        entry = self.assumed.pop(uid, None)
        if entry is not None and uid not in self.bound:
            self.snapshot.remove_pod(uid)

    def is_current(self, pod: Pod) -> Pod | None:
        """The latest version of a queued pod if it still waits for us, else None."""
        return self.pending.get(pod_uid(pod))

    def counts(self) -> dict[str, int]:
        return {
            **{
                r: len(self.volumes[k])
                for r, k in sorted(VOLUME_KINDS.items())
                if k in self.volumes
            },
            **self.dra.counts(),
            "namespaces": len(self.namespaces),
            "nodes": len(self.nodes),
            "pdbs": len(self.pdbs),
            "pods": len(self.bound),
            "pending": len(self.pending),
            "assumed": len(self.assumed),
        }
