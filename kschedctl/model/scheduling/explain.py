"""What ``kschedctl why`` shows of kschedctl's scheduler: every stage of a decision run in
full (:func:`explain`: which stage would place the pod, where, and why the others do not),
and every Python plugin's verdict on every node (:func:`plugin_report`). The decision itself
is :mod:`.algorithm`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.model.filters import NodeInfoSnapshot, feasible_nodes
from kschedctl.model.filters.cycle import CycleState
from kschedctl.model.filters.nodefilters import Incoming
from kschedctl.model.filters.nodeinfo import NodeInfo, PodInfo
from kschedctl.model.kubetypes import Pod

from .algorithm import PROVISIONS, Algorithm, problems_text, stage_failure, stages
from .plugins import NO_PLUGINS, PluginCycle, PluginFailure, PluginSet, PluginVerdict
from .policy import FallbackPolicy, FallbackStep, strict_pod
from .policyload import pod_policy
from .scoring import has_untolerated_prefer_no_schedule
from .strategies import DEFAULT_STRATEGY

__all__ = ["PluginReport", "StageOutcome", "explain", "plugin_report"]


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
    pod: Pod,
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
    out = []
    for stage in stages(pod, policy):
        staged, strict = stage.pod, stage.strict
        node, _score, _found, _next = algo.place(staged, snapshot, 0, strict)
        extra = algo.extra_filter(staged, snapshot)
        found = feasible_nodes(staged, snapshot, dynamic_provisioning=PROVISIONS, extra=extra).names
        if strict:
            tolerations = (staged.get("spec") or {}).get("tolerations") or []
            found = tuple(
                n for n in found
                if not has_untolerated_prefer_no_schedule(snapshot.node(n), tolerations)
            )  # fmt: skip
        message = None
        if not node:
            message, _ = stage_failure(staged, snapshot, strict, algo.server_version, plugins)
        out.append(StageOutcome(stage.step, found, node, message))
    return policy, problems_text(problem) if problem else None, out


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
    pod: Pod, snapshot: NodeInfoSnapshot, policy: FallbackPolicy, plugins: PluginSet
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
