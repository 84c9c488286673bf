"""VolumeBinding, the per-node filter of PersistentVolumeClaims, over plain
PersistentVolumeClaim / PersistentVolume / StorageClass dicts (VolumeZone is
:mod:`.volumezone`, VolumeRestrictions' ReadWriteOncePod check :mod:`.volumerestrictions`).

Derived from kube-scheduler v1.36.3: ``pkg/scheduler/framework/plugins/volumebinding/binder.go``
(``FindPodVolumes``, ``checkBoundClaims``, ``findMatchingVolumes``, ``checkVolumeProvisions``)
and ``volume_binding.go`` (every reason UnschedulableAndUnresolvable),
``hasEnoughCapacity`` (a CSIDriver with ``storageCapacity: true`` and a CSIStorageCapacity),
``volumezone/volume_zone.go``, ``volumerestrictions/volume_restrictions.go``, and the PV
matching of ``k8s.io/component-helpers/storage/volume`` (``FindMatchingVolume``,
``CheckNodeAffinity``, ``GetBindVolumeToClaim``) that the PV controller shares.

``dynamic_provisioning`` says whether the scheduler creates volumes: kube-scheduler does (a node
where a claim's class can provision passes), kschedctl's scheduler does not (such a node gets
``REASON_PROVISIONING_UNSUPPORTED``), so ``why`` and the scheduler agree for each scheduler.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .nodeinfo import NodeInfo, PodInfo
from .quantity import NANO, QuantityError, parse_quantity
from .selectors import SelectorError, label_selector, node_selector_terms
from .verdicts import (
    UNRESOLVABLE,
    VOLUME_BINDING,
    Reason,
)

__all__ = [
    "REASON_BIND_CONFLICT",
    "REASON_NODE_CONFLICT",
    "REASON_NOT_ENOUGH_SPACE",
    "REASON_PROVISIONING_UNSUPPORTED",
    "REASON_PV_NOT_EXIST",
    "VolumeBindingState",
    "claim_class",
    "volume_class",
    "pv_node_affinity_failure",
    "find_matching_volume",
    "fully_bound",
    "is_delay_binding",
    "bind_volume_to_claim",
]

REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
# kschedctl's own scheduler only: kube-scheduler would pass the node and provision.
REASON_PROVISIONING_UNSUPPORTED = (
    "node(s) would need dynamic provisioning of a PersistentVolume, which kschedctl's scheduler "
    "does not do (use kube-scheduler for this pod)"
)

BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
STORAGE = "storage"


def _md(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_md(obj).get("name") or "")


def claim_key(pvc: Mapping[str, Any]) -> str:
    md = _md(pvc)
    return f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"


def claim_class(pvc: Mapping[str, Any]) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation wins over the field."""
    ann = _md(pvc).get("annotations") or {}
    if BETA_CLASS_ANNOTATION in ann:
        return str(ann[BETA_CLASS_ANNOTATION])
    return str((pvc.get("spec") or {}).get("storageClassName") or "")


def volume_class(pv: Mapping[str, Any]) -> str:
    """``GetPersistentVolumeClass``."""
    ann = _md(pv).get("annotations") or {}
    if BETA_CLASS_ANNOTATION in ann:
        return str(ann[BETA_CLASS_ANNOTATION])
    return str((pv.get("spec") or {}).get("storageClassName") or "")


def fully_bound(pvc: Mapping[str, Any]) -> bool:
    """``isPVCFullyBound``: a volume name and the PV controller's bind-completed annotation."""
    return bool((pvc.get("spec") or {}).get("volumeName")) and BIND_COMPLETED in (
        _md(pvc).get("annotations") or {}
    )


def is_delay_binding(
    pvc: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]] | None
) -> bool:
    """``IsDelayBindingMode``: the claim's class exists and is WaitForFirstConsumer."""
    name = claim_class(pvc)
    if not name or classes is None:
        return False
    sc = classes.get(name)
    return sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer"


def bind_volume_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> dict[str, Any]:
    """``GetBindVolumeToClaim``: the PV with a claimRef to the claim (and
    ``pv.kubernetes.io/bound-by-controller`` when it was not pre-bound), as VolumeBinding's
    PreBind writes it and the PV controller then completes."""
    cmd = pvc.get("metadata") or {}
    spec = dict(pv.get("spec") or {})
    md = dict(pv.get("metadata") or {})
    ref = spec.get("claimRef") or {}
    namespace = cmd.get("namespace") or "default"
    prebound = (
        ref.get("name") == cmd.get("name")
        and ref.get("namespace") == namespace
        and (not ref.get("uid") or ref.get("uid") == cmd.get("uid"))
    )
    if (
        ref.get("name") != cmd.get("name")
        or ref.get("namespace") != namespace
        or (ref.get("uid") != cmd.get("uid"))
    ):
        spec["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "namespace": namespace,
            "name": cmd.get("name"),
            "uid": cmd.get("uid"),
            "apiVersion": "v1",
            "resourceVersion": cmd.get("resourceVersion"),
        }
    annotations = dict(md.get("annotations") or {})
    if not prebound and BOUND_BY_CONTROLLER not in annotations:
        annotations[BOUND_BY_CONTROLLER] = "yes"
    md["annotations"] = annotations
    return {**pv, "metadata": md, "spec": spec}


def _storage(obj: Mapping[str, Any] | None) -> int:
    """A ``storage`` quantity in nano-units (0 when absent or invalid, as Go's zero value)."""
    if not obj:
        return 0
    try:
        return parse_quantity(obj.get(STORAGE, 0))
    except QuantityError:
        return 0


def _request(pvc: Mapping[str, Any]) -> int:
    return _storage(((pvc.get("spec") or {}).get("resources") or {}).get("requests"))


def _capacity(pv: Mapping[str, Any]) -> int:
    return _storage((pv.get("spec") or {}).get("capacity"))


def pv_node_affinity_failure(pv: Mapping[str, Any], labels: Mapping[str, str]) -> str | None:
    """``CheckNodeAffinity``: None when the PV's ``nodeAffinity.required`` allows a node with
    these labels, else what failed. Go matches a node built from the labels alone: without a
    name, ``matchFields`` are skipped."""
    required = ((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if required is None:
        return None
    raw_terms = required.get("nodeSelectorTerms") or []
    terms = node_selector_terms(raw_terms)
    failures = []
    for t in terms:
        failure = t.first_failure(labels, "")
        if failure is None:
            return None
        failures.append(failure if len(terms) == 1 else f"term {t.index}: {failure}")
    if not failures:
        return "its required node affinity has no non-empty nodeSelectorTerms"
    return "; ".join(failures)


def _is_bound_to(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """``IsVolumeBoundToClaim``."""
    ref = (pv.get("spec") or {}).get("claimRef")
    if not ref:
        return False
    md = _md(pvc)
    if ref.get("name") != md.get("name") or ref.get("namespace") != (
        md.get("namespace") or "default"
    ):
        return False
    return not ref.get("uid") or ref.get("uid") == md.get("uid")


def _volume_mode(spec: Mapping[str, Any]) -> str:
    return str(spec.get("volumeMode") or "Filesystem")


def _access_modes_ok(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    have = set((pv.get("spec") or {}).get("accessModes") or [])
    return all(m in have for m in (pvc.get("spec") or {}).get("accessModes") or [])


def find_matching_volume(
    pvc: Mapping[str, Any],
    volumes: Sequence[Mapping[str, Any]],
    labels: Mapping[str, str],
    excluded: set[str],
) -> Mapping[str, Any] | None:
    """``FindMatchingVolume`` with a node and delayed binding: the PV pre-bound to the claim
    (if it fits the node), else the smallest Available one of the claim's class that is big
    enough, of the same volume mode and VolumeAttributesClass, selected by the claim's
    selector, allowed on the node and offering the claim's access modes. ``volumes`` are
    visited in order; the first of equally small ones wins."""
    spec = pvc.get("spec") or {}
    requested = _request(pvc)
    requested_class = claim_class(pvc)
    selector = None
    if spec.get("selector") is not None:
        try:
            selector = label_selector(spec["selector"])
        except SelectorError:
            return None  # Go: an error for this claim; no volume matches
    claim_vac = spec.get("volumeAttributesClassName") or ""
    smallest: Mapping[str, Any] | None = None
    smallest_qty = 0
    for pv in volumes:
        name = _name(pv)
        if name in excluded:
            continue
        pv_spec = pv.get("spec") or {}
        if pv_spec.get("claimRef") and not _is_bound_to(pv, pvc):
            continue
        qty = _capacity(pv)
        if qty < requested:
            continue
        if _volume_mode(spec) != _volume_mode(pv_spec):
            continue
        if claim_vac != (pv_spec.get("volumeAttributesClassName") or ""):
            continue
        if _md(pv).get("deletionTimestamp") is not None:
            continue
        affinity_ok = pv_node_affinity_failure(pv, labels) is None
        if _is_bound_to(pv, pvc):
            return pv if affinity_ok else None
        if (pv.get("status") or {}).get("phase") != "Available":
            continue
        if selector is not None and not selector.matches(_md(pv).get("labels") or {}):
            continue
        if volume_class(pv) != requested_class:
            continue
        if not affinity_ok:
            continue
        if not _access_modes_ok(pvc, pv):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest


def _topology_matches(terms: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> bool:
    """``MatchTopologySelectorTerms`` of a StorageClass's ``allowedTopologies``."""
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or []
        if not exprs:
            continue
        if all(labels.get(e.get("key", "")) in (e.get("values") or []) for e in exprs):
            return True
    return False


def _value(nanos: int) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return -(-nanos // NANO)


def _capacity_limit(capacity: Mapping[str, Any]) -> int | None:
    """``volumeLimit``: maximumVolumeSize (more precise) else capacity, in bytes."""
    raw = capacity.get("maximumVolumeSize")
    if raw is None:
        raw = capacity.get("capacity")
    if raw is None:
        return None
    try:
        return _value(parse_quantity(raw))
    except QuantityError:
        return None


def _node_has_access(capacity: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """``nodeHasAccess``: the capacity's nodeTopology selects the node (none: unavailable)."""
    topology = capacity.get("nodeTopology")
    if topology is None:
        return False
    try:
        return label_selector(topology).matches(labels)
    except SelectorError:
        return False


def storage_shortage(
    pvc: Mapping[str, Any],
    class_name: str,
    provisioner: str,
    labels: Mapping[str, str],
    drivers: Mapping[str, Mapping[str, Any]],
    capacities: Iterable[Mapping[str, Any]],
) -> str | None:
    """``hasEnoughCapacity``: None when the claim may be provisioned for a node with these
    labels (no storage request, the provisioner is no CSIDriver with ``storageCapacity``,
    or a CSIStorageCapacity of the class reaching the node is big enough), else why not."""
    requests = ((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}
    if STORAGE not in requests:
        return None
    driver = drivers.get(provisioner)
    if driver is None or (driver.get("spec") or {}).get("storageCapacity") is not True:
        return None
    size = _value(_request(pvc))
    for capacity in capacities:
        limit = _capacity_limit(capacity)
        if (
            capacity.get("storageClassName") == class_name
            and limit is not None
            and limit >= size
            and _node_has_access(capacity, labels)
        ):
            return None
    return (
        f"{_describe_claim(pvc)} would be provisioned by CSI driver {provisioner}, and no "
        f"CSIStorageCapacity of class {class_name} reaching this node has "
        f"{requests[STORAGE]} (capacity, or maximumVolumeSize when set)"
    )


def _describe_claim(pvc: Mapping[str, Any]) -> str:
    spec = pvc.get("spec") or {}
    req = ((spec.get("resources") or {}).get("requests") or {}).get(STORAGE)
    parts = [f"class {claim_class(pvc) or '(none)'}"]
    if req:
        parts.append(f"{req}")
    if spec.get("accessModes"):
        parts.append(",".join(spec["accessModes"]))
    if spec.get("selector"):
        parts.append("with a selector")
    return f"claim {claim_key(pvc)} ({', '.join(parts)})"


def _volume_reason(message: str, detail: str, fix: str) -> Reason:
    return Reason(VOLUME_BINDING, message, detail, fix, UNRESOLVABLE)


@dataclass
class NodeVolumes:
    """What VolumeBinding found for one node: its reasons, the static bindings it would make
    (claim, volume) and the claims it would provision."""

    reasons: list[Reason] = field(default_factory=list)
    bindings: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = field(default_factory=list)
    provisions: list[Mapping[str, Any]] = field(default_factory=list)


@dataclass
class VolumeBindingState:
    """VolumeBinding's PreFilter state (``PodVolumeClaims``): bound claims with their PVs
    (None: missing), unbound WaitForFirstConsumer claims, the PVs of their classes."""

    bound: list[tuple[Mapping[str, Any], Mapping[str, Any] | None]]
    delayed: list[Mapping[str, Any]]
    volumes_by_class: dict[str, list[Mapping[str, Any]]]
    classes: Mapping[str, Mapping[str, Any]]
    dynamic_provisioning: bool = True
    # CSIDrivers by name and CSIStorageCapacities (None: not known, the check is skipped and
    # ``not_evaluated`` says so)
    drivers: Mapping[str, Mapping[str, Any]] | None = None
    capacities: Iterable[Mapping[str, Any]] | None = None

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        """Other pods do not change volume binding (PreFilterExtensions is nil)."""

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]:
        return self.find(node).reasons

    def find(self, node: NodeInfo) -> NodeVolumes:
        """``FindPodVolumes`` for one node."""
        out = NodeVolumes()
        labels = node.labels
        node_conflict: str | None = None
        missing: str | None = None
        for pvc, pv in self.bound:
            if pv is None:
                missing = (
                    f"claim {claim_key(pvc)} is bound to PersistentVolume "
                    f"{(pvc.get('spec') or {}).get('volumeName')}, which does not exist"
                )
                break
            failure = pv_node_affinity_failure(pv, labels)
            if failure is not None:
                node_conflict = (
                    f"PersistentVolume {_name(pv)} (claim {claim_key(pvc)}) requires: {failure}"
                )
                break
        bind_conflict: str | None = None
        shortage: str | None = None
        unsupported: str | None = None
        if self.delayed:
            bind_conflict, shortage, unsupported = self._unbound(node, out)
        if node_conflict:
            out.reasons.append(
                _volume_reason(
                    REASON_NODE_CONFLICT,
                    node_conflict,
                    "the claim's data lives where its PersistentVolume's node affinity says: "
                    "schedule the pod there (or move the volume)",
                )
            )
        if bind_conflict:
            out.reasons.append(
                _volume_reason(
                    REASON_BIND_CONFLICT,
                    bind_conflict,
                    "create an Available PersistentVolume of the claim's StorageClass for this "
                    "node (big enough, same access modes and volumeMode), or fix the claim",
                )
            )
        if shortage:
            out.reasons.append(
                _volume_reason(
                    REASON_NOT_ENOUGH_SPACE,
                    shortage,
                    "free storage where the driver publishes capacity for this node, or ask "
                    "for less",
                )
            )
        if missing:
            out.reasons.append(
                _volume_reason(
                    REASON_PV_NOT_EXIST, missing, "restore the volume or recreate the claim"
                )
            )
        if unsupported and not out.reasons:
            out.reasons.append(
                _volume_reason(
                    REASON_PROVISIONING_UNSUPPORTED,
                    unsupported,
                    "set the pod's schedulerName to a kube-scheduler (e.g. default-scheduler), "
                    "or create a matching static PersistentVolume",
                )
            )
        return out

    def _unbound(
        self, node: NodeInfo, out: NodeVolumes
    ) -> tuple[str | None, str | None, str | None]:
        """(bind conflict, storage shortage, provisioning kschedctl cannot do) for the unbound
        claims (``checkVolumeProvisions`` stops at the first claim that fails)."""
        labels = node.labels
        to_match: list[Mapping[str, Any]] = []
        to_provision: list[Mapping[str, Any]] = []
        for pvc in self.delayed:
            selected = (_md(pvc).get("annotations") or {}).get(SELECTED_NODE)
            if selected is not None:
                if selected != node.name:
                    return (
                        f"claim {claim_key(pvc)} is being provisioned for node {selected} "
                        f"(annotation {SELECTED_NODE})",
                        None,
                        None,
                    )
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        chosen: set[str] = set()
        no_match: list[Mapping[str, Any]] = []
        # findMatchingVolumes: smallest requests first, so they get the smallest volumes.
        for pvc in sorted(to_match, key=_request):
            pv = find_matching_volume(
                pvc, self.volumes_by_class.get(claim_class(pvc), []), labels, chosen
            )
            if pv is None:
                no_match.append(pvc)
                continue
            chosen.add(_name(pv))
            out.bindings.append((pvc, pv))
        to_provision += no_match
        for pvc in to_provision:
            name = claim_class(pvc)
            sc = self.classes.get(name)
            provisioner = (sc or {}).get("provisioner") or ""
            if sc is None or provisioner in ("", NO_PROVISIONER):
                what = (
                    f"StorageClass {name} does not exist"
                    if sc is None
                    else f"StorageClass {name} has no provisioner ({provisioner or 'none'})"
                )
                return (
                    f"no Available PersistentVolume fits {_describe_claim(pvc)} on this node, "
                    f"and {what}",
                    None,
                    None,
                )
            if not _topology_matches(sc.get("allowedTopologies") or [], labels):
                return (
                    f"no Available PersistentVolume fits {_describe_claim(pvc)} on this node, "
                    f"and StorageClass {name}'s allowedTopologies exclude it",
                    None,
                    None,
                )
            if self.drivers is not None and self.capacities is not None:
                shortage = storage_shortage(
                    pvc, name, provisioner, labels, self.drivers, self.capacities
                )
                if shortage is not None:
                    out.provisions.clear()  # Go returns no provisions with the reason
                    return None, shortage, None
            out.provisions.append(pvc)
        if out.provisions and not self.dynamic_provisioning:
            pvc = out.provisions[0]
            sc = self.classes.get(claim_class(pvc)) or {}
            return (
                None,
                None,
                (
                    f"{_describe_claim(pvc)} has no matching static PersistentVolume here; "
                    f"StorageClass {claim_class(pvc)} would provision one with "
                    f"{sc.get('provisioner')}"
                ),
            )
        return None, None, None
