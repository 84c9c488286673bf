"""Ranking the feasible nodes: ``spread`` (least allocated) or ``binpack`` (most allocated).

The score is kube-scheduler's default weighted sum, with the resource plugin's strategy
chosen by the user (each plugin 0..100 after normalisation, ``pkg/scheduler/framework``):

======================  ======  =========================================================
plugin                  weight  score
======================  ======  =========================================================
TaintToleration         3       fewer untolerated PreferNoSchedule taints (reversed)
NodeAffinity            2       Σ weights of matching preferred terms, normalised to 100
NodeResourcesFit        1       spread: (free after placing) / allocatable; binpack: used
                                after placing / allocatable; cpu and memory, non-zero
                                requests (100m / 200Mi for a container without requests)
BalancedAllocation      1       (1 − std(cpu fraction, memory fraction)) × 100
======================  ======  =========================================================

Ties go to the node whose name sorts first, so the same cache and the same pod always give
the same node (kube-scheduler picks a tie at random).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.filters import Snapshot, pod_requests
from kschedctl.filters.resources import CPU, MEMORY
from kschedctl.filters.selectors import NodeSelectorTerm, node_selector_term
from kschedctl.filters.snapshot import NodeInfo
from kschedctl.filters.taints import find_untolerated_taint, toleration_tolerates_taint

__all__ = [
    "SPREAD",
    "BINPACK",
    "STRATEGIES",
    "NodeScore",
    "score_nodes",
    "best",
    "untolerated_prefer_no_schedule",
]

SPREAD, BINPACK = "spread", "binpack"
STRATEGIES = (SPREAD, BINPACK)
MAX_SCORE = 100
WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "BalancedAllocation": 1}
PREFER_NO_SCHEDULE = ("PreferNoSchedule",)


@dataclass(frozen=True)
class NodeScore:
    name: str
    total: int
    parts: Mapping[str, int]  # normalised 0..100 per plugin, before weights


def _preferred_terms(pod: Mapping[str, Any]) -> list[tuple[int, NodeSelectorTerm]]:
    spec = pod.get("spec") or {}
    node_aff = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    out = []
    for i, p in enumerate(node_aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        weight = p.get("weight") or 0
        term = node_selector_term(i, p.get("preference") or {})
        if weight > 0 and term is not None and term.error is None:
            out.append((int(weight), term))
    return out


def untolerated_prefer_no_schedule(node: NodeInfo, tolerations: Sequence[Mapping[str, Any]]) -> int:
    """PreferNoSchedule taints no toleration with effect "" or PreferNoSchedule covers."""
    relevant = [t for t in tolerations if (t.get("effect") or "") in ("", "PreferNoSchedule")]
    count = 0
    for taint in node.taints:
        if taint.get("effect") != "PreferNoSchedule":
            continue
        if not any(toleration_tolerates_taint(t, taint) for t in relevant):
            count += 1
    return count


def has_untolerated_prefer_no_schedule(
    node: NodeInfo, tolerations: Sequence[Mapping[str, Any]]
) -> bool:
    return find_untolerated_taint(node.taints, tolerations, effects=PREFER_NO_SCHEDULE) is not None


def _fraction_score(requested: int, allocatable: int, strategy: str) -> int:
    """``leastRequestedScore`` / ``mostRequestedScore`` (integer arithmetic, as in Go)."""
    if allocatable <= 0:
        return 0
    if strategy == BINPACK:
        return min(requested, allocatable) * MAX_SCORE // allocatable
    if requested > allocatable:
        return 0
    return (allocatable - requested) * MAX_SCORE // allocatable


def _balanced(node: NodeInfo, request: Mapping[str, int]) -> int:
    fractions = []
    for resource in (CPU, MEMORY):
        alloc = node.allocatable.get(resource, 0)
        if alloc <= 0:
            continue
        used = node.requested.get(resource, 0) + request.get(resource, 0)
        fractions.append(min(used / alloc, 1.0))
    if len(fractions) < 2:
        return MAX_SCORE
    std = abs(fractions[0] - fractions[1]) / 2
    return int((1 - std) * MAX_SCORE)


def score_nodes(
    pod: Mapping[str, Any], snapshot: Snapshot, names: Iterable[str], strategy: str = SPREAD
) -> list[NodeScore]:
    """Scores of the named (feasible) nodes, in the given order."""
    nodes = [snapshot.node(n) for n in names]
    if not nodes:
        return []
    spec = pod.get("spec") or {}
    tolerations = list(spec.get("tolerations") or [])
    non_zero = pod_requests(pod, non_zero=True)
    request = pod_requests(pod)
    cpu, mem = non_zero.get(CPU, 0), non_zero.get(MEMORY, 0)
    preferred = _preferred_terms(pod)

    taints = [untolerated_prefer_no_schedule(n, tolerations) for n in nodes]
    affinity = [
        sum(w for w, t in preferred if t.matches(n.labels, n.name)) if preferred else 0
        for n in nodes
    ]
    max_taints, max_affinity = max(taints), max(affinity)
    out = []
    for node, taint_count, affinity_sum in zip(nodes, taints, affinity, strict=True):
        used = node.non_zero_requested()
        fit = (
            _fraction_score(used[CPU] + cpu, node.allocatable.get(CPU, 0), strategy)
            + _fraction_score(used[MEMORY] + mem, node.allocatable.get(MEMORY, 0), strategy)
        ) // 2
        parts = {
            "TaintToleration": MAX_SCORE - taint_count * MAX_SCORE // max_taints
            if max_taints
            else MAX_SCORE,
            "NodeAffinity": affinity_sum * MAX_SCORE // max_affinity if max_affinity else 0,
            "NodeResourcesFit": fit,
            "BalancedAllocation": _balanced(node, request),
        }
        total = sum(WEIGHTS[k] * v for k, v in parts.items())
        out.append(NodeScore(node.name, total, parts))
    return out


def best(scores: Iterable[NodeScore]) -> NodeScore | None:
    """The highest total; among equals, the node whose name sorts first."""
    chosen: NodeScore | None = None
    for s in scores:
        if (
            chosen is None
            or s.total > chosen.total
            or (s.total == chosen.total and s.name < chosen.name)
        ):
            chosen = s
    return chosen
