"""The DRA features kube-scheduler's allocator changes with (``structured.Features``) and the
two that need more than a flag: device taints against a request's tolerations
(``taintPreventsAllocation``, ``resourceclaim.ToleratesTaint``) and partitionable devices'
shared counters (``checkAvailableCounters``), as k8s.io/dynamic-resource-allocation v0.36.3
does them. Pure, over plain API dicts.

Defaults per version (pkg/features/kube_features.go): DRAPrioritizedList and DRAAdminAccess
are on from 1.34 (GA in 1.36); DRADeviceTaints, DRAPartitionableDevices,
DRAConsumableCapacity and DRADeviceBindingConditions from 1.36 (beta). DRADeviceTaintRules is
off by default in 1.36 (beta): only the taints drivers publish in their slices count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .quantity import QuantityError, parse_quantity

__all__ = [
    "DraFeatures",
    "FEATURES_1_36",
    "features_for",
    "untolerated_taint",
    "Counters",
]

# Effects that keep a device from being allocated; others (None, unknown) are ignored.
_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class DraFeatures:
    """The allocator's feature switches (``structured.Features``) that change its choice."""

    device_taints: bool = True
    partitionable_devices: bool = True
    binding_conditions: bool = True
    consumable_capacity: bool = True


FEATURES_1_36 = DraFeatures()


def features_for(minor: int) -> DraFeatures:
    """kube-scheduler 1.``minor``'s defaults (DRA is on by default from 1.34)."""
    if minor >= 36:
        return FEATURES_1_36
    return DraFeatures(False, False, False, False)


Toleration = tuple[str, str, str, str, Any]  # key, operator, value, effect, tolerationSeconds
_TOLERATION_FIELDS = ("key", "operator", "value", "effect", "tolerationSeconds")


def tolerations(request: Mapping[str, Any]) -> tuple[Toleration, ...]:
    """A request's (or subrequest's) ``tolerations``, hashable."""
    return tuple(
        (
            str(t.get("key") or ""),
            str(t.get("operator") or ""),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
            t.get("tolerationSeconds"),
        )
        for t in request.get("tolerations") or []
        if isinstance(t, Mapping)
    )


def toleration_dicts(tolerated: Iterable[Toleration]) -> list[dict[str, Any]]:
    """The tolerations as the API spells them (an allocation result carries its request's)."""
    return [
        {k: v for k, v in zip(_TOLERATION_FIELDS, t, strict=True) if v not in ("", None)}
        for t in tolerated
    ]


def _tolerates(toleration: Toleration, taint: Mapping[str, Any]) -> bool:
    key, operator, value, effect, _ = toleration
    if effect and effect != taint.get("effect"):
        return False
    if key and key != taint.get("key"):
        return False
    if operator in ("", "Equal"):
        return value == str(taint.get("value") or "")
    return operator == "Exists"


def untolerated_taint(
    device: Mapping[str, Any], tolerated: Iterable[Toleration]
) -> Mapping[str, Any] | None:
    """The first NoSchedule/NoExecute taint of ``device`` no toleration tolerates, or None."""
    tolerated = tuple(tolerated)
    for taint in device.get("taints") or []:
        if taint.get("effect") not in _BLOCKING_EFFECTS:
            continue
        if not any(_tolerates(t, taint) for t in tolerated):
            return dict(taint)
    return None


def taint_text(taint: Mapping[str, Any]) -> str:
    """``key=value:Effect`` (kubectl's taint notation)."""
    value = taint.get("value")
    return f"{taint.get('key')}{'=' + str(value) if value else ''}:{taint.get('effect')}"


def _quantity(value: Any) -> int:
    try:
        return parse_quantity(value)
    except QuantityError:
        return 0  # API validation refuses such a counter; it offers nothing


def _consumption(device: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    return [
        (str(c.get("counterSet") or ""), str(name), _quantity((v or {}).get("value")))
        for c in device.get("consumesCounters") or []
        for name, v in (c.get("counters") or {}).items()
    ]


class Counters:
    """The shared counters of the pools being allocated from: what the pools offer, less what
    devices allocated to other claims consume, less what this allocation has picked. Keyed by
    pool name alone, as the Go allocator keys them."""

    def __init__(self) -> None:
        self._available: dict[str, dict[tuple[str, str], int]] = {}
        self._consumed: dict[str, dict[tuple[str, str], int]] = {}

    def offer(
        self,
        pool: str,
        counter_sets: Mapping[str, Mapping[str, Any]],
        allocated: Iterable[Mapping[str, Any]],
    ) -> None:
        """Record ``pool``'s counter sets (name → set) and the devices of it other claims hold."""
        if pool in self._available:
            return
        available = {
            (set_name, str(name)): _quantity((v or {}).get("value"))
            for set_name, s in counter_sets.items()
            for name, v in (s.get("counters") or {}).items()
        }
        for device in allocated:
            for key in [(s, n) for s, n, _ in _consumption(device)]:
                if key in available:  # negative is fine: nothing left
                    available[key] -= sum(q for s, n, q in _consumption(device) if (s, n) == key)
        self._available[pool] = available

    def fits_alone(self, pool: str, device: Mapping[str, Any]) -> bool:
        """``device`` fits the counters left in ``pool`` with nothing else picked."""
        available = self._available.get(pool, {})
        return all(available.get((s, n), 0) >= q for s, n, q in _consumption(device))

    def take(self, pool: str, device: Mapping[str, Any]) -> bool:
        """Consume ``device``'s counters if every counter of the pool stays covered."""
        consumed = self._consumed.setdefault(pool, {})
        used = _consumption(device)
        for s, n, q in used:
            consumed[(s, n)] = consumed.get((s, n), 0) + q
        available = self._available.get(pool, {})
        if any(left < consumed.get(key, 0) for key, left in available.items()):
            self.give_back(pool, device)
            return False
        return True

    def give_back(self, pool: str, device: Mapping[str, Any]) -> None:
        consumed = self._consumed.setdefault(pool, {})
        for s, n, q in _consumption(device):
            consumed[(s, n)] = consumed.get((s, n), 0) - q
