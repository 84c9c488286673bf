"""Structured-parameters device allocation, as kube-scheduler v1.36's allocator
(``k8s.io/dynamic-resource-allocation/structured``) decides it for one node: pure, over plain
API dicts (resource.k8s.io/v1 DeviceClasses, ResourceSlices, ResourceClaims).

:func:`allocate` is the one entry point — pod claims, classes, slices and the devices other
claims hold in, per node an :class:`Allocation` (the devices picked per claim, in the shape of
``status.allocation.devices.results``) or the reason none exists — so that `why` explains with
it and a scheduler can allocate with it.

What the allocator reads and how:
- slices per node (``nodeName``, ``allNodes``, ``nodeSelector``), grouped into pools by
  (driver, pool name); only the newest generation of a pool counts; an incomplete pool (not
  all ``resourceSliceCount`` slices seen) serves ExactCount requests but fails an ``All``
  request; a pool with duplicate device names is invalid;
- a device matches a request when every selector of the request's DeviceClass and of the
  request holds (CEL, ``dracel``) and no other claim holds it; one device serves one request
  of the pod (across the requests of a claim and across the pod's claims);
- requests: ``exactly`` (ExactCount with ``count``, or All) and ``firstAvailable`` (the first
  subrequest that can be satisfied, in order), searched with backtracking like Go's
  ``allocateOne``.
Claim ``constraints`` with ``matchAttribute`` hold across the requests they name (all when
none). Not reproduced (``Unsupported``: the caller says "not evaluated" rather than guess):
other constraint kinds, device taints, partitionable devices (shared counters),
consumable capacity, binding conditions, admin access, per-device node selection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .dracel import CelError, Unsupported, device_json, device_matches_json, device_variable
from .selectors import SelectorError, node_selector_terms

__all__ = [
    "Allocation",
    "AllocationError",
    "DeviceId",
    "RequestShortage",
    "Unsupported",
    "allocate",
    "allocated_devices",
]

DeviceId = tuple[str, str, str]  # driver, pool, device
# Backtracking steps one node's allocation may take before it is "not evaluated" (Go's search
# is exponential in the worst case too; a hostile claim must not hang `why`).
MAX_STEPS = 20_000


# One way to satisfy a request: (request name, class, selectors, count; None: All).
_Alt = tuple[str, str, tuple[str, ...], int | None]


class AllocationError(Exception):
    """The allocator failed with an error (kube-scheduler: a scheduling error, not a
    rejection): a CEL compile or runtime error, or an All request on an incomplete pool."""


@dataclass(frozen=True)
class RequestShortage:
    """Why one request found no devices on the node: ``matching`` devices satisfy its class
    and selectors, ``free`` of them are not held by other claims, it needs ``wanted``."""

    claim: str
    request: str
    device_class: str
    wanted: int | str
    matching: int
    free: int
    in_class: int = 0  # devices of the class, before the request's own selectors

    @property
    def why(self) -> str:
        if self.in_class == 0:
            return f"no device on the node is of class {self.device_class}"
        if self.matching == 0:
            return (
                f"{self.in_class} device(s) of class {self.device_class}, none matches the "
                "request's selectors"
            )
        return (
            f"{self.matching} device(s) match, {self.free} free "
            f"(the others are allocated to other claims), {self.wanted} wanted"
        )


@dataclass(frozen=True)
class Allocation:
    """The devices picked per claim (``results`` as ``status.allocation.devices.results``:
    request, driver, pool, device), or ``ok`` False with the requests that could not be met."""

    ok: bool
    results: tuple[tuple[dict[str, str], ...], ...] = ()
    shortages: tuple[RequestShortage, ...] = ()


@dataclass
class _Pool:
    driver: str
    name: str
    generation: int
    count: int
    slices: list[Mapping[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return len(self.slices) == self.count


@dataclass(frozen=True)
class _Device:
    id: DeviceId
    raw: Mapping[str, Any]
    pool: _Pool


@dataclass(frozen=True)
class _Slot:
    """One device to pick: for request ``request`` of claim ``claim`` (alternatives: the
    ``firstAvailable`` subrequests, each (name, class, selectors, count-or-all))."""

    claim: int
    request: str
    alternatives: tuple[_Alt, ...]


def _node_matches(spec: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    name = spec.get("nodeName")
    if name:
        return bool(name == (node.get("metadata") or {}).get("name"))
    if spec.get("allNodes"):
        return True
    selector = spec.get("nodeSelector")
    if selector is not None:
        return node_selector_matches(selector, node)
    if spec.get("perDeviceNodeSelection"):
        raise Unsupported("a ResourceSlice selects nodes per device (perDeviceNodeSelection)")
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


def _pools(slices: Iterable[Mapping[str, Any]], node: Mapping[str, Any]) -> list[_Pool]:
    pools: dict[tuple[str, str], _Pool] = {}
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("sharedCounters"):
            raise Unsupported("a ResourceSlice has shared counters (partitionable devices)")
        if not _node_matches(spec, node):
            continue
        pool = spec.get("pool") or {}
        key = (str(spec.get("driver") or ""), str(pool.get("name") or ""))
        gen = int(pool.get("generation") or 0)
        have = pools.get(key)
        if have is None or gen > have.generation:
            pools[key] = have = _Pool(*key, gen, int(pool.get("resourceSliceCount") or 0))
        if gen == have.generation:
            have.slices.append(s)
    return [pools[k] for k in sorted(pools)]


def _devices(pool: _Pool) -> list[_Device]:
    out: list[_Device] = []
    seen: set[str] = set()
    for s in pool.slices:
        for d in (s.get("spec") or {}).get("devices") or []:
            if any(d.get(k) for k in ("taints", "consumesCounters", "bindingConditions")):
                raise Unsupported(
                    f"device {d.get('name')} of pool {pool.name} has taints, counters or "
                    "binding conditions"
                )
            name = str(d.get("name") or "")
            if name in seen:
                return []  # an invalid pool: no device of it is used
            seen.add(name)
            out.append(_Device((pool.driver, pool.name, name), d, pool))
    return out


def allocated_devices(claims: Iterable[Mapping[str, Any]]) -> set[DeviceId]:
    """The devices allocated claims hold (``status.allocation.devices.results``)."""
    held: set[DeviceId] = set()
    for c in claims:
        alloc = (c.get("status") or {}).get("allocation") or {}
        for r in (alloc.get("devices") or {}).get("results") or []:
            held.add((str(r.get("driver")), str(r.get("pool")), str(r.get("device"))))
    return held


def _claim_name(claim: Mapping[str, Any]) -> str:
    md = claim.get("metadata") or {}
    return f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"


def _selectors(obj: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    for s in obj.get("selectors") or []:
        expr = (s.get("cel") or {}).get("expression")
        if not expr:
            raise Unsupported("a selector without a CEL expression")
        out.append(str(expr))
    return tuple(out)


def _alternative(name: str, req: Mapping[str, Any]) -> _Alt:
    if req.get("adminAccess") or req.get("capacity"):
        raise Unsupported(f"request {name} asks for admin access or device capacity")
    mode = req.get("allocationMode") or "ExactCount"
    count: int | None = None if mode == "All" else int(req.get("count") or 1)
    return (name, str(req.get("deviceClassName") or ""), _selectors(req), count)


def _slots(claims: Sequence[Mapping[str, Any]]) -> list[_Slot]:
    slots: list[_Slot] = []
    for index, claim in enumerate(claims):
        devices = (claim.get("spec") or {}).get("devices") or {}
        for c in devices.get("constraints") or []:
            if set(c) - {"requests", "matchAttribute"} or not c.get("matchAttribute"):
                raise Unsupported(
                    f"claim {_claim_name(claim)} has a constraint other than matchAttribute"
                )
        for req in devices.get("requests") or []:
            name = str(req.get("name") or "")
            alts: tuple[_Alt, ...]
            if req.get("exactly"):
                alts = (_alternative(name, req["exactly"]),)
            elif req.get("firstAvailable"):
                alts = tuple(
                    _alternative(f"{name}/{sub.get('name')}", sub) for sub in req["firstAvailable"]
                )
            else:
                raise Unsupported(f"request {name} of claim {_claim_name(claim)}: unknown type")
            slots.append(_Slot(index, name, alts))
    return slots


def _applies(names: set[str], request: str) -> bool:
    """A constraint naming ``req`` covers its subrequests ``req/sub`` too."""
    return request in names or request.split("/", 1)[0] in names


def _attribute(dev: _Device, qualified: str) -> tuple[str, Any] | None:
    """``lookupAttribute``: the fully qualified name, or the bare id in the driver's domain;
    (type, value) so that values of different types never match."""
    attributes = dev.raw.get("attributes") or {}
    found = attributes.get(qualified)
    if found is None:
        domain, _, ident = qualified.partition("/")
        found = attributes.get(ident) if domain == dev.id[0] else None
    if not isinstance(found, Mapping):
        return None
    for key in ("string", "int", "bool", "version"):
        if key in found:
            return (key, found[key])
    return None


class _Search:
    def __init__(
        self,
        claims: Sequence[Mapping[str, Any]],
        classes: Mapping[str, Mapping[str, Any]],
        pools: list[_Pool],
        in_use: set[DeviceId],
    ) -> None:
        self.claims = claims
        self.classes = classes
        self.pools = pools
        self.devices = [d for p in pools for d in _devices(p)]
        self.in_use = in_use
        self.steps = 0
        self._match: dict[tuple[str, str, tuple[str, ...], DeviceId], bool] = {}
        self._vars: dict[DeviceId, str] = {}  # device -> its CEL variable, as JSON
        self._candidates: dict[tuple[int, _Alt], list[_Device]] = {}

    def matches(self, claim: int, cls: str, selectors: tuple[str, ...], dev: _Device) -> bool:
        key = (_claim_name(self.claims[claim]), cls, selectors, dev.id)
        if key in self._match:
            return self._match[key]
        variable = self._vars.get(dev.id)
        if variable is None:
            variable = self._vars[dev.id] = device_json(device_variable(dev.raw, dev.id[0]))
        klass = self.classes.get(cls) or {}
        ok = True
        owners = (
            (f"class {cls}", _selectors(klass.get("spec") or {})),
            (f"claim {key[0]}", selectors),
        )
        for owner, exprs in owners:
            for i, expr in enumerate(exprs):
                try:
                    if not device_matches_json(expr, variable):
                        ok = False
                        break
                except CelError as err:
                    kind = "CEL compile error" if err.compile_error else "CEL runtime error"
                    raise AllocationError(f"{owner}: selector #{i}: {kind}: {err}") from err
            if not ok:
                break
        self._match[key] = ok
        return ok

    def candidates(self, claim: int, alt: _Alt) -> list[_Device]:
        key = (claim, alt)
        found = self._candidates.get(key)
        if found is None:
            found = [d for d in self.devices if self.matches(claim, alt[1], alt[2], d)]
            self._candidates[key] = found
        return found

    def run(self, slots: list[_Slot]) -> list[list[dict[str, str]]] | None:
        picked: list[tuple[int, str, _Device]] = []
        used = set(self.in_use)

        def place(i: int) -> bool:
            if i == len(slots):
                return True
            slot = slots[i]
            for alt in slot.alternatives:
                found = [d for d in self.candidates(slot.claim, alt) if d.id not in used]
                if alt[3] is None:  # All: every matching device, from complete pools only
                    everything = self.candidates(slot.claim, alt)
                    for p in {id(d.pool): d.pool for d in everything}.values():
                        if not p.complete:
                            raise AllocationError(
                                f"claim {_claim_name(self.claims[slot.claim])}, request "
                                f"{alt[0]}: asks for all devices, but resource pool "
                                f"{p.driver}/{p.name} is currently being updated"
                            )
                    if not everything or len(found) < len(everything):
                        continue
                    if self._take(picked, used, slot.claim, alt[0], found, place, i):
                        return True
                    continue
                if self._choose(picked, used, slot.claim, alt[0], found, alt[3], place, i):
                    return True
            return False

        if not place(0):
            return None
        results: list[list[dict[str, str]]] = [[] for _ in self.claims]
        for claim, request, dev in picked:
            results[claim].append(
                {"request": request, "driver": dev.id[0], "pool": dev.id[1], "device": dev.id[2]}
            )
        return results

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unsupported(f"the device search took more than {MAX_STEPS} steps")

    def _take(
        self,
        picked: list[Any],
        used: set[DeviceId],
        claim: int,
        request: str,
        devs: list[_Device],
        place: Any,
        i: int,
    ) -> bool:
        self._tick()
        added = 0
        for d in devs:
            if not self._constraints_allow(picked, claim, request, d):
                break
            used.add(d.id)
            picked.append((claim, request, d))
            added += 1
        if added == len(devs) and place(i + 1):
            return True
        for d in devs[:added]:
            used.discard(d.id)
            picked.pop()
        return False

    def _choose(
        self,
        picked: list[Any],
        used: set[DeviceId],
        claim: int,
        request: str,
        devs: list[_Device],
        count: int,
        place: Any,
        i: int,
        start: int = 0,
    ) -> bool:
        if count == 0:
            return bool(place(i + 1))
        if len(devs) - start < count:
            return False  # too few devices left for this request
        for j in range(start, len(devs)):
            self._tick()
            d = devs[j]
            if not self._constraints_allow(picked, claim, request, d):
                continue
            used.add(d.id)
            picked.append((claim, request, d))
            if self._choose(picked, used, claim, request, devs, count - 1, place, i, j + 1):
                return True
            used.discard(d.id)
            picked.pop()
        return False

    def _constraints_allow(
        self, picked: list[tuple[int, str, _Device]], claim: int, request: str, dev: _Device
    ) -> bool:
        """The claim's matchAttribute constraints (``matchAttributeConstraint.add``): a device
        of a request they name must have the attribute, with the value of those picked."""
        devices = (self.claims[claim].get("spec") or {}).get("devices") or {}
        for c in devices.get("constraints") or []:
            names = set(c.get("requests") or [])
            if names and not _applies(names, request):
                continue
            attribute = str(c["matchAttribute"])
            value = _attribute(dev, attribute)
            if value is None:
                return False
            for other_claim, other_request, other in picked:
                if other_claim != claim or (names and not _applies(names, other_request)):
                    continue
                if _attribute(other, attribute) != value:
                    return False
        return True

    def shortages(self, slots: list[_Slot]) -> tuple[RequestShortage, ...]:
        out = []
        for slot in slots:
            for alt in slot.alternatives:
                matching = self.candidates(slot.claim, alt)
                free = [d for d in matching if d.id not in self.in_use]
                wanted: int | str = "all" if alt[3] is None else alt[3]
                if alt[3] is None or len(free) < alt[3] or not matching:
                    out.append(
                        RequestShortage(
                            _claim_name(self.claims[slot.claim]),
                            alt[0],
                            alt[1],
                            wanted,
                            len(matching),
                            len(free),
                            len(self.candidates(slot.claim, (alt[0], alt[1], (), alt[3]))),
                        )
                    )
        return tuple(out)


def allocate(
    claims: Sequence[Mapping[str, Any]],
    node: Mapping[str, Any],
    classes: Mapping[str, Mapping[str, Any]],
    slices: Iterable[Mapping[str, Any]],
    in_use: set[DeviceId],
) -> Allocation:
    """Allocate devices on ``node`` for every request of ``claims`` (unallocated
    ResourceClaim dicts), from ``slices``, avoiding ``in_use``. ``classes`` maps a
    DeviceClass name to its dict; every class the claims name must be in it (the caller
    reports a missing one, as kube-scheduler's PreFilter does).

    Raises :class:`AllocationError` where kube-scheduler's allocator fails with an error and
    :class:`Unsupported` for what is not reproduced (see the module docstring)."""
    slots = _slots(claims)
    search = _Search(claims, classes, _pools(slices, node), in_use)
    results = search.run(slots)
    if results is None:
        return Allocation(False, (), search.shortages(slots))
    return Allocation(True, tuple(tuple(r) for r in results))
