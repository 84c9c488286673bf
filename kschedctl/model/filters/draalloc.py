"""Structured-parameters device allocation, as kube-scheduler v1.36's allocator
(``k8s.io/dynamic-resource-allocation/structured``) decides it for one node: pure, over plain
API dicts (resource.k8s.io/v1 DeviceClasses, ResourceSlices, ResourceClaims).

:func:`allocate` is the one entry point — pod claims, classes, slices and the devices other
claims hold in, per node an :class:`Allocation` (the devices picked per claim, in the shape of
``status.allocation.devices.results``) or the reason none exists — so that `why` explains with
it and a scheduler can allocate with it.

What the allocator reads and how:
- pools (``drapools``): slices per node (``nodeName``, ``allNodes``, ``nodeSelector``, per
  device with ``perDeviceNodeSelection``), grouped by (driver, pool name); only the newest
  generation of a pool counts; an incomplete pool (not all ``resourceSliceCount`` slices
  published) and an invalid one (duplicate names, unknown counters) serve no request and fail
  every ``All`` request;
- a device matches a request when every selector of the request's DeviceClass and of the
  request holds (CEL, ``dracel``) and no other claim holds it; one device serves one request
  of the pod (across the requests of a claim and across the pod's claims);
- requests: ``exactly`` (ExactCount with ``count``, or All) and ``firstAvailable`` (the first
  subrequest that can be satisfied, in order), searched with backtracking like Go's
  ``allocateOne``.
Claim ``constraints`` (``matchAttribute``, ``distinctAttribute``: ``draconstraints``) hold
across the requests they name (all when none). What the version's default features add
(``drafeatures``; v1.36 unless told): device taints a request does not tolerate keep the
device (NoSchedule, NoExecute; the result records the request's tolerations); partitionable
devices take their ``consumesCounters`` from the pool's ``sharedCounters`` (slices of their
own), less what devices of other claims consume; ``adminAccess`` requests may take devices
other claims hold (and results with admin access hold nothing).
Consumable capacity (``draconsume``): a request's ``capacity.requests`` must fit the device's
capacity (rounded up to its request policy) beside what other claims' shares and this
allocation take; a device with ``allowMultipleAllocations`` serves several requests, each a
share with a ``shareID`` and its ``consumedCapacity``.
Not reproduced (``Unsupported``: the caller says "not evaluated" rather than guess): binding
conditions.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .dracel import CelError, Unsupported, device_json, device_matches_json, device_variable
from .draconstraints import Constraint, constraints_of
from .draconsume import Capacities, consumed
from .drafeatures import (
    FEATURES_1_36,
    Counters,
    DraFeatures,
    Toleration,
    taint_text,
    toleration_dicts,
    tolerations,
    untolerated_taint,
)
from .drapools import (
    Device,
    DeviceId,
    Pool,
    gather_pools,
    pool_devices,
)

__all__ = [
    "Allocation",
    "AllocationError",
    "DeviceId",
    "RequestShortage",
    "Unsupported",
    "allocate",
    "allocated_devices",
]

# Backtracking steps one node's allocation may take before it is "not evaluated" (Go's search
# is exponential in the worst case too; a hostile claim must not hang `why`).
MAX_STEPS = 20_000


@dataclass(frozen=True)
class _Alt:
    """One way to satisfy a request (the request itself, or one ``firstAvailable``
    subrequest); ``count`` None: All."""

    name: str
    cls: str
    selectors: tuple[str, ...]
    count: int | None
    admin: bool = False
    tolerations: tuple[Toleration, ...] = ()
    capacity: tuple[tuple[str, str], ...] = ()  # capacity.requests (consumable capacity)

    @property
    def short_name(self) -> str:
        """``request.name()``: a subrequest's own name."""
        return self.name.rsplit("/", 1)[-1]


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
    tainted: int = 0  # free devices with a taint the request does not tolerate
    taint: str = ""  # one such taint, key=value:Effect
    no_counters: int = 0  # free, tolerated devices whose pool lacks the counters they consume
    no_capacity: int = 0  # ... or without the capacity the request asks for (consumable)

    @property
    def why(self) -> str:
        if self.in_class == 0:
            return f"no device on the node is of class {self.device_class}"
        if self.matching == 0:
            return (
                f"{self.in_class} device(s) of class {self.device_class}, none matches the "
                "request's selectors"
            )
        parts = [f"{self.matching} device(s) match, {self.free} free"]
        if self.free < self.matching:
            parts[0] += " (the others are allocated to other claims)"
        if self.tainted:
            parts.append(f"{self.tainted} of them tainted ({self.taint}) without a toleration")
        if self.no_counters:
            parts.append(f"{self.no_counters} of them lack the shared counters left in their pool")
        if self.no_capacity:
            parts.append(f"{self.no_capacity} of them lack the capacity the request asks for")
        return ", ".join(parts) + f", {self.wanted} wanted"


@dataclass(frozen=True)
class Allocation:
    """The devices picked per claim (``results`` as ``status.allocation.devices.results``:
    request, driver, pool, device), or ``ok`` False with the requests that could not be met."""

    ok: bool
    results: tuple[tuple[dict[str, Any], ...], ...] = ()
    shortages: tuple[RequestShortage, ...] = ()
    invalid_pools: bool = False  # kube-scheduler: "invalid resource pools were encountered"


@dataclass(frozen=True)
class _Slot:
    """One device to pick: for request ``request`` of claim ``claim`` (alternatives: the
    ``firstAvailable`` subrequests, each (name, class, selectors, count-or-all))."""

    claim: int
    request: str
    alternatives: tuple[_Alt, ...]


def allocated_devices(claims: Iterable[Mapping[str, Any]], shares: bool = True) -> set[DeviceId]:
    """The devices allocated claims hold (``status.allocation.devices.results``); with
    consumable capacity (``shares``) a result with a ``shareID`` holds only its share."""
    held: set[DeviceId] = set()
    for c in claims:
        alloc = (c.get("status") or {}).get("allocation") or {}
        for r in (alloc.get("devices") or {}).get("results") or []:
            if r.get("adminAccess") or (shares and r.get("shareID")):
                continue  # admin access holds nothing (``foreachAllocatedDevice``)
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
    wanted = (req.get("capacity") or {}).get("requests") or {}
    mode = req.get("allocationMode") or "ExactCount"
    count: int | None = None if mode == "All" else int(req.get("count") or 1)
    return _Alt(
        name,
        str(req.get("deviceClassName") or ""),
        _selectors(req),
        count,
        bool(req.get("adminAccess")),
        tolerations(req),
        tuple(sorted((str(k), str(v)) for k, v in wanted.items())),
    )


def _slots(claims: Sequence[Mapping[str, Any]]) -> list[_Slot]:
    slots: list[_Slot] = []
    for index, claim in enumerate(claims):
        devices = (claim.get("spec") or {}).get("devices") or {}
        unknown = constraints_of(claim)
        if isinstance(unknown, int):
            raise AllocationError(
                f"claim {_claim_name(claim)}, constraint #{unknown}: empty constraint "
                "(unsupported constraint type?)"
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


class _Search:
    def __init__(
        self,
        claims: Sequence[Mapping[str, Any]],
        classes: Mapping[str, Mapping[str, Any]],
        pools: list[Pool],
        in_use: set[DeviceId],
        features: DraFeatures,
        node: Mapping[str, Any],
        shared: set[DeviceId],
        capacities: Capacities,
    ) -> None:
        self.claims = claims
        self.classes = classes
        self.features = features
        self.pools = pools
        self.devices = [d for p in pools for d in pool_devices(p, features, node)]
        self.in_use = in_use
        self.capacities = capacities
        self.counters = Counters()
        allocated = in_use | shared | set(capacities.held)  # ``IsDeviceAllocated``
        for p in pools:
            held = [d.raw for d in self.devices if d.pool is p and d.id in allocated]
            held += [
                d
                for s in p.others
                for d in (s.get("spec") or {}).get("devices") or []
                if (p.driver, p.name, str(d.get("name") or "")) in allocated
            ]
            self.counters.offer(p.name, p.counter_sets, held)
        self.steps = 0
        # device -> the claims it is being allocated to in this search (``allocatingDevices``)
        self.picking: dict[DeviceId, list[int]] = {}
        # claim, alternative, device, counters reserved, capacity consumed (a share)
        self.picked: list[tuple[int, _Alt, Device, bool, dict[str, str] | None]] = []
        self.constraints = [c if isinstance(c, list) else [] for c in map(constraints_of, claims)]
        self._match: dict[tuple[str, str, tuple[str, ...], DeviceId], bool] = {}
        self._vars: dict[DeviceId, str] = {}  # device -> its CEL variable, as JSON
        self._candidates: dict[tuple[int, _Alt], list[Device]] = {}

    def matches(self, claim: int, cls: str, selectors: tuple[str, ...], dev: Device) -> bool:
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

    def candidates(self, claim: int, alt: _Alt) -> list[Device]:
        """The devices the class's and the request's selectors select (``isSelectable``)."""
        key = (claim, alt)
        found = self._candidates.get(key)
        if found is None:
            found = [
                d
                for d in self.devices
                if self.matches(claim, alt.cls, alt.selectors, d) and d.reachable
            ]
            if alt.count is None and self.features.consumable_capacity:
                # All's devices: those whose capacity the request fits, now (validation)
                found = [d for d in found if self._fits(alt, d)]
            self._candidates[key] = found
        return found

    def _multiple(self, dev: Device) -> bool:
        """The device allows multiple allocations (consumable capacity)."""
        return self.features.consumable_capacity and bool(dev.raw.get("allowMultipleAllocations"))

    def _fits(self, alt: _Alt, dev: Device) -> bool:
        """``CmpRequestOverCapacity`` (with the feature on; always true without it)."""
        if not self.features.consumable_capacity:
            return True
        return self.capacities.fits(dev.id, dev.raw, dict(alt.capacity))

    def _blocked(self, claim: int, alt: _Alt, dev: Device) -> bool:
        """Held or being allocated (admin access: only by the same claim; devices allowing
        multiple allocations never), a partitionable device while the feature is off."""
        if alt.admin:
            if not self._multiple(dev) and claim in self.picking.get(dev.id, ()):
                return True
        elif dev.id in self.in_use or self.picking.get(dev.id):
            return True
        return bool(dev.raw.get("consumesCounters")) and not self.features.partitionable_devices

    def _taint(self, alt: _Alt, dev: Device) -> Mapping[str, Any] | None:
        if not self.features.device_taints:
            return None  # the feature off: taints are ignored
        return untolerated_taint(dev.raw, alt.tolerations)

    def _barred(self, alt: _Alt, dev: Device) -> bool:
        """Never allocatable for ``alt``: an untolerated taint, or counters without the
        partitionable devices feature."""
        if dev.raw.get("consumesCounters") and not self.features.partitionable_devices:
            return True
        return self._taint(alt, dev) is not None

    def _try(self, claim: int, alt: _Alt, dev: Device, must: bool = False) -> bool:
        """``allocateDevice``: pick ``dev`` for ``alt`` if nothing forbids it."""
        if self._blocked(claim, alt, dev) or (alt.count is not None and not self._fits(alt, dev)):
            return False
        multiple = self._multiple(dev)
        counted = bool(dev.raw.get("consumesCounters")) and not (
            multiple and self.capacities.in_use(dev.id)
        )
        if counted and not self.counters.take(dev.pool.name, dev.raw):
            return False
        if self._taint(alt, dev) is not None:
            if counted:
                self.counters.give_back(dev.pool.name, dev.raw)
            return False
        added: list[Constraint] = []
        for constraint in self.constraints[claim]:
            if not constraint.add(alt.name, dev.raw, dev.id[0]):
                break
            added.append(constraint)
        if len(added) < len(self.constraints[claim]):
            for constraint in reversed(added):
                constraint.remove(alt.name)
            if counted:
                self.counters.give_back(dev.pool.name, dev.raw)
            if must:
                raise AllocationError(
                    f"claim {_claim_name(self.claims[claim])}, request {alt.short_name}: "
                    f"cannot add device {'/'.join(dev.id)} because a claim constraint would "
                    "not be satisfied"
                )
            return False
        if not multiple:
            self.picking.setdefault(dev.id, []).append(claim)
        if not self._fits(alt, dev):  # with what this allocation already takes
            self._rollback(claim, alt, dev, counted, None, multiple)
            return False
        share = consumed(dict(alt.capacity), dev.raw) if multiple else None
        if share is not None:
            self.capacities.take(dev.id, share)
        self.picked.append((claim, alt, dev, counted, share))
        return True

    def _rollback(
        self, claim: int, alt: _Alt, dev: Device, counted: bool,
        share: dict[str, str] | None, multiple: bool,
    ) -> None:  # fmt: skip
        if share is not None:
            self.capacities.give_back(dev.id, share)
        if not multiple:
            self.picking[dev.id].remove(claim)
        for constraint in reversed(self.constraints[claim]):
            constraint.remove(alt.name)
        if counted:
            self.counters.give_back(dev.pool.name, dev.raw)

    def _undo(self) -> None:
        claim, alt, dev, counted, share = self.picked.pop()
        self._rollback(claim, alt, dev, counted, share, self._multiple(dev))

    def run(self, slots: list[_Slot]) -> list[list[dict[str, Any]]] | None:
        def place(i: int) -> bool:
            if i == len(slots):
                return True
            slot = slots[i]
            for alt in slot.alternatives:
                found = self.candidates(slot.claim, alt)
                if alt.count is not None:
                    if self._choose(slot.claim, alt, found, alt.count, place, i):
                        return True
                    continue
                # All: every selected device, or none
                if not found:
                    continue
                self._tick()
                added = 0
                for d in found:
                    if not self._try(slot.claim, alt, d, must=True):
                        break
                    added += 1
                if added == len(found) and place(i + 1):
                    return True
                for _ in range(added):
                    self._undo()
            return False

        if not place(0):
            return None
        results: list[list[dict[str, Any]]] = [[] for _ in self.claims]
        for claim, alt, dev, _, share in self.picked:
            result: dict[str, Any] = {
                "request": alt.name,
                "driver": dev.id[0],
                "pool": dev.id[1],
                "device": dev.id[2],
            }
            if alt.admin:
                result["adminAccess"] = True
            if alt.tolerations:  # with DRADeviceTaints, as Go records them
                result["tolerations"] = toleration_dicts(alt.tolerations)
            if share is not None:  # a share of a device allowing multiple allocations
                result["shareID"] = str(uuid.uuid4())
                if share:
                    result["consumedCapacity"] = share
            results[claim].append(result)
        return results

    def validate(self, slots: list[_Slot]) -> None:
        """``validateDeviceRequest`` for every request and subrequest, before the search: an
        All request fails while any pool of the node is incomplete or invalid."""
        for slot in slots:
            for alt in slot.alternatives:
                if alt.count is not None:
                    continue
                for p in self.pools:
                    state = "being updated" if p.incomplete else "invalid" if p.invalid else ""
                    if state:
                        raise AllocationError(
                            f"claim {_claim_name(self.claims[slot.claim])}, request "
                            f"{alt.name.rsplit('/', 1)[-1]}: asks for all devices, but resource "
                            f"pool {p.driver}/{p.name} is currently {state}"
                        )
                self.candidates(slot.claim, alt)  # Go selects All's devices now: CEL errors

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unsupported(f"the device search took more than {MAX_STEPS} steps")

    def _choose(
        self, claim: int, alt: _Alt, devs: list[Device], count: int, place: Any, i: int,
        start: int = 0,
    ) -> bool:  # fmt: skip
        if count == 0:
            return bool(place(i + 1))
        if len(devs) - start < count:
            return False  # too few devices left for this request
        for j in range(start, len(devs)):
            self._tick()
            if not self._try(claim, alt, devs[j]):
                continue
            if self._choose(claim, alt, devs, count - 1, place, i, j + 1):
                return True
            self._undo()
        return False

    def shortages(self, slots: list[_Slot]) -> tuple[RequestShortage, ...]:
        out = []
        for slot in slots:
            for alt in slot.alternatives:
                matching = self.candidates(slot.claim, alt)
                free = [d for d in matching if alt.admin or d.id not in self.in_use]
                tainted = [t for d in free if (t := self._taint(alt, d)) is not None]
                usable = [d for d in free if not self._barred(alt, d)]
                no_counters = [
                    d
                    for d in usable
                    if d.raw.get("consumesCounters")
                    and not self.counters.fits_alone(d.pool.name, d.raw)
                ]
                no_capacity = [d for d in usable if d not in no_counters and not self._fits(alt, d)]
                left = len(usable) - len(no_counters) - len(no_capacity)
                wanted: int | str = "all" if alt.count is None else alt.count
                short = alt.count is None or left < alt.count
                if short or not matching:
                    unselected = _Alt(alt.name, alt.cls, (), 1)
                    out.append(
                        RequestShortage(
                            _claim_name(self.claims[slot.claim]),
                            alt.name,
                            alt.cls,
                            wanted,
                            len(matching),
                            len(free),
                            len(self.candidates(slot.claim, unselected)),
                            len(tainted),
                            taint_text(tainted[0]) if tainted else "",
                            len(no_counters),
                            len(no_capacity),
                        )
                    )
        return tuple(out)


def allocate(
    claims: Sequence[Mapping[str, Any]],
    node: Mapping[str, Any],
    classes: Mapping[str, Mapping[str, Any]],
    slices: Iterable[Mapping[str, Any]],
    in_use: set[DeviceId],
    features: DraFeatures = FEATURES_1_36,
    everywhere: Sequence[Mapping[str, Any]] | None = None,
    shared: tuple[set[DeviceId], Mapping[DeviceId, Mapping[str, int]]] = (set(), {}),
) -> Allocation:
    """Allocate devices on ``node`` for every request of ``claims`` (unallocated
    ResourceClaim dicts), from ``slices``, avoiding ``in_use``, as kube-scheduler with
    ``features`` (v1.36's defaults unless told) does. ``everywhere`` (all slices of the
    cluster; default ``slices``) completes pools whose slices serve several nodes. ``shared``:
    the devices other claims share and what their shares consume (``draconsume.shares``).
    ``classes`` maps a DeviceClass name to its dict; every class the claims name must be in
    it (the caller reports a missing one, as kube-scheduler's PreFilter does).

    Raises :class:`AllocationError` where kube-scheduler's allocator fails with an error and
    :class:`Unsupported` for what is not reproduced (see the module docstring)."""
    slots = _slots(claims)
    listed = list(slices)
    pools = gather_pools(listed, node, features, listed if everywhere is None else everywhere)
    capacities = Capacities(shared[1])
    search = _Search(claims, classes, pools, in_use, features, node, shared[0], capacities)
    search.validate(slots)
    results = search.run(slots)
    if results is None:
        invalid = any(p.invalid for p in pools)
        return Allocation(False, (), search.shortages(slots), invalid)
    return Allocation(True, tuple(tuple(r) for r in results))
