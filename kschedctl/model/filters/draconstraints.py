"""A claim's device ``constraints`` as kube-scheduler v1.36's allocator keeps them
(k8s.io/dynamic-resource-allocation v0.36.3 ``structured/internal/incubating``): stateful
objects the search adds each picked device to and removes it from on backtracking, in the
same order, so that their verdicts — quirks included — are Go's.

- ``matchAttribute``: every device of the requests named (all when none) has the attribute,
  with the value of the first;
- ``distinctAttribute`` (DRAConsumableCapacity, on by default from 1.36): each device's value
  differs from the values remembered per request — Go remembers one value per request name
  (the latest added) and forgets it when any device of that request is removed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["Constraint", "attribute", "constraints_of"]

Value = tuple[str, Any]  # (type, value): values of different types never compare equal


def attribute(device: Mapping[str, Any], driver: str, qualified: str) -> Value | None:
    """``lookupAttribute``: the fully qualified name, or the bare id in the driver's domain."""
    attributes = device.get("attributes") or {}
    found = attributes.get(qualified)
    if found is None:
        domain, _, ident = qualified.partition("/")
        found = attributes.get(ident) if domain == driver else None
    if not isinstance(found, Mapping):
        return None
    for key in ("string", "int", "bool", "version"):
        if key in found:
            return (key, found[key])
    return None


class Constraint:
    """One constraint of a claim; ``add`` False: the device would break it."""

    def __init__(self, requests: Sequence[str], name: str, distinct: bool) -> None:
        self.requests = set(requests)
        self.name = name
        self.distinct = distinct
        self.count = 0
        self.first: Value | None = None
        self.seen: dict[str, Value] = {}  # distinct: request -> the latest value added

    def _applies(self, request: str) -> bool:
        """A constraint naming ``req`` covers its subrequests ``req/sub`` too."""
        return not self.requests or bool({request, request.split("/", 1)[0]} & self.requests)

    def add(self, request: str, device: Mapping[str, Any], driver: str) -> bool:
        if not self._applies(request):
            return True
        value = attribute(device, driver, self.name)
        if value is None:
            return False
        base = request.split("/", 1)[0]
        if self.count and (value in self.seen.values() if self.distinct else value != self.first):
            return False
        if self.count == 0:
            self.first = value
        self.seen[base] = value
        self.count += 1
        return True

    def remove(self, request: str) -> None:
        if not self._applies(request):
            return
        self.seen.pop(request.split("/", 1)[0], None)
        self.count -= 1


def constraints_of(claim: Mapping[str, Any]) -> list[Constraint] | int:
    """The claim's constraints, or the index of the first of no known kind."""
    out: list[Constraint] = []
    for i, c in enumerate(
        ((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []
    ):
        requests = [str(r) for r in c.get("requests") or []]
        if c.get("matchAttribute"):
            out.append(Constraint(requests, str(c["matchAttribute"]), distinct=False))
        elif c.get("distinctAttribute"):
            out.append(Constraint(requests, str(c["distinctAttribute"]), distinct=True))
        else:
            return i
    return out
