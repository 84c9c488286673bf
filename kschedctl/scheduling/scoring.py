"""Ranking the feasible nodes with a strategy of ``STRATEGIES`` (:mod:`.strategies`):
``spread`` (least allocated) or ``binpack`` (most allocated).

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
the same node (kube-scheduler picks a tie at random). The weighted sum is written once, in
``_weighted``, which both ``score_nodes`` and the one-pass ``best_node`` use.

How to add a strategy
---------------------
Edit ONE table: ``STRATEGIES`` in :mod:`.strategies` (a per-resource scorer and its summary).
The CLI choices, the spec check and these functions follow; an unknown name is a ValueError.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.filters import Snapshot, pod_requests
from kschedctl.filters.resources import CPU, MEMORY
from kschedctl.filters.selectors import NodeSelectorTerm, node_selector_term
from kschedctl.filters.snapshot import NodeInfo
from kschedctl.filters.taints import find_untolerated_taint, toleration_tolerates_taint

from .strategies import BINPACK, DEFAULT_STRATEGY, MAX_SCORE, SPREAD, STRATEGIES, scorer_for

__all__ = [
    "SPREAD",
    "BINPACK",
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "NodeScore",
    "score_nodes",
    "best",
    "best_node",
    "has_untolerated_prefer_no_schedule",
]

WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "BalancedAllocation": 1}
PREFER_NO_SCHEDULE = ("PreferNoSchedule",)
PREFER_EFFECTS = ("", "PreferNoSchedule")  # tolerations TaintToleration's score considers


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


def _prefer_no_schedule_count(
    taints: Sequence[Mapping[str, Any]], relevant: Sequence[Mapping[str, Any]]
) -> int:
    count = 0
    for taint in taints:
        if taint.get("effect") != "PreferNoSchedule":
            continue
        if not any(toleration_tolerates_taint(t, taint) for t in relevant):
            count += 1
    return count


def has_untolerated_prefer_no_schedule(
    node: NodeInfo, tolerations: Sequence[Mapping[str, Any]]
) -> bool:
    return find_untolerated_taint(node.taints, tolerations, effects=PREFER_NO_SCHEDULE) is not None


Raw = tuple[str, int, int, int, int]  # name, PreferNoSchedule taints, affinity, fit, balance


def _raw_scores(
    pod: Mapping[str, Any], snapshot: Snapshot, names: Iterable[str], strategy: str
) -> list[Raw]:
    """Each plugin's input per node in one tight pass (a decision scores hundreds of nodes):
    untolerated PreferNoSchedule taints, matching preferred-affinity weight, the strategy's
    resource score and the balance score."""
    spec = pod.get("spec") or {}
    relevant = [
        t for t in spec.get("tolerations") or [] if (t.get("effect") or "") in PREFER_EFFECTS
    ]
    non_zero = pod_requests(pod, non_zero=True)
    request = pod_requests(pod)
    nz_cpu, nz_mem = non_zero.get(CPU, 0), non_zero.get(MEMORY, 0)
    req_cpu, req_mem = request.get(CPU, 0), request.get(MEMORY, 0)
    preferred = _preferred_terms(pod)
    fraction = scorer_for(strategy).fraction
    out = []
    for name in names:
        node = snapshot.node(name)
        alloc = node.allocatable
        a_cpu, a_mem = alloc.get(CPU, 0), alloc.get(MEMORY, 0)
        used = node.non_zero_requested()
        fit = (fraction(used[CPU] + nz_cpu, a_cpu) + fraction(used[MEMORY] + nz_mem, a_mem)) // 2
        if a_cpu > 0 and a_mem > 0:
            # BalancedAllocation: 1 - std of the two fractions (actual requests, capped at 1).
            f_cpu = min((node.requested.get(CPU, 0) + req_cpu) / a_cpu, 1.0)
            f_mem = min((node.requested.get(MEMORY, 0) + req_mem) / a_mem, 1.0)
            balanced = int((1 - abs(f_cpu - f_mem) / 2) * MAX_SCORE)
        else:
            balanced = MAX_SCORE
        taints = _prefer_no_schedule_count(node.taints, relevant) if node.taints else 0
        affinity = (
            sum(w for w, t in preferred if t.matches(node.labels, node.name)) if preferred else 0
        )
        out.append((name, taints, affinity, fit, balanced))
    return out


Weighted = tuple[str, int, int, int, int, int]  # name, total, then the four normalised parts


def _weighted(raw: list[Raw]) -> Iterator[Weighted]:
    """The score formula, once: each plugin normalised to 0..100 (TaintToleration reversed
    against the most-tainted node, NodeAffinity against the best match), then the weighted
    sum. A flat tuple per node, so ``best_node`` builds no score object."""
    max_taints = max((r[1] for r in raw), default=0)
    max_affinity = max((r[2] for r in raw), default=0)
    w_taint, w_affinity = WEIGHTS["TaintToleration"], WEIGHTS["NodeAffinity"]
    w_fit, w_balanced = WEIGHTS["NodeResourcesFit"], WEIGHTS["BalancedAllocation"]
    for name, taints, affinity, fit, balanced in raw:
        taint_score = MAX_SCORE - taints * MAX_SCORE // max_taints if max_taints else MAX_SCORE
        affinity_score = affinity * MAX_SCORE // max_affinity if max_affinity else 0
        total = w_taint * taint_score + w_affinity * affinity_score
        total += w_fit * fit + w_balanced * balanced
        yield name, total, taint_score, affinity_score, fit, balanced


def score_nodes(
    pod: Mapping[str, Any],
    snapshot: Snapshot,
    names: Iterable[str],
    strategy: str = DEFAULT_STRATEGY,
) -> list[NodeScore]:
    """Scores of the named (feasible) nodes, in the given order."""
    return [
        NodeScore(
            name,
            total,
            {
                "TaintToleration": taint_score,
                "NodeAffinity": affinity_score,
                "NodeResourcesFit": fit,
                "BalancedAllocation": balanced,
            },
        )
        for name, total, taint_score, affinity_score, fit, balanced in _weighted(
            _raw_scores(pod, snapshot, names, strategy)
        )
    ]


def best_node(
    pod: Mapping[str, Any],
    snapshot: Snapshot,
    names: Iterable[str],
    strategy: str = DEFAULT_STRATEGY,
) -> tuple[str, int] | None:
    """``best(score_nodes(...))`` as (name, total), without a NodeScore per node."""
    best_name, best_total = "", -1  # every total is >= 0: the first node always beats this
    for name, total, _taint, _affinity, _fit, _balanced in _weighted(
        _raw_scores(pod, snapshot, names, strategy)
    ):
        if total > best_total or (total == best_total and name < best_name):
            best_name, best_total = name, total
    return None if best_total < 0 else (best_name, best_total)


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
