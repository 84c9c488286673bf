"""``CycleState``: one pod's scheduling cycle over a snapshot — the filters of ``FILTERS``
that apply to the pod, their PreFilter state, and the nominated pods to count — shared by
``evaluate`` and ``feasible_nodes``; ``not_evaluated``: the unmodelled filters a pod needs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .dra import pod_dra_state, unsupported_reason, uses_dra
from .nodefilters import Incoming, NodeCheck
from .nodeinfo import NodeInfo, PodInfo
from .plugin import Filter, PodState
from .snapshot import NodeInfoSnapshot
from .table import FILTERS
from .unevaluated import UNEVALUATED
from .verdicts import (
    DYNAMIC_RESOURCES,
    NODE_VOLUME_LIMITS,
    VOLUME_BINDING,
    VOLUME_RESTRICTIONS,
    VOLUME_ZONE,
    NotEvaluated,
    Reason,
)
from .volumebinding import NO_PROVISIONER, claim_class, fully_bound, volume_class
from .volumes import claim_names

__all__ = ["CycleState", "ExtraFilter", "MIGRATABLE_VOLUMES", "not_evaluated"]

# A scheduler's own Filter plugins (kschedctl's Python plugins) as one filter run after the
# built-in ones, on the nodes they pass: the reason it rejects ``node`` for (code
# Unschedulable: evicting pods may help; UnschedulableAndUnresolvable: it cannot), or None.
# It must read the node as it is when called: the nominated pods and the preemption dry run
# add and remove pods on it.
ExtraFilter = Callable[[NodeInfo], Reason | None]

MIGRATABLE_VOLUMES = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "azureDisk",
    "cinder",
    "vsphereVolume",
    "portworxVolume",
)


class CycleState:
    """One scheduling cycle's PreFilter state (mutated and restored by nominated pods and the
    preemption dry run, like kube-scheduler's cloned CycleState).

    ``filters`` are the rows of ``FILTERS`` that run for this pod, in order (modelled, not
    skipped by their PreFilter); ``states`` their PreFilter state by plugin name. ``extra``
    runs after them on the nodes they pass (kube-scheduler runs out-of-tree Filter plugins
    in every filter pass too: with nominated pods, and in the preemption dry run).
    """

    inc: Incoming
    snapshot: NodeInfoSnapshot
    states: dict[str, PodState]
    filters: tuple[Filter, ...]
    nominated: dict[str, list[PodInfo]]
    extra: ExtraFilter | None

    def __init__(
        self,
        inc: Incoming,
        snapshot: NodeInfoSnapshot,
        notes: list[str] | None = None,
        extra: ExtraFilter | None = None,
    ) -> None:
        self.inc = inc
        self.snapshot = snapshot
        self.extra = extra
        self.states = {}
        active: list[Filter] = []
        for f in FILTERS:
            if f.explain is None or (f.skip is not None and f.skip(inc)):
                continue
            if f.prefilter is not None:
                state = f.prefilter(inc, snapshot, notes)
                if state is None:
                    continue
                self.states[f.plugin] = state
            active.append(f)
        self.filters = tuple(active)
        scheduler = (inc.raw.get("spec") or {}).get("schedulerName") or "default-scheduler"
        self.nominated = {
            node: [p for p in pods if p.priority >= inc.priority and p.uid != inc.uid]
            for node, pods in snapshot.nominated_pods(scheduler).items()
        }

    def add(self, pod: PodInfo, node: NodeInfo) -> None:
        node.add(pod)
        for state in self.states.values():
            state.update_with_pod(pod, node, 1)

    def remove(self, pod: PodInfo, node: NodeInfo) -> None:
        node.remove(pod)
        for state in self.states.values():
            state.update_with_pod(pod, node, -1)

    def node_checks(self) -> tuple[NodeCheck, ...]:
        """The filters as per-node booleans, for a caller that needs no explanation."""
        return tuple(f.node_check(self) for f in self.filters)

    def run_filters(self, node: NodeInfo, all_reasons: bool) -> tuple[list[Reason], int]:
        """The failing filters' reasons, and how many leading ones kube-scheduler records
        (the first failing plugin's; InterPodAffinity stops at its first failing check).
        ``extra`` runs only on a node every built-in filter passes."""
        out: list[Reason] = []
        recorded = 0
        for f in self.filters:
            assert f.explain is not None
            reasons = f.explain(self, node, all_reasons)
            if reasons:
                if not out:
                    recorded = 1 if f.first_reason_only else len(reasons)
                out.extend(reasons)
                if not all_reasons:
                    break
        if not out and self.extra is not None:
            rejected = self.extra(node)
            if rejected is not None:
                return [rejected], 1
        return out, recorded

    def run_with_nominated(
        self, node: NodeInfo, all_reasons: bool = False
    ) -> tuple[list[Reason], int]:
        """``RunFilterPluginsWithNominatedPods``: first as if the nominated pods of at least
        this pod's priority were already on the node; if that passes, once more without them."""
        nominated = self.nominated.get(node.name)
        if nominated:
            for p in nominated:
                self.add(p, node)
            try:
                reasons, recorded = self.run_filters(node, all_reasons)
            finally:
                for p in nominated:
                    self.remove(p, node)
            if reasons:
                who = ", ".join(p.key for p in nominated)
                return [
                    replace(r, detail=f"{r.detail} (counting pod(s) nominated to this node: {who})")
                    for r in reasons
                ], recorded
        return self.run_filters(node, all_reasons)


def _csi_volumes(inc: Incoming, snapshot: NodeInfoSnapshot) -> list[str]:
    """The pod's claims whose PersistentVolume (bound, or a static candidate of an unbound
    claim's class) is a CSI or CSI-migrated volume: NodeVolumeLimits counts them."""
    pvcs, pvs = snapshot.pvcs or {}, snapshot.pvs or {}
    out = []
    for _vol, name, _eph in claim_names(inc.raw):
        pvc = pvcs.get((inc.namespace, name))
        if pvc is None:
            continue
        volume = (pvc.get("spec") or {}).get("volumeName")
        if volume:
            candidates = [pvs[volume]] if volume in pvs else []
        else:
            cls = claim_class(pvc)
            candidates = [pv for pv in pvs.values() if volume_class(pv) == cls]
        if any(
            k in (pv.get("spec") or {}) for pv in candidates for k in ("csi", *MIGRATABLE_VOLUMES)
        ):
            out.append(name)
    return out


def _attach_limits_possible(snapshot: NodeInfoSnapshot) -> bool:
    """Whether NodeVolumeLimits may reject a node: the CSINodes are unknown, or one declares
    an attach limit (``allocatable.count``) for a driver. Without one it passes every node."""
    if snapshot.csi_nodes is None:
        return True
    return any(
        (d.get("allocatable") or {}).get("count") is not None
        for n in snapshot.csi_nodes.values()
        for d in (n.get("spec") or {}).get("drivers") or []
    )


def _capacity_unknown(inc: Incoming, snapshot: NodeInfoSnapshot) -> list[str]:
    """The pod's unbound claims a provisioner may have to create while the CSIDrivers and
    CSIStorageCapacities VolumeBinding's storage capacity check reads are not known."""
    if snapshot.csi_drivers is not None and snapshot.csi_capacities is not None:
        return []
    pvcs, classes = snapshot.pvcs or {}, snapshot.storage_classes or {}
    out = []
    for _vol, name, _eph in claim_names(inc.raw):
        pvc = pvcs.get((inc.namespace, name))
        if pvc is None or fully_bound(pvc):
            continue
        provisioner = (classes.get(claim_class(pvc)) or {}).get("provisioner") or ""
        if provisioner not in ("", NO_PROVISIONER):
            out.append(name)
    return out


def not_evaluated(inc: Incoming, snapshot: NodeInfoSnapshot) -> tuple[list[NotEvaluated], bool]:
    """The unmodelled filters (rows of ``FILTERS`` without ``explain``) this pod needs, in
    filter order, and whether the pod has (DRA) resource claims."""
    spec = inc.raw.get("spec") or {}
    out: list[NotEvaluated] = []
    claims: list[str] = []
    migratable = False
    for v in spec.get("volumes") or []:
        if "persistentVolumeClaim" in v:
            claims.append(str((v.get("persistentVolumeClaim") or {}).get("claimName")))
        elif "ephemeral" in v:
            claims.append(f"{inc.name}-{v.get('name')} (ephemeral)")
        migratable = migratable or any(k in v for k in MIGRATABLE_VOLUMES)
    if claims and (snapshot.pvcs is None or snapshot.pvs is None):
        if snapshot.pvcs is None:
            why = (
                f"the pod uses PersistentVolumeClaim(s) {', '.join(claims)}; volume filters "
                "need PV/PVC/StorageClass/CSINode state, which was not given"
            )
        else:
            why = (
                f"the pod uses PersistentVolumeClaim(s) {', '.join(claims)}; the claims were "
                "checked, but the per-node volume filters need the PersistentVolumes"
            )
        for plugin in (VOLUME_RESTRICTIONS, NODE_VOLUME_LIMITS, VOLUME_BINDING, VOLUME_ZONE):
            out.append(NotEvaluated(plugin, why))
    else:
        csi = _csi_volumes(inc, snapshot) if claims else []
        if (migratable or csi) and _attach_limits_possible(snapshot):
            what = ", ".join(f"claim {c}" for c in csi) or "in-tree disk volumes"
            out.append(
                NotEvaluated(
                    NODE_VOLUME_LIMITS,
                    f"{what} count against {UNEVALUATED[NODE_VOLUME_LIMITS]}, which is not checked",
                )
            )
        # after NodeVolumeLimits: filter order
        unknown = _capacity_unknown(inc, snapshot) if claims else []
        if unknown:
            out.append(
                NotEvaluated(
                    VOLUME_BINDING,
                    f"claim(s) {', '.join(unknown)} may be provisioned; the storage capacity "
                    "check needs the CSIDrivers and CSIStorageCapacities, which were not given",
                )
            )
    has_claims = False
    if snapshot.dra is not None:
        state = pod_dra_state(inc, snapshot.dra)
        # The PostFilter says "still not schedulable" once the PreFilter stored claims.
        has_claims = state is not None and state.rejection is None
        unsupported = unsupported_reason(state, snapshot.nodes) if state is not None else None
        if unsupported:
            out.append(NotEvaluated(DYNAMIC_RESOURCES, f"device allocation: {unsupported}"))
    elif uses_dra(inc, snapshot.dra_resources):
        has_claims = bool(spec.get("resourceClaims"))
        dra_ext = sorted(k for k in inc.request if k in snapshot.dra_resources)
        what = "ResourceClaims" if has_claims else f"DRA-backed extended resource(s) {dra_ext}"
        out.append(
            NotEvaluated(
                DYNAMIC_RESOURCES,
                f"the pod uses {what}; the cluster's DeviceClasses, ResourceSlices and "
                "ResourceClaims were not given",
            )
        )
        has_claims = True
    return out, has_claims
