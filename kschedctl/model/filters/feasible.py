"""``feasible_nodes``: which nodes pass every filter, without building explanations.

A scheduler asks this for every pod it places, so it answers the one question a scheduler
needs — which nodes fit — with the same filters and the same order as :func:`evaluate`, but:

- no :class:`NodeVerdict` or reason text for nodes that fail: each row of ``table.FILTERS``
  that applies to the pod gives a per-node boolean (a plain comparison where one answers,
  else the filter function with its reasons dropped), bound once per pod;
- it can stop after ``limit`` feasible nodes, starting at ``start`` and wrapping around, like
  kube-scheduler's ``numFeasibleNodesToFind`` with its rotating ``nextStartNodeIndex``.

Nodes with nominated pods go through the full two-pass check of :func:`evaluate`. The unit
tests compare the result with ``evaluate(...).feasible`` on every filter scenario.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator
from dataclasses import dataclass

from kschedctl.model.kubetypes import Pod

from .cycle import CycleState, ExtraFilter, not_evaluated
from .dra import dra_prefilter_rejection
from .nodefilters import Incoming, NodeCheck
from .nodeinfo import NodeInfo
from .nodememo import ShapeMemo
from .snapshot import NodeInfoSnapshot
from .volumes import volume_prefilter

__all__ = ["Feasible", "feasible_nodes", "fits_node", "nodes_to_find"]

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


def feasible_nodes(
    pod: Pod,
    snapshot: NodeInfoSnapshot,
    *,
    limit: int = 0,
    start: int = 0,
    comparison_operators: bool = False,
    dynamic_provisioning: bool = True,
    extra: ExtraFilter | None = None,
    memo: ShapeMemo | None = None,
) -> Feasible:
    """The nodes ``pod`` fits on, visiting ``snapshot.nodes`` from index ``start`` (wrapping)
    and stopping after ``limit`` feasible ones (0: visit every node).

    ``extra`` is one more filter (:data:`~.cycle.ExtraFilter`: the scheduler's Python
    plugins), run after every built-in one on the nodes they pass — on a node with nominated
    pods in both passes, like the built-in ones — before the node counts towards ``limit``.

    ``memo`` (:mod:`.nodememo`, for pods of ``pod``'s shape) keeps each node's verdict
    between calls; it is used when only filters that read the pod and the node alone run."""
    inc = Incoming(
        pod,
        comparison_operators=comparison_operators,
        dynamic_provisioning=dynamic_provisioning,
    )
    missing, _claims = not_evaluated(inc, snapshot)
    nodes = snapshot.nodes
    total = len(nodes)
    start = start % total if total else 0
    if missing:
        return Feasible((), 0, start, True, tuple(m.plugin for m in missing))
    names, conflict = inc.prefilter_node_names()
    if (
        conflict
        or volume_prefilter(pod, snapshot.pvcs, snapshot.storage_classes, [], snapshot.pvs)
        or dra_prefilter_rejection(inc, snapshot)
    ):
        return Feasible((), 0, start, True)
    cycle = CycleState(inc, snapshot, extra=extra)
    checks = cycle.node_checks()
    nominated = cycle.nominated
    found: list[str] = []
    examined = 0
    # The visiting order as one list (two C-level slices), and the common case — no node-name
    # prefilter, no nominated pods, no plugins — without their per-node tests: a decision
    # visits hundreds.
    order = nodes[start:] + nodes[:start] if start else nodes
    if names is None and not nominated and extra is None:
        if memo is not None and not cycle.states and memo.current(snapshot):
            return _remembered(memo, snapshot, checks, limit, start)
        # The checks as a chain of filter() iterators over one list iterator: C walks the
        # nodes, only the checks run as Python. What the list iterator has left says how
        # many nodes were visited.
        visiting = iter(order)
        passing: Iterator[NodeInfo] = visiting
        for check in checks:
            passing = filter(check, passing)
        fitting = itertools.islice(passing, limit) if limit else passing
        found = [node.name for node in fitting]
        examined = total - operator.length_hint(visiting)
        return Feasible(tuple(found), examined, (start + examined) % total if total else 0)
    for node in order:
        examined += 1
        if names is not None and node.name not in names:
            continue
        if nominated and nominated.get(node.name):
            fits = not cycle.run_with_nominated(node)[0]  # ``extra`` included
        else:
            fits = True
            for check in checks:
                if not check(node):
                    fits = False
                    break
            if fits and extra is not None:
                fits = extra(node) is None
        if fits:
            found.append(node.name)
            if limit and len(found) >= limit:
                break
    return Feasible(tuple(found), examined, (start + examined) % total if total else 0)


def _remembered(
    memo: ShapeMemo,
    snapshot: NodeInfoSnapshot,
    checks: tuple[NodeCheck, ...],
    limit: int,
    start: int,
) -> Feasible:
    """The fast path's visit, on the memo's verdicts: the nodes that changed since the
    last pod of this shape are filtered again, then C walks the verdicts from ``start``."""
    memo.sync(snapshot)
    infos = memo.infos
    if memo.fits is None:  # the first pod of this shape: every node, as a chain of filters
        passing: Iterator[NodeInfo] = iter(infos)
        for check in checks:
            passing = filter(check, passing)
        ok = set(map(id, passing))
        memo.fits = [id(node) in ok for node in infos]
    else:
        fits = memo.fits
        for i in memo.refilter:
            node = infos[i]
            fits[i] = all(check(node) for check in checks)
    memo.refilter.clear()
    total, fits = len(infos), memo.fits
    visiting = itertools.chain(range(start, total), range(start))
    verdicts = itertools.chain(itertools.islice(fits, start, None), itertools.islice(fits, start))
    passing_at = itertools.compress(visiting, verdicts)
    chosen = list(itertools.islice(passing_at, limit)) if limit else list(passing_at)
    # As the fast path: the visit stops at the limit-th feasible node, else sees them all.
    examined = (chosen[-1] - start) % total + 1 if limit and len(chosen) == limit else total
    names = memo.names
    return Feasible(
        tuple([names[i] for i in chosen]), examined, (start + examined) % total if total else 0
    )


def fits_node(
    pod: Pod,
    snapshot: NodeInfoSnapshot,
    node_name: str,
    *,
    comparison_operators: bool = False,
    dynamic_provisioning: bool = True,
    extra: ExtraFilter | None = None,
) -> bool:
    """Whether ``pod`` passes every filter (``extra`` too) on ``node_name`` alone
    (kube-scheduler's ``evaluateNominatedNode``: a pod nominated by preemption tries its node
    first)."""
    if node_name not in snapshot:
        return False
    inc = Incoming(
        pod,
        comparison_operators=comparison_operators,
        dynamic_provisioning=dynamic_provisioning,
    )
    if not_evaluated(inc, snapshot)[0]:
        return False
    names, conflict = inc.prefilter_node_names()
    if (
        conflict
        or volume_prefilter(pod, snapshot.pvcs, snapshot.storage_classes, [])
        or dra_prefilter_rejection(inc, snapshot)
    ):
        return False
    if names is not None and node_name not in names:
        return False
    cycle = CycleState(inc, snapshot, extra=extra)
    return not cycle.run_with_nominated(snapshot.node(node_name))[0]
