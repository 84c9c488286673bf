"""The cluster state the filters run against: nodes, the pods bound to them, namespaces.

Built once from plain API dicts, then updated incrementally (``upsert_pod``, ``remove_pod``,
``upsert_node``, ``remove_node``, ``assume``). Per node it keeps what kube-scheduler's NodeInfo
keeps: the non-terminal pods bound to it, their summed requests and the host ports they use.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .resources import (
    CPU,
    MEMORY,
    is_scalar_resource,
    node_allocatable,
    pod_requests,
)
from .selectors import Selector, SelectorError, label_selector

__all__ = [
    "AffinityTerm",
    "PodInfo",
    "NodeInfo",
    "Snapshot",
    "pod_key",
    "affinity_terms",
    "host_ports",
]

_TERMINAL = ("Succeeded", "Failed")
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


def affinity_terms(pod: Mapping[str, Any], kind: str) -> tuple[AffinityTerm, ...]:
    """Required terms of ``podAffinity`` or ``podAntiAffinity`` (kind), like ``GetAffinityTerms``.

    A term whose selector does not parse drops all terms of that kind, as the scheduler does
    (``NewPodInfo`` ignores the error and keeps no terms).
    """
    spec = pod.get("spec") or {}
    md = pod.get("metadata") or {}
    block = ((spec.get("affinity") or {}).get(kind) or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or []
    out = []
    try:
        for i, t in enumerate(block):
            nss = t.get("namespaces") or []
            ns_sel_raw = t.get("namespaceSelector")
            namespaces = (
                frozenset([md.get("namespace") or "default"])
                if not nss and ns_sel_raw is None
                else frozenset(nss)
            )
            out.append(
                AffinityTerm(
                    index=i,
                    namespaces=namespaces,
                    selector=label_selector(t.get("labelSelector")),
                    namespace_selector=label_selector(ns_sel_raw),
                    topology_key=str(t.get("topologyKey") or ""),
                )
            )
    except SelectorError:
        return ()
    return tuple(out)


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
        )


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
    # non_zero_requested()'s sums, kept up to date by add/remove once computed: scoring asks
    # for them on every feasible node of every decision.
    _non_zero: list[int] | None = field(default=None, repr=False, compare=False)

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
        )

    def add(self, p: PodInfo) -> None:
        self.pods.append(p)
        if self._non_zero is not None:
            c, m = p.non_zero()
            self._non_zero[0] += c
            self._non_zero[1] += m
        req = self.requested
        for k, v in p.requests.items():
            req[k] = req.get(k, 0) + v
        for ip, proto, port in p.ports:
            by_ip = self.ports.setdefault((proto, port), {})
            by_ip[ip] = by_ip.get(ip, 0) + 1
        if p.anti_affinity:
            self.anti_affinity_pods += 1

    def remove(self, p: PodInfo) -> None:
        for i, q in enumerate(self.pods):
            if q is p:
                del self.pods[i]
                break
        else:
            return
        if self._non_zero is not None:
            c, m = p.non_zero()
            self._non_zero[0] -= c
            self._non_zero[1] -= m
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
        """cpu/memory requested with the scoring defaults (100m / 200Mi per empty container)."""
        if self._non_zero is None:
            cpu = mem = 0
            for p in self.pods:
                c, m = p.non_zero()
                cpu += c
                mem += m
            self._non_zero = [cpu, mem]
        return {CPU: self._non_zero[0], MEMORY: self._non_zero[1]}


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
    PreFilter checks (missing or unbound immediate claims); without them volume checks are
    reported as not evaluated.
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
    ) -> None:
        self._nodes: dict[str, NodeInfo] = {}
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

    # --- updating ------------------------------------------------------------------------

    def upsert_node(self, node: Mapping[str, Any]) -> None:
        info = NodeInfo.from_node(node)
        old = self._nodes.get(info.name)
        pods = old.pods if old is not None else self._unplaced.pop(info.name, [])
        self._nodes[info.name] = info
        for p in pods:
            info.add(p)

    def remove_node(self, name: str) -> None:
        old = self._nodes.pop(name, None)
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
