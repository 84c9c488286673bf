"""One scheduling decision: filter, score, and — only when no node fits — the fallback steps,
then DefaultPreemption.

Pure: a pod dict and a :class:`~kschedctl.filters.Snapshot` in, a :class:`Decision` out.
The filters are :mod:`kschedctl.filters` (the code ``kschedctl why`` runs); the ranking is
:mod:`.scoring`; the relaxations are :mod:`.policy`. :func:`explain` runs every stage in full
for ``kschedctl why``: which stage would place the pod, where, and why the others do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.errors import PolicyError
from kschedctl.filters import (
    Preemption,
    PreemptionCandidate,
    Snapshot,
    evaluate,
    failed_scheduling_message,
    feasible_nodes,
    fit_error_message,
    fits_node,
    nodes_to_find,
)
from kschedctl.filters.messages import NO_NODES_MESSAGE

from .policy import FallbackPolicy, FallbackStep, pod_policy, strict_pod
from .scoring import best_node, has_untolerated_prefer_no_schedule
from .strategies import DEFAULT_STRATEGY, scorer_for

__all__ = ["Decision", "Algorithm", "StageOutcome", "explain", "REASON_STRICT_PREFER"]

REASON_STRICT_PREFER = "node(s) had untolerated PreferNoSchedule taint(s) (strictPreferences)"


@dataclass(frozen=True)
class Decision:
    """Where a pod goes (``node``), or why nowhere (``message``: the FailedScheduling text).

    ``step`` is the fallback step that placed it (None: the pod's own rules did).
    ``next_start`` is where the next search starts (kube-scheduler's rotating start index).
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
    a ValueError), sampling, and the default policy."""

    strategy: str = DEFAULT_STRATEGY
    percentage_of_nodes_to_score: int = 0  # 0: kube-scheduler's adaptive percentage
    policy: FallbackPolicy = field(default_factory=FallbackPolicy)
    server_version: tuple[int, ...] = (1, 36)

    def __post_init__(self) -> None:
        scorer_for(self.strategy)  # refuse an unknown strategy now, not at the first decision

    def decide(self, pod: Mapping[str, Any], snapshot: Snapshot, start: int = 0) -> Decision:
        policy, problem = pod_policy(pod, self.policy)
        error = f"invalid {problem.source}: {_problems_text(problem)}" if problem else None
        own = strict_pod(pod) if policy.strict_preferences else pod
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if nominated and fits_node(own, snapshot, nominated):
            # Preemption made room there: kube-scheduler tries that node first and takes it
            # without scoring (schedule_one.go evaluateNominatedNode).
            return Decision(nominated, None, None, 1, start, policy=policy, policy_error=error)
        node, score, found, next_start = self._place(
            own, snapshot, start, policy.strict_preferences
        )
        if node is not None:
            return Decision(node, None, score, found, next_start, policy=policy, policy_error=error)
        tried: list[str] = []
        for step in policy.steps:
            relaxed = _relaxed(pod, step, policy)
            strict = policy.strict_preferences and not step.drop_preferred
            node, score, found, next_start = self._place(relaxed, snapshot, next_start, strict)
            tried.append(step.name)
            if node is not None:
                return Decision(
                    node, step, score, found, next_start, None, policy, error, tuple(tried)
                )
        message, preemption = self.failure(pod, snapshot, policy, problem)
        return Decision(
            None, None, None, 0, next_start, message, policy, error, tuple(tried), preemption
        )

    def _place(
        self, pod: Mapping[str, Any], snapshot: Snapshot, start: int, strict: bool
    ) -> tuple[str | None, int | None, int, int]:
        # Strictness removes nodes after filtering, so a sample could miss the ones left.
        limit = 0 if strict else nodes_to_find(len(snapshot), self.percentage_of_nodes_to_score)
        found = feasible_nodes(pod, snapshot, limit=limit, start=start)
        names: Sequence[str] = found.names
        if strict:
            tolerations = (pod.get("spec") or {}).get("tolerations") or []
            names = [
                n for n in names
                if not has_untolerated_prefer_no_schedule(snapshot.node(n), tolerations)
            ]  # fmt: skip
        chosen = best_node(pod, snapshot, names, self.strategy)
        if chosen is None:
            return None, None, 0, found.next_start
        return chosen[0], chosen[1], len(names), found.next_start

    def failure_message(
        self,
        pod: Mapping[str, Any],
        snapshot: Snapshot,
        policy: FallbackPolicy,
        problem: PolicyError | None = None,
    ) -> str:
        """The FailedScheduling text (see :meth:`failure`)."""
        return self.failure(pod, snapshot, policy, problem)[0]

    def failure(
        self,
        pod: Mapping[str, Any],
        snapshot: Snapshot,
        policy: FallbackPolicy,
        problem: PolicyError | None = None,
    ) -> tuple[str, Preemption | None]:
        """When no stage places the pod: the FailedScheduling text and DefaultPreemption's
        outcome for the pod's own rules. The text starts with kube-scheduler's message for
        those rules (the histogram, then "preemption: ..." unless preemption found a node),
        then each fallback step's histogram."""
        own = strict_pod(pod) if policy.strict_preferences else pod
        text, preemption = _stage(
            own, snapshot, policy.strict_preferences, self.server_version, preempting=True
        )
        parts = []
        for step in policy.steps:
            relaxed = _relaxed(pod, step, policy)
            strict = policy.strict_preferences and not step.drop_preferred
            stage, _ = _stage(relaxed, snapshot, strict, self.server_version)
            parts.append(f"{step.name}: {_histogram_part(stage).rstrip('.')}")
        if parts:
            text += f" Fallback steps of {policy.origin} tried: " + "; ".join(parts) + "."
        if problem is not None:
            text += f" Invalid {problem.source}: {_problems_text(problem)}"
        return text, preemption


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
    pod: Mapping[str, Any], snapshot: Snapshot, strict: bool, version: Sequence[int]
) -> str:
    return _stage(pod, snapshot, strict, version)[0]


def _stage(
    pod: Mapping[str, Any],
    snapshot: Snapshot,
    strict: bool,
    version: Sequence[int],
    *,
    preempting: bool = False,
) -> tuple[str, Preemption | None]:
    """One stage's FailedScheduling text; with ``preempting``, DefaultPreemption runs when no
    node passes the filters and its PostFilter text ends the message."""
    found = feasible_nodes(pod, snapshot)
    if found.not_evaluated:
        return (
            f"0/{len(snapshot)} nodes are available: kschedctl's scheduler does not evaluate "
            f"{', '.join(sorted(set(found.not_evaluated)))} for this pod (use a kube-scheduler "
            "for pods with volume claims or device claims)."
        ), None
    ev = evaluate(pod, snapshot, preemption=preempting)
    if not ev.schedulable:
        # No DynamicResources PostFilter text: this scheduler does not deallocate claims.
        text = failed_scheduling_message(ev, version, dra_enabled=False, truncate=False)
        return text or NO_NODES_MESSAGE, ev.preemption
    # The nodes that pass the filters were excluded by strictPreferences.
    reasons = [r.message for v in ev.nodes for r in v.scheduler_reasons]
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
    snapshot: Snapshot,
    default_policy: FallbackPolicy,
    strategy: str = DEFAULT_STRATEGY,
) -> tuple[FallbackPolicy, str | None, list[StageOutcome]]:
    """Every stage in order, each over all nodes: (policy used, policy error, outcomes).

    The first outcome with ``chosen`` set is the one the scheduler would apply; later stages
    are listed too, so ``why`` can show what each step would do.
    """
    policy, problem = pod_policy(pod, default_policy)
    algo = Algorithm(strategy=strategy, percentage_of_nodes_to_score=100, policy=policy)
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
        found = feasible_nodes(staged, snapshot).names
        if strict:
            tolerations = (staged.get("spec") or {}).get("tolerations") or []
            found = tuple(
                n for n in found
                if not has_untolerated_prefer_no_schedule(snapshot.node(n), tolerations)
            )  # fmt: skip
        message = None if node else _stage_message(staged, snapshot, strict, algo.server_version)
        out.append(StageOutcome(step, found, node, message))
    return policy, _problems_text(problem) if problem else None, out
