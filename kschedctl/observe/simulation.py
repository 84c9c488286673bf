"""`kschedctl simulate`'s report (pure): what each candidate scheduler did with the same pods on
the same copy of a cluster, side by side.

kube-scheduler breaks ties between equally scored nodes at random (pkg/scheduler/
schedule_one.go, ``selectHost``: reservoir sampling over the top scores), so on nodes of one
shape the exact node a pod lands on changes from run to run while the number of pods each
shape receives does not. Placements are therefore compared per **node group** — nodes with the
same labels (but the per-node hostname), allocatable resources, taints and cordon — and a pod
moved only when its group differs (or it is bound by one candidate and not the other). A
pod whose group holds a single node has a unique placement: its exact node is comparable.

The JSON/YAML form (:meth:`SimulationReport.to_dict`) is a contract: its keys are tested by a
golden file (tests/unit/test_simulation_report.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.model.filters.resources import CPU, MEMORY, PODS, node_allocatable
from kschedctl.observe.failedscheduling import parse_failed_scheduling
from kschedctl.observe.placement import RESOURCES, Placement

API_VERSION = "kschedctl.io/v1alpha1"
KIND = "SimulationReport"
HOSTNAME_LABEL = "kubernetes.io/hostname"
UNSCHEDULED = "(unschedulable)"

DETERMINISM_NOTE = (
    "kube-scheduler breaks ties between equally scored nodes at random: placements are "
    "compared per node group (nodes with the same labels except the hostname, allocatable, "
    "taints and cordon) and the exact node only where a group holds one node; scheduled and "
    "unschedulable counts are stable run to run, and so are the counts per group unless two "
    "groups differ only in labels no rule or score reads (then they may trade pods)"
)


# -- node groups --------------------------------------------------------------------------------


def node_shape(node: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two nodes interchangeable to a scheduler's filters and scores: labels but the
    per-node ones (hostname, any label whose value is the node's name), allocatable, taints,
    cordon."""
    meta = node.get("metadata") or {}
    name = str(meta.get("name") or "")
    labels = tuple(
        sorted(
            (str(k), str(v))
            for k, v in (meta.get("labels") or {}).items()
            if k != HOSTNAME_LABEL and v != name
        )
    )
    spec = node.get("spec") or {}
    taints = tuple(
        sorted(
            (str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))
            for t in spec.get("taints") or []
        )
    )
    allocatable = tuple(sorted(node_allocatable(node).items()))
    return labels, allocatable, taints, bool(spec.get("unschedulable"))


@dataclass(frozen=True)
class ShapeGroup:
    """Nodes of one shape (:func:`node_shape`): the simulation reports its counts per group."""

    name: str  # group-1, group-2 … in the order of their first node's name
    nodes: tuple[str, ...]  # sorted

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "size": len(self.nodes), "nodes": list(self.nodes)}


def node_groups(nodes: Iterable[Mapping[str, Any]]) -> list[ShapeGroup]:
    """The nodes grouped by :func:`node_shape`, groups numbered by their first node's name."""
    by_shape: dict[tuple[Any, ...], list[str]] = {}
    for node in nodes:
        name = str((node.get("metadata") or {}).get("name") or "")
        by_shape.setdefault(node_shape(node), []).append(name)
    members = sorted(sorted(names) for names in by_shape.values())
    return [ShapeGroup(f"group-{i}", tuple(names)) for i, names in enumerate(members, 1)]


def group_of(groups: Sequence[ShapeGroup]) -> dict[str, str]:
    """Node name → its group's name."""
    return {node: g.name for g in groups for node in g.nodes}


# -- one candidate ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodOutcome:
    """One submitted pod under one candidate: its node (None: left unschedulable), the last
    FailedScheduling message, the fallback step that placed it, seconds from submission to
    its binding being seen."""

    pod: str  # namespace/name
    node: str | None
    message: str = ""
    fallback_step: str | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class ReasonCount:
    """A reason string of kube-scheduler's FailedScheduling histogram: how many of the
    unschedulable pods it held back, on how many nodes at most (largest count in a message)."""

    reason: str
    pods: int
    nodes: int

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "pods": self.pods, "nodes": self.nodes}


def reason_histogram(messages: Iterable[str]) -> list[ReasonCount]:
    """Over FailedScheduling messages (one per unschedulable pod): each reason with the number
    of pods it applied to and the most nodes it applied to in one message. Messages that are not
    kube-scheduler's histogram (a PreBind error, a scheduler that says something else) count as
    one reason of their own. Most pods first, then by reason."""
    pods: Counter[str] = Counter()
    nodes: dict[str, int] = {}
    for message in messages:
        if not message:
            continue
        head = message.split("\n", 1)[0]  # kschedctl's scheduler adds its fallback lines below
        try:
            _total, counts, _post = parse_failed_scheduling(head)
        except ValueError:
            counts = {head: 0}
        for reason, count in counts.items():
            pods[reason] += 1
            nodes[reason] = max(nodes.get(reason, 0), count)
    return [
        ReasonCount(reason, n, nodes[reason])
        for reason, n in sorted(pods.items(), key=lambda item: (-item[1], item[0]))
    ]


@dataclass(frozen=True)
class PreemptedPod:
    victim: str  # namespace/name
    message: str  # the Preempted event's note ("Preempted by pod <uid> on node <node>")

    def to_dict(self) -> dict[str, Any]:
        return {"victim": self.victim, "message": self.message}


@dataclass
class CandidateResult:
    """What one candidate did: every submitted pod's outcome, the pods it preempted, the
    utilisation before and after, the reasons ``why`` gives for the pods it left, how long."""

    name: str  # the scheduler's name (its spec's metadata.name)
    source: str  # the --scheduler argument
    program: str  # kube-scheduler, builtin, custom
    scheduler_names: tuple[str, ...]  # the profiles' schedulerNames pods were given
    strategy: str | None  # builtin's strategy; None for kube-scheduler's own scoring
    outcomes: list[PodOutcome]
    preemptions: list[PreemptedPod]
    before: Placement
    after: Placement
    seconds: float  # submission of the first pod to the last binding seen (or to settling)
    why_reasons: list[ReasonCount] = field(default_factory=list)
    # With spec.routing: scheduler name -> the submitted pods the API server's routing gave it
    # (only the candidate's were run); empty without routing (every pod was given to it).
    received: dict[str, int] = field(default_factory=dict)

    @property
    def scheduled(self) -> int:
        return sum(1 for o in self.outcomes if o.node)

    @property
    def unschedulable(self) -> int:
        return sum(1 for o in self.outcomes if not o.node)

    @property
    def reasons(self) -> list[ReasonCount]:
        return reason_histogram(o.message for o in self.outcomes if not o.node)

    @property
    def fallback_steps(self) -> dict[str, int]:
        steps = Counter(o.fallback_step for o in self.outcomes if o.node and o.fallback_step)
        return dict(sorted(steps.items()))

    def by_group(self, groups: Sequence[ShapeGroup]) -> dict[str, int]:
        """Submitted pods per node group (groups without any left out), plus the unschedulable."""
        where = group_of(groups)
        counted = Counter(where.get(o.node, o.node) if o.node else UNSCHEDULED
                          for o in self.outcomes)  # fmt: skip
        order = {g.name: i for i, g in enumerate(groups)}
        return {k: counted[k] for k in sorted(counted, key=lambda k: (order.get(k, len(order)), k))}

    def received_text(self) -> str:
        """``binpack 12, default-scheduler 3`` (routing: who the pods went to), or ``-``."""
        ranked = sorted(self.received.items(), key=lambda kv: (-kv[1], kv[0]))
        return ", ".join(f"{name} {count}" for name, count in ranked) or "-"

    def nodes_given_pods(self) -> int:
        """Distinct nodes the candidate bound submitted pods to."""
        return len({o.node for o in self.outcomes if o.node})

    def nodes_used(self) -> int:
        """Nodes with at least one bound, non-terminal pod after the run."""
        return sum(1 for u in self.after.nodes if u.requested(PODS))

    def to_dict(self, groups: Sequence[ShapeGroup]) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "program": self.program,
            "schedulerNames": list(self.scheduler_names),
            "strategy": self.strategy,
            "submitted": len(self.outcomes),
            "scheduled": self.scheduled,
            "unschedulable": self.unschedulable,
            "secondsToSchedule": round(self.seconds, 2),
            "reasons": [r.to_dict() for r in self.reasons],
            "whyReasons": [r.to_dict() for r in self.why_reasons],
            "received": dict(self.received),
            "fallbackSteps": self.fallback_steps,
            "preemptions": [p.to_dict() for p in self.preemptions],
            "byGroup": self.by_group(groups),
            "nodesUsed": {"before": _used(self.before), "after": _used(self.after)},
            "nodesGivenPods": self.nodes_given_pods(),
            "utilisation": {"before": _totals(self.before), "after": _totals(self.after)},
            "pods": [
                {
                    "pod": o.pod,
                    "node": o.node,
                    "fallbackStep": o.fallback_step,
                    "message": o.message if not o.node else "",
                }
                for o in sorted(self.outcomes, key=lambda o: o.pod)
            ],
        }


def _used(shown: Placement) -> int:
    return sum(1 for u in shown.nodes if u.requested(PODS))


def _totals(shown: Placement) -> dict[str, Any]:
    requested = {r: sum(u.requested(r) for u in shown.nodes) for r in RESOURCES}
    allocatable = {r: shown.allocatable.get(r, 0) for r in RESOURCES}
    return {
        "requested": requested,
        "allocatable": allocatable,
        "percent": {
            r: round(100 * requested[r] / allocatable[r], 1) if allocatable[r] else None
            for r in (CPU, MEMORY, PODS)
        },
    }


# -- side by side -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Moved:
    """A pod placed differently by a candidate than by the first (the baseline)."""

    pod: str
    baseline: str  # its node group (or node, for a one-node group), or UNSCHEDULED
    candidate: str

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "baseline": self.baseline, "candidate": self.candidate}


def _where(outcome: PodOutcome | None, where: Mapping[str, str], sizes: Mapping[str, int]) -> str:
    if outcome is None or not outcome.node:
        return UNSCHEDULED
    group = where.get(outcome.node)
    if group is None or sizes.get(group, 0) == 1:
        return outcome.node  # a one-node group: the exact node is stable
    return group


def moved_pods(
    baseline: CandidateResult, other: CandidateResult, groups: Sequence[ShapeGroup]
) -> list[Moved]:
    """The pods ``other`` placed in another node group (or node, for one-node groups) than
    ``baseline``, or bound where the baseline did not, or the reverse. Sorted by pod."""
    where = group_of(groups)
    sizes = {g.name: len(g.nodes) for g in groups}
    theirs = {o.pod: o for o in other.outcomes}
    out = []
    for mine in baseline.outcomes:
        a = _where(mine, where, sizes)
        b = _where(theirs.get(mine.pod), where, sizes)
        if a != b:
            out.append(Moved(mine.pod, a, b))
    return sorted(out, key=lambda m: m.pod)


def is_worse(baseline: CandidateResult, other: CandidateResult) -> bool:
    """``--fail-if-worse``: ``other`` leaves more of the same pods unschedulable than the
    baseline."""
    return other.unschedulable > baseline.unschedulable


@dataclass
class SimulationReport:
    snapshot: str  # the snapshot file as given
    nodes: int
    pinned_pods: int  # bound pods recreated on their nodes
    pending_pods: int  # the snapshot's pending pods submitted
    workload_pods: int  # pods expanded from --workload
    groups: list[ShapeGroup]
    candidates: list[CandidateResult]
    lab: str = "fresh"  # how each candidate got its cluster (fresh, or reset: see ops.simulate)

    @property
    def worse(self) -> list[str]:
        """The candidates (after the first) that leave more pods unschedulable than the first."""
        if not self.candidates:
            return []
        first = self.candidates[0]
        return [c.name for c in self.candidates[1:] if is_worse(first, c)]

    def differences(self) -> list[tuple[CandidateResult, list[Moved]]]:
        first = self.candidates[0]
        return [(c, moved_pods(first, c, self.groups)) for c in self.candidates[1:]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "snapshot": {
                "file": self.snapshot,
                "nodes": self.nodes,
                "pinnedPods": self.pinned_pods,
                "pendingPods": self.pending_pods,
                "workloadPods": self.workload_pods,
            },
            "lab": self.lab,
            "determinism": DETERMINISM_NOTE,
            "nodeGroups": [g.to_dict() for g in self.groups],
            "candidates": [c.to_dict(self.groups) for c in self.candidates],
            "differences": [
                {
                    "baseline": self.candidates[0].name,
                    "candidate": c.name,
                    "moved": len(moved),
                    "pods": [m.to_dict() for m in moved],
                }
                for c, moved in self.differences()
            ],
            "worse": self.worse,
        }
