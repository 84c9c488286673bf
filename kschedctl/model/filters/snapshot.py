"""``NodeInfoSnapshot``: the cluster the filters run against — nodes with the pods bound to them
(``nodeinfo.NodeInfo``), nominated pods, namespaces, volumes, workload selectors and
PodDisruptionBudgets — built once from plain API dicts, then updated incrementally from events
(``upsert_pod``, ``remove_pod``, ``upsert_node``, ``remove_node``, ``assume``, ``forget``).

Named after kube-scheduler's ``nodeInfoSnapshot`` (what its filters and scores read), though it
also does the cache's job: a scheduler updates it as its watches deliver (``SchedulerCache``),
``kschedctl why`` builds it once from a listing.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from kschedctl.model.kubetypes import Node, Pod, PodSpec, PodStatus

from .dra import DraWorld
from .drafeatures import FEATURES_1_36, DraFeatures
from .nodeinfo import AffinityIndex, NodeInfo, PodInfo, pod_identity, pod_key
from .resources import is_scalar_resource
from .selectors import EVERYTHING, Selector, SelectorError, label_selector

__all__ = ["WORKLOAD_KINDS", "NodeInfoSnapshot", "volume_key"]

_TERMINAL = ("Succeeded", "Failed")
# The kinds DefaultSelector reads (pkg/scheduler/framework/plugins/helper/spread.go).
WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
_OWNER_KINDS = {
    ("v1", "ReplicationController"): "ReplicationController",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
}
_node_generation = operator.attrgetter("generation")
# Volume kind -> the snapshot's table of it.
_VOLUME_TABLES = {
    "PersistentVolumeClaim": "pvcs",
    "PersistentVolume": "pvs",
    "StorageClass": "storage_classes",
    "CSIDriver": "csi_drivers",
    "CSIStorageCapacity": "csi_capacities",
    "CSINode": "csi_nodes",
}
_NAMESPACED_VOLUME_KINDS = ("PersistentVolumeClaim", "CSIStorageCapacity")
_COUNT_CACHE_SELECTORS = 64  # selectors whose per-node counts count_matching keeps


_ordinal = operator.attrgetter("ordinal")

# Entries of the change log kept before it is emptied (a new node_epoch): a long-running
# scheduler's log would grow forever.
_CHANGES_KEPT = 20_000


class NodeInfoSnapshot:
    """Nodes, their bound pods and namespace labels, indexed for fast filtering.

    ``pods`` may be every pod in the cluster: terminal pods (Succeeded/Failed) are ignored,
    bound pods are added to their node, pending pods with ``status.nominatedNodeName`` are kept
    as nominated pods (kube-scheduler filters as if they were on that node when their priority
    is at least the incoming pod's). ``namespaces`` maps a namespace name to its Namespace object
    or directly to its labels; it is only needed for ``namespaceSelector`` in pod affinity terms.
    ``device_classes`` (resource.k8s.io DeviceClass dicts) lets NodeResourcesFit leave extended
    resources backed by DRA to the DynamicResources plugin, as kube-scheduler 1.36 does;
    with ``resource_slices`` and ``resource_claims`` too the DynamicResources filter runs
    (``dra``: device allocation per node), without them it is reported as not evaluated.
    ``persistent_volume_claims`` and ``storage_classes`` (API dicts) enable the volume
    PreFilter checks (missing or unbound immediate claims); with ``persistent_volumes`` too,
    the per-node volume filters run (PV node affinity, matching PVs for WaitForFirstConsumer
    claims, zones); without them volume checks are reported as not evaluated.
    ``csi_drivers`` and ``csi_storage_capacities`` (storage.k8s.io dicts) enable VolumeBinding's
    storage capacity check of claims to provision; without them that check is not evaluated.
    ``csi_nodes`` tell whether any node declares a CSI attach limit (NodeVolumeLimits).
    ``set_volume_object`` / ``remove_volume_object`` keep them current (a scheduler's watches).
    ``workloads`` (kind -> API dicts of Service, ReplicationController, ReplicaSet,
    StatefulSet) give the selector of the system-default topology spreading
    (:meth:`default_spread_selector`); without them a pod gets none.
    ``pod_disruption_budgets`` (policy/v1 dicts) steer preemption's choice of victims and node.
    """

    def __init__(
        self,
        nodes: Iterable[Node] = (),
        pods: Iterable[Pod] = (),
        namespaces: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        device_classes: Iterable[Mapping[str, Any]] = (),
        resource_slices: Iterable[Mapping[str, Any]] | None = None,
        resource_claims: Iterable[Mapping[str, Any]] | None = None,
        persistent_volume_claims: Iterable[Mapping[str, Any]] | None = None,
        storage_classes: Iterable[Mapping[str, Any]] | None = None,
        persistent_volumes: Iterable[Mapping[str, Any]] | None = None,
        csi_drivers: Iterable[Mapping[str, Any]] | None = None,
        csi_storage_capacities: Iterable[Mapping[str, Any]] | None = None,
        csi_nodes: Iterable[Mapping[str, Any]] | None = None,
        workloads: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
        pod_disruption_budgets: Iterable[Mapping[str, Any]] = (),
        dra_features: DraFeatures = FEATURES_1_36,  # the judged kube-scheduler's DRA gates
    ) -> None:
        # PodDisruptionBudget dicts by namespace/name: preemption spends their
        # status.disruptionsAllowed when it picks victims.
        self._pdbs: dict[str, Mapping[str, Any]] = {}
        for b in pod_disruption_budgets:
            self.upsert_pdb(b)
        self._nodes: dict[str, NodeInfo] = {}
        # New whenever a node is set or removed, the DRA-backed resource names change or the
        # change log is emptied: while it stays, a node's answers change only when its name
        # comes in ``changes`` (its pods changed), so they can be kept (filters.nodememo).
        self.node_epoch = 0
        # The names of the nodes whose pods changed, in order (each NodeInfo appends its own).
        self.changes: list[str] = []
        self._affinity_index = AffinityIndex()
        self._ordinals = itertools.count()
        self._pods: dict[str, PodInfo] = {}
        self._unplaced: dict[str, list[PodInfo]] = {}  # bound to a node not (yet) known
        self._nominated: dict[str, PodInfo] = {}
        self.namespaces_known = namespaces is not None
        self._namespace_labels: dict[str, Mapping[str, str]] = {}
        for name, obj in (namespaces or {}).items():
            self._namespace_labels[name] = _namespace_labels(obj)
        device_classes = list(device_classes)
        self.dra_resources: frozenset[str] = frozenset(_dra_resource_names(device_classes))
        # The DynamicResources plugin's view: only with slices and claims listed too.
        self.dra: DraWorld | None = None
        if resource_slices is not None and resource_claims is not None:
            self.dra = DraWorld(device_classes, resource_slices, resource_claims, dra_features)
        self.pvcs: dict[tuple[str, str], Mapping[str, Any]] | None = None
        if persistent_volume_claims is not None:
            self.pvcs = {}
            for c in persistent_volume_claims:
                cmd = c.get("metadata") or {}
                self.pvcs[(cmd.get("namespace") or "default", cmd.get("name") or "")] = c
        self.storage_classes: dict[str, Mapping[str, Any]] | None = None
        if storage_classes is not None:
            self.storage_classes = {
                (sc.get("metadata") or {}).get("name") or "": sc for sc in storage_classes
            }
        self.pvs: dict[str, Mapping[str, Any]] | None = None
        if persistent_volumes is not None:
            self.pvs = {(v.get("metadata") or {}).get("name") or "": v for v in persistent_volumes}
        self.csi_drivers: dict[str, Mapping[str, Any]] | None = None
        self.csi_capacities: dict[tuple[str, str], Mapping[str, Any]] | None = None
        self.csi_nodes: dict[str, Mapping[str, Any]] | None = None
        for kind, objs in (
            ("CSIDriver", csi_drivers),
            ("CSIStorageCapacity", csi_storage_capacities),
            ("CSINode", csi_nodes),
        ):
            if objs is not None:
                self._volume_table(kind)
                for obj in objs:
                    self.set_volume_object(kind, obj)
        # (namespaces, selector, skip deleting) -> node -> (generation, count); see count_matching
        self._counts: dict[
            tuple[frozenset[str] | None, Selector, bool], dict[str, tuple[int, int]]
        ] = {}
        # (namespaces, selector, skip deleting, topology key, absent as, required keys) ->
        # (nodes fingerprint, value -> count); see domain_counts
        self._domain_counts: dict[
            tuple[frozenset[str] | None, Selector, bool, str, str | None, tuple[str, ...]],
            tuple[tuple[int, int], dict[str, int]],
        ] = {}
        # image name -> [size, names of the nodes that have it] (the cache's imageStates)
        self._images: dict[str, tuple[int, set[str]]] = {}
        # kind -> (namespace, name) -> selector dict, for default_spread_selector
        self._workloads: dict[str, dict[tuple[str, str], Any]] = {k: {} for k in WORKLOAD_KINDS}
        # namespace -> service name -> selector: a decision reads its own namespace's only
        self._services: dict[str, dict[str, Mapping[str, str] | None]] = {}
        for kind, objs in (workloads or {}).items():
            for obj in objs:
                self.upsert_workload(kind, obj)
        for n in nodes:
            self.upsert_node(n)
        for p in pods:
            self.upsert_pod(p)

    # --- reading -------------------------------------------------------------------------

    @property
    def nodes(self) -> list[NodeInfo]:
        return list(self._nodes.values())

    def node(self, name: str) -> NodeInfo:
        return self._nodes[name]

    def __contains__(self, node_name: object) -> bool:
        return node_name in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._nodes.values())

    def set_namespace(self, name: str, labels: Mapping[str, str]) -> None:
        """Add or relabel a namespace (a scheduler's namespace watch): from the first one on,
        the namespaces are known."""
        self._namespace_labels[name] = dict(labels)
        self.namespaces_known = True

    def remove_namespace(self, name: str) -> None:
        self._namespace_labels.pop(name, None)

    def nodes_with_anti_affinity_pods(self) -> list[NodeInfo]:
        """The nodes with a pod that has pod anti-affinity, in node order."""
        return sorted(self._affinity_index.anti.values(), key=_ordinal)

    def nodes_with_affinity_pods(self) -> list[NodeInfo]:
        """The nodes with a pod that has any pod (anti-)affinity, in node order."""
        return sorted(self._affinity_index.affinity.values(), key=_ordinal)

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        """Labels of a namespace, or None when it is unknown (Go: nil labels)."""
        return self._namespace_labels.get(namespace)

    def namespace_names(self, selector: Selector) -> set[str]:
        return {n for n, lbl in self._namespace_labels.items() if selector.matches(lbl)}

    def nominated_pods(self, scheduler_name: str | None = None) -> dict[str, list[PodInfo]]:
        """Pending pods with ``status.nominatedNodeName``, by node (optionally only those of
        one scheduler: a scheduler's nominator only knows the pods it schedules)."""
        out: dict[str, list[PodInfo]] = {}
        for p in self._nominated.values():
            if scheduler_name is None or p.scheduler_name == scheduler_name:
                out.setdefault(p.nominated_node, []).append(p)
        return out

    def has_nominated_pods(self) -> bool:
        return bool(self._nominated)

    def pod_info(self, pod: Pod) -> PodInfo | None:
        return self._pods.get(pod_identity(pod))

    def pod_counter(
        self, namespaces: frozenset[str] | None, selector: Selector, skip_deleting: bool
    ) -> Callable[[NodeInfo], int]:
        """A function counting, on a node, the pods in one of ``namespaces`` (None: any) whose
        labels ``selector`` matches, without those being deleted when ``skip_deleting``.

        Counts are remembered per node until a pod comes or goes there, so the replicas of a
        workload, scheduled one after the other, count each node once instead of once per
        decision (scoring would otherwise visit every pod of the cluster per decision)."""
        key = (namespaces, selector, skip_deleting)
        by_node = self._counts.pop(key, None)
        if by_node is None:
            if len(self._counts) >= _COUNT_CACHE_SELECTORS:
                del self._counts[next(iter(self._counts))]  # the least recently used
            by_node = {}
        self._counts[key] = by_node  # most recently used last

        def count(node: NodeInfo) -> int:
            cached = by_node.get(node.name)
            if cached is not None and cached[0] == node.generation:
                return cached[1]
            n = 0
            for p in node.pods:
                if (namespaces is None or p.namespace in namespaces) and not (
                    skip_deleting and p.deleting
                ):
                    if selector.matches(p.labels):
                        n += 1
            by_node[node.name] = (node.generation, n)
            return n

        return count

    def domain_counts(
        self,
        namespaces: frozenset[str] | None,
        selector: Selector,
        skip_deleting: bool,
        key: str,
        absent_as: str | None = None,
        required: tuple[str, ...] = (),
    ) -> Mapping[str, int]:
        """``pod_counter``'s counts summed per value of the node label ``key`` over every node
        (a node without ``key`` counts as ``absent_as``, or not at all when None; a node
        missing one of the ``required`` labels not at all). Read only, not to be changed.

        Scoring sums these over the whole cluster per decision (PodTopologySpread's zones,
        InterPodAffinity's own terms): the sums are remembered until any node changes. The
        fingerprint (number of nodes, highest generation) changes with every change, as a
        generation is new at each pod added or removed and each node set, and higher than
        every earlier one: to get back the highest, every node changed since must be gone,
        which leaves fewer nodes."""
        nodes = self._nodes.values()
        fingerprint = (len(nodes), max(map(_node_generation, nodes), default=-1))
        cache_key = (namespaces, selector, skip_deleting, key, absent_as, required)
        cached = self._domain_counts.pop(cache_key, None)
        if cached is None or cached[0] != fingerprint:
            count = self.pod_counter(namespaces, selector, skip_deleting)
            sums: dict[str, int] = {}
            for node in nodes:
                labels = node.labels
                value = labels.get(key, absent_as)
                if value is None or (required and not all(k in labels for k in required)):
                    continue
                sums[value] = sums.get(value, 0) + count(node)
            cached = (fingerprint, sums)
            if len(self._domain_counts) >= _COUNT_CACHE_SELECTORS:
                del self._domain_counts[next(iter(self._domain_counts))]  # least recently used
        self._domain_counts[cache_key] = cached  # most recently used last
        return cached[1]

    def image_nodes(self, name: str) -> tuple[int, int] | None:
        """(size in bytes, number of nodes) of an image name any node reports, else None."""
        state = self._images.get(name)
        return None if state is None else (state[0], len(state[1]))

    def default_spread_selector(self, pod: Mapping[str, Any]) -> Selector:
        """``helper.DefaultSelector``: the selectors of the Services in the pod's namespace
        that select it, merged with its controller's (ReplicationController, ReplicaSet or
        StatefulSet) selector. Empty (selects everything) when none applies."""
        md = pod.get("metadata") or {}
        ns = md.get("namespace") or "default"
        labels = md.get("labels") or {}
        merged: dict[str, str] = {}
        for sel in (self._services.get(ns) or {}).values():
            if sel is not None and all(labels.get(k) == v for k, v in sel.items()):
                merged.update(sel)  # labels.Merge: they all match the pod, no conflicts
        selector = EVERYTHING.with_labels(merged) if merged else EVERYTHING
        owner = next(
            (o for o in md.get("ownerReferences") or [] if o.get("controller") is True), None
        )
        if owner is None:
            return selector
        kind = _OWNER_KINDS.get((str(owner.get("apiVersion") or ""), str(owner.get("kind") or "")))
        if kind is None or (ns, owner.get("name") or "") not in self._workloads[kind]:
            return selector
        raw = self._workloads[kind][(ns, owner.get("name") or "")]
        if kind == "ReplicationController":
            merged.update(raw or {})
            return EVERYTHING.with_labels(merged) if merged else EVERYTHING
        try:
            other = label_selector(raw)
        except SelectorError:
            return selector
        if other.nothing:
            return selector  # Requirements() of labels.Nothing() reports not ok: nothing added
        return Selector(selector.requirements + other.requirements)

    @property
    def pdbs(self) -> list[Mapping[str, Any]]:
        return list(self._pdbs.values())

    # --- updating ------------------------------------------------------------------------

    def upsert_workload(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Add or replace a Service, ReplicationController, ReplicaSet or StatefulSet."""
        md = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        key = (md.get("namespace") or "default", md.get("name") or "")
        self._workloads[kind][key] = spec.get("selector")
        if kind == "Service":
            self._services.setdefault(key[0], {})[key[1]] = spec.get("selector")

    def remove_workload(self, kind: str, obj: Mapping[str, Any]) -> None:
        md = obj.get("metadata") or {}
        key = (md.get("namespace") or "default", md.get("name") or "")
        self._workloads[kind].pop(key, None)
        if kind == "Service":
            by_name = self._services.get(key[0]) or {}
            by_name.pop(key[1], None)
            if not by_name:
                self._services.pop(key[0], None)

    def upsert_node(self, node: Node) -> None:
        info = NodeInfo.from_node(node)
        old = self._nodes.get(info.name)
        if old is not None:
            self._drop_images(old)
            self._unindex(old)
        # a replaced node keeps its place in the dict, and so its ordinal
        info.ordinal = old.ordinal if old is not None else next(self._ordinals)
        info.index = self._affinity_index
        info.changes = self.changes
        for name, size in info.images.items():
            state = self._images.setdefault(name, (size, set()))
            state[1].add(info.name)
        pods = old.pods if old is not None else self._unplaced.pop(info.name, [])
        self._nodes[info.name] = info
        self._new_epoch()
        for p in pods:
            info.add(p)

    def _new_epoch(self) -> None:
        self.node_epoch += 1
        self.changes.clear()  # the same list: every NodeInfo appends to it

    def _drop_images(self, node: NodeInfo) -> None:
        for name in node.images:
            state = self._images.get(name)
            if state is not None:
                state[1].discard(node.name)
                if not state[1]:
                    del self._images[name]

    def upsert_pdb(self, pdb: Mapping[str, Any]) -> None:
        self._pdbs[pod_key(pdb)] = pdb

    def remove_pdb(self, pdb: Mapping[str, Any]) -> None:
        self._pdbs.pop(pod_key(pdb), None)

    def replace_pdbs(self, pdbs: Iterable[Mapping[str, Any]]) -> None:
        self._pdbs = {pod_key(b): b for b in pdbs}

    def _unindex(self, node: NodeInfo) -> None:
        node.index = None
        self._affinity_index.anti.pop(node.name, None)
        self._affinity_index.affinity.pop(node.name, None)

    def remove_node(self, name: str) -> None:
        old = self._nodes.pop(name, None)
        if old is not None:
            self._drop_images(old)
            self._unindex(old)
            self._new_epoch()
        if old is not None and old.pods:
            self._unplaced[name] = list(old.pods)

    def upsert_pod(self, pod: Pod) -> None:
        """Add or replace a pod (matched by uid, else namespace/name)."""
        self.remove_pod(pod)
        phase = (pod.get("status") or {}).get("phase")
        if phase in _TERMINAL:
            return
        if len(self.changes) > _CHANGES_KEPT:
            self._new_epoch()  # what remembered answers read since is dropped with them
        info = PodInfo.from_pod(pod)
        if info.node_name:
            self._pods[info.uid] = info
            node = self._nodes.get(info.node_name)
            if node is not None:
                node.add(info)
            else:
                self._unplaced.setdefault(info.node_name, []).append(info)
        elif info.nominated_node:
            self._nominated[info.uid] = info

    def remove_pod(self, pod: Pod | str) -> None:
        """Remove a pod given as a dict or as its uid / ``namespace/name``."""
        ident = pod if isinstance(pod, str) else pod_identity(pod)
        self._nominated.pop(ident, None)
        info = self._pods.pop(ident, None)
        if info is None:
            return
        node = self._nodes.get(info.node_name)
        if node is not None:
            node.remove(info)
        else:
            lst = self._unplaced.get(info.node_name, [])
            if info in lst:
                lst.remove(info)

    def _volume_table(self, kind: str) -> dict[Any, Mapping[str, Any]]:
        """The table of one volume kind (started empty when it was not given)."""
        attr = _VOLUME_TABLES.get(kind)
        if attr is None:
            raise ValueError(f"not a volume kind: {kind}")
        table: dict[Any, Mapping[str, Any]] | None = getattr(self, attr)
        if table is None:
            table = {}
            setattr(self, attr, table)
        return table

    def set_dra(self, device_classes: Iterable[Mapping[str, Any]], world: DraWorld | None) -> None:
        """Replace what DRA reads (a scheduler's watches): the DeviceClasses and, once slices
        and claims are listed too, the DynamicResources plugin's view."""
        names = frozenset(_dra_resource_names(device_classes))
        if names != self.dra_resources:
            self.dra_resources = names
            self._new_epoch()
        self.dra = world

    def set_volume_object(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Add or replace a ``PersistentVolumeClaim``, ``PersistentVolume``, ``StorageClass``,
        ``CSIDriver`` or ``CSIStorageCapacity`` (starting that kind's table if it was not
        given)."""
        self._volume_table(kind)[volume_key(kind, obj)] = obj

    def remove_volume_object(self, kind: str, obj: Mapping[str, Any]) -> None:
        table = getattr(self, _VOLUME_TABLES[kind])
        if table is not None:
            table.pop(volume_key(kind, obj), None)

    def assume(self, pod: Pod, node_name: str) -> None:
        """Account for ``pod`` on ``node_name`` before the API confirms the binding.

        The scheduler calls this the moment it decides, so later decisions see the pod's
        requests and ports on that node. When the watch delivers the bound pod, ``upsert_pod``
        replaces the assumed copy (same uid); ``forget`` drops it if binding fails.
        """
        spec: PodSpec = {**(pod.get("spec") or {}), "nodeName": node_name}
        status: PodStatus = {**(pod.get("status") or {})}
        status.pop("nominatedNodeName", None)
        bound: Pod = {**pod, "spec": spec, "status": status}
        self.upsert_pod(bound)

    def forget(self, pod: Pod) -> None:
        """Drop an assumed pod (binding failed)."""
        self.remove_pod(pod)


def volume_key(kind: str, obj: Mapping[str, Any]) -> Any:
    """A volume object's key in its table: (namespace, name) when namespaced, else its name."""
    md = obj.get("metadata") or {}
    if kind in _NAMESPACED_VOLUME_KINDS:
        return (md.get("namespace") or "default", md.get("name") or "")
    return md.get("name") or ""


def _namespace_labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    if "metadata" in obj and isinstance(obj["metadata"], Mapping):
        return obj["metadata"].get("labels") or {}
    return {str(k): str(v) for k, v in obj.items()}


def _dra_resource_names(device_classes: Iterable[Mapping[str, Any]]) -> set[str]:
    names: set[str] = set()
    for dc in device_classes:
        name = (dc.get("metadata") or {}).get("name")
        if name:
            names.add(f"deviceclass.resource.kubernetes.io/{name}")
        ext = (dc.get("spec") or {}).get("extendedResourceName")
        if ext and is_scalar_resource(ext):
            names.add(ext)
    return names
