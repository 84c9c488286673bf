"""Consumable capacity (DRAConsumableCapacity, beta and on by default from 1.36), as
k8s.io/dynamic-resource-allocation v0.36.3 ``structured/internal/incubating``
(consumable_capacity.go) computes it: what a request consumes of each capacity of a device
(its ``capacity.requests``, else the policy's default, else everything; rounded up to the
policy's valid range or values), whether that stays within the device's capacity given what
other claims' shares and this allocation already consume, and the ``consumedCapacity`` an
allocation result records. Pure; quantities in nanos (``quantity.parse_quantity``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .quantity import NANO, QuantityError, parse_quantity

__all__ = ["Capacities", "consumed", "fits", "quantity_text", "shares"]

DeviceId = tuple[str, str, str]


def _q(value: Any) -> int:
    try:
        return parse_quantity(value)
    except QuantityError:
        return 0  # API validation refuses it


def _value(nanos: int) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return -((-nanos) // NANO)


def quantity_text(nanos: int) -> str:
    """``resource.NewQuantity(n, BinarySI)``'s text for a whole number of units."""
    units = nanos // NANO
    for power, suffix in ((6, "Ei"), (5, "Pi"), (4, "Ti"), (3, "Gi"), (2, "Mi"), (1, "Ki")):
        if units and units % 1024**power == 0:
            return f"{units // 1024**power}{suffix}"
    return str(units)


def _policy(capacity: Mapping[str, Any]) -> Mapping[str, Any]:
    return capacity.get("requestPolicy") or {}


def _consumed_one(requested: Any, capacity: Mapping[str, Any]) -> tuple[int, str, bool]:
    """``calculateConsumedCapacity``: (nanos, text, whether it is the policy's default)."""
    policy = _policy(capacity)
    if requested is None:
        if policy.get("default") is not None:
            return _q(policy["default"]), str(policy["default"]), True
        return _q(capacity.get("value")), str(capacity.get("value")), False
    want = _q(requested)
    valid_range = policy.get("validRange") or {}
    if valid_range.get("min") is not None:
        low = _q(valid_range["min"])
        if want < low:
            return low, str(valid_range["min"]), False
        if valid_range.get("step") is None:
            return want, str(requested), False
        step, start = _value(_q(valid_range["step"])), _value(low)
        n, mod = divmod(_value(want) - start, step)
        rounded = (start + step * (n + (1 if mod else 0))) * NANO
        return rounded, quantity_text(rounded), False
    for valid in policy.get("validValues") or []:
        if want <= _q(valid):
            return _q(valid), str(valid), False
    return want, str(requested), False


def _violates(nanos: int, is_default: bool, capacity: Mapping[str, Any]) -> bool:
    """``violatesPolicy``: above the range's max or off its step, or not a valid value."""
    policy = _policy(capacity)
    if (
        not policy
        or is_default
        or (policy.get("default") is not None and nanos == _q(policy["default"]))
    ):
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        if valid_range.get("max") is not None and nanos > _q(valid_range["max"]):
            return True
        if valid_range.get("step") is not None:
            start = _value(_q(valid_range.get("min") or 0))
            return (_value(nanos) - start) % _value(_q(valid_range["step"])) != 0
        return False
    values = policy.get("validValues") or []
    return bool(values) and all(nanos != _q(v) for v in values)


def consumed(requests: Mapping[str, Any] | None, device: Mapping[str, Any]) -> dict[str, str]:
    """``GetConsumedCapacityFromRequest``: what the request consumes of every capacity of
    ``device``, as the result's ``consumedCapacity`` spells it."""
    requests = requests or {}
    return {
        str(name): _consumed_one(requests.get(name), cap)[1]
        for name, cap in (device.get("capacity") or {}).items()
    }


def fits(
    requests: Mapping[str, Any] | None,
    device: Mapping[str, Any],
    held: Mapping[str, int],
    allocating: Mapping[str, int],
) -> bool | None:
    """``CmpRequestOverCapacity``: the request's consumption of every capacity of ``device``
    keeps to the policy and, with what other claims ``held`` and this allocation is
    ``allocating``, within the capacity. None: it requests a capacity the device lacks
    (Go's error; the device is skipped)."""
    requests = requests or {}
    capacities = device.get("capacity") or {}
    if set(requests) - set(capacities):
        return None
    for name, cap in capacities.items():
        nanos, _, is_default = _consumed_one(requests.get(name), cap)
        if _violates(nanos, is_default, cap):
            return False
        if held.get(name, 0) + nanos + allocating.get(name, 0) > _q(cap.get("value")):
            return False
    return True


def shares(
    claims: Iterable[Mapping[str, Any]],
) -> tuple[set[DeviceId], dict[DeviceId, dict[str, int]]]:
    """The devices allocated claims share (results with a ``shareID``:
    ``AllocatedSharedDeviceIDs``) and what the shares consume per device
    (``AggregatedCapacity``); admin-access results hold nothing."""
    shared: set[DeviceId] = set()
    held: dict[DeviceId, dict[str, int]] = {}
    for c in claims:
        alloc = (c.get("status") or {}).get("allocation") or {}
        for r in (alloc.get("devices") or {}).get("results") or []:
            if r.get("adminAccess") or not r.get("shareID"):
                continue
            key = (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
            shared.add(key)
            if r.get("consumedCapacity"):
                total = held.setdefault(key, {})
                for name, value in r["consumedCapacity"].items():
                    total[str(name)] = total.get(str(name), 0) + _q(value)
    return shared, held


class Capacities:
    """What other claims' shares hold and what this allocation is taking, per device."""

    def __init__(self, held: Mapping[DeviceId, Mapping[str, int]]) -> None:
        self.held = held
        self.allocating: dict[DeviceId, dict[str, int]] = {}
        self.sharing: dict[DeviceId, int] = {}  # shares being allocated per device

    def in_use(self, device: DeviceId) -> bool:
        """``deviceCapacityInUse``: some of its capacity is held or being allocated."""
        return device in self.held or self.sharing.get(device, 0) > 0

    def fits(self, device: DeviceId, raw: Mapping[str, Any], requests: Mapping[str, Any]) -> bool:
        ok = fits(requests, raw, self.held.get(device, {}), self.allocating.get(device, {}))
        return ok is True

    def take(self, device: DeviceId, amounts: Mapping[str, str]) -> None:
        total = self.allocating.setdefault(device, {})
        for name, value in amounts.items():
            total[name] = total.get(name, 0) + _q(value)
        self.sharing[device] = self.sharing.get(device, 0) + 1

    def give_back(self, device: DeviceId, amounts: Mapping[str, str]) -> None:
        total = self.allocating.get(device, {})
        for name, value in amounts.items():
            total[name] = total.get(name, 0) - _q(value)
        self.sharing[device] -= 1
