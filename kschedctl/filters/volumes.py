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

All are UnschedulableAndUnresolvable. The per-node volume filters (PV node affinity, free
volumes, zones, attach limits) need PVs and CSINodes and stay "not evaluated".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .verdicts import UNRESOLVABLE, VOLUME_BINDING, VOLUME_RESTRICTIONS, Reason

__all__ = ["volume_prefilter", "claim_names"]

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def claim_names(pod: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
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


def _class_name(pvc: Mapping[str, Any]) -> str:
    ann = (pvc.get("metadata") or {}).get("annotations") or {}
    if BETA_CLASS_ANNOTATION in ann:
        return str(ann[BETA_CLASS_ANNOTATION])
    return str((pvc.get("spec") or {}).get("storageClassName") or "")


def volume_prefilter(
    pod: Mapping[str, Any],
    pvcs: Mapping[tuple[str, str], Mapping[str, Any]] | None,
    storage_classes: Mapping[str, Mapping[str, Any]] | None,
    notes: list[str],
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
    return None
