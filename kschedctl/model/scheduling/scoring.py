"""Ranking the feasible nodes: kube-scheduler v1.36's default score plugins with their default
weights (``pkg/scheduler/apis/config/v1/default_plugins.go``), the NodeResourcesFit strategy
chosen by the user (``STRATEGIES`` of :mod:`.strategies`: ``spread`` least allocated, as
kube-scheduler, or ``binpack`` most allocated).

Each plugin scores a node 0..100 after its own normalisation over the feasible nodes; the
total is the weighted sum (``pkg/scheduler/framework/plugins/*``, integer arithmetic as Go's):

=================================  ======  ===============================================
plugin                             weight  score
=================================  ======  ===============================================
TaintToleration                    3       untolerated PreferNoSchedule taints, reversed
                                           against the most-tainted node (none: 100)
NodeAffinity                       2       Σ weights of matching preferred terms, × 100 ÷
                                           the best node's sum
NodeResourcesFit                   1       spread: free share after placing; binpack: used
                                           share; cpu and memory averaged, non-zero requests
                                           (100m / 200Mi for a container without requests)
PodTopologySpread                  2       ScheduleAnyway constraints, or for a pod without
                                           constraints hostname (maxSkew 3) and zone (5) over
                                           the pods its Services/controller select: matching
                                           pods × log(domains + 2) + maxSkew − 1, summed,
                                           then 100 × (max + min − s) ÷ max
InterPodAffinity                   2       Σ preferred (anti-)affinity weights of the pod and
                                           of existing pods (their required affinity counts
                                           1) in the node's domains, min..max to 0..100
NodeResourcesBalancedAllocation    1       50 + (50 + balance after − balance before) ÷ 2,
                                           balance = (1 − std of cpu, memory shares) × 100;
                                           0 for a pod requesting neither
ImageLocality                      1       Σ image size × share of nodes having it, from
                                           23MB to 1000MB per container, as 0..100
=================================  ======  ===============================================

A plugin kube-scheduler skips at PreScore (no preferred terms, no constraints, a best-effort
pod) adds 0 on every node. Only the feasible nodes are scored and normalised, but
PodTopologySpread counts pods and ImageLocality the share of nodes over the whole snapshot.

Ties go to the node whose name sorts first, so the same cache and the same pod always give
the same node (kube-scheduler picks a tie at random). Per-pod work is done once per decision
(:class:`PreScore`); the weighted sum is written once, in ``_weighted``, which both
``score_nodes`` (``why``, tests) and the one-pass ``best_node`` (the scheduler) use.

How to add a strategy
---------------------
Edit ONE table: ``STRATEGIES`` in :mod:`.strategies` (a per-resource scorer and its summary).
The CLI choices, the spec check and these functions follow; an unknown name is a ValueError.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.model.filters import NodeInfoSnapshot, pod_requests
from kschedctl.model.filters.interpod import InterPodScore, interpod_score
from kschedctl.model.filters.nodefilters import Incoming
from kschedctl.model.filters.nodeinfo import NodeInfo
from kschedctl.model.filters.nodememo import ShapeMemo
from kschedctl.model.filters.resources import CPU, MEMORY
from kschedctl.model.filters.selectors import NodeSelectorTerm, node_selector_term
from kschedctl.model.filters.spread import SpreadScore, spread_score
from kschedctl.model.filters.taints import find_untolerated_taint, toleration_tolerates_taint
from kschedctl.model.kubetypes import Pod, Taint, Toleration

from .strategies import BINPACK, DEFAULT_STRATEGY, MAX_SCORE, SPREAD, STRATEGIES, scorer_for

__all__ = [
    "SPREAD",
    "BINPACK",
    "DEFAULT_STRATEGY",
    "STRATEGIES",
    "WEIGHTS",
    "NodeScore",
    "PreScore",
    "score_nodes",
    "best",
    "best_node",
    "has_untolerated_prefer_no_schedule",
    "image_score",
    "normalized_image_name",
]

# default_plugins.go, in the order of the tuples below.
WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}
PLUGINS = tuple(WEIGHTS)
PREFER_NO_SCHEDULE = ("PreferNoSchedule",)
PREFER_EFFECTS = ("", "PreferNoSchedule")  # tolerations TaintToleration's score considers
MB = 1024 * 1024
MIN_IMAGE_THRESHOLD = 23 * MB  # imagelocality/image_locality.go
MAX_CONTAINER_IMAGE_THRESHOLD = 1000 * MB


@dataclass(frozen=True)
class NodeScore:
    name: str
    total: int
    parts: Mapping[str, int]  # normalised 0..100 per plugin (keys of WEIGHTS), before weights


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


def _prefer_no_schedule_count(taints: Sequence[Taint], relevant: Sequence[Toleration]) -> int:
    count = 0
    for taint in taints:
        if taint.get("effect") != "PreferNoSchedule":
            continue
        if not any(toleration_tolerates_taint(t, taint) for t in relevant):
            count += 1
    return count


def has_untolerated_prefer_no_schedule(node: NodeInfo, tolerations: Sequence[Toleration]) -> bool:
    return find_untolerated_taint(node.taints, tolerations, effects=PREFER_NO_SCHEDULE) is not None


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: ``:latest`` added when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def _pod_images(pod: Mapping[str, Any]) -> tuple[list[str], int]:
    """Normalised images of init containers, containers and image volumes, and the number of
    containers (image volumes add to the sum, not to the threshold)."""
    spec = pod.get("spec") or {}
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    names = [normalized_image_name(str(c.get("image") or "")) for c in containers]
    for v in spec.get("volumes") or []:
        image = v.get("image")
        if image is not None:
            names.append(normalized_image_name(str(image.get("reference") or "")))
    return names, len(containers)


def image_score(
    images: Sequence[str], containers: int, node: NodeInfo, snapshot: NodeInfoSnapshot
) -> int:
    """ImageLocality's ``Score``: ``scaledImageScore`` summed, then ``calculatePriority``."""
    total_nodes = len(snapshot)
    total = 0
    for name in images:
        if name in node.images:
            state = snapshot.image_nodes(name)
            if state is not None:
                size, num_nodes = state
                total += int(float(size) * (float(num_nodes) / float(total_nodes)))
    high = MAX_CONTAINER_IMAGE_THRESHOLD * containers
    total = MIN_IMAGE_THRESHOLD if total < MIN_IMAGE_THRESHOLD else min(total, high)
    return _go_div(MAX_SCORE * (total - MIN_IMAGE_THRESHOLD), high - MIN_IMAGE_THRESHOLD)


def _go_div(a: int, b: int) -> int:
    """Go's int64 division, truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class PreScore:
    """What every score plugin computes once per pod (kube-scheduler's PreScore)."""

    def __init__(
        self,
        pod: Pod,
        snapshot: NodeInfoSnapshot,
        nodes: Sequence[NodeInfo],
        strategy: str,
    ) -> None:
        spec = pod.get("spec") or {}
        self.snapshot = snapshot
        self.fraction: Callable[[int, int], int] = scorer_for(strategy).fraction
        self.tolerations = [
            t for t in spec.get("tolerations") or [] if (t.get("effect") or "") in PREFER_EFFECTS
        ]
        self.preferred = _preferred_terms(pod)
        non_zero = pod_requests(pod, non_zero=True)
        request = pod_requests(pod)
        self.nz_cpu, self.nz_mem = non_zero.get(CPU, 0), non_zero.get(MEMORY, 0)
        self.req_cpu, self.req_mem = request.get(CPU, 0), request.get(MEMORY, 0)
        self.best_effort = not self.req_cpu and not self.req_mem  # Balanced is skipped
        self.images, self.containers = _pod_images(pod)
        self.images = [n for n in self.images if snapshot.image_nodes(n) is not None]
        inc = Incoming(pod)
        self.spread: SpreadScore | None = spread_score(inc, snapshot, nodes) if nodes else None
        self.interpod: InterPodScore | None = interpod_score(inc, snapshot) if nodes else None


def _raw_scores(pre: PreScore, nodes: Sequence[NodeInfo]) -> tuple[list[int], ...]:
    """Each plugin's ``Score`` per node, a column per plugin in PLUGINS order (a decision
    scores hundreds of nodes: a comprehension per column, and a column of zeros for a plugin
    skipped for this pod); the normalisations need every node's score and come after, in
    ``_weighted``."""
    n = len(nodes)
    # Nodes of one shape and load (a node pool; the nodes a burst of replicas fills) have the
    # same resource inputs: their fit and balance are computed once per decision.
    inputs = [node.scoring_inputs() for node in nodes]
    resource = {shape: _resource_scores(pre, shape) for shape in set(inputs)}
    relevant, preferred = pre.tolerations, pre.preferred
    taints = [
        _prefer_no_schedule_count(node.taints, relevant) if node.taints else 0 for node in nodes
    ]
    affinity = (
        [sum(w for w, t in preferred if t.matches(node.labels, node.name)) for node in nodes]
        if preferred
        else [0] * n
    )
    spread = [pre.spread.raw(node) for node in nodes] if pre.spread is not None else [0] * n
    interpod = [pre.interpod.raw(node) for node in nodes] if pre.interpod is not None else [0] * n
    images, containers, snapshot = pre.images, pre.containers, pre.snapshot
    image = (
        [image_score(images, containers, node, snapshot) for node in nodes] if images else [0] * n
    )
    fit = [resource[shape][0] for shape in inputs]
    balanced = [resource[shape][1] for shape in inputs]
    return taints, affinity, fit, spread, interpod, balanced, image


def _resource_scores(pre: PreScore, inputs: tuple[int, int, int, int, int, int]) -> tuple[int, int]:
    """NodeResourcesFit's and BalancedAllocation's raw scores on a node whose
    :meth:`NodeInfo.scoring_inputs` are ``inputs``, written out (no list or call but the
    strategy's fraction; ``min(share, 1.0)`` as a comparison, the same floats)."""
    a_cpu, a_mem, used_cpu, used_mem, cpu, mem = inputs
    fraction = pre.fraction
    # NodeResourcesFit: the strategy's share per resource, averaged over those allocatable.
    if a_cpu:
        fit = fraction(used_cpu + pre.nz_cpu, a_cpu)
        if a_mem:
            fit = (fit + fraction(used_mem + pre.nz_mem, a_mem)) // 2
    elif a_mem:
        fit = fraction(used_mem + pre.nz_mem, a_mem)
    else:
        fit = 0
    if pre.best_effort:
        return fit, 0  # BalancedAllocation is skipped for best-effort pods
    half = MAX_SCORE // 2
    if not (a_cpu and a_mem):
        return fit, half + half // 2  # one or no resource: no spread, before == after
    # BalancedAllocation (actual requests): how much placing the pod improves balance,
    # balance = (1 - std of the cpu and memory shares) x 100 (balancedResourceScore).
    f_cpu, f_mem = (cpu + pre.req_cpu) / a_cpu, (mem + pre.req_mem) / a_mem
    f_cpu, f_mem = f_cpu if f_cpu < 1.0 else 1.0, f_mem if f_mem < 1.0 else 1.0
    after = int((1 - abs((f_cpu - f_mem) / 2)) * _MAX_SCORE_FLOAT)
    f_cpu, f_mem = cpu / a_cpu, mem / a_mem
    f_cpu, f_mem = f_cpu if f_cpu < 1.0 else 1.0, f_mem if f_mem < 1.0 else 1.0
    before = int((1 - abs((f_cpu - f_mem) / 2)) * _MAX_SCORE_FLOAT)
    return fit, half + (half + after - before) // 2


_MAX_SCORE_FLOAT = float(MAX_SCORE)


@dataclass(frozen=True)
class Weighted:
    """The scored nodes as columns: names, each plugin's normalised scores (PLUGINS order) and
    the weighted totals, all in the order the nodes were given."""

    names: list[str]
    parts: tuple[list[int], ...]
    totals: list[int]


def _weighted(pre: PreScore, names: list[str], raw: tuple[list[int], ...]) -> Weighted:
    """The score formula, once: each plugin's NormalizeScore over the scored nodes, a column
    per plugin (a constant one when the plugin is skipped or scores every node alike), then
    the weighted sum of WEIGHTS per node."""
    n = len(names)
    if not n:
        return Weighted([], tuple([] for _ in PLUGINS), [])
    taints, affinity, fit, spread_raw, interpod_raw, balanced, image = raw
    # helper.DefaultNormalizeScore: reversed for taints, plain for node affinity.
    max_taints, max_affinity = max(taints), max(affinity)
    taint_scores = (
        [MAX_SCORE - t * MAX_SCORE // max_taints for t in taints] if max_taints else [MAX_SCORE] * n
    )
    affinity_scores = [a * MAX_SCORE // max_affinity for a in affinity] if max_affinity else [0] * n
    spread = pre.spread.normalize(names, spread_raw) if pre.spread is not None else [0] * n
    interpod = InterPodScore.normalize(interpod_raw) if pre.interpod is not None else [0] * n
    parts = (taint_scores, affinity_scores, fit, spread, interpod, balanced, image)
    # The weighted sum, a column at a time; a column alike on every node (a plugin skipped,
    # or scoring every node the same) adds one number.
    base = 0
    totals: list[int] | None = None
    for plugin, column in zip(PLUGINS, parts, strict=True):
        weight = WEIGHTS[plugin]
        first = column[0]
        if column.count(first) == n:
            base += weight * first
        elif totals is None:
            totals = [weight * x for x in column]
        else:
            totals = [t + weight * x for t, x in zip(totals, column, strict=True)]
    if totals is None:
        return Weighted(names, parts, [base] * n)
    return Weighted(names, parts, [t + base for t in totals] if base else totals)


def _scored(
    pod: Pod,
    snapshot: NodeInfoSnapshot,
    names: Iterable[str],
    strategy: str,
    memo: ShapeMemo | None = None,
) -> Weighted:
    if memo is not None and memo.current(snapshot):
        at = list(map(memo.index.__getitem__, names))
        nodes = list(map(memo.infos.__getitem__, at))
    else:
        memo, at, nodes = None, [], [snapshot.node(n) for n in names]
    pre = PreScore(pod, snapshot, nodes, strategy)
    node_names = [node.name for node in nodes]
    # PodTopologySpread and InterPodAffinity read other nodes' pods: nothing remembered.
    if memo is None or pre.spread is not None or pre.interpod is not None:
        return _weighted(pre, node_names, _raw_scores(pre, nodes))
    return _weighted(pre, node_names, _remembered_raw(pre, snapshot, nodes, at, memo))


def _remembered_raw(
    pre: PreScore,
    snapshot: NodeInfoSnapshot,
    nodes: Sequence[NodeInfo],
    at: list[int],
    memo: ShapeMemo,
) -> tuple[list[int], ...]:
    """``_raw_scores`` of ``nodes`` (at ``at`` in the memo) with each node's raw scores kept
    in ``memo`` until the node changes: without spreading and inter-pod terms a raw score
    reads the pod, the node and the node set (ImageLocality's share of nodes having an
    image), which the memo's epoch covers. Picking and storing run as C loops (map)."""
    memo.sync(snapshot)
    if not memo.columns:
        memo.columns = [[0] * len(memo.names) for _ in PLUGINS]
        memo.nonzero = [0] * len(PLUGINS)
    scored = memo.scored
    stale = list(
        itertools.compress(range(len(at)), map(operator.not_, map(scored.__getitem__, at)))
    )
    if stale:
        fresh = _raw_scores(pre, [nodes[j] for j in stale])
        for c, (column, values) in enumerate(zip(memo.columns, fresh, strict=True)):
            for j, value in zip(stale, values, strict=True):
                i = at[j]
                memo.nonzero[c] += (value != 0) - (column[i] != 0)
                column[i] = value
        for j in stale:
            scored[at[j]] = True
    # A column of zeros on every node (a plugin with nothing to score for this shape) is
    # not picked node by node.
    return tuple(
        list(map(column.__getitem__, at)) if nonzero else [0] * len(at)
        for column, nonzero in zip(memo.columns, memo.nonzero, strict=True)
    )


def score_nodes(
    pod: Pod,
    snapshot: NodeInfoSnapshot,
    names: Iterable[str],
    strategy: str = DEFAULT_STRATEGY,
) -> list[NodeScore]:
    """Scores of the named (feasible) nodes, in the given order."""
    scored = _scored(pod, snapshot, names, strategy)
    return [
        NodeScore(name, total, dict(zip(PLUGINS, parts, strict=True)))
        for name, total, parts in zip(
            scored.names, scored.totals, zip(*scored.parts, strict=True), strict=True
        )
    ]


def best_node(
    pod: Pod,
    snapshot: NodeInfoSnapshot,
    names: Iterable[str],
    strategy: str = DEFAULT_STRATEGY,
    memo: ShapeMemo | None = None,
) -> tuple[str, int] | None:
    """``best(score_nodes(...))`` as (name, total), without a NodeScore per node; ``memo``
    (for pods of ``pod``'s shape) keeps raw scores between calls when they are the node's."""
    scorer_for(strategy)  # an unknown strategy is refused even with no node to score
    scored = _scored(pod, snapshot, names, strategy, memo)
    top = max(scored.totals, default=-1)
    if top < 0:
        return None  # no node (every total is >= 0 for valid pods)
    # the highest total; among equals, the node whose name sorts first
    ties = map(operator.eq, scored.totals, itertools.repeat(top))
    return min(itertools.compress(scored.names, ties)), top


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
