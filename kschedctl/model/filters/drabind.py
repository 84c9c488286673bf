"""What a scheduler writes into a pod's ResourceClaims once it picked a node, as
kube-scheduler v1.36's DynamicResources plugin does: Reserve takes the node's allocation
(``DraState.allocation``), PreBind writes each claim's ``status.allocation`` (the devices'
results, the class and claim configs, the node selector; the writer stamps
``allocationTimestamp``) and adds the
pod to ``status.reservedFor`` (``bindClaim``, pkg/scheduler/framework/plugins/
dynamicresources), before the pod is bound.

The pod's special claim for DRA-backed extended resources (``draextended``) is created
first, then written like the others; the pod's ``status.extendedResourceClaimStatus`` names
it and maps each container's request (``createExtendedResourceClaimInAPI``,
``patchPodExtendedResourceClaimStatus``).

Pure: :func:`claim_writes` gives, per claim of the pod, the claim as the scheduler assumes it
from now on (its assume cache) and what PreBind must make true of it; the caller writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.model.kubetypes import Pod

from .dra import DraState, DraWorld, pod_dra_state
from .draextended import SPECIAL_NAME
from .nodefilters import Incoming
from .nodeinfo import NodeInfo
from .snapshot import NodeInfoSnapshot
from .verdicts import Reason

__all__ = [
    "FINALIZER",
    "ClaimWrite",
    "allocation_result",
    "claim_writes",
    "extended_status",
    "claim_key",
    "pod_claim_writes",
    "pod_reference",
]

FINALIZER = "resource.kubernetes.io/delete-protection"  # resourceapi.Finalizer


@dataclass(frozen=True)
class ClaimWrite:
    """One claim of the pod: ``allocation`` to write (None: it was allocated already) and
    ``reserve`` the ``reservedFor`` entry to add (None: the pod is in it already).
    ``assumed`` is the claim as it will be once written (what later decisions see)."""

    claim: Mapping[str, Any]
    allocation: Mapping[str, Any] | None
    reserve: Mapping[str, str] | None
    assumed: Mapping[str, Any]
    # The special claim for DRA-backed extended resources, created by PreBind (``claim`` is
    # the in-memory one): the pod's ``status.extendedResourceClaimStatus.requestMappings``.
    mappings: tuple[Mapping[str, str], ...] | None = None

    @property
    def create(self) -> bool:
        return self.mappings is not None

    @property
    def key(self) -> tuple[str, str]:
        return claim_key(self.claim)


def claim_key(claim: Mapping[str, Any]) -> tuple[str, str]:
    md = claim.get("metadata") or {}
    return (str(md.get("namespace") or "default"), str(md.get("name") or ""))


def pod_reference(pod: Mapping[str, Any]) -> dict[str, str]:
    """The pod as a ``ResourceClaimConsumerReference`` (``reservedFor`` entry)."""
    md = pod.get("metadata") or {}
    return {"resource": "pods", "name": str(md.get("name") or ""), "uid": str(md.get("uid") or "")}


def _node_selector(
    results: Sequence[Mapping[str, str]], slices: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """``createNodeSelector``: a device of a node-local slice pins the allocation to that
    node; slices with a one-term selector add their requirements; allNodes adds nothing."""
    term: dict[str, list[Any]] = {}
    for r in results:
        spec = _slice_of(r, slices)
        if spec.get("perDeviceNodeSelection"):  # the device selects its nodes itself
            devices = spec.get("devices") or []
            spec = next((d for d in devices if d.get("name") == r["device"]), {})
        if spec.get("nodeName"):
            return {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [spec["nodeName"]]}
                        ]
                    }
                ]
            }
        terms = (spec.get("nodeSelector") or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1:
            for field in ("matchFields", "matchExpressions"):
                for req in terms[0].get(field) or []:
                    if req not in term.setdefault(field, []):
                        term[field].append(req)
    term = {k: v for k, v in term.items() if v}
    return {"nodeSelectorTerms": [term]} if term else None


def _slice_of(result: Mapping[str, str], slices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The spec of the newest slice of the result's pool that lists its device."""
    best: dict[str, Any] = {}
    generation = -1
    for s in slices:
        spec = s.get("spec") or {}
        pool = spec.get("pool") or {}
        if spec.get("driver") != result["driver"] or pool.get("name") != result["pool"]:
            continue
        if not any(d.get("name") == result["device"] for d in spec.get("devices") or []):
            continue
        if int(pool.get("generation") or 0) > generation:
            best, generation = dict(spec), int(pool.get("generation") or 0)
    return best


def _configs(
    claim: Mapping[str, Any], results: Sequence[Mapping[str, str]], world: DraWorld
) -> list[dict[str, Any]]:
    """The class configs (once per class, naming every request of it), then the claim's
    configs for the requests allocated, as the allocator copies them."""
    out: list[dict[str, Any]] = []
    by_class: dict[str, list[dict[str, Any]]] = {}
    devices = (claim.get("spec") or {}).get("devices") or {}
    picked = {r["request"].split("/", 1)[0]: r["request"] for r in results}
    for req in devices.get("requests") or []:
        name = picked.get(str(req.get("name") or ""))
        if name is None:
            continue
        if req.get("exactly"):
            cls = (req["exactly"] or {}).get("deviceClassName")
        else:
            sub = name.split("/", 1)[1] if "/" in name else ""
            cls = next(
                (s.get("deviceClassName") for s in req.get("firstAvailable") or []
                 if s.get("name") == sub),
                None,
            )  # fmt: skip
        if cls in by_class:
            for entry in by_class[cls]:
                entry["requests"].append(name)
            continue
        by_class[str(cls)] = []
        for config in ((world.classes.get(str(cls)) or {}).get("spec") or {}).get("config") or []:
            entry = {"source": "FromClass", "requests": [name], **config}
            by_class[str(cls)].append(entry)
            out.append(entry)
    for config in devices.get("config") or []:
        named = config.get("requests") or []
        if not named:
            out.append({"source": "FromClaim", **config})
            continue
        # Go appends the config once per request it names (or whose chosen subrequest it
        # names), so a config naming two requests appears twice: the same here.
        for req in devices.get("requests") or []:
            name = str(req.get("name") or "")
            if name in named or (req.get("firstAvailable") and picked.get(name) in named):
                out.append({"source": "FromClaim", **config})
    return out


def allocation_result(
    claim: Mapping[str, Any],
    results: Sequence[Mapping[str, str]],
    world: DraWorld,
    node: str,
) -> dict[str, Any]:
    """``status.allocation`` for ``claim`` from the allocator's ``results`` on ``node``."""
    devices: dict[str, Any] = {"results": [dict(r) for r in results]}
    config = _configs(claim, results, world)
    if config:
        devices["config"] = config
    out: dict[str, Any] = {"devices": devices}
    selector = _node_selector(results, world.slices_for(node))
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def claim_writes(pod: Pod, state: DraState | None, node: NodeInfo) -> tuple[ClaimWrite, ...]:
    """Reserve + PreBind for ``pod`` on ``node``: per claim, the allocation to write (the
    claims ``state`` still has to allocate) and the reservation; the pod's special claim for
    DRA-backed extended resources last (to create first). Raises ``ValueError`` when the
    node has no allocation for the claims (the caller decided on a node the filter rejected:
    a bug)."""
    if state is None:
        return ()
    extended = state.extended_for(node)
    special, mappings = (None, []) if isinstance(extended, Reason) else extended
    if not state.claims and special is None:
        return ()
    allocation = state.allocation(node) if state.to_allocate or special is not None else None
    if (state.to_allocate or special is not None) and (allocation is None or not allocation.ok):
        raise ValueError(f"no device allocation for the pod's claims on node {node.name}")
    fresh = {claim_key(c): i for i, c in enumerate(state.to_allocate)}
    ref = pod_reference(pod)
    writes = []
    for claim in state.claims:
        status = dict(claim.get("status") or {})
        reserved = list(status.get("reservedFor") or [])
        index = fresh.get(claim_key(claim))
        alloc = None
        if index is not None and allocation is not None:
            alloc = allocation_result(claim, allocation.results[index], state.world, node.name)
            status["allocation"] = alloc
        reserve = None if any(r.get("uid") == ref["uid"] for r in reserved) else ref
        if reserve is not None:
            status["reservedFor"] = [*reserved, reserve]
        assumed = {**claim, "status": status}
        writes.append(ClaimWrite(claim, alloc, reserve, assumed))
    if special is not None and allocation is not None:
        results = allocation.results[len(state.to_allocate)]
        alloc = allocation_result(special, results, state.world, node.name)
        # Unique per pod while only in memory (the API names it on create).
        md = {**special["metadata"], "name": SPECIAL_NAME + ref["uid"]}
        claim = {**special, "metadata": md}
        assumed = {
            **claim,
            "metadata": {**md, "finalizers": [FINALIZER]},
            "status": {"allocation": alloc, "reservedFor": [ref]},
        }
        writes.append(ClaimWrite(claim, alloc, ref, assumed, tuple(mappings)))
    return tuple(writes)


def pod_claim_writes(pod: Pod, snapshot: NodeInfoSnapshot, node: str) -> tuple[ClaimWrite, ...]:
    """DynamicResources' Reserve for ``pod`` on ``node`` of ``snapshot`` (nothing without
    claims or DRA-backed extended resources, or without the cluster's DRA objects)."""
    if snapshot.dra is None or not (
        (pod.get("spec") or {}).get("resourceClaims") or _names_any(pod, snapshot.dra_resources)
    ):
        return ()  # the common pod: no Incoming built
    return claim_writes(pod, pod_dra_state(Incoming(pod), snapshot.dra), snapshot.node(node))


def _names_any(pod: Pod, names: frozenset[str]) -> bool:
    """Whether a container of ``pod`` requests (or limits) one of ``names``."""
    spec: Mapping[str, Any] = pod.get("spec") or {}
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        resources: Mapping[str, Any] = c.get("resources") or {}
        for kind in ("requests", "limits"):
            if any(k in names for k in resources.get(kind) or {}):
                return True
    return False


def extended_status(
    pod: Mapping[str, Any], created: Mapping[str, Any], write: ClaimWrite
) -> dict[str, Any]:
    """The pod status patch naming its created special claim and the container request
    mappings (``patchPodExtendedResourceClaimStatus``), with the pod's uid as precondition."""
    claim = str((created.get("metadata") or {}).get("name") or "")
    return {
        "metadata": {"uid": str((pod.get("metadata") or {}).get("uid") or "")},
        "status": {
            "extendedResourceClaimStatus": {
                "requestMappings": [dict(m) for m in write.mappings or ()],
                "resourceClaimName": claim,
            }
        },
    }
