"""PodTopologySpread, DoNotSchedule constraints only (podtopologyspread/filtering.go, v1.36).

The pod's own ``topologySpreadConstraints`` with ``whenUnsatisfiable: DoNotSchedule``; the
cluster-default constraints are ScheduleAnyway and never filter. ``matchLabelKeys`` values are
merged into the selector. A node counts towards the domains only when it has every constraint's
topology key and passes ``nodeAffinityPolicy`` (default Honor: the pod's nodeSelector/required
affinity) and ``nodeTaintsPolicy`` (default Ignore). Counted: pods matching the selector in the
pod's namespace, without a deletionTimestamp.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .nodefilters import Incoming
from .selectors import Selector, SelectorError, label_selector
from .snapshot import NodeInfo, PodInfo, Snapshot
from .taints import find_untolerated_taint
from .verdicts import (
    POD_TOPOLOGY_SPREAD,
    REASON_SPREAD,
    REASON_SPREAD_LABEL,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Reason,
)

__all__ = ["SpreadState", "spread_state"]

_MAX_INT32 = 2**31 - 1


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
        if c.honor_affinity and not self.inc.affinity.matches(node.labels, node.name):
            return False
        if c.honor_taints and find_untolerated_taint(
            node.taints, self.inc.tolerations, comparison_operators=self.inc.comparison_operators
        ):
            return False
        return True

    def build(self, snapshot: Snapshot) -> None:
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


def _constraints(inc: Incoming) -> list[Constraint]:
    spec = inc.raw.get("spec") or {}
    out: list[Constraint] = []
    for i, c in enumerate(spec.get("topologySpreadConstraints") or []):
        if c.get("whenUnsatisfiable") != "DoNotSchedule":
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


def spread_state(inc: Incoming, snapshot: Snapshot) -> SpreadState | None:
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
