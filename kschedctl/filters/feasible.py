"""``feasible_nodes``: which nodes pass every filter, without building explanations.

A scheduler asks this for every pod it places, so it answers the one question a scheduler
needs — which nodes fit — with the same filters and the same order as :func:`evaluate`, but:

- no :class:`NodeVerdict` or reason text for nodes that fail (the checks that are plain
  comparisons run as booleans; the others reuse the filter functions and drop their reasons);
- it can stop after ``limit`` feasible nodes, starting at ``start`` and wrapping around, like
  kube-scheduler's ``numFeasibleNodesToFind`` with its rotating ``nextStartNodeIndex``.

Nodes with nominated pods go through the full two-pass check of :func:`evaluate`. The unit
tests compare the result with ``evaluate(...).feasible`` on every filter scenario.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .engine import _Cycle, _not_evaluated
from .interpod import interpod_state
from .nodefilters import Incoming, node_ports
from .resources import CPU, EPHEMERAL, MEMORY, PODS
from .snapshot import NodeInfo, Snapshot
from .spread import spread_state
from .taints import find_untolerated_taint
from .volumes import volume_prefilter

__all__ = ["Feasible", "feasible_nodes", "nodes_to_find"]

MIN_FEASIBLE_NODES_TO_FIND = 100  # pkg/scheduler/schedule_one.go minFeasibleNodesToFind
MIN_FEASIBLE_NODES_PERCENTAGE = 5


def nodes_to_find(num_nodes: int, percentage: int = 0) -> int:
    """``numFeasibleNodesToFind``: how many feasible nodes are enough (0: adaptive)."""
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    pct = percentage
    if pct <= 0:
        pct = max(50 - num_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE)
    if pct >= 100:
        return num_nodes
    return max(num_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(frozen=True)
class Feasible:
    """The feasible nodes found (in visiting order) and where the next search should start.

    ``rejected`` is set when the pod cannot be placed by these filters at all: a PreFilter
    rejected it, or it needs a filter the engine does not evaluate (``not_evaluated`` names
    them); then ``names`` is empty.
    """

    names: tuple[str, ...]
    examined: int
    next_start: int
    rejected: bool = False
    not_evaluated: tuple[str, ...] = ()


class _Checker:
    """The filter chain of ``_Cycle.run_filters`` as one boolean per node."""

    def __init__(self, cycle: _Cycle) -> None:
        inc = cycle.inc
        self.cycle = cycle
        self.inc = inc
        self.dra = cycle.snapshot.dra_resources
        self.affinity = None if inc.affinity.empty else inc.affinity
        # NodeResourcesFit's comparisons, in its order; zero requests are never checked.
        self.native = [(n, inc.request.get(n, 0)) for n in (CPU, MEMORY, EPHEMERAL)]
        self.native = [(n, r) for n, r in self.native if r > 0]
        self.scalars = [
            (n, r)
            for n, r in sorted(inc.request.items())
            if n not in (CPU, MEMORY, EPHEMERAL, PODS) and r != 0
        ]

    def fits(self, node: NodeInfo) -> bool:
        cycle, inc = self.cycle, self.inc
        if cycle.nominated.get(node.name):
            return not cycle.run_with_nominated(node)[0]
        if node.unschedulable or (inc.node_name and inc.node_name != node.name):
            # Rare: let the filters themselves decide (tolerations of the unschedulable taint).
            return not cycle.run_filters(node, False)[0]
        if node.taints and (
            find_untolerated_taint(
                node.taints, inc.tolerations, comparison_operators=inc.comparison_operators
            )
            is not None
        ):
            return False
        if self.affinity is not None and not self.affinity.matches(node.labels, node.name):
            return False
        if inc.ports and node_ports(inc, node):
            return False
        if not self._resources_fit(node):
            return False
        if cycle.spread is not None and cycle.spread.filter(node):
            return False
        return not (cycle.ipa is not None and cycle.ipa.filter(node, all_reasons=False))

    def _resources_fit(self, node: NodeInfo) -> bool:
        alloc, used = node.allocatable, node.requested
        if len(node.pods) + 1 > alloc.get(PODS, 0):
            return False
        if self.inc.requests_nothing:
            return True
        for name, r in self.native:
            if r > alloc.get(name, 0) - used.get(name, 0):
                return False
        for name, r in self.scalars:
            have = alloc.get(name, 0)
            if name in self.dra and have <= 0:
                continue  # left to the DynamicResources plugin
            if r > have - used.get(name, 0):
                return False
        return True


def feasible_nodes(
    pod: Mapping[str, Any],
    snapshot: Snapshot,
    *,
    limit: int = 0,
    start: int = 0,
    comparison_operators: bool = False,
) -> Feasible:
    """The nodes ``pod`` fits on, visiting ``snapshot.nodes`` from index ``start`` (wrapping)
    and stopping after ``limit`` feasible ones (0: visit every node)."""
    inc = Incoming(pod, comparison_operators=comparison_operators)
    missing, _claims = _not_evaluated(inc, snapshot)
    nodes = snapshot.nodes
    total = len(nodes)
    start = start % total if total else 0
    if missing:
        return Feasible((), 0, start, True, tuple(m.plugin for m in missing))
    names, conflict = inc.prefilter_node_names()
    if conflict or volume_prefilter(pod, snapshot.pvcs, snapshot.storage_classes, []):
        return Feasible((), 0, start, True)
    cycle = _Cycle(inc, snapshot, spread_state(inc, snapshot), interpod_state(inc, snapshot))
    checker = _Checker(cycle)
    found: list[str] = []
    examined = 0
    for i in range(total):
        node = nodes[(start + i) % total]
        examined += 1
        if names is not None and node.name not in names:
            continue
        if checker.fits(node):
            found.append(node.name)
            if limit and len(found) >= limit:
                break
    return Feasible(tuple(found), examined, (start + examined) % total if total else 0)
