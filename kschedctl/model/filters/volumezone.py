"""VolumeZone: a pod whose bound claims' PersistentVolumes carry zone or region labels fits
only nodes in those zones (kube-scheduler v1.36.3 ``volumezone/volume_zone.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .nodeinfo import NodeInfo, PodInfo
from .verdicts import UNRESOLVABLE, VOLUME_ZONE, Reason

__all__ = ["REASON_ZONE_CONFLICT", "VolumeZoneState", "pv_topologies", "zone_set"]

REASON_ZONE_CONFLICT = "node(s) had no available volume zone"
# volume_zone.go topologyLabels, and the beta -> GA translation it applies to node labels.
ZONE_LABELS = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
_GA_LABEL = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
MULTI_ZONE_DELIMITER = "__"  # k8s.io/cloud-provider/volume LabelMultiZoneDelimiter


def zone_set(value: str) -> set[str] | None:
    """``LabelZonesToSet``: the ``__``-separated zones; None for an invalid value (ignored)."""
    zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return set(zones)


@dataclass
class VolumeZoneState:
    """VolumeZone's PreFilter state: (PV name, label key, zones) of the bound claims' PVs."""

    topologies: list[tuple[str, str, set[str]]]

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        """Other pods do not change it."""

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]:
        labels = node.labels
        if not any(k in labels for k in ZONE_LABELS):
            return []
        for pv_name, key, zones in self.topologies:
            have = labels.get(key)
            if have is None:
                have = labels.get(_GA_LABEL.get(key, key))
            if have is None or have not in zones:
                node_has = f"node has {key}={have}" if have is not None else f"node has no {key}"
                return [
                    Reason(
                        VOLUME_ZONE,
                        REASON_ZONE_CONFLICT,
                        f"PersistentVolume {pv_name} is in {key} {'/'.join(sorted(zones))} "
                        f"({node_has})",
                        "schedule the pod in the volume's zone (add matching node affinity), "
                        "or use a volume in the node's zone",
                        UNRESOLVABLE,
                    )
                ]
        return []


def pv_topologies(pv: Mapping[str, Any]) -> list[tuple[str, str, set[str]]]:
    """``getPVTopologies``."""
    md = pv.get("metadata") or {}
    labels = md.get("labels") or {}
    out = []
    for key in ZONE_LABELS:
        if key in labels:
            zones = zone_set(str(labels[key]))
            if zones is not None:
                out.append((str(md.get("name") or ""), key, zones))
    return out
