"""VolumeRestrictions (kube-scheduler v1.36.3 ``volumerestrictions/volume_restrictions.go``):
an inline GCE PD, AWS EBS, RBD or iSCSI volume already in use on the node
(``satisfyVolumeConflicts``; GCE PD, RBD and iSCSI may be shared when every mount is read-only,
EBS never), then ReadWriteOncePod: a claim with that access mode serves one pod at a time.
Both are Unschedulable (evicting the other pod helps: preemption may).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .nodeinfo import NodeInfo, PodInfo
from .verdicts import UNSCHEDULABLE, VOLUME_RESTRICTIONS, Reason

__all__ = [
    "REASON_DISK_CONFLICT",
    "REASON_RWOP_CONFLICT",
    "RESTRICTED_VOLUMES",
    "RWOP",
    "RwopState",
    "volume_conflict",
]

REASON_DISK_CONFLICT = "node(s) had no available disk"
# ``needsRestrictionsCheck``: the inline volume sources checked for conflicts.
RESTRICTED_VOLUMES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")

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


def volume_conflict(volume: Mapping[str, Any], pod: Mapping[str, Any]) -> str | None:
    """``isVolumeConflict``: what of ``pod``'s volumes ``volume`` (an inline disk) conflicts
    with, or None."""
    for existing in (pod.get("spec") or {}).get("volumes") or []:
        for kind in RESTRICTED_VOLUMES:
            mine, theirs = volume.get(kind), existing.get(kind)
            if mine is None or theirs is None:
                continue
            both_read_only = bool(mine.get("readOnly")) and bool(theirs.get("readOnly"))
            if kind == "gcePersistentDisk":
                same = mine.get("pdName") == theirs.get("pdName") and not both_read_only
            elif kind == "awsElasticBlockStore":
                same = mine.get("volumeID") == theirs.get("volumeID")
            elif kind == "iscsi":
                same = mine.get("iqn") == theirs.get("iqn") and not both_read_only
            else:  # rbd: a shared monitor, the same pool and image
                same = (
                    bool(set(mine.get("monitors") or ()) & set(theirs.get("monitors") or ()))
                    and mine.get("pool") == theirs.get("pool")
                    and mine.get("image") == theirs.get("image")
                    and not both_read_only
                )
            if same:
                return f"{kind} volume {existing.get('name', '')}"
    return None


@dataclass
class RwopState:
    """VolumeRestrictions' PreFilter state: the pod's inline disks (checked against the
    node's pods), its ReadWriteOncePod claims and how many references other pods on nodes
    hold to them (``conflictingPVCRefCount``)."""

    namespace: str
    claims: set[str]
    conflicts: int = 0
    users: list[str] = field(default_factory=list)
    disks: Sequence[Mapping[str, Any]] = ()

    def _disk_conflict(self, node: NodeInfo) -> Reason | None:
        for volume in self.disks:
            for pod in node.pods:
                what = volume_conflict(volume, pod.raw)
                if what is not None:
                    return Reason(
                        VOLUME_RESTRICTIONS,
                        REASON_DISK_CONFLICT,
                        f"volume {volume.get('name', '')} is the disk pod {pod.key} mounts as "
                        f"{what} (only read-only mounts of GCE PD, RBD and iSCSI may share)",
                        "give this pod its own disk, mount it read-only everywhere (not AWS "
                        "EBS), or wait for the other pod to end",
                        UNSCHEDULABLE,
                    )
        return None

    def _uses(self, pod: PodInfo) -> int:
        if pod.namespace != self.namespace:
            return 0
        return sum(1 for c in _pod_claims(pod.raw) if c in self.claims)

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        self.conflicts += self._uses(pod) * delta

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]:
        disk = self._disk_conflict(node) if self.disks else None
        if disk is not None:
            return [disk]
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
