"""The pools a node sees, as kube-scheduler v1.36's allocator gathers them
(``GatherPools``, ``buildPool`` in k8s.io/dynamic-resource-allocation v0.36.3
``structured/internal/incubating``): per pool the newest generation of the slices that serve
the node, complete, obsolete or incomplete, its shared counter sets, and its devices (none
when incomplete or invalid). Pure, over plain API dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .dracel import Unsupported
from .drafeatures import DraFeatures
from .selectors import SelectorError, node_selector_terms

__all__ = [
    "Device",
    "DeviceId",
    "Pool",
    "gather_pools",
    "node_matches",
    "node_selector_matches",
    "pool_devices",
]

DeviceId = tuple[str, str, str]  # driver, pool, device


@dataclass
class Pool:
    driver: str
    name: str
    generation: int
    count: int
    slices: list[Mapping[str, Any]] = field(default_factory=list)
    counter_sets: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    incomplete: bool = False  # not all its slices published: it serves nothing
    invalid: bool = False  # duplicate names, unknown counters: it serves nothing
    others: list[Mapping[str, Any]] = field(default_factory=list)  # its slices for other nodes


@dataclass(frozen=True)
class Device:
    id: DeviceId
    raw: Mapping[str, Any]
    pool: Pool
    reachable: bool = True  # per-device node selection: the device serves this node


def node_matches(spec: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    name = spec.get("nodeName")
    if name:
        return bool(name == (node.get("metadata") or {}).get("name"))
    if spec.get("allNodes"):
        return True
    selector = spec.get("nodeSelector")
    if selector is not None:
        return node_selector_matches(selector, node)
    return False


def node_selector_matches(selector: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """A v1 NodeSelector (terms ORed) against a node's labels and name."""
    md = node.get("metadata") or {}
    labels, name = md.get("labels") or {}, md.get("name") or ""
    try:
        terms = node_selector_terms(selector.get("nodeSelectorTerms") or [])
    except SelectorError:
        return False
    return any(t.matches(labels, name) for t in terms)


def gather_pools(
    slices: Iterable[Mapping[str, Any]],
    node: Mapping[str, Any],
    features: DraFeatures,
    everywhere: Sequence[Mapping[str, Any]],
) -> list[Pool]:
    """``GatherPools``: the newest generation of each pool with a slice for the node (a slice
    of shared counters belongs to every node's view of its pool); a pool whose slices for the
    node are not all of it is complete when ``everywhere`` (all slices) has the rest, obsolete
    (left out) when a newer generation exists there, else incomplete."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        spec = s.get("spec") or {}
        counters = bool(spec.get("sharedCounters"))
        per_device = spec.get("perDeviceNodeSelection") is not None
        if not features.partitionable_devices and (counters or per_device):
            continue
        if per_device and not counters:
            relevant = any(node_matches(d, node) for d in spec.get("devices") or [])
        else:
            relevant = counters or node_matches(spec, node)
        if not relevant:
            continue
        pool = spec.get("pool") or {}
        key = (str(spec.get("driver") or ""), str(pool.get("name") or ""))
        gen = _generation(s)
        have = pools.get(key)
        if have is None or gen > have.generation:
            pools[key] = have = Pool(*key, gen, int(pool.get("resourceSliceCount") or 0))
        if gen == have.generation:
            have.slices.append(s)
    out = []
    for key in sorted(pools):
        pool = pools[key]
        if len(pool.slices) != pool.count:
            same = [s for s in everywhere if _pool_key(s) == key]
            generations = [_generation(s) for s in same]
            if any(g > pool.generation for g in generations):
                continue  # obsolete: the driver is publishing a newer generation
            current = [s for s, g in zip(same, generations, strict=True) if g == pool.generation]
            if len(current) == pool.count:
                mine = {id(s) for s in pool.slices}
                pool.others = [s for s in current if id(s) not in mine]
            else:
                pool.incomplete = True
        out.append(pool)
    return out


def _generation(s: Mapping[str, Any]) -> int:
    return int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0)


def _pool_key(s: Mapping[str, Any]) -> tuple[str, str]:
    spec = s.get("spec") or {}
    return (str(spec.get("driver") or ""), str((spec.get("pool") or {}).get("name") or ""))


def pool_devices(pool: Pool, features: DraFeatures, node: Mapping[str, Any]) -> list[Device]:
    """``buildPool``: the pool's devices, slices by name; none when the pool is incomplete or
    invalid (duplicate device or counter set names, consumption of an unknown counter)."""
    if pool.incomplete:
        return []
    out = _pool_devices(pool, features, node)
    if out is None:
        pool.invalid = True
        return []
    return out


def _pool_devices(
    pool: Pool, features: DraFeatures, node: Mapping[str, Any]
) -> list[Device] | None:
    out: list[Device] = []
    seen: set[str] = set()
    ordered = sorted(pool.slices, key=lambda s: str((s.get("metadata") or {}).get("name") or ""))
    for s in ordered:
        for counter_set in (s.get("spec") or {}).get("sharedCounters") or []:
            name = str(counter_set.get("name") or "")
            if name in pool.counter_sets:
                return None
            pool.counter_sets[name] = counter_set
    for s in ordered:
        per_device = bool((s.get("spec") or {}).get("perDeviceNodeSelection"))
        for d in (s.get("spec") or {}).get("devices") or []:
            if d.get("bindingConditions"):
                if not features.binding_conditions:
                    continue  # not selectable while the feature is off
                raise Unsupported(
                    f"device {d.get('name')} of pool {pool.name} has binding conditions"
                )
            for use in d.get("consumesCounters") or []:
                known = pool.counter_sets.get(str(use.get("counterSet") or ""))
                if features.partitionable_devices and (
                    known is None
                    or set(use.get("counters") or {}) - set(known.get("counters") or {})
                ):
                    return None
            name = str(d.get("name") or "")
            if name in seen:
                return None
            seen.add(name)
            reachable = not per_device or node_matches(d, node)
            out.append(Device((pool.driver, pool.name, name), d, pool, reachable))
    return out
