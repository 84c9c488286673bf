"""The cluster state the filters run against: nodes, the pods bound to them, namespaces.

Built once from plain API dicts, then updated incrementally (``upsert_pod``, ``remove_pod``,
``upsert_node``, ``remove_node``, ``assume``). Per node it keeps what kube-scheduler's NodeInfo
keeps: the non-terminal pods bound to it, their summed requests and the host ports they use.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .resources import (
    CPU,
    EPHEMERAL,
    MEMORY,
    PODS,
    is_scalar_resource,
    node_allocatable,
    pod_requests,
)
from .selectors import EVERYTHING, Selector, SelectorError, label_selector

__all__ = [
    "AffinityTerm",
    "WORKLOAD_KINDS",
    "WeightedTerm",
    "weighted_affinity_terms",
    "PodInfo",
    "NodeInfo",
    "Snapshot",
    "pod_key",
    "affinity_terms",
    "host_ports",
]

_TERMINAL = ("Succeeded", "Failed")
# The kinds DefaultSelector reads (pkg/scheduler/framework/plugins/helper/spread.go).
WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
_OWNER_KINDS = {
    ("v1", "ReplicationController"): "ReplicationController",
    ("apps/v1", "ReplicaSet"): "ReplicaSet",
    ("apps/v1", "StatefulSet"): "StatefulSet",
}
_GENERATIONS = itertools.count()
_node_generation = operator.attrgetter("generation")
_COUNT_CACHE_SELECTORS = 64  # selectors whose per-node counts count_matching keeps
_NO_START = "~"  # sorts after any RFC 3339 time: "no start time" means "now" to the scheduler


def pod_key(pod: Mapping[str, Any]) -> str:
    """``namespace/name`` of a pod dict."""
    md = pod.get("metadata") or {}
    return f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"


def _identity(pod: Mapping[str, Any]) -> str:
    md = pod.get("metadata") or {}
    return str(md.get("uid") or pod_key(pod))


class Labeled(Protocol):
    """Anything with a namespace and labels (a PodInfo, or the incoming pod)."""

    @property
    def namespace(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class AffinityTerm:
    """A parsed required pod (anti-)affinity term (``fwk.AffinityTerm``)."""

    index: int
    namespaces: frozenset[str]
    selector: Selector
    namespace_selector: Selector
    topology_key: str

    def matches(self, pod: Labeled, namespace_labels: Mapping[str, str] | None) -> bool:
        if pod.namespace in self.namespaces or self.namespace_selector.matches(
            namespace_labels or {}
        ):
            return self.selector.matches(pod.labels)
        return False

    def describe(self) -> str:
        ns = ",".join(sorted(self.namespaces)) or "-"
        if not self.namespace_selector.nothing:
            ns += f" + namespaceSelector {self.namespace_selector.describe()}"
        sel = self.selector.describe()
        return f"term {self.index} ({sel} in {ns}, topologyKey {self.topology_key})"


def _affinity_term(index: int, t: Mapping[str, Any], namespace: str) -> AffinityTerm:
    """One ``PodAffinityTerm`` parsed (``newAffinityTerm``); SelectorError if a selector does
    not parse. No namespaces and no namespaceSelector: the pod's own namespace."""
    nss = t.get("namespaces") or []
    ns_sel_raw = t.get("namespaceSelector")
    return AffinityTerm(
        index=index,
        namespaces=frozenset([namespace]) if not nss and ns_sel_raw is None else frozenset(nss),
        selector=label_selector(t.get("labelSelector")),
        namespace_selector=label_selector(ns_sel_raw),
        topology_key=str(t.get("topologyKey") or ""),
    )


def _affinity_block(pod: Mapping[str, Any], kind: str, which: str) -> tuple[list[Any], str]:
    spec = pod.get("spec") or {}
    block = ((spec.get("affinity") or {}).get(kind) or {}).get(which) or []
    return block, (pod.get("metadata") or {}).get("namespace") or "default"


def affinity_terms(pod: Mapping[str, Any], kind: str) -> tuple[AffinityTerm, ...]:
    """Required terms of ``podAffinity`` or ``podAntiAffinity`` (kind), like ``GetAffinityTerms``.

    A term whose selector does not parse drops all terms of that kind, as the scheduler does
    (``NewPodInfo`` ignores the error and keeps no terms).
    """
    block, namespace = _affinity_block(pod, kind, "requiredDuringSchedulingIgnoredDuringExecution")
    try:
        return tuple(_affinity_term(i, t, namespace) for i, t in enumerate(block))
    except SelectorError:
        return ()


@dataclass(frozen=True)
class WeightedTerm:
    """A parsed preferred pod (anti-)affinity term (``fwk.WeightedAffinityTerm``)."""

    weight: int
    term: AffinityTerm


def weighted_affinity_terms(pod: Mapping[str, Any], kind: str) -> tuple[WeightedTerm, ...]:
    """Preferred terms of ``podAffinity`` or ``podAntiAffinity`` (kind), like
    ``GetWeightedAffinityTerms``; a selector that does not parse drops all terms of the kind."""
    block, namespace = _affinity_block(pod, kind, "preferredDuringSchedulingIgnoredDuringExecution")
    out = []
    try:
        for i, w in enumerate(block):
            weight = w.get("weight")
            term = _affinity_term(i, w.get("podAffinityTerm") or {}, namespace)
            out.append(WeightedTerm(weight if isinstance(weight, int) else 0, term))
    except SelectorError:
        return ()
    return tuple(out)


def _has_pod_affinity(pod: Mapping[str, Any]) -> bool:
    """``podWithAffinity``: the pod sets podAffinity or podAntiAffinity (terms or not)."""
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    return affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None


def host_ports(pod: Mapping[str, Any]) -> tuple[tuple[str, str, int], ...]:
    """``GetHostPorts``: (hostIP, protocol, hostPort) of regular and sidecar containers."""
    spec = pod.get("spec") or {}
    out: list[tuple[str, str, int]] = []
    containers = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    containers += spec.get("containers") or []
    for c in containers:
        for p in c.get("ports") or []:
            hp = p.get("hostPort") or 0
            if isinstance(hp, int) and hp > 0:
                out.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", hp))
    return tuple(out)


@dataclass
class PodInfo:
    """What the filters need from one pod, computed once."""

    raw: Mapping[str, Any]
    key: str
    uid: str
    namespace: str
    name: str
    labels: Mapping[str, str]
    node_name: str
    priority: int
    deleting: bool
    start_time: str
    requests: dict[str, int]
    ports: tuple[tuple[str, str, int], ...]
    anti_affinity: tuple[AffinityTerm, ...]
    nominated_node: str = ""
    scheduler_name: str = "default-scheduler"
    # For InterPodAffinity scoring (parsed once: every scored pod reads them again).
    with_affinity: bool = False
    affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    _non_zero: tuple[int, int] | None = field(default=None, repr=False, compare=False)

    def non_zero(self) -> tuple[int, int]:
        """(millicores, bytes) with the scoring defaults for containers without requests."""
        if self._non_zero is None:
            r = pod_requests(self.raw, use_status=True, non_zero=True)
            self._non_zero = (r.get(CPU, 0), r.get(MEMORY, 0))
        return self._non_zero

    @classmethod
    def from_pod(cls, pod: Mapping[str, Any], *, use_status: bool = True) -> PodInfo:
        md = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        priority = spec.get("priority")
        return cls(
            raw=pod,
            key=pod_key(pod),
            uid=_identity(pod),
            namespace=md.get("namespace") or "default",
            name=md.get("name") or "",
            labels=md.get("labels") or {},
            node_name=spec.get("nodeName") or "",
            priority=priority if isinstance(priority, int) else 0,
            deleting=md.get("deletionTimestamp") is not None,
            start_time=status.get("startTime") or _NO_START,
            requests=pod_requests(pod, use_status=use_status),
            ports=host_ports(pod),
            anti_affinity=affinity_terms(pod, "podAntiAffinity"),
            nominated_node=status.get("nominatedNodeName") or "",
            scheduler_name=spec.get("schedulerName") or "default-scheduler",
            **_scoring_terms(pod),
        )


def _scoring_terms(pod: Mapping[str, Any]) -> dict[str, Any]:
    if not _has_pod_affinity(pod):
        return {}
    return {
        "with_affinity": True,
        "affinity": affinity_terms(pod, "podAffinity"),
        "preferred_affinity": weighted_affinity_terms(pod, "podAffinity"),
        "preferred_anti_affinity": weighted_affinity_terms(pod, "podAntiAffinity"),
    }


def _node_images(node: Mapping[str, Any]) -> dict[str, int]:
    """``status.images`` as name -> size, every name of an image (the cache's imageStates)."""
    out: dict[str, int] = {}
    for image in (node.get("status") or {}).get("images") or []:
        size = image.get("sizeBytes")
        for name in image.get("names") or []:
            out.setdefault(str(name), size if isinstance(size, int) else 0)
    return out


HEADROOM_INDEX = {PODS: 0, CPU: 1, MEMORY: 2, EPHEMERAL: 3}  # NodeInfo.headroom()'s order


@dataclass
class NodeInfo:
    """One node with the pods bound to it (``framework.NodeInfo``)."""

    raw: Mapping[str, Any]
    name: str
    labels: Mapping[str, str]
    taints: list[Mapping[str, Any]]
    unschedulable: bool
    allocatable: dict[str, int]
    requested: dict[str, int] = field(default_factory=dict)
    pods: list[PodInfo] = field(default_factory=list)
    # (protocol, port) -> hostIP -> number of pods using it
    ports: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    anti_affinity_pods: int = 0
    affinity_pods: int = 0  # pods with any pod (anti-)affinity (``PodsWithAffinity``)
    images: dict[str, int] = field(default_factory=dict)  # image name -> size in bytes
    # new at every add/remove, unique across nodes: when remembered sums and counts expire
    generation: int = field(default_factory=lambda: next(_GENERATIONS))
    _non_zero: tuple[int, dict[str, int]] | None = field(default=None, repr=False, compare=False)
    _scoring: tuple[int, tuple[int, int, int, int, int, int]] | None = field(
        default=None, repr=False, compare=False
    )
    _headroom: tuple[int, tuple[int, int, int, int]] | None = field(
        default=None, repr=False, compare=False
    )
    # The owning snapshot's nodes with (anti-)affinity pods, kept as pods come and go here.
    index: AffinityIndex | None = field(default=None, repr=False, compare=False)
    ordinal: int = field(default=0, repr=False, compare=False)  # position in the snapshot

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> NodeInfo:
        md = node.get("metadata") or {}
        spec = node.get("spec") or {}
        return cls(
            raw=node,
            name=md.get("name") or "",
            labels=md.get("labels") or {},
            taints=list(spec.get("taints") or []),
            unschedulable=bool(spec.get("unschedulable")),
            allocatable=node_allocatable(node),
            images=_node_images(node),
        )

    def add(self, p: PodInfo) -> None:
        self.pods.append(p)
        self.generation = next(_GENERATIONS)
        req = self.requested
        for k, v in p.requests.items():
            req[k] = req.get(k, 0) + v
        for ip, proto, port in p.ports:
            by_ip = self.ports.setdefault((proto, port), {})
            by_ip[ip] = by_ip.get(ip, 0) + 1
        if p.anti_affinity:
            self.anti_affinity_pods += 1
            if self.anti_affinity_pods == 1 and self.index is not None:
                self.index.anti[self.name] = self
        if p.with_affinity:
            self.affinity_pods += 1
            if self.affinity_pods == 1 and self.index is not None:
                self.index.affinity[self.name] = self

    def reorder(self, pods: list[PodInfo]) -> None:
        """Put back ``pods``, the same pods in another order (after a dry run removed and
        re-added some): a new generation, since what was read in between saw another order."""
        self.pods[:] = pods
        self.generation = next(_GENERATIONS)

    def remove(self, p: PodInfo) -> None:
        for i, q in enumerate(self.pods):
            if q is p:
                del self.pods[i]
                break
        else:
            return
        self.generation = next(_GENERATIONS)
        req = self.requested
        for k, v in p.requests.items():
            req[k] = req.get(k, 0) - v
        for ip, proto, port in p.ports:
            by_ip = self.ports.get((proto, port))
            if by_ip is not None and ip in by_ip:
                by_ip[ip] -= 1
                if by_ip[ip] <= 0:
                    del by_ip[ip]
                if not by_ip:
                    del self.ports[(proto, port)]
        if p.anti_affinity:
            self.anti_affinity_pods -= 1
            if not self.anti_affinity_pods and self.index is not None:
                self.index.anti.pop(self.name, None)
        if p.with_affinity:
            self.affinity_pods -= 1
            if not self.affinity_pods and self.index is not None:
                self.index.affinity.pop(self.name, None)

    def port_conflict(self, ip: str, proto: str, port: int) -> str | None:
        """``HostPortInfo.CheckConflict``; returns the conflicting hostIP, or None.

        A wanted 0.0.0.0 conflicts with the (protocol, port) on any IP; a specific IP conflicts
        with the same IP or with 0.0.0.0.
        """
        by_ip = self.ports.get((proto, port))
        if not by_ip:
            return None
        if ip == "0.0.0.0":
            return next(iter(by_ip))
        for candidate in ("0.0.0.0", ip):
            if candidate in by_ip:
                return candidate
        return None

    def pods_using_port(self, ip: str, proto: str, port: int) -> list[str]:
        out = []
        for p in self.pods:
            for pip, pproto, pport in p.ports:
                if pproto == proto and pport == port and (pip == ip or "0.0.0.0" in (ip, pip)):
                    out.append(p.key)
                    break
        return out

    def non_zero_requested(self) -> dict[str, int]:
        """cpu/memory requested with the scoring defaults (100m / 200Mi per empty container),
        summed again only after a pod came or went."""
        cached = self._non_zero
        if cached is not None and cached[0] == self.generation:
            return cached[1]
        cpu = mem = 0
        for p in self.pods:
            c, m = p.non_zero()
            cpu += c
            mem += m
        out = {CPU: cpu, MEMORY: mem}
        self._non_zero = (self.generation, out)
        return out

    def headroom(self) -> tuple[int, int, int, int]:
        """Pods, cpu, memory and ephemeral storage left (allocatable minus requested): what
        NodeResourcesFit compares the native requests with on every node of a decision,
        remembered until a pod comes or goes. Indexed by :data:`HEADROOM_INDEX`."""
        cached = self._headroom
        if cached is not None and cached[0] == self.generation:
            return cached[1]
        alloc, used = self.allocatable, self.requested
        out = (
            alloc.get(PODS, 0) - len(self.pods),
            alloc.get(CPU, 0) - used.get(CPU, 0),
            alloc.get(MEMORY, 0) - used.get(MEMORY, 0),
            alloc.get(EPHEMERAL, 0) - used.get(EPHEMERAL, 0),
        )
        self._headroom = (self.generation, out)
        return out

    def scoring_inputs(self) -> tuple[int, int, int, int, int, int]:
        """cpu and memory allocatable, non-zero requested (:meth:`non_zero_requested`) and
        requested: what the resource score plugins read of every scored node, in one call,
        remembered until a pod comes or goes."""
        cached = self._scoring
        if cached is not None and cached[0] == self.generation:
            return cached[1]
        alloc, requested, non_zero = self.allocatable, self.requested, self.non_zero_requested()
        out = (
            alloc.get(CPU, 0),
            alloc.get(MEMORY, 0),
            non_zero[CPU],
            non_zero[MEMORY],
            requested.get(CPU, 0),
            requested.get(MEMORY, 0),
        )
        self._scoring = (self.generation, out)
        return out


@dataclass
class AffinityIndex:
    """The nodes with at least one pod that has pod anti-affinity (``anti``) or any pod
    (anti-)affinity (``affinity``), by name: kube-scheduler's ``HavePodsWithAffinityList`` and
    ``HavePodsWithRequiredAntiAffinityList``, so that a decision visits those nodes only, not
    every node of the cluster."""

    anti: dict[str, NodeInfo] = field(default_factory=dict)
    affinity: dict[str, NodeInfo] = field(default_factory=dict)


_ordinal = operator.attrgetter("ordinal")


class Snapshot:
    """Nodes, their bound pods and namespace labels, indexed for fast filtering.

    ``pods`` may be every pod in the cluster: terminal pods (Succeeded/Failed) are ignored,
    bound pods are added to their node, pending pods with ``status.nominatedNodeName`` are kept
    as nominated pods (kube-scheduler filters as if they were on that node when their priority
    is at least the incoming pod's). ``namespaces`` maps a namespace name to its Namespace object
    or directly to its labels; it is only needed for ``namespaceSelector`` in pod affinity terms.
    ``device_classes`` (resource.k8s.io DeviceClass dicts) lets NodeResourcesFit leave extended
    resources backed by DRA to the DynamicResources plugin, as kube-scheduler 1.36 does.
    ``persistent_volume_claims`` and ``storage_classes`` (API dicts) enable the volume
    PreFilter checks (missing or unbound immediate claims); with ``persistent_volumes`` too,
    the per-node volume filters run (PV node affinity, matching PVs for WaitForFirstConsumer
    claims, zones); without them volume checks are reported as not evaluated.
    ``set_volume_object`` / ``remove_volume_object`` keep them current (a scheduler's watches).
    ``workloads`` (kind -> API dicts of Service, ReplicationController, ReplicaSet,
    StatefulSet) give the selector of the system-default topology spreading
    (:meth:`default_spread_selector`); without them a pod gets none.
    ``pod_disruption_budgets`` (policy/v1 dicts) steer preemption's choice of victims and node.
    """

    def __init__(
        self,
        nodes: Iterable[Mapping[str, Any]] = (),
        pods: Iterable[Mapping[str, Any]] = (),
        namespaces: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        device_classes: Iterable[Mapping[str, Any]] = (),
        persistent_volume_claims: Iterable[Mapping[str, Any]] | None = None,
        storage_classes: Iterable[Mapping[str, Any]] | None = None,
        persistent_volumes: Iterable[Mapping[str, Any]] | None = None,
        workloads: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
        pod_disruption_budgets: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        # PodDisruptionBudget dicts by namespace/name: preemption spends their
        # status.disruptionsAllowed when it picks victims.
        self._pdbs: dict[str, Mapping[str, Any]] = {}
        for b in pod_disruption_budgets:
            self.upsert_pdb(b)
        self._nodes: dict[str, NodeInfo] = {}
        self._affinity_index = AffinityIndex()
        self._ordinals = itertools.count()
        self._pods: dict[str, PodInfo] = {}
        self._unplaced: dict[str, list[PodInfo]] = {}  # bound to a node not (yet) known
        self._nominated: dict[str, PodInfo] = {}
        self.namespaces_known = namespaces is not None
        self._namespace_labels: dict[str, Mapping[str, str]] = {}
        for name, obj in (namespaces or {}).items():
            self._namespace_labels[name] = _namespace_labels(obj)
        self.dra_resources: frozenset[str] = frozenset(_dra_resource_names(device_classes))
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

    def pod_info(self, pod: Mapping[str, Any]) -> PodInfo | None:
        return self._pods.get(_identity(pod))

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

    def upsert_node(self, node: Mapping[str, Any]) -> None:
        info = NodeInfo.from_node(node)
        old = self._nodes.get(info.name)
        if old is not None:
            self._drop_images(old)
            self._unindex(old)
        # a replaced node keeps its place in the dict, and so its ordinal
        info.ordinal = old.ordinal if old is not None else next(self._ordinals)
        info.index = self._affinity_index
        for name, size in info.images.items():
            state = self._images.setdefault(name, (size, set()))
            state[1].add(info.name)
        pods = old.pods if old is not None else self._unplaced.pop(info.name, [])
        self._nodes[info.name] = info
        for p in pods:
            info.add(p)

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
        if old is not None and old.pods:
            self._unplaced[name] = list(old.pods)

    def upsert_pod(self, pod: Mapping[str, Any]) -> None:
        """Add or replace a pod (matched by uid, else namespace/name)."""
        self.remove_pod(pod)
        phase = (pod.get("status") or {}).get("phase")
        if phase in _TERMINAL:
            return
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

    def remove_pod(self, pod: Mapping[str, Any] | str) -> None:
        """Remove a pod given as a dict or as its uid / ``namespace/name``."""
        ident = pod if isinstance(pod, str) else _identity(pod)
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

    def set_volume_object(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Add or replace a ``PersistentVolumeClaim``, ``PersistentVolume`` or
        ``StorageClass`` (starting that kind's table if it was not given)."""
        md = obj.get("metadata") or {}
        name = md.get("name") or ""
        if kind == "PersistentVolumeClaim":
            if self.pvcs is None:
                self.pvcs = {}
            self.pvcs[(md.get("namespace") or "default", name)] = obj
        elif kind == "PersistentVolume":
            if self.pvs is None:
                self.pvs = {}
            self.pvs[name] = obj
        elif kind == "StorageClass":
            if self.storage_classes is None:
                self.storage_classes = {}
            self.storage_classes[name] = obj
        else:
            raise ValueError(f"not a volume kind: {kind}")

    def remove_volume_object(self, kind: str, obj: Mapping[str, Any]) -> None:
        md = obj.get("metadata") or {}
        name = md.get("name") or ""
        if kind == "PersistentVolumeClaim" and self.pvcs is not None:
            self.pvcs.pop((md.get("namespace") or "default", name), None)
        elif kind == "PersistentVolume" and self.pvs is not None:
            self.pvs.pop(name, None)
        elif kind == "StorageClass" and self.storage_classes is not None:
            self.storage_classes.pop(name, None)

    def assume(self, pod: Mapping[str, Any], node_name: str) -> None:
        """Account for ``pod`` on ``node_name`` before the API confirms the binding.

        The scheduler calls this the moment it decides, so later decisions see the pod's
        requests and ports on that node. When the watch delivers the bound pod, ``upsert_pod``
        replaces the assumed copy (same uid); ``forget`` drops it if binding fails.
        """
        spec = dict(pod.get("spec") or {})
        spec["nodeName"] = node_name
        status = dict(pod.get("status") or {})
        status.pop("nominatedNodeName", None)
        bound = dict(pod)
        bound["spec"] = spec
        bound["status"] = status
        self.upsert_pod(bound)

    def forget(self, pod: Mapping[str, Any]) -> None:
        """Drop an assumed pod (binding failed)."""
        self.remove_pod(pod)


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
