"""DefaultPreemption's PostFilter for one pod that no node fits: eligibility, the dry run on
every node whose failure preemption can resolve, the minimal victim set per node with
PodDisruptionBudgets, and the choice of one node. ``why`` (through :func:`evaluate`) and
kschedctl's scheduler (which then nominates and evicts) both call :func:`preempt`.

Derived from k8s.io/kubernetes v1.36.3:
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
(PodEligibleToPreemptOthers, SelectVictimsOnNode, filterPodsWithPDBViolation, the candidate
count) and pkg/scheduler/framework/preemption/preemption.go (findCandidates,
DryRunPreemption, pickOneNodeForPreemption); util.MoreImportantPod and
GetEarliestPodStartTime from pkg/scheduler/util/utils.go.

Where kube-scheduler is random — the node DryRunPreemption starts at (it only matters past
100 potential nodes) and the order of candidates tied on every criterion (a Go map) — this
module takes snapshot order, so its choice equals kube-scheduler's whenever that one is
unique.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .cycle import CycleState
from .nodeinfo import NodeInfo, PodInfo
from .selectors import SelectorError, label_selector
from .verdicts import (
    REASON_NO_VICTIMS,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    NodeVerdict,
    Preemption,
    PreemptionCandidate,
)

__all__ = [
    "preempt",
    "eligibility",
    "select_victims",
    "pick_node",
    "more_important_first",
    "INELIGIBLE_NEVER",
    "INELIGIBLE_TERMINATING",
]

INELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
INELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
# DefaultPreemptionArgs defaults (pkg/scheduler/apis/config/v1/defaults.go).
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
_MAX_INT32_PLUS_1 = 2**31


def more_important_first(pods: Sequence[PodInfo]) -> list[PodInfo]:
    """``util.MoreImportantPod`` as a sort: higher priority first, then the earlier start
    time (a pod without one started "now", after every pod that has one). Stable."""
    return sorted(pods, key=lambda p: (-p.priority, p.start_time))


def _terminating_by_preemption(pod: Mapping[str, Any]) -> bool:
    if (pod.get("metadata") or {}).get("deletionTimestamp") is None:
        return False
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "DisruptionTarget":
            return bool(c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler")
    return False


def eligibility(cycle: CycleState, nominated_status: str | None) -> str | None:
    """``PodEligibleToPreemptOthers``: None when the pod may preempt, else kube-scheduler's
    message. ``nominated_status`` is the status code its nominated node got in this cycle."""
    inc = cycle.inc
    if (inc.raw.get("spec") or {}).get("preemptionPolicy") == "Never":
        return INELIGIBLE_NEVER
    nnn = (inc.raw.get("status") or {}).get("nominatedNodeName") or ""
    if nnn and nominated_status != UNRESOLVABLE and nnn in cycle.snapshot:
        # It preempted already: while a lower-priority pod there still terminates because of
        # that, preempting more would evict pods for nothing.
        for p in cycle.snapshot.node(nnn).pods:
            if p.priority < inc.priority and _terminating_by_preemption(p.raw):
                return INELIGIBLE_TERMINATING
    return None


def _pdb_violating(
    pods: Sequence[PodInfo], pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """``filterPodsWithPDBViolation``: (pods whose eviction would exceed a budget's
    disruptionsAllowed, the others), each in the given order. The budgets are spent in that
    order, so the more important pods are the ones counted as violating."""
    allowed = [int((b.get("status") or {}).get("disruptionsAllowed") or 0) for b in pdbs]
    violating: list[PodInfo] = []
    other: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.labels:
            for i, pdb in enumerate(pdbs):
                md = pdb.get("metadata") or {}
                if (md.get("namespace") or "default") != p.namespace:
                    continue
                try:
                    selector = label_selector((pdb.get("spec") or {}).get("selector"))
                except SelectorError:
                    continue
                # An empty (or absent) selector selects nothing here (selector.Empty()).
                if selector.nothing or not selector.requirements:
                    continue
                if not selector.matches(p.labels):
                    continue
                if p.name in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else other).append(p)
    return violating, other


def select_victims(
    cycle: CycleState, node: NodeInfo, pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[PodInfo], int, tuple[str, ...]]:
    """``SelectVictimsOnNode``: remove every lower-priority pod; if the pod then fits, add
    them back one by one — those whose eviction violates a budget first, each group most
    important first — keeping out only those without which it does not fit. "Fits" is every
    filter of ``cycle``, its ``extra`` (the scheduler's Python plugins) included, run on the
    node as it is at that moment (RunFilterPluginsWithNominatedPods).

    Returns (victims most important first, how many of them violate a budget, the failure
    reasons when there is no victim set). ``node`` and ``cycle`` are restored."""
    inc = cycle.inc
    potential = [p for p in node.pods if p.priority < inc.priority]
    if not potential:
        return [], 0, (REASON_NO_VICTIMS,)
    order = list(node.pods)  # kube-scheduler works on a copy: keep the node as it was
    for p in potential:
        cycle.remove(p, node)
    victims: list[PodInfo] = []
    try:
        reasons, recorded = cycle.run_with_nominated(node)
        if reasons:
            # What kube-scheduler records for the node (InterPodAffinity: its first reason).
            return [], 0, tuple(r.message for r in reasons[:recorded])
        violating, other = _pdb_violating(more_important_first(potential), pdbs)
        violations = 0
        for group, counts in ((violating, True), (other, False)):
            for p in group:
                cycle.add(p, node)
                if cycle.run_with_nominated(node)[0]:
                    cycle.remove(p, node)
                    victims.append(p)
                    violations += counts
        if violating and other:
            victims = more_important_first(victims)
        return victims, violations, ()
    finally:
        on_node = {id(p) for p in node.pods}
        for p in potential:
            if id(p) not in on_node:
                cycle.add(p, node)
        node.reorder(order)


def _earliest_top_start(victims: Sequence[PodInfo]) -> str:
    """``GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    top = max(p.priority for p in victims)
    return min(p.start_time for p in victims if p.priority == top)


def pick_node(candidates: Sequence[PreemptionCandidate]) -> PreemptionCandidate | None:
    """``pickOneNodeForPreemption``: fewest budget violations, then the lowest
    highest-priority victim, the smallest sum of priorities, the fewest victims, the latest
    start of the highest-priority victims; still tied: the first candidate."""
    if not candidates:
        return None
    scores = (
        lambda c: -c.pdb_violations,
        lambda c: -c.victim_priorities[0],
        lambda c: -sum(p + _MAX_INT32_PLUS_1 for p in c.victim_priorities),
        lambda c: -len(c.victims),
    )
    left = list(candidates)
    for score in scores:
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
        if len(left) == 1:
            return left[0]
    latest = max(c.top_start for c in left)
    return next(c for c in left if c.top_start == latest)


def preempt(cycle: CycleState, verdicts: Sequence[NodeVerdict]) -> Preemption:
    """DefaultPreemption.PostFilter over ``verdicts`` (every node failed): eligibility, the
    dry run on the nodes whose status is Unschedulable, and the chosen candidate."""
    snapshot = cycle.snapshot
    n = len(verdicts)
    by_name = {v.name: v for v in verdicts}
    nnn = (cycle.inc.raw.get("status") or {}).get("nominatedNodeName") or ""
    nominated = by_name.get(nnn)
    ineligible = eligibility(cycle, nominated.code if nominated is not None else UNRESOLVABLE)
    if ineligible is not None:
        return Preemption(ineligible=ineligible, num_nodes=n)
    potential = [v for v in verdicts if v.code == UNSCHEDULABLE]
    wanted = min(
        max(len(potential) * MIN_CANDIDATE_NODES_PERCENTAGE // 100, MIN_CANDIDATE_NODES_ABSOLUTE),
        len(potential),
    )
    pdbs = snapshot.pdbs
    fine: list[PreemptionCandidate] = []
    violating: list[PreemptionCandidate] = []
    node_reasons: dict[str, tuple[str, ...]] = {}
    for v in potential:
        victims, violations, reasons = select_victims(cycle, snapshot.node(v.name), pdbs)
        if not victims:
            node_reasons[v.name] = reasons
            continue
        (violating if violations else fine).append(
            PreemptionCandidate(
                v.name,
                tuple(p.key for p in victims),
                violations,
                tuple(p.priority for p in victims),
                _earliest_top_start(victims),
                tuple(p.uid for p in victims),
            )
        )
        # DryRunPreemption stops once it has enough candidates, one of them violation-free.
        if fine and len(fine) + len(violating) >= wanted:
            break
    candidates = (*fine, *violating)
    return Preemption(
        candidates=candidates,
        node_reasons=node_reasons,
        num_nodes=n,
        chosen=pick_node(candidates),
    )
