"""InterPodAffinity (interpodaffinity/filtering.go and scoring.go, v1.36).

Scoring (:func:`interpod_score`): every existing pod adds, in the domain of its node, the
weights of the incoming pod's preferred terms it matches (anti-affinity subtracts), the
``hardPodAffinityWeight`` (1) of its own required affinity terms the incoming pod matches,
and the weights of its own preferred terms the incoming pod matches; a node's score is the
sum over the domains it is in, normalised min..max to 0..100.

Filtering, required terms only:

Three checks, in this order:
1. the incoming pod's required affinity: for every term the node has the topology key and some
   pod matching *all* terms runs in that domain; exception: when no such pod exists anywhere
   and the pod matches all its own terms (the first replica of a self-affine group);
2. the incoming pod's required anti-affinity: no pod matching a term runs in the node's domain;
3. existing pods' required anti-affinity: no pod whose term matches the incoming pod runs in
   a domain this node belongs to.
Term namespaces: ``namespaces`` plus those selected by ``namespaceSelector`` (needs namespace
labels); both empty means the pod's own namespace; ``namespaceSelector: {}`` means all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from .nodefilters import Incoming
from .nodeinfo import AffinityTerm, NodeInfo, PodInfo, affinity_terms, weighted_affinity_terms
from .selectors import NOTHING
from .snapshot import NodeInfoSnapshot
from .verdicts import (
    INTER_POD_AFFINITY,
    REASON_EXISTING_ANTI_AFFINITY,
    REASON_POD_AFFINITY,
    REASON_POD_ANTI_AFFINITY,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Reason,
)

__all__ = ["InterPodState", "InterPodScore", "interpod_state", "interpod_score"]

HARD_POD_AFFINITY_WEIGHT = 1  # InterPodAffinityArgs default (apis/config/v1/defaults.go)

Pair = tuple[str, str]


def _bump(
    counts: dict[Pair, int], witness: dict[Pair, str], pair: Pair, delta: int, who: str
) -> None:
    n = counts.get(pair, 0) + delta
    if n == 0:
        counts.pop(pair, None)  # Go deletes zero entries; the self-affinity rule depends on it
        witness.pop(pair, None)
    else:
        counts[pair] = n
        if delta > 0:
            witness.setdefault(pair, who)


@dataclass(eq=False)
class InterPodState:
    """PreFilter state: matched-term counts per (topologyKey, value)."""

    inc: Incoming
    affinity: tuple[AffinityTerm, ...]
    anti: tuple[AffinityTerm, ...]
    ns_labels: Mapping[str, str] | None
    existing_anti: dict[Pair, int] = field(default_factory=dict, init=False)
    affinity_counts: dict[Pair, int] = field(default_factory=dict, init=False)
    anti_counts: dict[Pair, int] = field(default_factory=dict, init=False)
    _w_existing: dict[Pair, str] = field(default_factory=dict, init=False)
    _w_affinity: dict[Pair, str] = field(default_factory=dict, init=False)
    _w_anti: dict[Pair, str] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        # the incoming pod as an existing-pod-like view for term matching
        self._self = _IncomingView(self.inc)

    def _matches_all_affinity(self, pod: PodInfo | _IncomingView) -> bool:
        if not self.affinity:
            return False
        for t in self.affinity:
            if not t.matches(pod, None):
                return False
        return True

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        labels = node.labels
        for t in pod.anti_affinity:
            if t.matches(self._self, self.ns_labels) and t.topology_key in labels:
                pair = (t.topology_key, labels[t.topology_key])
                _bump(self.existing_anti, self._w_existing, pair, delta, pod.key)
        if self._matches_all_affinity(pod):
            for t in self.affinity:
                if t.topology_key in labels:
                    pair = (t.topology_key, labels[t.topology_key])
                    _bump(self.affinity_counts, self._w_affinity, pair, delta, pod.key)
        for t in self.anti:
            if t.matches(pod, None) and t.topology_key in labels:
                pair = (t.topology_key, labels[t.topology_key])
                _bump(self.anti_counts, self._w_anti, pair, delta, pod.key)

    def build(self, snapshot: NodeInfoSnapshot) -> None:
        # Existing pods' anti-affinity: only the nodes that have such pods (kube-scheduler's
        # HavePodsWithRequiredAntiAffinityList), not every node, on every decision.
        for node in snapshot.nodes_with_anti_affinity_pods():
            for p in node.pods:
                if not p.anti_affinity:
                    continue
                for t in p.anti_affinity:
                    if t.topology_key in node.labels and t.matches(self._self, self.ns_labels):
                        pair = (t.topology_key, node.labels[t.topology_key])
                        _bump(self.existing_anti, self._w_existing, pair, 1, p.key)
        if not (self.affinity or self.anti):
            return
        for node in snapshot:
            for p in node.pods:
                if self.affinity and self._matches_all_affinity(p):
                    for t in self.affinity:
                        if t.topology_key in node.labels:
                            pair = (t.topology_key, node.labels[t.topology_key])
                            _bump(self.affinity_counts, self._w_affinity, pair, 1, p.key)
                for t in self.anti:
                    if t.topology_key in node.labels and t.matches(p, None):
                        pair = (t.topology_key, node.labels[t.topology_key])
                        _bump(self.anti_counts, self._w_anti, pair, 1, p.key)

    @property
    def skip(self) -> bool:
        return not self.existing_anti and not self.affinity and not self.anti

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]:
        out: list[Reason] = []
        r = self._affinity(node)
        if r is not None:
            out.append(r)
            if not all_reasons:
                return out
        r = self._anti(node)
        if r is not None:
            out.append(r)
            if not all_reasons:
                return out
        r = self._existing(node)
        if r is not None:
            out.append(r)
        return out

    def _affinity(self, node: NodeInfo) -> Reason | None:
        pods_exist = True
        missing: AffinityTerm | None = None
        for t in self.affinity:
            value = node.labels.get(t.topology_key)
            if value is None:
                return Reason(
                    INTER_POD_AFFINITY,
                    REASON_POD_AFFINITY,
                    f"node has no label {t.topology_key} (pod affinity {t.describe()})",
                    f"label the node with {t.topology_key}",
                    UNRESOLVABLE,
                )
            if self.affinity_counts.get((t.topology_key, value), 0) <= 0:
                pods_exist = False
                missing = missing or t
        if pods_exist:
            return None
        if not self.affinity_counts and self._matches_all_affinity(self._self):
            return None  # no matching pod anywhere and the pod matches itself: first replica
        assert missing is not None
        return Reason(
            INTER_POD_AFFINITY,
            REASON_POD_AFFINITY,
            f"no pod matching pod affinity {missing.describe()} runs in "
            f"{missing.topology_key}={node.labels[missing.topology_key]}",
            "start a matching pod in this topology domain first, or relax the pod affinity",
            UNRESOLVABLE,
        )

    def _anti(self, node: NodeInfo) -> Reason | None:
        if not self.anti_counts:
            return None
        for t in self.anti:
            value = node.labels.get(t.topology_key)
            if value is None:
                continue
            pair = (t.topology_key, value)
            if self.anti_counts.get(pair, 0) > 0:
                who = self._w_anti.get(pair, "a matching pod")
                return Reason(
                    INTER_POD_AFFINITY,
                    REASON_POD_ANTI_AFFINITY,
                    f"{who} matches pod anti-affinity {t.describe()} and runs in "
                    f"{t.topology_key}={value}",
                    "add nodes in another topology domain, or relax the pod anti-affinity",
                    UNSCHEDULABLE,
                )
        return None

    def _existing(self, node: NodeInfo) -> Reason | None:
        if not self.existing_anti:
            return None
        for key, value in node.labels.items():
            pair = (key, value)
            if self.existing_anti.get(pair, 0) > 0:
                who = self._w_existing.get(pair, "an existing pod")
                return Reason(
                    INTER_POD_AFFINITY,
                    REASON_EXISTING_ANTI_AFFINITY,
                    f"{who} has a required anti-affinity term matching this pod in {key}={value}",
                    f"change the labels of this pod or the anti-affinity of {who}",
                    UNSCHEDULABLE,
                )
        return None


class _IncomingView:
    """Just what ``AffinityTerm.matches`` reads, for the incoming pod."""

    def __init__(self, inc: Incoming) -> None:
        self.namespace = inc.namespace
        self.labels = inc.labels


def interpod_state(
    inc: Incoming, snapshot: NodeInfoSnapshot, notes: list[str] | None = None
) -> InterPodState | None:
    """PreFilter: None when the plugin is skipped (no terms anywhere apply)."""
    affinity = affinity_terms(inc.raw, "podAffinity")
    anti = affinity_terms(inc.raw, "podAntiAffinity")
    merged_aff = tuple(_merge_namespaces(t, snapshot, notes) for t in affinity)
    merged_anti = tuple(_merge_namespaces(t, snapshot, notes) for t in anti)
    ns_labels = snapshot.namespace_labels(inc.namespace)
    state = InterPodState(inc, merged_aff, merged_anti, ns_labels)
    state.build(snapshot)
    if state.skip:
        return None
    return state


def _merge_namespaces(
    t: AffinityTerm, snapshot: NodeInfoSnapshot, notes: list[str] | None
) -> AffinityTerm:
    """``mergeAffinityTermNamespacesIfNotEmpty``: a non-empty namespaceSelector is replaced by
    the namespaces it selects now."""
    sel = t.namespace_selector
    if sel.empty() or sel.nothing:
        return t
    if not snapshot.namespaces_known and notes is not None:
        notes.append(
            f"pod affinity {t.describe()} uses a namespaceSelector but no namespace labels were "
            "given: it is evaluated as selecting no namespace"
        )
    return replace(
        t,
        namespaces=t.namespaces | frozenset(snapshot.namespace_names(sel)),
        namespace_selector=NOTHING,
    )


class InterPodScore:
    """PreScore state of InterPodAffinity scoring: topologyKey -> value -> summed weight."""

    def __init__(self, scores: dict[str, dict[str, int]]) -> None:
        self.scores = scores

    def raw(self, node: NodeInfo) -> int:
        labels = node.labels
        total = 0
        for key, values in self.scores.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total

    @staticmethod
    def normalize(raw: Sequence[int]) -> list[int]:
        """Min..max to 0..100, truncating the float like Go's ``int64(fScore)``."""
        if not raw:
            return []
        low, high = min(raw), max(raw)
        diff = high - low
        if diff <= 0:
            return [0] * len(raw)
        return [int(100.0 * ((r - low) / diff)) for r in raw]


def _add(scores: dict[str, dict[str, int]], key: str, value: str, delta: int) -> None:
    by_value = scores.setdefault(key, {})
    by_value[value] = by_value.get(value, 0) + delta


def interpod_score(inc: Incoming, snapshot: NodeInfoSnapshot) -> InterPodScore | None:
    """PreScore: None when the plugin is skipped (no term of any pod applies anywhere).

    Without preferred terms of its own, only pods that have pod (anti-)affinity can add
    anything, so only they are visited (``HavePodsWithAffinityList``)."""
    preferred = tuple(
        replace(w, term=_merge_namespaces(w.term, snapshot, None))
        for w in weighted_affinity_terms(inc.raw, "podAffinity")
    )
    preferred_anti = tuple(
        replace(w, term=_merge_namespaces(w.term, snapshot, None))
        for w in weighted_affinity_terms(inc.raw, "podAntiAffinity")
    )
    # hasConstraints reads the spec: terms that failed to parse still count
    affinity = (inc.raw.get("spec") or {}).get("affinity") or {}
    has_constraints = any(
        (affinity.get(kind) or {}).get("preferredDuringSchedulingIgnoredDuringExecution")
        for kind in ("podAffinity", "podAntiAffinity")
    )
    ns_labels = snapshot.namespace_labels(inc.namespace)
    me = _IncomingView(inc)
    scores: dict[str, dict[str, int]] = {}
    touched = False
    # The pod's own terms: weight x matching pods per domain, the pods counted per node and
    # summed per domain by the snapshot, which remembers both (a workload's replicas reuse
    # them). A node without the term's key adds nothing.
    if has_constraints:
        for weight, t in [(w.weight, w.term) for w in preferred] + [
            (-w.weight, w.term) for w in preferred_anti
        ]:
            # a namespaceSelector left after merging selects every namespace (Go matches it
            # against nil labels)
            namespaces = None if t.namespace_selector.empty() else t.namespaces
            sums = snapshot.domain_counts(namespaces, t.selector, False, t.topology_key)
            by_value = scores.setdefault(t.topology_key, {})  # _add, once per term
            for value, count in sums.items():
                if count:
                    by_value[value] = by_value.get(value, 0) + weight * count
                    touched = True
    for node in snapshot.nodes_with_affinity_pods():
        labels = node.labels
        if not labels:
            continue  # processExistingPod returns at once for a node without labels
        for p in node.pods:
            if p.with_affinity and _existing_terms(p, labels, me, ns_labels, scores):
                touched = True
    return InterPodScore(scores) if touched else None


def _existing_terms(
    p: PodInfo,
    labels: Mapping[str, str],
    me: _IncomingView,
    ns_labels: Mapping[str, str] | None,
    scores: dict[str, dict[str, int]],
) -> bool:
    """The existing pod's side of ``processExistingPod`` on a node with ``labels``: its
    required affinity terms (``hardPodAffinityWeight``) and preferred terms that match the
    incoming pod. Whether any entry was made (Go skips the plugin when none was)."""
    touched = False
    if HARD_POD_AFFINITY_WEIGHT > 0:
        for t in p.affinity:
            if t.topology_key in labels and t.matches(me, ns_labels):
                _add(scores, t.topology_key, labels[t.topology_key], HARD_POD_AFFINITY_WEIGHT)
                touched = True
    for w in p.preferred_affinity:
        t = w.term
        if t.topology_key in labels and t.matches(me, ns_labels):
            _add(scores, t.topology_key, labels[t.topology_key], w.weight)
            touched = True
    for w in p.preferred_anti_affinity:
        t = w.term
        if t.topology_key in labels and t.matches(me, ns_labels):
            _add(scores, t.topology_key, labels[t.topology_key], -w.weight)
            touched = True
    return touched
