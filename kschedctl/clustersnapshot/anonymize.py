"""``kschedctl snapshot --anonymize``: names and label values replaced, scheduling unchanged.

Pure. DRA objects (DeviceClasses, ResourceSlices, ResourceClaims) are left out: their CEL
selectors name values no mapping can rewrite. Storage objects are kept. Every node, pod,
namespace, PDB, claim, PersistentVolume, StorageClass and CSIStorageCapacity name, a
volume's identity (volume handle, disk name), every label value, taint and toleration value,
container image and every value a selector names is replaced through ONE mapping (keyed
HMAC-SHA256 with a key drawn per snapshot and never written): the same string always becomes
the same replacement, wherever it appears, and different strings never share one.
Every equality the scheduler tests is therefore kept — a node's ``kubernetes.io/hostname``
label still equals its name, a DaemonSet pod's ``matchFields metadata.name`` still names its
node, ``kubernetes.io/metadata.name`` still equals its namespace, a spread constraint's
selector still matches the same pods, zones stay zones (hashed) — and nothing else leaks.

Kept as they are: label and taint keys and topology keys (the plugins read them), integers
(``Gt``/``Lt`` compare them as numbers), empty strings, the namespaces every cluster has
(``default``, ``kube-system``, ``kube-public``, ``kube-node-lease``), scheduler names,
PriorityClass names, CSI driver and provisioner names, quantities. Container names become
``c0``, ``c1`` … (no plugin reads them).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from kschedctl.clustersnapshot.model import (
    ClusterSnapshot,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    PodDisruptionBudget,
    SnapshotContainer,
    SnapshotMetadata,
    SnapshotNamespace,
    SnapshotNode,
    SnapshotPod,
    StorageClass,
)
from kschedctl.model.filters.volumebinding import SELECTED_NODE

__all__ = ["Anonymizer", "anonymize"]

KEPT = frozenset({"", "default", "kube-system", "kube-public", "kube-node-lease"})
_INTEGER = re.compile(r"[-+]?[0-9]+")  # strconv.ParseInt's form: Gt/Lt operands
_Named = TypeVar("_Named", SnapshotPod, PodDisruptionBudget)
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_SOURCE_KEPT = ("driver", "fsType", "readOnly", "kind", "type")  # not names of a volume
_DIGEST_HEX = 12  # 48 bits: a collision among a million strings is a one-in-500 event …
# … and is detected anyway: the replacement grows until it is unique.


def _rewritten(
    obj: Any,
    lists: Mapping[str, Callable[[Any], Any]] | None = None,
    values: Mapping[str, Callable[[Any], Any]] | None = None,
) -> Any:
    """A copy of the mapping ``obj`` (anything else as it is) with the value under a key of
    ``values``, then each item of the list under a key of ``lists``, passed through that key's
    function (in this order: the first use of a string picks its replacement's prefix)."""
    if not isinstance(obj, Mapping):
        return obj
    out = dict(obj)
    for key, value in (values or {}).items():  # first: a string's first use names it
        if key in obj:
            out[key] = value(obj[key])
    for key, item in (lists or {}).items():
        if isinstance(obj.get(key), list):
            out[key] = [item(v) for v in obj[key]]
    return out


def _weighted(term: Any, key: str, rewrite: Callable[[Any], Any]) -> Any:
    """A weighted (preferred) affinity term with its inner term under ``key`` rewritten."""
    return {**term, key: rewrite(term.get(key))} if isinstance(term, Mapping) else term


class Anonymizer:
    """The one mapping of a snapshot (``key``: random unless a test fixes it)."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)
        self._out: dict[str, str] = {}
        self._taken: set[str] = set()

    def text(self, value: str, prefix: str = "v-") -> str:
        """``value``'s replacement; ``prefix`` (a DNS-1123 label start) names it the first
        time ``value`` is seen, so names stay valid names."""
        if value in KEPT or _INTEGER.fullmatch(value):
            return value
        known = self._out.get(value)
        if known is not None:
            return known
        digest = hmac.new(self._key, value.encode("utf-8", "surrogatepass"), hashlib.sha256)
        full = digest.hexdigest()
        size = _DIGEST_HEX
        out = prefix + full[:size]
        while out in self._taken or out in KEPT:
            size += 4
            out = prefix + (full[:size] if size <= len(full) else full + str(size))
        self._out[value] = out
        self._taken.add(out)
        return out

    def values(self, values: Any) -> Any:
        if not isinstance(values, list):
            return values
        return [self.text(v) if isinstance(v, str) else v for v in values]

    def labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        return {k: self.text(v) for k, v in labels.items()}

    def label_selector(self, selector: Any) -> Any:
        """A LabelSelector (matchLabels, matchExpressions) with its values replaced."""
        return _rewritten(
            selector,
            lists={"matchExpressions": self._requirement},
            values={"matchLabels": self._match_labels},
        )

    def _match_labels(self, labels: Any) -> Any:
        if not isinstance(labels, Mapping):
            return labels
        return {k: self.text(v) if isinstance(v, str) else v for k, v in labels.items()}

    def _requirement(self, req: Any) -> Any:
        return _rewritten(req, values={"values": self.values})

    def _node_selector_term(self, term: Any) -> Any:
        """A NodeSelectorTerm: matchExpressions on labels, matchFields on ``metadata.name``
        (a node name: the same mapping, so it still names the node)."""
        each = self._requirement
        return _rewritten(term, lists={"matchExpressions": each, "matchFields": each})

    def _pod_affinity_term(self, term: Any) -> Any:
        return _rewritten(
            term,
            lists={"namespaces": self.namespace},
            values={"labelSelector": self.label_selector, "namespaceSelector": self.label_selector},
        )

    def affinity(self, affinity: Any) -> Any:
        node_required = functools.partial(
            _rewritten, lists={"nodeSelectorTerms": self._node_selector_term}
        )
        node = functools.partial(
            _rewritten,
            values={_REQUIRED: node_required},
            lists={_PREFERRED: lambda p: _weighted(p, "preference", self._node_selector_term)},
        )
        pod = functools.partial(
            _rewritten,
            lists={
                _REQUIRED: self._pod_affinity_term,
                _PREFERRED: lambda p: _weighted(p, "podAffinityTerm", self._pod_affinity_term),
            },
        )
        return _rewritten(
            affinity, values={"nodeAffinity": node, "podAffinity": pod, "podAntiAffinity": pod}
        )

    def _valued(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Taints or tolerations: their ``value`` replaced (keys and effects kept)."""
        return [
            {**t, "value": self.text(t["value"])} if isinstance(t.get("value"), str) else t
            for t in items
        ]

    def namespace(self, name: Any) -> Any:
        return self.text(name, "ns-") if isinstance(name, str) else name

    def node_name(self, name: str) -> str:
        return self.text(name, "node-")

    def node(self, node: SnapshotNode) -> SnapshotNode:
        images = [
            {**i, "names": self.values(i.get("names"))} if isinstance(i, Mapping) else i
            for i in node.images
        ]
        return replace(
            node,
            name=self.node_name(node.name),
            labels=self.labels(node.labels),
            taints=self._valued(node.taints),
            images=images,
        )

    def _container(self, c: SnapshotContainer, index: int, prefix: str) -> SnapshotContainer:
        return replace(c, name=f"{prefix}{index}", image=self.text(c.image) if c.image else "")

    def _named(self, obj: _Named, prefix: str) -> _Named:
        """A namespaced object with its namespace and name replaced (first: the first use of a
        string picks its replacement's prefix)."""
        return replace(
            obj, namespace=self.namespace(obj.namespace), name=self.text(obj.name, prefix)
        )

    def pod(self, pod: SnapshotPod) -> SnapshotPod:
        return replace(
            self._named(pod, "pod-"),
            node_name=self.node_name(pod.node_name),
            nominated_node_name=self.node_name(pod.nominated_node_name),
            labels=self.labels(pod.labels),
            node_selector=self.labels(pod.node_selector),
            affinity=self.affinity(pod.affinity),
            tolerations=self._valued(pod.tolerations),
            topology_spread_constraints=[
                {**t, "labelSelector": self.label_selector(t.get("labelSelector"))}
                if "labelSelector" in t
                else t
                for t in pod.topology_spread_constraints
            ],
            containers=[self._container(c, i, "c") for i, c in enumerate(pod.containers)],
            init_containers=[
                self._container(c, i, "init") for i, c in enumerate(pod.init_containers)
            ],
            persistent_volume_claims=[self.text(c, "pvc-") for c in pod.persistent_volume_claims],
            resource_claims=[self._claim_ref(r) for r in pod.resource_claims],
            resource_claim_statuses=[self._claim_ref(r) for r in pod.resource_claim_statuses],
        )

    def _claim_ref(self, ref: Mapping[str, Any]) -> dict[str, Any]:
        """A pod's claim reference or status: every name through the one mapping."""
        return {k: self.text(v, "claim-") if isinstance(v, str) and v else v
                for k, v in ref.items()}  # fmt: skip

    def pdb(self, pdb: PodDisruptionBudget) -> PodDisruptionBudget:
        return replace(self._named(pdb, "pdb-"), selector=self.label_selector(pdb.selector))

    # --- storage: names through the same mapping as the pods' claim names and the nodes

    def _class(self, name: str | None) -> str | None:
        return self.text(name, "sc-") if name else name

    def claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        annotations = dict(pvc.annotations)
        if annotations.get(SELECTED_NODE):
            annotations[SELECTED_NODE] = self.node_name(annotations[SELECTED_NODE])
        return replace(
            pvc,
            namespace=self.namespace(pvc.namespace),
            name=self.text(pvc.name, "pvc-"),
            storage_class_name=self._class(pvc.storage_class_name),
            volume_name=self.text(pvc.volume_name, "pv-"),
            selector=self.label_selector(pvc.selector),
            annotations=annotations,
        )

    def _source(self, source: Mapping[str, Any]) -> dict[str, Any]:
        """A PV's source: what identifies the volume replaced, the driver and flags kept."""
        out: dict[str, Any] = {}
        for kind, fields in source.items():
            out[kind] = {
                k: v if k in _SOURCE_KEPT or not isinstance(v, (str, list)) else
                (self.values(v) if isinstance(v, list) else self.text(v))
                for k, v in (fields or {}).items()
            }  # fmt: skip
        return out

    def volume(self, pv: PersistentVolume) -> PersistentVolume:
        required = functools.partial(
            _rewritten, lists={"nodeSelectorTerms": self._node_selector_term}
        )
        ref = pv.claim_ref
        return replace(
            pv,
            name=self.text(pv.name, "pv-"),
            labels=self.labels(pv.labels),
            storage_class_name=self._class(pv.storage_class_name) or "",
            node_affinity=_rewritten(pv.node_affinity, values={"required": required}),
            claim_ref={
                **({"namespace": self.namespace(ref["namespace"])} if "namespace" in ref else {}),
                **({"name": self.text(ref["name"], "pvc-")} if "name" in ref else {}),
            },
            source=self._source(pv.source),
        )

    def storage_class(self, sc: StorageClass) -> StorageClass:
        terms = [
            _rewritten(t, lists={"matchLabelExpressions": self._requirement})
            for t in sc.allowed_topologies
        ]
        return replace(sc, name=self.text(sc.name, "sc-"), allowed_topologies=terms)

    def csi_node(self, node: CSINode) -> CSINode:
        return replace(node, name=self.node_name(node.name))

    def capacity(self, cap: CSIStorageCapacity) -> CSIStorageCapacity:
        return replace(
            cap,
            namespace=self.namespace(cap.namespace),
            name=self.text(cap.name, "csc-"),
            storage_class_name=self._class(cap.storage_class_name) or "",
            node_topology=self.label_selector(cap.node_topology),
        )


def anonymize(snap: ClusterSnapshot, key: bytes | None = None) -> ClusterSnapshot:
    """A copy of ``snap`` with names and values replaced (module docstring); nodes first, so
    their names (and the hostname labels equal to them) read ``node-…``."""
    anon = Anonymizer(key)
    nodes = [anon.node(n) for n in snap.nodes]
    namespaces = [
        SnapshotNamespace(anon.namespace(ns.name), anon.labels(ns.labels)) for ns in snap.namespaces
    ]
    metadata: SnapshotMetadata = replace(snap.metadata, anonymized=True)
    return replace(
        snap,
        metadata=metadata,
        nodes=nodes,
        namespaces=namespaces,
        pods=[anon.pod(p) for p in snap.pods],
        pending_pods=[anon.pod(p) for p in snap.pending_pods],
        pod_disruption_budgets=[anon.pdb(p) for p in snap.pod_disruption_budgets],
        # DRA objects hold names and values inside CEL selectors, which no mapping can rewrite
        # safely: left out (DynamicResources is then "not evaluated" for pods with claims).
        device_classes=None,
        resource_slices=None,
        resource_claims=None,
        resource_claim_templates=[],
        persistent_volume_claims=_each(anon.claim, snap.persistent_volume_claims),
        persistent_volumes=_each(anon.volume, snap.persistent_volumes),
        storage_classes=_each(anon.storage_class, snap.storage_classes),
        csi_drivers=snap.csi_drivers,  # driver names name products, as provisioners do
        csi_nodes=_each(anon.csi_node, snap.csi_nodes),
        csi_storage_capacities=_each(anon.capacity, snap.csi_storage_capacities),
    )


_T = TypeVar("_T")


def _each(rewrite: Callable[[_T], _T], items: list[_T] | None) -> list[_T] | None:
    return None if items is None else [rewrite(i) for i in items]
