"""Where pods went (pure): per node, what the bound pods request, split by the scheduler
responsible for them — the data of `kschedctl top nodes`, from plain node and pod dicts.

A pod counts on its node while it is bound (``spec.nodeName``) and not terminal (phase
Succeeded or Failed), as ``kubectl describe node`` counts it (staging/src/k8s.io/kubectl/pkg/
describe/describe.go, ``getPodsInNode``'s field selector) and as kube-scheduler's cache holds it.
Its request is the effective one NodeResourcesFit adds up (:func:`kschedctl.model.filters.resources.
pod_requests`: init containers, sidecars, pod-level resources, overhead, in-place resize).

The scheduler responsible is the pod's ``spec.schedulerName`` (``default-scheduler`` when
empty), except for pods no scheduler placed, shown as :data:`NO_SCHEDULER`: mirror pods of
static pods (the kubelet created them on its node) and pods created with ``spec.nodeName``
already set. The latter are recognised by their managed fields: a create or update that
writes ``spec.nodeName`` records it in the writer's ``fieldsV1``, while a scheduler's
``pods/binding`` sets it through the binding storage (pkg/registry/core/pod/storage/
storage.go, ``setPodNodeAndMetadata``), which the field manager does not track.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kschedctl.model.filters.quantity import QuantityError, parse_quantity, to_milli, to_units
from kschedctl.model.filters.resources import (
    CPU,
    MEMORY,
    PODS,
    node_allocatable,
    pod_limits,
    pod_requests,
)
from kschedctl.observe.schedulers import MIRROR_ANNOTATION

NO_SCHEDULER = "(none)"
DEFAULT_SCHEDULER = "default-scheduler"
RESOURCES = (CPU, MEMORY, PODS)
LIMITED = (CPU, MEMORY)  # what limits, and metrics-server's usage, are shown for
SORT_KEYS = ("name", CPU, MEMORY, PODS)
TERMINAL_PHASES = ("Succeeded", "Failed")

# What the server filters when it lists the pods that count (one request for the cluster).
BOUND_NON_TERMINAL = "spec.nodeName!=," + ",".join(f"status.phase!={p}" for p in TERMINAL_PHASES)


@dataclass(frozen=True)
class NodeUsage:
    """One node: its allocatable cpu (millicores), memory (bytes) and pods, and what the pods
    on it request, per scheduler (only schedulers with pods there)."""

    name: str
    allocatable: dict[str, int]
    by_scheduler: dict[str, dict[str, int]]
    unschedulable: bool = False
    limits: dict[str, int] = field(default_factory=dict)  # cpu, memory: Σ the pods' limits
    taints: list[str] = field(default_factory=list)  # "key=value:Effect", as kubectl shows them
    usage: dict[str, int] | None = None  # cpu, memory from metrics.k8s.io (None: no reading)

    def requested(self, resource: str) -> int:
        return sum(amounts.get(resource, 0) for amounts in self.by_scheduler.values())

    def fraction(self, resource: str) -> float:
        """Requested over allocatable; anything requested of nothing counts as infinite."""
        capacity = self.allocatable.get(resource, 0)
        wanted = self.requested(resource)
        if capacity <= 0:
            return float("inf") if wanted else 0.0
        return wanted / capacity

    @property
    def overcommitted(self) -> list[str]:
        """The resources requested beyond allocatable, in :data:`RESOURCES` order."""
        return [r for r in RESOURCES if self.requested(r) > self.allocatable.get(r, 0)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "allocatable": {r: self.allocatable.get(r, 0) for r in RESOURCES},
            "requested": {r: self.requested(r) for r in RESOURCES},
            "bySchedulers": {
                name: {r: amounts.get(r, 0) for r in RESOURCES}
                for name, amounts in self.by_scheduler.items()
            },
            "overcommitted": self.overcommitted,
            "unschedulable": self.unschedulable,
            "limits": {r: self.limits.get(r, 0) for r in LIMITED},
            "taints": list(self.taints),
            **({"usage": dict(self.usage)} if self.usage is not None else {}),
        }


@dataclass(frozen=True)
class PodUsage:
    """One pod that counts on its node (``top nodes --pods``): its requests and limits (cpu,
    memory) and, when metrics-server answers, its usage."""

    namespace: str
    name: str
    node: str
    scheduler: str
    requests: dict[str, int]
    limits: dict[str, int]
    usage: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "node": self.node,
            "scheduler": self.scheduler,
            "requests": {r: self.requests.get(r, 0) for r in LIMITED},
            "limits": {r: self.limits.get(r, 0) for r in LIMITED},
            **({"usage": dict(self.usage)} if self.usage is not None else {}),
        }


@dataclass
class Placement:
    """The nodes shown, in order, and what the whole selection adds up to."""

    nodes: list[NodeUsage]
    schedulers: list[str]  # every scheduler with pods on the selected nodes: legend order
    total_nodes: int  # nodes selected before --limit
    totals: dict[str, dict[str, int]] = field(default_factory=dict)  # scheduler -> amounts
    allocatable: dict[str, int] = field(default_factory=dict)  # over the selected nodes
    overcommitted_nodes: int = 0  # over the selected nodes
    sort_by: str = "name"
    highlight: str | None = None  # --scheduler
    pods: list[PodUsage] = field(default_factory=list)  # on the nodes shown, by node then name
    metrics: bool = False  # metrics.k8s.io answered: usage is known

    @property
    def omitted(self) -> int:
        return self.total_nodes - len(self.nodes)

    def first(self, limit: int | None) -> Placement:
        """The same placement with at most ``limit`` nodes shown (None or 0: all)."""
        nodes = self.nodes[: limit or None]
        shown = {u.name for u in nodes}
        return replace(self, nodes=nodes, pods=[p for p in self.pods if p.node in shown])


def responsible_scheduler(pod: Mapping[str, Any]) -> str:
    """The scheduler that placed ``pod`` (see the module notes), or :data:`NO_SCHEDULER`."""
    meta = pod.get("metadata") or {}
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return NO_SCHEDULER
    for entry in meta.get("managedFields") or []:
        spec = ((entry or {}).get("fieldsV1") or {}).get("f:spec")
        if isinstance(spec, Mapping) and "f:nodeName" in spec and not entry.get("subresource"):
            return NO_SCHEDULER
    return str((pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER)


def counts(pod: Mapping[str, Any]) -> bool:
    """Bound and not terminal: the pod holds its request on its node."""
    if not (pod.get("spec") or {}).get("nodeName"):
        return False
    return (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES


def legend_order(names: Iterable[str]) -> list[str]:
    """Schedulers by name, :data:`NO_SCHEDULER` last: the same colour for the same name in
    every picture of the same cluster."""
    return sorted(set(names), key=lambda n: (n == NO_SCHEDULER, n))


def placement(
    nodes: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    *,
    scheduler: str | None = None,
    sort_by: str = "name",
    limit: int | None = None,
    node_metrics: Iterable[Mapping[str, Any]] | None = None,
    pod_metrics: Iterable[Mapping[str, Any]] | None = None,
) -> Placement:
    """Per node usage of ``nodes`` by ``pods`` (pods on other nodes are ignored).

    ``node_metrics``/``pod_metrics``: metrics.k8s.io's NodeMetrics and PodMetrics items (None:
    the API did not answer; usage stays unknown).
    ``scheduler``: only the nodes where it placed pods (the others' pods still count there).
    ``sort_by``: ``name`` (ascending) or a resource, busiest first (requested / allocatable;
    ties by name). ``limit``: at most that many nodes (None or 0: all).
    """
    if sort_by not in SORT_KEYS:
        raise ValueError(f"unknown sort key {sort_by!r}: use one of {', '.join(SORT_KEYS)}")
    usage: dict[str, NodeUsage] = {}
    for node in nodes:
        name = str((node.get("metadata") or {}).get("name") or "")
        if not name:
            continue
        alloc = node_allocatable(node)
        usage[name] = NodeUsage(
            name,
            {r: alloc.get(r, 0) for r in RESOURCES},
            {},
            bool((node.get("spec") or {}).get("unschedulable")),
            {r: 0 for r in LIMITED},
            [taint_text(t) for t in (node.get("spec") or {}).get("taints") or []],
        )
    node_used = _usage_by_name(node_metrics, lambda m: [m])
    for name, used in node_used.items():
        if name in usage:
            usage[name] = replace(usage[name], usage=used)
    pod_used = _usage_by_name(pod_metrics, lambda m: m.get("containers") or [])
    shown_pods: list[PodUsage] = []
    for pod in pods:
        if not counts(pod):
            continue
        node_usage = usage.get(str(pod["spec"]["nodeName"]))
        if node_usage is None:
            continue
        responsible = responsible_scheduler(pod)
        amounts = node_usage.by_scheduler.setdefault(responsible, {r: 0 for r in RESOURCES})
        wanted = pod_requests(pod, use_status=True)
        limits = pod_limits(pod)
        amounts[CPU] += wanted.get(CPU, 0)
        amounts[MEMORY] += wanted.get(MEMORY, 0)
        amounts[PODS] += 1
        for r in LIMITED:
            node_usage.limits[r] += limits.get(r, 0)
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        shown_pods.append(
            PodUsage(str(meta.get("namespace") or ""), str(meta.get("name") or ""),
                     node_usage.name, responsible, {r: wanted.get(r, 0) for r in LIMITED},
                     {r: limits.get(r, 0) for r in LIMITED},
                     pod_used.get(key))
        )  # fmt: skip
    selected = [u for u in usage.values() if scheduler is None or scheduler in u.by_scheduler]
    names = legend_order(s for u in selected for s in u.by_scheduler)
    for u in selected:  # legend order inside each node too: stable JSON and bars
        ordered = {s: u.by_scheduler[s] for s in names if s in u.by_scheduler}
        u.by_scheduler.clear()
        u.by_scheduler.update(ordered)
    in_order = _ordered(selected, sort_by)
    rank = {u.name: i for i, u in enumerate(in_order)}
    shown_pods.sort(key=lambda p: (rank.get(p.node, len(rank)), p.namespace, p.name))
    return Placement(
        nodes=in_order,
        schedulers=names,
        total_nodes=len(selected),
        totals={s: _sum(u.by_scheduler.get(s, {}) for u in selected) for s in names},
        allocatable=_sum(u.allocatable for u in selected),
        overcommitted_nodes=sum(1 for u in selected if u.overcommitted),
        sort_by=sort_by,
        highlight=scheduler,
        pods=shown_pods,
        metrics=node_metrics is not None,
    ).first(limit)


def taint_text(taint: Mapping[str, Any]) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as ``kubectl describe node``."""
    value = taint.get("value")
    return f"{taint.get('key', '')}{'=' + str(value) if value else ''}:{taint.get('effect', '')}"


def _usage_by_name(
    items: Iterable[Mapping[str, Any]] | None,
    parts: Callable[[Mapping[str, Any]], Iterable[Mapping[str, Any]]],
) -> dict[str, dict[str, int]]:
    """metrics.k8s.io items by name (``namespace/name`` for pods): cpu in millicores, memory
    in bytes, summed over ``parts`` (a NodeMetrics itself; a PodMetrics' containers)."""
    found: dict[str, dict[str, int]] = {}
    for item in items or []:
        meta = item.get("metadata") or {}
        name = f"{meta['namespace']}/{meta.get('name', '')}" if meta.get("namespace") else str(
            meta.get("name") or "")  # fmt: skip
        used = found.setdefault(name, {r: 0 for r in LIMITED})
        for part in parts(item):
            for r, convert in ((CPU, to_milli), (MEMORY, to_units)):
                try:
                    used[r] += convert(parse_quantity((part.get("usage") or {}).get(r, "0")))
                except QuantityError:
                    continue  # a reading metrics-server could not make is no usage
    return found


def _ordered(nodes: Sequence[NodeUsage], sort_by: str) -> list[NodeUsage]:
    if sort_by == "name":
        return sorted(nodes, key=lambda u: u.name)
    return sorted(nodes, key=lambda u: (-u.fraction(sort_by), u.name))


def _sum(parts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out = {r: 0 for r in RESOURCES}
    for part in parts:
        for r in RESOURCES:
            out[r] += part.get(r, 0)
    return out
