"""The scheduler's view of the cluster: nodes and pods from the watches, plus its own
decisions not yet confirmed (assumed pods).

Pure: watch events go in as plain dicts, answers come out (which pods to queue, whether a
change could help unschedulable pods). The caller serialises access (one lock).

Assumed pods are counted on their node from the moment of the decision until the watch shows
the pod bound (then the API's copy replaces the assumed one) or the binding fails
(:meth:`SchedulerCache.forget`). Updates of the pending copy that arrive meanwhile (our own
status patch, say) must not erase the assumption, or the next decision could double-book.

Objects are slimmed on the way in (:func:`slim_pod`, :func:`slim_node`): the filters read a
few dozen fields, and dropping managedFields, images, env and the rest keeps 50,000 cached
pods well inside the memory budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.filters import Snapshot

from .queue import pod_uid

__all__ = [
    "SchedulerCache",
    "PodChanges",
    "slim_pod",
    "slim_node",
    "is_pending_for",
    "relevant_pod_change",
]

# Per-pod fields the filters, scoring, fallback policy and the loop read.
_POD_SPEC = (
    "nodeName", "schedulerName", "priority", "preemptionPolicy", "nodeSelector", "affinity",
    "tolerations", "topologySpreadConstraints", "overhead", "resources", "hostNetwork",
    "hostUsers", "resourceClaims", "schedulingGates",
)  # fmt: skip
_CONTAINER = ("name", "resources", "restartPolicy", "restartPolicyRules")
_VOLUME_KINDS = (
    "persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore", "rbd",
    "iscsi", "azureDisk", "cinder", "vsphereVolume", "portworxVolume",
)  # fmt: skip
_CONDITIONS = ("PodScheduled", "DisruptionTarget", "PodResizePending")
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


def slim_pod(pod: Mapping[str, Any], *, annotations: bool = False) -> dict[str, Any]:
    """The parts of a pod the scheduler reads (the values are shared, not copied).

    ``annotations``: keep every annotation (but kubectl's last-applied copy), for plugins."""
    md = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    meta: dict[str, Any] = {
        k: md[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels",
                  "deletionTimestamp")
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
        {k: v[k] for k in ("name", *_VOLUME_KINDS) if k in v}
        for v in spec.get("volumes") or []
        if any(k in v for k in _VOLUME_KINDS)
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
    return {"metadata": meta, "spec": slim_spec, "status": slim_status}


def slim_node(node: Mapping[str, Any], *, annotations: bool = False) -> dict[str, Any]:
    """The parts of a node the scheduler reads; ``annotations``: with them, for plugins."""
    md = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    meta = {k: md[k] for k in ("name", "uid", "labels", "resourceVersion") if k in md}
    kept = _annotations(md, annotations)
    if kept:
        meta["annotations"] = kept
    return {
        "metadata": meta,
        "spec": {k: spec[k] for k in ("taints", "unschedulable") if k in spec},
        "status": {"allocatable": status.get("allocatable") or {}},
    }


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
    )


@dataclass
class PodChanges:
    """What a pod event means for the queue."""

    queue: list[Mapping[str, Any]] = field(default_factory=list)  # (newer) pending pods
    updated: list[tuple[Mapping[str, Any], bool]] = field(default_factory=list)  # (pod, relevant)
    dequeue: list[str] = field(default_factory=list)  # uids no longer pending for us
    helps: bool = False  # a bound pod went away: unschedulable pods may fit now


class SchedulerCache:
    def __init__(self, scheduler_name: str, *, annotations: bool = False) -> None:
        self.name = scheduler_name
        self.annotations = annotations  # keep every annotation: plugins may read them
        self.snapshot = Snapshot()
        self.nodes: dict[str, Mapping[str, Any]] = {}
        self.pending: dict[str, Mapping[str, Any]] = {}  # uid -> our pending pod
        self.bound: set[str] = set()  # uids of pods the snapshot counts on a node
        self.assumed: dict[str, tuple[Mapping[str, Any], str]] = {}  # uid -> (pod, node)
        self.nodes_synced = False
        self.pods_synced = False

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
        taints, cordon or allocatable changed (heartbeats do not count)."""
        node = slim_node(node, annotations=self.annotations)
        name = node["metadata"]["name"]
        if kind == "DELETED":
            self.nodes.pop(name, None)
            self.snapshot.remove_node(name)
            return False
        old = self.nodes.get(name)
        self.nodes[name] = node
        if _node_shape(old) == _node_shape(node):
            return False
        self.snapshot.upsert_node(node)
        return True

    # -- pods ----------------------------------------------------------------------------

    def replace_pods(self, pods: Iterable[Mapping[str, Any]]) -> PodChanges:
        """A (re)list of every non-terminal pod: rebuild the snapshot, keeping those of our
        assumptions whose pods are still pending (their bindings are in flight)."""
        changes = PodChanges(helps=True)
        listed = [slim_pod(p, annotations=self.annotations) for p in pods]
        self.snapshot = Snapshot(self.nodes.values())
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

    def _apply(self, pod: Mapping[str, Any], changes: PodChanges) -> None:
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

    # -- our decisions -------------------------------------------------------------------

    def assume(self, pod: Mapping[str, Any], node: str) -> None:
        uid = pod_uid(pod)
        self.assumed[uid] = (pod, node)
        self.snapshot.assume(pod, node)

    def forget(self, uid: str) -> None:
        """The binding failed or the pod vanished: stop counting it on the node."""
        entry = self.assumed.pop(uid, None)
        if entry is not None and uid not in self.bound:
            self.snapshot.remove_pod(uid)

    def is_current(self, pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The latest version of a queued pod if it still waits for us, else None."""
        return self.pending.get(pod_uid(pod))

    def counts(self) -> dict[str, int]:
        return {
            "nodes": len(self.nodes),
            "pods": len(self.bound),
            "pending": len(self.pending),
            "assumed": len(self.assumed),
        }
