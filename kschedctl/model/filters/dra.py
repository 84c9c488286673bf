"""kube-scheduler's DynamicResources plugin (v1.36, structured parameters) over plain dicts:
its PreFilter (the pod's claims exist, their device classes exist) and Filter (per node: an
allocated claim's node selector, else whether ``draalloc.allocate`` finds devices), with
kube-scheduler's messages and status codes (``statusUnschedulable`` is
UnschedulableAndUnresolvable: preemption never helps a node DRA rejects).

``DraWorld`` is what the plugin reads of the cluster (DeviceClasses, ResourceSlices,
ResourceClaims); ``NodeInfoSnapshot.dra`` holds one when the caller listed them.
Extended resources backed by a DeviceClass (``spec.extendedResourceName``, or the implicit
``deviceclass.resource.kubernetes.io/<class>``) that a node does not advertise become one
more claim, the plugin's special claim (``draextended``): its requests per container, the
pod's request mappings, allocated after the pod's own claims.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .draalloc import (
    Allocation,
    AllocationError,
    Unsupported,
    allocate,
    allocated_devices,
)
from .draconsume import shares
from .draextended import (
    IMPLICIT_PREFIX,
    SPECIAL_NAME,
    find_extended_claim,
    is_dra_extended_name,
    requests_and_mappings,
    special_claim,
)
from .drafeatures import FEATURES_1_36, DraFeatures
from .drapools import node_selector_matches
from .nodefilters import Incoming
from .nodeinfo import NodeInfo, PodInfo
from .verdicts import DYNAMIC_RESOURCES, SCHEDULING_ERROR, UNRESOLVABLE, Reason

__all__ = ["DraState", "DraWorld", "dra_state", "pod_dra_state", "unsupported_reason", "uses_dra"]

REASON_CANNOT_ALLOCATE = "cannot allocate all claims"
REASON_NOT_AVAILABLE = "resourceclaim not available on the node"
REASON_STALE_EXTENDED = "cannot schedule extended resource claim"
REASON_CANNOT_FIT = "cannot fit resource"
REASON_INVALID_POOLS = "invalid resource pools were encountered"


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


class DraWorld:
    """DeviceClasses, ResourceSlices and ResourceClaims as listed (resource.k8s.io/v1), and
    the allocator features of the kube-scheduler judged (v1.36's defaults unless told)."""

    def __init__(
        self,
        device_classes: Iterable[Mapping[str, Any]],
        resource_slices: Iterable[Mapping[str, Any]],
        resource_claims: Iterable[Mapping[str, Any]],
        features: DraFeatures = FEATURES_1_36,
    ) -> None:
        self.features = features
        self.classes = {_name(c): c for c in device_classes}
        self.slices = list(resource_slices)
        # slices by spec.nodeName; those without one (allNodes, nodeSelector, ...) serve any
        self._by_node: dict[str, list[Mapping[str, Any]]] = {}
        self._any_node: list[Mapping[str, Any]] = []
        for s in self.slices:
            name = (s.get("spec") or {}).get("nodeName")
            if name:
                self._by_node.setdefault(str(name), []).append(s)
            else:
                self._any_node.append(s)
        self.claims: dict[tuple[str, str], Mapping[str, Any]] = {}
        for c in resource_claims:
            md = c.get("metadata") or {}
            self.claims[(md.get("namespace") or "default", _name(c))] = c
        consumable = features.consumable_capacity
        self.in_use = allocated_devices(self.claims.values(), consumable)
        self.shares = shares(self.claims.values()) if consumable else (set(), {})
        # extended resource name -> class (explicit names win over implicit ones)
        self.extended: dict[str, str] = {}
        for name in sorted(self.classes):
            self.extended[IMPLICIT_PREFIX + name] = name
        for name in sorted(self.classes):
            ext = (self.classes[name].get("spec") or {}).get("extendedResourceName")
            if ext:
                self.extended[str(ext)] = name

    def slices_for(self, node: str) -> list[Mapping[str, Any]]:
        """The slices that may serve ``node`` (the allocator checks their node selection)."""
        return self._by_node.get(node, []) + self._any_node


def uses_dra(inc: Incoming, dra_resources: frozenset[str]) -> bool:
    """The pod has ResourceClaims or requests an extended resource a DeviceClass backs."""
    spec = inc.raw.get("spec") or {}
    return bool(spec.get("resourceClaims")) or any(k in dra_resources for k in inc.request)


@dataclass
class DraState:
    """The plugin's PreFilter state for one pod: its claims (``allocated`` by index: the
    allocation's node selector), the claims to allocate, and ``rejection`` when the PreFilter
    rejects the pod. ``unsupported`` says why it cannot be evaluated (not evaluated)."""

    world: DraWorld
    claims: list[Mapping[str, Any]] = field(default_factory=list)
    to_allocate: list[Mapping[str, Any]] = field(default_factory=list)
    extended: dict[str, int] = field(default_factory=dict)  # resource -> count, via DRA
    rejection: Reason | None = None
    unsupported: str | None = None
    results: dict[str, Allocation] = field(default_factory=dict)  # node -> allocation
    checked: bool = False  # every node's allocation tried once (``unsupported_reason``)
    pod: Mapping[str, Any] = field(default_factory=dict)
    scalars: dict[str, int] = field(default_factory=dict)  # the pod's non-zero requests
    # The pod's special claim for ``extended`` (None: none): from an earlier attempt, or the
    # in-memory one PreBind creates; per node, its variant for that node and the mappings.
    extended_claim: Mapping[str, Any] | None = None
    node_claims: dict[str, tuple[Mapping[str, Any] | None, list[dict[str, str]]]] = field(
        default_factory=dict
    )

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        """Pods coming and going do not free devices: claims keep their allocation (v1.36's
        plugin has no PreFilterExtensions: preemption's victims free none either)."""

    def extended_for(
        self, node: NodeInfo
    ) -> tuple[Mapping[str, Any] | None, list[dict[str, str]]] | Reason:
        """``filterExtendedResources``: the special claim for ``node`` (None: the node's
        device plugins serve every resource) and the request mappings, or the node's
        rejection."""
        if node.name in self.node_claims:
            return self.node_claims[node.name]
        claim = self.extended_claim
        if claim is None:
            return None, []
        if ((claim.get("spec") or {}).get("devices") or {}).get("requests") is not None:
            # from an earlier attempt: the PostFilter deletes it and the pod tries anew
            return _rejection(
                REASON_STALE_EXTENDED,
                f"ResourceClaim {_name(claim)} for the pod's extended resources was made for "
                "an earlier scheduling attempt",
                "wait: the scheduler deletes it and tries again",
            )
        via_dra: list[str] = []
        for resource in sorted(self.extended):
            have = node.allocatable.get(resource)
            if not have:
                via_dra.append(resource)
        for resource in sorted(self.scalars):
            if resource in self.extended or not is_dra_extended_name(resource):
                continue
            if resource not in node.allocatable:
                return _rejection(
                    REASON_CANNOT_FIT,
                    f"the node has no {resource}, and no DeviceClass backs it",
                    f"run the pod on a node that advertises {resource}",
                )
        if not via_dra:
            result: tuple[Mapping[str, Any] | None, list[dict[str, str]]] = (None, [])
        else:
            requests, mappings = requests_and_mappings(self.pod, via_dra, self.world.extended)
            spec = {"devices": {"requests": requests}}
            result = ({**claim, "spec": spec}, mappings)
        self.node_claims[node.name] = result
        return result

    def allocation(self, node: NodeInfo) -> Allocation | None:
        """The allocation for this node (None: nothing to allocate), the special claim's
        last; raises ``AllocationError`` / ``Unsupported``."""
        claims = list(self.to_allocate)
        extended = self.extended_for(node)
        if not isinstance(extended, Reason) and extended[0] is not None:
            claims.append(extended[0])
        if not claims:
            return None
        cached = self.results.get(node.name)
        if cached is None:
            cached = allocate(
                claims,
                node.raw,
                self.world.classes,
                self.world.slices_for(node.name),
                self.world.in_use,
                self.world.features,
                self.world.slices,
                self.world.shares,
            )
            self.results[node.name] = cached
        return cached

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]:
        extended = self.extended_for(node)
        if isinstance(extended, Reason):
            return [extended]
        if extended[0] is None and not self.claims:
            return []  # the node's device plugins serve the extended resources
        unavailable = [
            _name(c)
            for c in self.claims
            if (sel := ((c.get("status") or {}).get("allocation") or {}).get("nodeSelector"))
            and not node_selector_matches(sel, node.raw)
        ]
        try:
            result = self.allocation(node)
        except AllocationError as err:
            return [
                Reason(
                    DYNAMIC_RESOURCES,
                    f'running "DynamicResources" filter plugin: {err}',
                    f"kube-scheduler fails the scheduling attempt with this error: {err}",
                    "fix the selector of the DeviceClass or the claim",
                    SCHEDULING_ERROR,
                )
            ]
        if result is not None and not result.ok and result.invalid_pools:
            return [
                Reason(
                    DYNAMIC_RESOURCES,
                    REASON_INVALID_POOLS,
                    "no combination of devices fits, and a pool of the node is invalid "
                    "(duplicate device or counter set names, or counters no set declares)",
                    "fix the driver's ResourceSlices for the node",
                    UNRESOLVABLE,
                )
            ]
        if result is not None and not result.ok:
            detail = (
                "; ".join(
                    f"claim {s.claim}, request {s.request} (class {s.device_class}): {s.why}"
                    for s in result.shortages
                )
                or "no combination of free devices satisfies every request at once"
            )
            if self.extended_claim is not None:  # the in-memory claim: its name-to-be
                generate = (self.extended_claim.get("metadata") or {}).get("generateName")
                detail = detail.replace(SPECIAL_NAME, f"{generate}*")
            return [
                Reason(
                    DYNAMIC_RESOURCES,
                    REASON_CANNOT_ALLOCATE,
                    detail,
                    "publish matching devices for the node (ResourceSlices), free devices held "
                    "by other claims, tolerate the devices' taints, or relax the claim's "
                    "selectors and counts",
                    UNRESOLVABLE,
                )
            ]
        if unavailable:
            return [
                Reason(
                    DYNAMIC_RESOURCES,
                    REASON_NOT_AVAILABLE,
                    f"claim(s) {', '.join(unavailable)} are allocated to devices the node "
                    "cannot reach (the allocation's node selector does not match it)",
                    "run the pod where its claims were allocated, or deallocate the claims",
                    UNRESOLVABLE,
                )
            ]
        return []


def _rejection(message: str, detail: str, fix: str) -> Reason:
    return Reason(DYNAMIC_RESOURCES, message, detail, fix, UNRESOLVABLE)


def _check_classes(state: DraState, claim: Mapping[str, Any]) -> Reason | None:
    """The PreFilter's ``validateDeviceClass`` for every request of an unallocated claim."""
    for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        name = str(req.get("name") or "")
        if req.get("exactly"):
            checks = [(name, (req["exactly"] or {}).get("deviceClassName"))]
        elif req.get("firstAvailable"):
            checks = [
                (f"{name}/{sub.get('name')}", sub.get("deviceClassName"))
                for sub in req["firstAvailable"]
            ]
        else:
            checks = []
        for request, cls in checks:
            if cls and cls not in state.world.classes:
                return _rejection(
                    f"request {request}: device class {cls} does not exist",
                    f"claim {_name(claim)} asks for DeviceClass {cls}, which does not exist",
                    f"create DeviceClass {cls}, or fix the claim's deviceClassName",
                )
    return None


def dra_state(inc: Incoming, world: DraWorld) -> DraState | None:
    """The DynamicResources PreFilter; None when it skips (no claims, no DRA-backed
    extended resources)."""
    spec = inc.raw.get("spec") or {}
    status: Mapping[str, Any] = inc.raw.get("status") or {}
    state = DraState(world, pod=inc.raw)
    state.extended = {k: v for k, v in sorted(inc.request.items()) if k in world.extended and v > 0}
    if state.extended:
        state.scalars = {k: v for k, v in inc.request.items() if v > 0}
        state.extended_claim = find_extended_claim(inc.raw, world.claims.values()) or special_claim(
            inc.raw
        )
    pod_ref = f"{inc.namespace}/{inc.name}"
    generated = {
        s.get("name"): s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or []
    }
    for ref in spec.get("resourceClaims") or []:
        if ref.get("resourceClaimName"):
            claim_name = ref["resourceClaimName"]
        elif ref.get("resourceClaimTemplateName"):
            if ref.get("name") not in generated:
                state.rejection = _rejection(
                    f'pod "{pod_ref}": ResourceClaim not created yet',
                    f"the claim of template {ref['resourceClaimTemplateName']} is created by "
                    "kube-controller-manager once it sees the pod",
                    "wait for kube-controller-manager's resource claim controller (is it running?)",
                )
                return state
            claim_name = generated[ref.get("name")]
            if claim_name is None:
                continue  # intentionally not created
        else:
            state.unsupported = f"pod claim {ref.get('name')} names neither claim nor template"
            return state
        claim = world.claims.get((inc.namespace, claim_name))
        if claim is None:
            state.rejection = _rejection(
                f'could not find ResourceClaim "{inc.namespace}/{claim_name}"',
                f"the pod refers to ResourceClaim {claim_name}, which does not exist",
                f"create ResourceClaim {claim_name} in namespace {inc.namespace}",
            )
            return state
        if (claim.get("metadata") or {}).get("deletionTimestamp"):
            state.rejection = _rejection(
                f'resourceclaim "{claim_name}" is being deleted',
                f"ResourceClaim {claim_name} is being deleted",
                "recreate the claim once it is gone",
            )
            return state
        state.claims.append(claim)
    if not state.claims and not state.extended:
        return None
    for claim in state.claims:
        if (claim.get("status") or {}).get("allocation"):
            continue
        rejected = _check_classes(state, claim)
        if rejected is not None:
            state.rejection = rejected
            return state
        state.to_allocate.append(claim)
    return state


def pod_dra_state(inc: Incoming, world: DraWorld) -> DraState | None:
    """``dra_state``, once per pod: the engine, the table's row and ``not_evaluated`` share it."""
    if inc.dra_memo is None:
        inc.dra_memo = (dra_state(inc, world),)
    state = inc.dra_memo[0]
    assert state is None or isinstance(state, DraState)
    return state


def dra_prefilter_rejection(inc: Incoming, snapshot: Any) -> Reason | None:
    """The DynamicResources PreFilter's rejection of the pod (it runs last of the PreFilters,
    after the volume ones), or None. ``snapshot`` is a ``NodeInfoSnapshot``."""
    world = snapshot.dra
    if world is None:
        return None
    state = pod_dra_state(inc, world)
    return state.rejection if state is not None else None


def unsupported_reason(state: DraState, nodes: Iterable[NodeInfo]) -> str | None:
    """Why this pod's DRA verdicts cannot be trusted (None: they can): the first node whose
    allocation uses something not reproduced."""
    if state.unsupported or state.rejection is not None or state.checked:
        return state.unsupported
    state.checked = True
    for node in nodes:
        try:
            state.allocation(node)
        except Unsupported as err:
            state.unsupported = str(err)
            break
        except AllocationError:
            continue
    return state.unsupported
