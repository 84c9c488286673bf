"""What kube-scheduler's framework keeps per pod and per node (``framework.PodInfo``,
``framework.NodeInfo``): a pod's requests, host ports and parsed pod (anti-)affinity terms,
computed once; a node with the non-terminal pods bound to it, their summed requests and the
host ports they use, plus the sums scoring reads, remembered until a pod comes or goes.

The cluster state that holds them and updates itself from events is ``snapshot.NodeInfoSnapshot``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kschedctl.model.kubetypes import Node, Pod, Taint

from .resources import (
    CPU,
    EPHEMERAL,
    MEMORY,
    PODS,
    node_allocatable,
    pod_requests,
)
from .selectors import Selector, SelectorError, label_selector

__all__ = [
    "HEADROOM_INDEX",
    "AffinityIndex",
    "AffinityTerm",
    "Labeled",
    "NodeInfo",
    "PodInfo",
    "WeightedTerm",
    "affinity_terms",
    "host_ports",
    "pod_identity",
    "pod_key",
    "weighted_affinity_terms",
]

_GENERATIONS = itertools.count()
_NO_START = "~"  # sorts after any RFC 3339 time: "no start time" means "now" to the scheduler


def pod_key(pod: Mapping[str, Any]) -> str:
    """``namespace/name`` of a pod dict."""
    md = pod.get("metadata") or {}
    return f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"


def pod_identity(pod: Mapping[str, Any]) -> str:
    """A pod's uid, else its ``namespace/name``: how the cluster state keys pods."""
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


def affinity_terms(pod: Pod, kind: str) -> tuple[AffinityTerm, ...]:
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


def weighted_affinity_terms(pod: Pod, kind: str) -> tuple[WeightedTerm, ...]:
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


def _has_pod_affinity(pod: Pod) -> bool:
    """``podWithAffinity``: the pod sets podAffinity or podAntiAffinity (terms or not)."""
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    return affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None


def host_ports(pod: Pod) -> tuple[tuple[str, str, int], ...]:
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

    raw: Pod
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
    def from_pod(cls, pod: Pod, *, use_status: bool = True) -> PodInfo:
        md = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        priority = spec.get("priority")
        return cls(
            raw=pod,
            key=pod_key(pod),
            uid=pod_identity(pod),
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


def _scoring_terms(pod: Pod) -> dict[str, Any]:
    if not _has_pod_affinity(pod):
        return {}
    return {
        "with_affinity": True,
        "affinity": affinity_terms(pod, "podAffinity"),
        "preferred_affinity": weighted_affinity_terms(pod, "podAffinity"),
        "preferred_anti_affinity": weighted_affinity_terms(pod, "podAntiAffinity"),
    }


def _node_images(node: Node) -> dict[str, int]:
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

    raw: Node
    name: str
    labels: Mapping[str, str]
    taints: list[Taint]
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
    # The owning cluster state's nodes with (anti-)affinity pods, kept as pods come and go here.
    index: AffinityIndex | None = field(default=None, repr=False, compare=False)
    ordinal: int = field(default=0, repr=False, compare=False)  # position in the cluster state
    # The owning cluster state's change log: this node's name is appended at every new
    # generation (see NodeInfoSnapshot.changes).
    changes: list[str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_node(cls, node: Node) -> NodeInfo:
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

    def _changed(self) -> None:
        self.generation = next(_GENERATIONS)
        if self.changes is not None:
            self.changes.append(self.name)

    def add(self, p: PodInfo) -> None:
        self.pods.append(p)
        self._changed()
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
        self._changed()

    def remove(self, p: PodInfo) -> None:
        for i, q in enumerate(self.pods):
            if q is p:
                del self.pods[i]
                break
        else:
            return
        self._changed()
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
