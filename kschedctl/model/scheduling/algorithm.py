"""One scheduling decision: filter, score, and — only when no node fits — the fallback steps,
then DefaultPreemption.

Pure: a pod dict and a :class:`~kschedctl.model.filters.NodeInfoSnapshot` in, a
:class:`Decision` out. The filters are :mod:`kschedctl.model.filters` (the code
``kschedctl why`` runs); the ranking is :mod:`.scoring`; the relaxations are :mod:`.policy`.
:func:`explain` runs every stage in full for ``kschedctl why``: which stage would place the
pod, where, and why the others do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.base.errors import PolicyError
from kschedctl.model.filters import (
    NodeInfoSnapshot,
    Preemption,
    PreemptionCandidate,
    evaluate,
    failed_scheduling_message,
    feasible_nodes,
    fit_error_message,
    fits_node,
    nodes_to_find,
)
from kschedctl.model.filters.cycle import CycleState, ExtraFilter
from kschedctl.model.filters.messages import NO_NODES_MESSAGE, reason_text
from kschedctl.model.filters.nodefilters import Incoming
from kschedctl.model.filters.nodeinfo import NodeInfo, PodInfo
from kschedctl.model.filters.volumes import volume_bindings

from .plugins import NO_PLUGINS, PluginCycle, PluginFailure, PluginSet, PluginVerdict
from .policy import FallbackPolicy, FallbackStep, strict_pod
from .policyload import pod_policy
from .scoring import best_node, has_untolerated_prefer_no_schedule, score_nodes
from .strategies import DEFAULT_STRATEGY, scorer_for

__all__ = [
    "Decision",
    "Algorithm",
    "PluginReport",
    "StageOutcome",
    "explain",
    "plugin_report",
    "REASON_STRICT_PREFER",
]

REASON_STRICT_PREFER = "node(s) had untolerated PreferNoSchedule taint(s) (strictPreferences)"
# This scheduler binds WaitForFirstConsumer claims to static PVs but provisions no volumes.
PROVISIONS = False


@dataclass(frozen=True)
class Decision:
    """Where a pod goes (``node``), or why nowhere (``message``: the FailedScheduling text).

    ``step`` is the fallback step that placed it (None: the pod's own rules did).
    ``next_start`` is where the next search starts (kube-scheduler's rotating start index).
    ``bindings`` are the (claim, PersistentVolume) pairs of WaitForFirstConsumer claims to
    bind on ``node`` before the pod (VolumeBinding's Reserve/PreBind).
    When nothing fits, ``preemption`` is DefaultPreemption's outcome for the pod's own rules:
    ``nominate`` is then the node to write to ``status.nominatedNodeName`` ("" clears it,
    None leaves it as it is) and ``victims`` the pods to evict first.
    """

    node: str | None
    step: FallbackStep | None = None
    score: int | None = None
    feasible: int = 0
    next_start: int = 0
    message: str | None = None
    policy: FallbackPolicy | None = None
    policy_error: str | None = None
    tried: tuple[str, ...] = ()  # fallback steps tried before the decision
    bindings: tuple[tuple[Mapping[str, Any], Mapping[str, Any]], ...] = ()
    plugin_error: str | None = None  # the plugin that raised (``message`` says how)
    preemption: Preemption | None = None

    @property
    def victims(self) -> PreemptionCandidate | None:
        p = self.preemption
        return p.chosen if p is not None and p.helps else None

    @property
    def nominate(self) -> str | None:
        """kube-scheduler's NominatingInfo: the chosen node; "" (clear) when preemption ran
        and found no candidate; None (leave it) when the pod may not preempt."""
        p = self.preemption
        if p is None or p.ineligible is not None:
            return None
        return p.chosen.node if p.chosen is not None else ""

    def scheduled_message(self, pod_key: str) -> str:
        """The Scheduled event note: kube-scheduler's text, plus the fallback that placed it."""
        text = f"Successfully assigned {pod_key} to {self.node}"
        if self.step is not None:
            origin = self.policy.origin if self.policy is not None else "the policy"
            text += (
                f" by fallback step {self.step.name!r} of {origin} ({self.step.describe()}): "
                "no node fits under the pod's own rules"
            )
        return text


@dataclass
class Algorithm:
    """The scheduler's configuration: ranking strategy (a name of ``STRATEGIES``; any other is
    a ValueError), sampling, the default policy and the Python plugins (:mod:`.plugins`: run
    after the built-in filters, in order, at every stage; their scores join the sum)."""

    strategy: str = DEFAULT_STRATEGY
    percentage_of_nodes_to_score: int = 0  # 0: kube-scheduler's adaptive percentage
    policy: FallbackPolicy = field(default_factory=FallbackPolicy)
    server_version: tuple[int, ...] = (1, 36)
    plugins: PluginSet = NO_PLUGINS

    def __post_init__(self) -> None:
        scorer_for(self.strategy)  # refuse an unknown strategy now, not at the first decision

    def decide(
        self, pod: Mapping[str, Any], snapshot: NodeInfoSnapshot, start: int = 0
    ) -> Decision:
        """Where ``pod`` goes. A plugin that raises fails this decision only: no node, and
        its error as the message (``plugin_error`` names it)."""
        try:
            return self._decide(pod, snapshot, start)
        except PluginFailure as err:
            policy, _problem = pod_policy(pod, self.policy)
            return Decision(
                None, None, None, 0, start, err.message, policy, plugin_error=err.plugin
            )

    def _decide(self, pod: Mapping[str, Any], snapshot: NodeInfoSnapshot, start: int) -> Decision:
        policy, problem = pod_policy(pod, self.policy)
        error = f"invalid {problem.source}: {_problems_text(problem)}" if problem else None
        own = strict_pod(pod) if policy.strict_preferences else pod
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if nominated and self._fits_nominated(own, snapshot, nominated):
            # Preemption made room there: kube-scheduler tries that node first and takes it
            # without scoring (schedule_one.go evaluateNominatedNode).
            return Decision(
                nominated, None, None, 1, start, policy=policy, policy_error=error,
                bindings=tuple(volume_bindings(pod, snapshot, nominated)),
            )  # fmt: skip
        node, score, found, next_start = self._place(
            own, snapshot, start, policy.strict_preferences
        )
        if node is not None:
            return Decision(
                node, None, score, found, next_start, policy=policy, policy_error=error,
                bindings=tuple(volume_bindings(pod, snapshot, node)),
            )  # fmt: skip
        tried: list[str] = []
        for step in policy.steps:
            relaxed = _relaxed(pod, step, policy)
            strict = policy.strict_preferences and not step.drop_preferred
            node, score, found, next_start = self._place(relaxed, snapshot, next_start, strict)
            tried.append(step.name)
            if node is not None:
                return Decision(
                    node, step, score, found, next_start, None, policy, error, tuple(tried),
                    tuple(volume_bindings(pod, snapshot, node)),
                )  # fmt: skip
        message, preemption = self.failure(pod, snapshot, policy, problem)
        return Decision(
            None, None, None, 0, next_start, message, policy, error, tuple(tried),
            preemption=preemption,
        )  # fmt: skip

    def _fits_nominated(
        self, pod: Mapping[str, Any], snapshot: NodeInfoSnapshot, node: str
    ) -> bool:
        """Every filter passes on ``node``: the built-in ones, then the plugins' (counting
        the pods nominated there, as every filter pass does)."""
        return fits_node(
            pod, snapshot, node, dynamic_provisioning=PROVISIONS, extra=self._extra(pod, snapshot)
        )

    def _extra(self, pod: Mapping[str, Any], snapshot: NodeInfoSnapshot) -> ExtraFilter | None:
        """The plugins as the filter engine's ``extra`` filter (None: no plugin filters)."""
        if not (self.plugins.filters or self.plugins.pre_filters):
            return None  # score-only plugins filter nothing
        return self.plugins.cycle(pod, snapshot).status

    def _place(
        self, pod: Mapping[str, Any], snapshot: NodeInfoSnapshot, start: int, strict: bool
    ) -> tuple[str | None, int | None, int, int]:
        # Strictness removes nodes after filtering, so a sample could miss the ones left.
        limit = 0 if strict else nodes_to_find(len(snapshot), self.percentage_of_nodes_to_score)
        cycle = self.plugins.cycle(pod, snapshot) if self.plugins else None
        filtering = self.plugins.filters or self.plugins.pre_filters  # score-only: no extra
        extra = cycle.status if cycle is not None and filtering else None
        found = feasible_nodes(
            pod, snapshot, limit=limit, start=start, dynamic_provisioning=PROVISIONS, extra=extra
        )
        names: Sequence[str] = found.names
        if strict:
            tolerations = (pod.get("spec") or {}).get("tolerations") or []
            names = [
                n for n in names
                if not has_untolerated_prefer_no_schedule(snapshot.node(n), tolerations)
            ]  # fmt: skip
        if cycle is not None and self.plugins.scorers:
            chosen = _best_with_plugins(pod, snapshot, names, self.strategy, cycle)
        else:
            chosen = best_node(pod, snapshot, names, self.strategy)
        if chosen is None:
            return None, None, 0, found.next_start
        return chosen[0], chosen[1], len(names), found.next_start

    def failure_message(
        self,
        pod: Mapping[str, Any],
        snapshot: NodeInfoSnapshot,
        policy: FallbackPolicy,
        problem: PolicyError | None = None,
    ) -> str:
        """The FailedScheduling text (see :meth:`failure`)."""
        return self.failure(pod, snapshot, policy, problem)[0]

    def failure(
        self,
        pod: Mapping[str, Any],
        snapshot: NodeInfoSnapshot,
        policy: FallbackPolicy,
        problem: PolicyError | None = None,
    ) -> tuple[str, Preemption | None]:
        """When no stage places the pod: the FailedScheduling text and DefaultPreemption's
        outcome for the pod's own rules. The text starts with kube-scheduler's message for
        those rules (the histogram, then "preemption: ..." unless preemption found a node),
        then each fallback step's histogram. Plugin reasons count like built-in ones, and
        the plugins run in the preemption dry run too; a plugin that raises raises
        PluginFailure."""
        own = strict_pod(pod) if policy.strict_preferences else pod
        plugins = self.plugins
        text, preemption = _stage(
            own,
            snapshot,
            policy.strict_preferences,
            self.server_version,
            plugins,
            preempting=True,
        )
        parts = []
        for step in policy.steps:
            relaxed = _relaxed(pod, step, policy)
            strict = policy.strict_preferences and not step.drop_preferred
            stage, _ = _stage(relaxed, snapshot, strict, self.server_version, plugins)
            parts.append(f"{step.name}: {_histogram_part(stage).rstrip('.')}")
        if parts:
            text += f" Fallback steps of {policy.origin} tried: " + "; ".join(parts) + "."
        if problem is not None:
            text += f" Invalid {problem.source}: {_problems_text(problem)}"
        return text, preemption


def _best_with_plugins(
    pod: Mapping[str, Any],
    snapshot: NodeInfoSnapshot,
    names: Sequence[str],
    strategy: str,
    cycle: PluginCycle,
) -> tuple[str, int] | None:
    """``best_node`` with Σ WEIGHT × score of the score plugins added to each total (the
    same tie rule: the name that sorts first)."""
    best_name, best_total = "", -1.0
    for s in score_nodes(pod, snapshot, names, strategy):
        total = s.total + cycle.weighted(snapshot.node(s.name))
        if total > best_total or (total == best_total and s.name < best_name):
            best_name, best_total = s.name, total
    return None if best_total < 0 else (best_name, round(best_total))


def _problems_text(error: PolicyError) -> str:
    return "; ".join(": ".join(x for x in (p.path, p.message) if x) for p in error.problems)


def _relaxed(pod: Mapping[str, Any], step: FallbackStep, policy: FallbackPolicy) -> dict[str, Any]:
    relaxed = step.apply(pod)
    if policy.strict_preferences and not step.drop_preferred:
        return strict_pod(relaxed)
    return relaxed


def _histogram_part(message: str) -> str:
    """``4 Insufficient cpu.`` from ``0/4 nodes are available: 4 Insufficient cpu.``"""
    _, sep, rest = message.partition(" nodes are available: ")
    return rest if sep else message


def _stage_message(
    pod: Mapping[str, Any],
    snapshot: NodeInfoSnapshot,
    strict: bool,
    version: Sequence[int],
    plugins: PluginSet = NO_PLUGINS,
) -> str:
    return _stage(pod, snapshot, strict, version, plugins)[0]


def _stage(
    pod: Mapping[str, Any],
    snapshot: NodeInfoSnapshot,
    strict: bool,
    version: Sequence[int],
    plugins: PluginSet = NO_PLUGINS,
    *,
    preempting: bool = False,
) -> tuple[str, Preemption | None]:
    """One stage's FailedScheduling text; with ``preempting``, DefaultPreemption runs when no
    node passes every filter (the plugins' too) and its PostFilter text ends the message.

    The plugins are the filter engine's ``extra`` filter, so they give each node's reason
    after the built-in filters and run in the preemption dry run on the node with the
    candidate victims taken off (kube-scheduler's SelectVictimsOnNode runs every Filter
    plugin, pkg/scheduler/framework/preemption/preemption.go): a node only a plugin rejects
    is a candidate; a node a plugin still rejects with every lower-priority pod gone is none.
    A plugin ``pre_filter`` rejection is a PreFilter one (UnschedulableAndUnresolvable): no
    node is filtered and preemption does not run."""
    found = feasible_nodes(pod, snapshot, dynamic_provisioning=PROVISIONS)
    if found.not_evaluated:
        ev = evaluate(pod, snapshot, preemption=False, dynamic_provisioning=PROVISIONS)
        why = "; ".join(dict.fromkeys(n.why for n in ev.not_evaluated))
        return (
            f"0/{len(snapshot)} nodes are available: kschedctl's scheduler does not evaluate "
            f"{', '.join(sorted(set(found.not_evaluated)))} for this pod ({why}); use "
            "kube-scheduler for it."
        ), None
    extra = None
    if (plugins.filters or plugins.pre_filters) and len(snapshot) and not found.rejected:
        cycle = plugins.cycle(pod, snapshot)
        # The plugins' pre_filter runs after the built-in PreFilter, before any filter.
        rejected = cycle.prefiltered()
        if rejected is not None:
            return f"0/{len(snapshot)} nodes are available: {rejected[1]}.", None
        extra = cycle.status
    ev = evaluate(
        pod, snapshot, preemption=preempting, dynamic_provisioning=PROVISIONS, extra=extra
    )
    if not ev.schedulable:
        # No DynamicResources PostFilter text: this scheduler does not deallocate claims.
        text = failed_scheduling_message(ev, version, dra_enabled=False, truncate=False)
        return text or NO_NODES_MESSAGE, ev.preemption
    reasons = [reason_text(r, version) for v in ev.nodes for r in v.scheduler_reasons]
    # The nodes every filter passes were excluded by strictPreferences.
    if strict:
        reasons += [REASON_STRICT_PREFER] * len(ev.feasible)
    return fit_error_message(len(ev.nodes), reasons), None


@dataclass(frozen=True)
class StageOutcome:
    """One stage for ``why``: the pod's own rules (``step`` None) or one fallback step."""

    step: FallbackStep | None
    feasible: tuple[str, ...]
    chosen: str | None
    message: str | None  # the histogram when nothing fits

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step.name if self.step else None,
            "relaxes": self.step.describe() if self.step else None,
            "feasible": list(self.feasible),
            "chosen": self.chosen,
            "message": self.message,
        }


def explain(
    pod: Mapping[str, Any],
    snapshot: NodeInfoSnapshot,
    default_policy: FallbackPolicy,
    strategy: str = DEFAULT_STRATEGY,
    plugins: PluginSet = NO_PLUGINS,
) -> tuple[FallbackPolicy, str | None, list[StageOutcome]]:
    """Every stage in order, each over all nodes: (policy used, policy error, outcomes).

    The first outcome with ``chosen`` set is the one the scheduler would apply; later stages
    are listed too, so ``why`` can show what each step would do. A plugin that raises
    raises PluginFailure (the scheduler's decision fails the same way).
    """
    policy, problem = pod_policy(pod, default_policy)
    algo = Algorithm(
        strategy=strategy, percentage_of_nodes_to_score=100, policy=policy, plugins=plugins
    )
    stages: list[tuple[FallbackStep | None, Mapping[str, Any], bool]] = [
        (None, strict_pod(pod) if policy.strict_preferences else pod, policy.strict_preferences)
    ]
    for fallback in policy.steps:
        stages.append(
            (
                fallback,
                _relaxed(pod, fallback, policy),
                policy.strict_preferences and not fallback.drop_preferred,
            )
        )
    out = []
    for step, staged, strict in stages:
        node, _score, _found, _next = algo._place(staged, snapshot, 0, strict)
        found = feasible_nodes(
            staged, snapshot, dynamic_provisioning=PROVISIONS, extra=algo._extra(staged, snapshot)
        ).names
        if strict:
            tolerations = (staged.get("spec") or {}).get("tolerations") or []
            found = tuple(
                n for n in found
                if not has_untolerated_prefer_no_schedule(snapshot.node(n), tolerations)
            )  # fmt: skip
        message = (
            None if node else _stage_message(staged, snapshot, strict, algo.server_version, plugins)
        )
        out.append(StageOutcome(step, found, node, message))
    return policy, _problems_text(problem) if problem else None, out


@dataclass(frozen=True)
class PluginReport:
    """What the plugins say about a pod under its own rules, node by node (``why``).

    ``nodes`` holds the nodes that pass every built-in filter (the plugins run on no other):
    each plugin filter's verdict in order, up to the first that rejects. ``scores``: each
    score plugin's 0..100 score (before its WEIGHT) on the nodes every filter passes.
    ``error``: the scheduler's message when a plugin raises (then the rest is partial).
    """

    names: tuple[str, ...]
    prefilter: tuple[str, str] | None = None  # (plugin, reason) that rejects the pod
    nodes: Mapping[str, tuple[PluginVerdict, ...]] = field(default_factory=dict)
    scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    error: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict)  # plugin name -> file or module

    def rejecting(self) -> dict[str, list[str]]:
        """Plugin name -> the nodes its filter rejects."""
        out: dict[str, list[str]] = {}
        for node, verdicts in self.nodes.items():
            for v in verdicts:
                if v.reason is not None:
                    out.setdefault(v.plugin, []).append(node)
        return out

    def fitting(self) -> list[str]:
        """The nodes that pass the built-in filters and every plugin filter."""
        return [n for n, vs in self.nodes.items() if all(v.reason is None for v in vs)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugins": list(self.names),
            "preFilter": (
                {"plugin": self.prefilter[0], "reason": self.prefilter[1]}
                if self.prefilter
                else None
            ),
            "nodes": [
                {
                    "name": node,
                    "filters": [v.to_dict() for v in verdicts],
                    "scores": dict(self.scores.get(node) or {}),
                }
                for node, verdicts in self.nodes.items()
            ],
            "error": self.error,
        }


def plugin_report(
    pod: Mapping[str, Any], snapshot: NodeInfoSnapshot, policy: FallbackPolicy, plugins: PluginSet
) -> PluginReport:
    """Every plugin's verdict on every node for the pod's own rules (the first stage)."""
    used, _problem = pod_policy(pod, policy)
    own = strict_pod(pod) if used.strict_preferences else pod
    cycle = plugins.cycle(own, snapshot)
    sources = {p.name: p.source for p in plugins.plugins}
    nodes: dict[str, tuple[PluginVerdict, ...]] = {}
    scores: dict[str, Mapping[str, float]] = {}
    try:
        builtin = feasible_nodes(own, snapshot, dynamic_provisioning=PROVISIONS)
        if builtin.rejected or not builtin.names:
            return PluginReport(plugins.names(), sources=sources)
        rejected = cycle.prefiltered()
        if rejected is not None:
            return PluginReport(plugins.names(), rejected, sources=sources)
        # The pods nominated to a node count for the plugins as for every filter pass.
        nominated = CycleState(Incoming(own), snapshot).nominated
        for name in builtin.names:
            node = snapshot.node(name)
            nodes[name] = _verdicts_with_nominated(cycle, node, nominated.get(name) or [])
            if all(v.reason is None for v in nodes[name]) and plugins.scorers:
                scores[name] = cycle.scores(node)
    except PluginFailure as err:
        return PluginReport(plugins.names(), None, nodes, scores, err.message, sources)
    return PluginReport(plugins.names(), None, nodes, scores, None, sources)


def _verdicts_with_nominated(
    cycle: PluginCycle, node: NodeInfo, nominated: Sequence[PodInfo]
) -> tuple[PluginVerdict, ...]:
    """The plugins' verdicts on ``node`` as ``RunFilterPluginsWithNominatedPods`` has them:
    first with the ``nominated`` pods on it; if every plugin passes, once more without."""
    if nominated:
        for p in nominated:
            node.add(p)
        try:
            first = tuple(cycle.verdicts(node))
        finally:
            for p in nominated:
                node.remove(p)
        if any(v.reason is not None for v in first):
            return first
    return tuple(cycle.verdicts(node))
