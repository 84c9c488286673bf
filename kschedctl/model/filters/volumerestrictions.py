"""VolumeRestrictions' ReadWriteOncePod check: a claim with that access mode serves one pod
at a time (kube-scheduler v1.36.3 ``volumerestrictions/volume_restrictions.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .nodeinfo import NodeInfo, PodInfo
from .verdicts import UNSCHEDULABLE, VOLUME_RESTRICTIONS, Reason

__all__ = ["REASON_RWOP_CONFLICT", "RWOP", "RwopState"]

REASON_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod"
)
RWOP = "ReadWriteOncePod"


def _pod_claims(pod: Mapping[str, Any]) -> list[str]:
    """The claim names a pod's volumes use (persistentVolumeClaim and generic ephemeral)."""
    md = pod.get("metadata") or {}
    out = []
    for v in (pod.get("spec") or {}).get("volumes") or []:
        if v.get("persistentVolumeClaim") is not None:
            out.append(str(v["persistentVolumeClaim"].get("claimName") or ""))
        elif v.get("ephemeral") is not None:
            out.append(f"{md.get('name', '')}-{v.get('name', '')}")
    return out


@dataclass
class RwopState:
    """VolumeRestrictions' ReadWriteOncePod state: the pod's RWOP claims and how many
    references other pods on nodes hold to them (``conflictingPVCRefCount``)."""

    namespace: str
    claims: set[str]
    conflicts: int = 0
    users: list[str] = field(default_factory=list)

    def _uses(self, pod: PodInfo) -> int:
        if pod.namespace != self.namespace:
            return 0
        return sum(1 for c in _pod_claims(pod.raw) if c in self.claims)

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        self.conflicts += self._uses(pod) * delta

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]:
        if self.conflicts <= 0:
            return []
        return [
            Reason(
                VOLUME_RESTRICTIONS,
                REASON_RWOP_CONFLICT,
                f"ReadWriteOncePod claim(s) {', '.join(sorted(self.claims))} in use by "
                f"{', '.join(self.users) or 'another pod'}",
                "wait for the other pod to end, or give this pod its own claim",
                UNSCHEDULABLE,
            )
        ]
