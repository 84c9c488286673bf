"""``kschedctl snapshot --anonymize``: names and label values replaced, scheduling unchanged.

Pure. DRA objects (DeviceClasses, ResourceSlices, ResourceClaims) are left out: their CEL
selectors name values no mapping can rewrite. Every node, pod, namespace, PDB and claim
name, every label value, taint and toleration value, container image and every value a
selector names is replaced through ONE mapping (keyed HMAC-SHA256 with a key drawn per
snapshot and never written): the same string always becomes the same replacement, wherever
it appears, and different strings never share one.
Every equality the scheduler tests is therefore kept — a node's ``kubernetes.io/hostname``
label still equals its name, a DaemonSet pod's ``matchFields metadata.name`` still names its
node, ``kubernetes.io/metadata.name`` still equals its namespace, a spread constraint's
selector still matches the same pods, zones stay zones (hashed) — and nothing else leaks.

Kept as they are: label and taint keys and topology keys (the plugins read them), integers
(``Gt``/``Lt`` compare them as numbers), empty strings, the namespaces every cluster has
(``default``, ``kube-system``, ``kube-public``, ``kube-node-lease``), scheduler names,
PriorityClass names, quantities. Container names become ``c0``, ``c1`` … (no plugin reads
them).
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
    PodDisruptionBudget,
    SnapshotContainer,
    SnapshotMetadata,
    SnapshotNamespace,
    SnapshotNode,
    SnapshotPod,
)

__all__ = ["Anonymizer", "anonymize"]

KEPT = frozenset({"", "default", "kube-system", "kube-public", "kube-node-lease"})
_INTEGER = re.compile(r"[-+]?[0-9]+")  # strconv.ParseInt's form: Gt/Lt operands
_Named = TypeVar("_Named", SnapshotPod, PodDisruptionBudget)
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
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
    )
