"""PodTopologySpread (podtopologyspread/filtering.go and scoring.go, v1.36).

Filtering (:func:`spread_state`) takes the DoNotSchedule constraints; scoring
(:func:`spread_score`) the ScheduleAnyway ones, or, for a pod without any constraint, the
system defaults (hostname maxSkew 3, zone maxSkew 5) with the selector of the Services and
controller that select the pod (:meth:`NodeInfoSnapshot.default_spread_selector`).

The pod's own ``topologySpreadConstraints`` with ``whenUnsatisfiable: DoNotSchedule``; the
cluster-default constraints are ScheduleAnyway and never filter. ``matchLabelKeys`` values are
merged into the selector. A node counts towards the domains only when it has every constraint's
topology key and passes ``nodeAffinityPolicy`` (default Honor: the pod's nodeSelector/required
affinity) and ``nodeTaintsPolicy`` (default Ignore). Counted: pods matching the selector in the
pod's namespace, without a deletionTimestamp.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .nodefilters import Incoming
from .nodeinfo import NodeInfo, PodInfo
from .selectors import Selector, SelectorError, label_selector
from .snapshot import NodeInfoSnapshot
from .taints import find_untolerated_taint
from .verdicts import (
    POD_TOPOLOGY_SPREAD,
    REASON_SPREAD,
    REASON_SPREAD_LABEL,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Reason,
)

__all__ = ["SpreadState", "SpreadScore", "spread_state", "spread_score", "go_round"]

_MAX_INT32 = 2**31 - 1
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
# podtopologyspread/plugin.go systemDefaultConstraints: (topologyKey, maxSkew), ScheduleAnyway.
SYSTEM_DEFAULT_CONSTRAINTS = ((HOSTNAME, 3), (ZONE, 5))


@dataclass
class Constraint:
    index: int
    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    honor_affinity: bool
    honor_taints: bool


@dataclass
class CriticalPaths:
    """The two smallest domains, maintained exactly like Go's ``criticalPaths``."""

    paths: list[list[Any]] = field(default_factory=lambda: [["", _MAX_INT32], ["", _MAX_INT32]])

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]

    @property
    def min(self) -> int:
        return int(self.paths[0][1])


class SpreadState:
    """PreFilter state: matching-pod counts per domain for every constraint."""

    def __init__(self, inc: Incoming, constraints: list[Constraint]) -> None:
        self.inc = inc
        self.constraints = constraints
        self.counts: list[dict[str, int]] = [{} for _ in constraints]
        self.paths: list[CriticalPaths] = []

    def _node_has_keys(self, node: NodeInfo) -> bool:
        for c in self.constraints:
            if c.topology_key not in node.labels:
                return False
        return True

    def _included(self, c: Constraint, node: NodeInfo) -> bool:
        return _included(self.inc, c, node)

    def build(self, snapshot: NodeInfoSnapshot) -> None:
        ns = self.inc.namespace
        for node in snapshot:
            if not self._node_has_keys(node):
                continue
            for i, c in enumerate(self.constraints):
                if not self._included(c, node):
                    continue
                count = 0
                if not c.selector.empty():
                    for p in node.pods:
                        if p.deleting or p.namespace != ns:
                            continue
                        if c.selector.matches(p.labels):
                            count += 1
                value = node.labels[c.topology_key]
                self.counts[i][value] = self.counts[i].get(value, 0) + count
        self.paths = []
        for i in range(len(self.constraints)):
            cp = CriticalPaths()
            for value, num in self.counts[i].items():
                cp.update(value, num)
            self.paths.append(cp)

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        """PreFilter AddPod/RemovePod: a pod appears on (or leaves) ``node``."""
        if pod.namespace != self.inc.namespace or not self._node_has_keys(node):
            return
        for i, c in enumerate(self.constraints):
            if not c.selector.matches(pod.labels) or not self._included(c, node):
                continue
            value = node.labels[c.topology_key]
            self.counts[i][value] = self.counts[i].get(value, 0) + delta
            self.paths[i].update(value, self.counts[i][value])

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]:
        """The first violated constraint (at most one reason, with or without ``all_reasons``,
        which is accepted for the same signature as the other stateful filters)."""
        for i, c in enumerate(self.constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                return [
                    Reason(
                        POD_TOPOLOGY_SPREAD,
                        REASON_SPREAD_LABEL,
                        f"node has no label {c.topology_key} "
                        f"(topologySpreadConstraints[{c.index}])",
                        f"label the node with {c.topology_key}, or keep the pod off it with node "
                        "affinity",
                        UNRESOLVABLE,
                    )
                ]
            domains = len(self.counts[i])
            min_match = 0 if domains < c.min_domains else self.paths[i].min
            self_match = 1 if c.selector.matches(self.inc.labels) else 0
            match = self.counts[i].get(value, 0)
            skew = match + self_match - min_match
            if skew > c.max_skew:
                min_note = (
                    f"global minimum 0: only {domains} domain(s) < minDomains {c.min_domains}"
                    if domains < c.min_domains
                    else f"global minimum {min_match}"
                )
                return [
                    Reason(
                        POD_TOPOLOGY_SPREAD,
                        REASON_SPREAD,
                        f"{c.topology_key}={value} has {match} matching pod(s); placing this pod "
                        f"gives skew {skew} > maxSkew {c.max_skew} ({min_note}; selector "
                        f"{c.selector.describe()})",
                        "add capacity in the less-populated domains, raise maxSkew, or use "
                        "whenUnsatisfiable: ScheduleAnyway",
                        UNSCHEDULABLE,
                    )
                ]
        return []


def _included(inc: Incoming, c: Constraint, node: NodeInfo) -> bool:
    """``matchNodeInclusionPolicies``: nodeAffinityPolicy and nodeTaintsPolicy."""
    if c.honor_affinity and not inc.affinity.matches(node.labels, node.name):
        return False
    if c.honor_taints and find_untolerated_taint(
        node.taints, inc.tolerations, comparison_operators=inc.comparison_operators
    ):
        return False
    return True


def _constraints(inc: Incoming, action: str = "DoNotSchedule") -> list[Constraint]:
    spec = inc.raw.get("spec") or {}
    out: list[Constraint] = []
    for i, c in enumerate(spec.get("topologySpreadConstraints") or []):
        if c.get("whenUnsatisfiable") != action:
            continue
        selector = label_selector(c.get("labelSelector"))
        keys = c.get("matchLabelKeys") or []
        if keys:
            extra = {k: inc.labels[k] for k in keys if k in inc.labels}
            if extra:
                selector = selector.with_labels(extra)
        min_domains = c.get("minDomains")
        out.append(
            Constraint(
                index=i,
                max_skew=int(c.get("maxSkew") or 0),
                topology_key=str(c.get("topologyKey") or ""),
                selector=selector,
                min_domains=min_domains if isinstance(min_domains, int) else 1,
                honor_affinity=(c.get("nodeAffinityPolicy") or "Honor") == "Honor",
                honor_taints=(c.get("nodeTaintsPolicy") or "Ignore") == "Honor",
            )
        )
    return out


def spread_state(inc: Incoming, snapshot: NodeInfoSnapshot) -> SpreadState | None:
    """PreFilter: None when the pod has no DoNotSchedule constraint (the plugin is skipped)."""
    try:
        constraints = _constraints(inc)
    except SelectorError:
        return None  # the API rejects such selectors; the scheduler would report an error
    if not constraints:
        return None
    state = SpreadState(inc, constraints)
    state.build(snapshot)
    return state


def go_round(x: float) -> int:
    """Go's ``math.Round``: half away from zero (Python's ``round`` goes half to even)."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


def _counter(snapshot: NodeInfoSnapshot, c: Constraint, ns: str) -> Callable[[NodeInfo], int]:
    """``countPodsMatchSelector``: not terminating, in the pod's namespace, selected."""
    if c.selector.empty():
        return lambda _node: 0
    return snapshot.pod_counter(frozenset((ns,)), c.selector, True)


class SpreadScore:
    """PreScore state of PodTopologySpread scoring; :meth:`raw` is ``Score`` for one node and
    :meth:`normalize` is ``NormalizeScore`` over the scored (feasible) nodes."""

    def __init__(self, inc: Incoming, constraints: list[Constraint], require_all: bool) -> None:
        self.inc = inc
        self.constraints = constraints
        self.require_all = require_all
        self.ignored: set[str] = set()
        self.counts: list[dict[str, int]] = [{} for _ in constraints]
        self.weights: list[float] = []
        self.counters: list[Callable[[NodeInfo], int]] = []
        # per constraint, for raw(): (topologyKey, hostname counter or None, domain counts or
        # None, normalizing weight, maxSkew - 1)
        self._terms: list[
            tuple[str, Callable[[NodeInfo], int], dict[str, int] | None, float, int]
        ] = []

    def _has_keys(self, labels: Mapping[str, str]) -> bool:
        return all(c.topology_key in labels for c in self.constraints)

    def build(self, snapshot: NodeInfoSnapshot, feasible: Sequence[NodeInfo]) -> None:
        ns = self.inc.namespace
        self.counters = [_counter(snapshot, c, ns) for c in self.constraints]
        sizes = [0] * len(self.constraints)
        # (index, topologyKey, counts) of the constraints counted per domain; hostname ones
        # are counted per node by raw()
        domains = [
            (i, c.topology_key, self.counts[i])
            for i, c in enumerate(self.constraints)
            if c.topology_key != HOSTNAME
        ]
        for node in feasible:
            if self.require_all and not self._has_keys(node.labels):
                self.ignored.add(node.name)
                continue
            for i, key, counts in domains:
                value = node.labels.get(key, "")
                if value not in counts:
                    counts[value] = 0
                    sizes[i] += 1
        for i, c in enumerate(self.constraints):
            size = len(feasible) - len(self.ignored) if c.topology_key == HOSTNAME else sizes[i]
            self.weights.append(math.log(size + 2))  # topologyNormalizingWeight
        self._terms = [
            (
                c.topology_key,
                self.counters[i],
                None if c.topology_key == HOSTNAME else self.counts[i],
                self.weights[i],
                c.max_skew - 1,
            )
            for i, c in enumerate(self.constraints)
        ]
        if not any(self.counts):
            return  # only hostname constraints: nothing to count across the cluster
        inc = self.inc
        require_all = self.require_all
        required = tuple(c.topology_key for c in self.constraints) if require_all else ()
        # (constraint, its counts, its counter) of constraints whose inclusion policies can
        # exclude nodes: counted node by node; the others from the snapshot's remembered sums
        # per domain (a node without the key counts in the domain "")
        policed = []
        for i, c in enumerate(self.constraints):
            counts = self.counts[i]
            if not counts or c.topology_key == HOSTNAME:
                continue
            if c.honor_taints or not inc.affinity.empty:
                policed.append((c, counts, self.counters[i]))
            elif not c.selector.empty():
                sums = snapshot.domain_counts(
                    frozenset((ns,)), c.selector, True, c.topology_key, "", required
                )
                for value in counts:
                    counts[value] += sums.get(value, 0)
        if not policed:
            return
        for node in snapshot:  # every node, not only the feasible ones
            labels = node.labels
            if require_all and not self._has_keys(labels):
                continue
            for c, counts, count_on in policed:
                if not _included(inc, c, node):
                    continue
                value = labels.get(c.topology_key, "")
                if value in counts:
                    counts[value] += count_on(node)

    def raw(self, node: NodeInfo) -> int:
        ignored = self.ignored
        if ignored and node.name in ignored:
            return 0
        labels = node.labels
        score = 0.0
        for key, count_on, counts, weight, extra in self._terms:
            value = labels.get(key)
            if value is None:
                continue
            count = count_on(node) if counts is None else counts[value]
            score += count * weight + extra  # scoreForCount
        if score < 0:
            return go_round(score)
        rounded = int(score)  # go_round for a non-negative score, without the call
        return rounded + 1 if score - rounded >= 0.5 else rounded

    def normalize(self, names: Sequence[str], raw: Sequence[int]) -> list[int]:
        if not self.ignored and raw:  # the common case, without a set lookup per node
            low, high = min(raw), max(raw)
            if high == 0:
                return [MAX_NODE_SCORE] * len(raw)
            return [MAX_NODE_SCORE * (high + low - r) // high for r in raw]
        valid = [r for n, r in zip(names, raw, strict=True) if n not in self.ignored]
        if not valid:
            return [0] * len(raw)
        low, high = min(valid), max(valid)
        out = []
        for n, r in zip(names, raw, strict=True):
            if n in self.ignored:
                out.append(0)
            elif high == 0:
                out.append(MAX_NODE_SCORE)
            else:
                out.append(MAX_NODE_SCORE * (high + low - r) // high)
        return out


MAX_NODE_SCORE = 100


def spread_score(
    inc: Incoming, snapshot: NodeInfoSnapshot, feasible: Sequence[NodeInfo]
) -> SpreadScore | None:
    """PreScore: None when the plugin is skipped (no ScheduleAnyway constraint, and for a pod
    without constraints no default selector)."""
    own = (inc.raw.get("spec") or {}).get("topologySpreadConstraints") or []
    try:
        if own:
            constraints = _constraints(inc, "ScheduleAnyway")
        else:
            selector = snapshot.default_spread_selector(inc.raw)
            if selector.empty():
                return None
            constraints = [
                Constraint(i, skew, key, selector, 1, honor_affinity=True, honor_taints=False)
                for i, (key, skew) in enumerate(SYSTEM_DEFAULT_CONSTRAINTS)
            ]
    except SelectorError:
        return None  # the API rejects such selectors; the scheduler would report an error
    if not constraints or not len(snapshot):
        return None
    # Only the pod's own constraints require every topology key: with the defaults a node
    # without a zone label still gets hostname spreading.
    state = SpreadScore(inc, constraints, require_all=bool(own))
    state.build(snapshot, feasible)
    return state
