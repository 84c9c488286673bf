"""One scheduling decision: filter, score, and — only when no node fits — the fallback steps,
then DefaultPreemption.

Pure: a pod dict and a :class:`~kschedctl.model.filters.NodeInfoSnapshot` in, a
:class:`Decision` out. The filters are :mod:`kschedctl.model.filters` (the code
``kschedctl why`` runs); the ranking is :mod:`.scoring`; the relaxations are :mod:`.policy`.
:mod:`.explain` runs every stage in full for ``kschedctl why``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
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
from kschedctl.model.filters.cycle import ExtraFilter
from kschedctl.model.filters.dra import pod_dra_state
from kschedctl.model.filters.drabind import ClaimWrite, pod_claim_writes
from kschedctl.model.filters.drapostfilter import DraRelease, may_release
from kschedctl.model.filters.messages import NO_NODES_MESSAGE, reason_text
from kschedctl.model.filters.nodefilters import Incoming
from kschedctl.model.filters.verdicts import UNRESOLVABLE
from kschedctl.model.filters.volumes import volume_bindings
from kschedctl.model.kubetypes import Pod

from .memo import NodeMemo
from .plugins import NO_PLUGINS, PluginCycle, PluginFailure, PluginSet
from .policy import FallbackPolicy, FallbackStep, strict_pod
from .policyload import pod_policy
from .scoring import best_node, has_untolerated_prefer_no_schedule, score_nodes
from .strategies import DEFAULT_STRATEGY, scorer_for

__all__ = [
    "Stage",
    "stages",
    "stage_failure",
    "problems_text",
    "Decision",
    "Algorithm",
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
    # The pod's ResourceClaims on ``node``: allocations and reservations to write before the
    # binding (DynamicResources' Reserve/PreBind), in the pod's order.
    claims: tuple[ClaimWrite, ...] = ()
    # Nothing fits: the claim the DynamicResources PostFilter deallocates or deletes.
    release: DraRelease | None = None

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
    # Each node's verdict and raw scores for the last pod shapes (see .memo): a decision's
    # cost is then the nodes that changed since the last replica, not every node visited.
    memo: NodeMemo = field(default_factory=NodeMemo, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        scorer_for(self.strategy)  # refuse an unknown strategy now, not at the first decision

    def decide(self, pod: Pod, snapshot: NodeInfoSnapshot, start: int = 0) -> Decision:
        """Where ``pod`` goes. A plugin that raises fails this decision only: no node, and
        its error as the message (``plugin_error`` names it)."""
        try:
            return self._decide(pod, snapshot, start)
        except PluginFailure as err:
            policy, _problem = pod_policy(pod, self.policy)
            return Decision(
                None, None, None, 0, start, err.message, policy, plugin_error=err.plugin
            )

    def _decide(self, pod: Pod, snapshot: NodeInfoSnapshot, start: int) -> Decision:
        policy, problem = pod_policy(pod, self.policy)
        error = f"invalid {problem.source}: {problems_text(problem)}" if problem else None
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        tried: list[str] = []
        next_start = start
        for stage in stages(pod, policy):
            if (
                stage.step is None
                and nominated
                and self._fits_nominated(stage.pod, snapshot, nominated)
            ):
                # Preemption made room there: kube-scheduler tries that node first and takes
                # it without scoring (schedule_one.go evaluateNominatedNode).
                return Decision(
                    nominated, None, None, 1, start, policy=policy, policy_error=error,
                    bindings=tuple(volume_bindings(pod, snapshot, nominated)),
                    claims=pod_claim_writes(pod, snapshot, nominated),
                )  # fmt: skip
            node, score, found, next_start = self.place(
                stage.pod, snapshot, next_start, stage.strict
            )
            if stage.step is not None:
                tried.append(stage.step.name)
            if node is not None:
                return Decision(
                    node, stage.step, score, found, next_start, None, policy, error,
                    tuple(tried), tuple(volume_bindings(pod, snapshot, node)),
                    claims=pod_claim_writes(pod, snapshot, node),
                )  # fmt: skip
        message, preemption = self.failure(pod, snapshot, policy, problem)
        return Decision(
            None, None, None, 0, next_start, message, policy, error, tuple(tried),
            preemption=preemption, release=dra_release_for(pod, snapshot),
        )  # fmt: skip

    def _fits_nominated(self, pod: Pod, snapshot: NodeInfoSnapshot, node: str) -> bool:
        """Every filter passes on ``node``: the built-in ones, then the plugins' (counting
        the pods nominated there, as every filter pass does)."""
        return fits_node(
            pod,
            snapshot,
            node,
            dynamic_provisioning=PROVISIONS,
            extra=self.extra_filter(pod, snapshot),
        )

    def extra_filter(self, pod: Pod, snapshot: NodeInfoSnapshot) -> ExtraFilter | None:
        """The plugins as the filter engine's ``extra`` filter (None: no plugin filters)."""
        if not (self.plugins.filters or self.plugins.pre_filters):
            return None  # score-only plugins filter nothing
        return self.plugins.cycle(pod, snapshot).status

    def place(
        self, pod: Pod, snapshot: NodeInfoSnapshot, start: int, strict: bool
    ) -> tuple[str | None, int | None, int, int]:
        # Strictness removes nodes after filtering, so a sample could miss the ones left.
        limit = 0 if strict else nodes_to_find(len(snapshot), self.percentage_of_nodes_to_score)
        cycle = self.plugins.cycle(pod, snapshot) if self.plugins else None
        filtering = self.plugins.filters or self.plugins.pre_filters  # score-only: no extra
        extra = cycle.status if cycle is not None and filtering else None
        # Strictness and plugins read more than the pod and the node: nothing remembered.
        memo = None if strict or cycle else self.memo.memo(pod, snapshot)
        found = feasible_nodes(
            pod, snapshot, limit=limit, start=start, dynamic_provisioning=PROVISIONS, extra=extra,
            memo=memo,
        )  # fmt: skip
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
            chosen = best_node(pod, snapshot, names, self.strategy, memo)
        if chosen is None:
            return None, None, 0, found.next_start
        return chosen[0], chosen[1], len(names), found.next_start

    def failure(
        self,
        pod: Pod,
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
        own, *steps = stages(pod, policy)
        version, plugins = self.server_version, self.plugins
        text, preemption = stage_failure(
            own.pod, snapshot, own.strict, version, plugins, preempting=True
        )
        parts = []
        for stage in steps:
            assert stage.step is not None
            message, _ = stage_failure(stage.pod, snapshot, stage.strict, version, plugins)
            parts.append(f"{stage.step.name}: {_histogram_part(message).rstrip('.')}")
        if parts:
            text += f" Fallback steps of {policy.origin} tried: " + "; ".join(parts) + "."
        if problem is not None:
            text += f" Invalid {problem.source}: {problems_text(problem)}"
        return text, preemption


def _best_with_plugins(
    pod: Pod,
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


def dra_release_for(pod: Pod, snapshot: NodeInfoSnapshot) -> DraRelease | None:
    """The DynamicResources PostFilter's write for ``pod``, which no node fits: evaluated
    again only when the pod has a claim it could release (rare)."""
    if (
        snapshot.dra is None
        or not (pod.get("spec") or {}).get("resourceClaims")
        and not (snapshot.dra_resources)
    ):
        return None
    if not may_release(pod_dra_state(Incoming(pod), snapshot.dra)):
        return None
    ev = evaluate(pod, snapshot, preemption=False, dynamic_provisioning=PROVISIONS)
    release: DraRelease | None = ev.dra_release
    return release


def problems_text(error: PolicyError) -> str:
    return "; ".join(": ".join(x for x in (p.path, p.message) if x) for p in error.problems)


@dataclass(frozen=True)
class Stage:
    """One stage of a decision: the pod as it is filtered there (its own rules, or relaxed
    by ``step``), and whether strictPreferences hold."""

    step: FallbackStep | None
    pod: Pod
    strict: bool


def stages(pod: Pod, policy: FallbackPolicy) -> Iterator[Stage]:
    """The pod under its own rules, then under each fallback step in order (built lazily:
    a step's copy is made only when the stages before it placed nothing)."""
    own_strict = policy.strict_preferences
    yield Stage(None, strict_pod(pod) if own_strict else pod, own_strict)
    for step in policy.steps:
        relaxed = step.apply(pod)
        strict = own_strict and not step.drop_preferred
        yield Stage(step, strict_pod(relaxed) if strict else relaxed, strict)


def _histogram_part(message: str) -> str:
    """``4 Insufficient cpu.`` from ``0/4 nodes are available: 4 Insufficient cpu.``"""
    _, sep, rest = message.partition(" nodes are available: ")
    return rest if sep else message


def stage_failure(
    pod: Pod,
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
        # The DynamicResources PostFilter's text ("no new claims to deallocate", "still not
        # schedulable", or "not found" after another UnschedulableAndUnresolvable PreFilter)
        # by version, as kube-scheduler's: this scheduler runs the plugin too. A fallback
        # step's part is only its histogram (kschedctl's own text), "not found" aside.
        unresolvable = ev.prefilter is not None and ev.prefilter.code == UNRESOLVABLE
        dra = None if preempting or unresolvable else False
        text = failed_scheduling_message(ev, version, dra_enabled=dra, truncate=False)
        return text or NO_NODES_MESSAGE, ev.preemption
    reasons = [reason_text(r, version) for v in ev.nodes for r in v.scheduler_reasons]
    # The nodes every filter passes were excluded by strictPreferences.
    if strict:
        reasons += [REASON_STRICT_PREFER] * len(ev.feasible)
    return fit_error_message(len(ev.nodes), reasons), None
