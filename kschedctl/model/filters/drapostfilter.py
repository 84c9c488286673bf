"""The DynamicResources PostFilter of kube-scheduler v1.36 (``PostFilter``,
pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go), run when no node fits:

- a claim of the pod that is allocated where some node reaching the plugin's Filter could
  not use it ("resourceclaim not available on the node") and is reserved for nobody (or
  only for this pod) is deallocated — ``status.allocation``, ``reservedFor`` and
  ``devices`` cleared — and the pod tries again once the claim changes: "deallocation of
  ResourceClaim completed";
- else the pod's special claim for extended resources left by an earlier attempt is
  deleted (its finalizer removed first): "deletion of ResourceClaim completed";
- else "still not schedulable" (claims) or "no new claims to deallocate" (none).

Go picks the claim to deallocate at random among those; here the first in the pod's order.
Pure: :func:`dra_release` says what to write; the caller writes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .dra import REASON_NOT_AVAILABLE, DraState
from .draextended import is_special
from .drapools import node_selector_matches
from .nodeinfo import NodeInfo
from .verdicts import DYNAMIC_RESOURCES, NodeVerdict

__all__ = ["DEALLOCATE", "DELETE", "DraRelease", "dra_release", "may_release"]

DEALLOCATE = "deallocation of ResourceClaim completed"
DELETE = "deletion of ResourceClaim completed"


@dataclass(frozen=True)
class DraRelease:
    """What the PostFilter writes: ``claim`` deallocated (``delete`` False) or deleted."""

    claim: Mapping[str, Any]
    delete: bool = False

    @property
    def message(self) -> str:
        return DELETE if self.delete else DEALLOCATE

    @property
    def name(self) -> str:
        md = self.claim.get("metadata") or {}
        return f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"


def _selector(claim: Mapping[str, Any]) -> Any:
    return ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector")


def dra_release(
    state: DraState | None,
    pod_uid: str,
    verdicts: Iterable[NodeVerdict],
    nodes: Mapping[str, NodeInfo],
) -> DraRelease | None:
    """The PostFilter's write for a pod no node fits (None: nothing to release).
    ``verdicts`` are the nodes' filter outcomes: the plugin's Filter recorded a claim as
    unavailable on a node whose first reason is DynamicResources' "not available"."""
    if state is None or state.rejection is not None:
        return None
    reached = [
        nodes[v.name]
        for v in verdicts
        if v.reasons
        and v.reasons[0].plugin == DYNAMIC_RESOURCES
        and v.reasons[0].message == REASON_NOT_AVAILABLE
        and v.name in nodes
    ]
    for claim in state.claims:
        selector = _selector(claim)
        if not selector or not any(not node_selector_matches(selector, n.raw) for n in reached):
            continue
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod_uid):
            return DraRelease(claim)
    extended = state.extended_claim
    if extended is not None and not is_special(extended):
        return DraRelease(extended, delete=True)
    return None


def may_release(state: DraState | None) -> bool:
    """Whether :func:`dra_release` can find anything (cheap: no verdicts needed)."""
    if state is None or state.rejection is not None:
        return False
    extended = state.extended_claim
    return any(_selector(c) for c in state.claims) or (
        extended is not None and not is_special(extended)
    )
