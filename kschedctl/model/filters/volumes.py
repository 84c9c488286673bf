"""The PreFilter-level volume checks that reject a pod before any node is looked at.

Only when the snapshot was given the PersistentVolumeClaims (and, for the binding mode, the
StorageClasses). In kube-scheduler's PreFilter order:

- VolumeRestrictions: a ``persistentVolumeClaim`` volume whose claim does not exist:
  ``persistentvolumeclaim "<name>" not found``;
- VolumeBinding (``podHasPVCs``): a generic ephemeral volume whose claim is not created yet,
  a claim that is Lost or being deleted, an ephemeral claim not owned by the pod;
- VolumeBinding (``GetPodVolumeClaims``): a claim that is not bound while its StorageClass
  binds immediately (or it is pre-bound to a volume): ``pod has unbound immediate
  PersistentVolumeClaims``.

- VolumeZone (``getPVbyPod``, only when the PersistentVolumes were given too): a bound
  claim whose PersistentVolume does not exist: ``persistentvolume "<name>" not found``.

All are UnschedulableAndUnresolvable. With the PersistentVolumes, :func:`binding_state`,
:func:`zone_state` and :func:`rwop_state` build the PreFilter states of the per-node filters
(``volumebinding``, ``volumezone``, ``volumerestrictions``); VolumeBinding's storage capacity
check needs the CSIDrivers and CSIStorageCapacities too; CSI attach limits
(NodeVolumeLimits) need CSINodes and stay "not evaluated" for pods with CSI volumes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kschedctl.model.kubetypes import Pod

from .nodefilters import Incoming
from .verdicts import UNRESOLVABLE, VOLUME_BINDING, VOLUME_RESTRICTIONS, VOLUME_ZONE, Reason
from .volumebinding import (
    BIND_COMPLETED,
    VolumeBindingState,
    claim_class,
    fully_bound,
    is_delay_binding,
    volume_class,
)
from .volumerestrictions import RESTRICTED_VOLUMES, RWOP, RwopState
from .volumezone import VolumeZoneState, pv_topologies

if TYPE_CHECKING:
    from .snapshot import NodeInfoSnapshot

__all__ = [
    "volume_prefilter",
    "claim_names",
    "binding_state",
    "zone_state",
    "rwop_state",
    "volume_bindings",
]


def claim_names(pod: Pod) -> list[tuple[str, str, bool]]:
    """(volume name, claim name, is ephemeral) for every PVC-backed volume of the pod."""
    md = pod.get("metadata") or {}
    out = []
    for v in (pod.get("spec") or {}).get("volumes") or []:
        if v.get("persistentVolumeClaim") is not None:
            out.append((v.get("name", ""), str(v["persistentVolumeClaim"].get("claimName")), False))
        elif v.get("ephemeral") is not None:
            out.append((v.get("name", ""), f"{md.get('name', '')}-{v.get('name', '')}", True))
    return out


def _reject(plugin: str, message: str, detail: str, fix: str) -> Reason:
    return Reason(plugin, message, detail, fix, UNRESOLVABLE)


def _owned_by(pvc: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    uid = (pod.get("metadata") or {}).get("uid")
    for ref in (pvc.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid") == uid:
            return True
    return False


_class_name = claim_class


def volume_prefilter(
    pod: Pod,
    pvcs: Mapping[tuple[str, str], Mapping[str, Any]] | None,
    storage_classes: Mapping[str, Mapping[str, Any]] | None,
    notes: list[str],
    pvs: Mapping[str, Mapping[str, Any]] | None = None,
) -> Reason | None:
    """The first PreFilter rejection caused by the pod's claims, or None."""
    if pvcs is None:
        return None
    claims = claim_names(pod)
    if not claims:
        return None
    md = pod.get("metadata") or {}
    ns = md.get("namespace") or "default"
    for _vol, name, ephemeral in claims:
        if not ephemeral and (ns, name) not in pvcs:
            return _reject(
                VOLUME_RESTRICTIONS,
                f'persistentvolumeclaim "{name}" not found',
                f"the pod mounts PersistentVolumeClaim {ns}/{name}, which does not exist",
                f"create the PersistentVolumeClaim {name} in namespace {ns}",
            )
    for _vol, name, ephemeral in claims:
        pvc = pvcs.get((ns, name))
        if pvc is None:
            return _reject(
                VOLUME_BINDING,
                "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                f'"{name}"',
                f"the generic ephemeral volume's claim {ns}/{name} does not exist yet",
                "wait for kube-controller-manager's ephemeral volume controller",
            )
        spec = pvc.get("spec") or {}
        if (pvc.get("status") or {}).get("phase") == "Lost":
            pv = spec.get("volumeName") or ""
            return _reject(
                VOLUME_BINDING,
                f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume "{pv}"',
                f"claim {ns}/{name} is Lost: its PersistentVolume {pv} is gone",
                "recreate the claim or restore the volume",
            )
        if (pvc.get("metadata") or {}).get("deletionTimestamp") is not None:
            return _reject(
                VOLUME_BINDING,
                f'persistentvolumeclaim "{name}" is being deleted',
                f"claim {ns}/{name} has a deletionTimestamp",
                "recreate the claim once it is gone",
            )
        if ephemeral and not _owned_by(pvc, pod):
            return _reject(
                VOLUME_BINDING,
                f"PVC {ns}/{name} was not created for pod {ns}/{md.get('name', '')} "
                "(pod is not owner)",
                f"claim {ns}/{name} exists but is not controlled by this pod",
                "delete the conflicting claim",
            )
    unbound: list[str] = []
    for _vol, name, _eph in claims:
        pvc = pvcs[(ns, name)]
        spec = pvc.get("spec") or {}
        ann = (pvc.get("metadata") or {}).get("annotations") or {}
        if spec.get("volumeName") and BIND_COMPLETED in ann:
            continue  # fully bound
        cls = _class_name(pvc)
        delay = False
        if cls:
            if storage_classes is None:
                notes.append(
                    f"claim {ns}/{name} is unbound and no StorageClasses were given: its binding "
                    "mode is unknown, so VolumeBinding's PreFilter was not checked"
                )
                return None
            sc = storage_classes.get(cls)
            delay = sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer"
        if not (delay and not spec.get("volumeName")):
            unbound.append(name)
    if unbound:
        return _reject(
            VOLUME_BINDING,
            "pod has unbound immediate PersistentVolumeClaims",
            f"claim(s) {', '.join(f'{ns}/{n}' for n in unbound)} are not bound and bind "
            "immediately (not WaitForFirstConsumer)",
            "make a matching PersistentVolume available or fix the claim's StorageClass; "
            "kubectl describe pvc shows the provisioner's events",
        )
    if pvs is None:
        return None
    # VolumeZone's PreFilter reads the PV of every bound persistentVolumeClaim volume.
    for _vol, name, ephemeral in claims:
        volume = ((pvcs[(ns, name)].get("spec") or {}).get("volumeName")) or ""
        if not ephemeral and volume and volume not in pvs:
            return _reject(
                VOLUME_ZONE,
                f'persistentvolume "{volume}" not found',
                f"claim {ns}/{name} is bound to PersistentVolume {volume}, which does not exist",
                "restore the PersistentVolume or recreate the claim",
            )
    return None


def _claims_of(inc: Incoming, snapshot: NodeInfoSnapshot) -> list[Mapping[str, Any]] | None:
    """The pod's claims, each once, in volume order; None when the state is not known or a
    claim is missing (the PreFilter rejected the pod)."""
    if snapshot.pvcs is None or snapshot.pvs is None:
        return None
    out: dict[str, Mapping[str, Any]] = {}
    for _vol, name, _eph in claim_names(inc.raw):
        pvc = snapshot.pvcs.get((inc.namespace, name))
        if pvc is None:
            return None
        out.setdefault(name, pvc)
    return list(out.values())


def binding_state(
    inc: Incoming, snapshot: NodeInfoSnapshot, notes: list[str] | None
) -> VolumeBindingState | None:
    """VolumeBinding's PreFilter (``GetPodVolumeClaims``); None: Skip (no claims) or rejected."""
    claims = _claims_of(inc, snapshot)
    if not claims or snapshot.pvs is None:
        return None
    classes = snapshot.storage_classes or {}
    bound: list[tuple[Mapping[str, Any], Mapping[str, Any] | None]] = []
    delayed: list[Mapping[str, Any]] = []
    for pvc in claims:
        volume = (pvc.get("spec") or {}).get("volumeName") or ""
        if fully_bound(pvc):
            bound.append((pvc, snapshot.pvs.get(volume)))
        elif is_delay_binding(pvc, classes) and not volume:
            delayed.append(pvc)
        else:
            return None  # an unbound immediate claim: the PreFilter rejected the pod
    by_class: dict[str, list[Mapping[str, Any]]] = {}
    for pvc in delayed:
        cls = claim_class(pvc)
        if cls not in by_class:
            by_class[cls] = [
                pv for name, pv in sorted(snapshot.pvs.items()) if volume_class(pv) == cls
            ]
    capacities = snapshot.csi_capacities
    return VolumeBindingState(
        bound,
        delayed,
        by_class,
        classes,
        inc.dynamic_provisioning,
        snapshot.csi_drivers,
        list(capacities.values()) if capacities is not None else None,
    )


def zone_state(
    inc: Incoming, snapshot: NodeInfoSnapshot, notes: list[str] | None
) -> VolumeZoneState | None:
    """VolumeZone's PreFilter: the zone labels of the PVs of bound ``persistentVolumeClaim``
    volumes (generic ephemeral ones are not read); None: Skip."""
    if snapshot.pvcs is None or snapshot.pvs is None:
        return None
    topologies = []
    for _vol, name, ephemeral in claim_names(inc.raw):
        pvc = snapshot.pvcs.get((inc.namespace, name))
        if ephemeral or pvc is None:
            continue
        pv = snapshot.pvs.get((pvc.get("spec") or {}).get("volumeName") or "")
        if pv is not None:
            topologies += pv_topologies(pv)
    return VolumeZoneState(topologies) if topologies else None


def rwop_state(
    inc: Incoming, snapshot: NodeInfoSnapshot, notes: list[str] | None
) -> RwopState | None:
    """VolumeRestrictions' PreFilter: the pod's inline disks and ReadWriteOncePod claims;
    None: Skip (no disk to check and no claim in use)."""
    disks = [
        v
        for v in (inc.raw.get("spec") or {}).get("volumes") or []
        if any(v.get(kind) is not None for kind in RESTRICTED_VOLUMES)
    ]
    claims = set()
    pvcs = snapshot.pvcs or {}
    for _vol, name, _eph in claim_names(inc.raw):
        pvc = pvcs.get((inc.namespace, name))
        if pvc is not None and RWOP in ((pvc.get("spec") or {}).get("accessModes") or []):
            claims.add(name)
    state = RwopState(inc.namespace, claims, disks=disks)
    used: set[str] = set()
    for node in snapshot if claims else ():
        for p in node.pods:
            if p.uid == inc.uid or p.namespace != inc.namespace:
                continue
            hit = claims.intersection(c for _v, c, _e in claim_names(p.raw))
            if hit:
                used |= hit
                state.users.append(p.key)
    state.conflicts = len(used)  # calPreFilterState: one per claim in use
    if not disks and not state.conflicts:
        return None  # Skip, as kube-scheduler: nominated pods are not counted then
    return state


def volume_bindings(
    pod: Pod, snapshot: NodeInfoSnapshot, node_name: str
) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """The static bindings (claim, PersistentVolume) VolumeBinding's Reserve would make for
    ``pod`` on ``node_name``: what a scheduler writes in PreBind. Empty when every claim is
    bound (or the pod has none)."""
    state = binding_state(Incoming(pod, dynamic_provisioning=False), snapshot, None)
    if state is None or node_name not in snapshot:
        return []
    return state.find(snapshot.node(node_name)).bindings
