"""Result types of the filter engine and kube-scheduler's plugin names and reason strings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Reason",
    "NodeVerdict",
    "NotEvaluated",
    "PreemptionCandidate",
    "Preemption",
    "Evaluation",
    "UNSCHEDULABLE",
    "UNRESOLVABLE",
]

# Status codes (fwk.Code names).
UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
# A Filter plugin's error (e.g. a CEL runtime error in a device selector): kube-scheduler
# aborts the attempt, and the error is the whole FailedScheduling message.
SCHEDULING_ERROR = "Error"

# Filter plugin names (kube-scheduler's ``names.go``); their order is ``table.FILTERS``.
NODE_UNSCHEDULABLE = "NodeUnschedulable"
NODE_NAME = "NodeName"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
NODE_PORTS = "NodePorts"
NODE_RESOURCES_FIT = "NodeResourcesFit"
VOLUME_RESTRICTIONS = "VolumeRestrictions"
NODE_VOLUME_LIMITS = "NodeVolumeLimits"
VOLUME_BINDING = "VolumeBinding"
VOLUME_ZONE = "VolumeZone"
POD_TOPOLOGY_SPREAD = "PodTopologySpread"
INTER_POD_AFFINITY = "InterPodAffinity"
DYNAMIC_RESOURCES = "DynamicResources"
NODE_DECLARED_FEATURES = "NodeDeclaredFeatures"

# Reason strings, v1.36 wording (messages.py rewrites the taint one for older servers).
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_TAINT = "node(s) had untolerated taint(s)"
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_AFFINITY_CONFLICT = "pod affinity terms conflict"
REASON_NOT_IN_PREFILTER_RESULT = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
REASON_PORTS = "node(s) didn't have free ports for the requested pod ports"
REASON_TOO_MANY_PODS = "Too many pods"
REASON_SPREAD = "node(s) didn't match pod topology spread constraints"
REASON_SPREAD_LABEL = REASON_SPREAD + " (missing required label)"
REASON_POD_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
REASON_NO_VICTIMS = "No preemption victims found for incoming pod"
REASON_PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"


@dataclass(frozen=True)
class Reason:
    """Why one filter rejected one node.

    ``message`` is kube-scheduler's reason string (what FailedScheduling counts, v1.36 wording);
    ``detail`` explains it with numbers and names; ``fix`` says what would change the verdict.
    ``code`` is the plugin status code: ``Unschedulable`` (preemption may help) or
    ``UnschedulableAndUnresolvable`` (it cannot). ``taint`` is set for TaintToleration so that
    older servers' wording (which named the taint) can be reproduced.
    """

    plugin: str
    message: str
    detail: str
    fix: str | None = None
    code: str = UNSCHEDULABLE
    taint: dict[str, str] | None = None

    @property
    def unresolvable(self) -> bool:
        return self.code == UNRESOLVABLE

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "plugin": self.plugin,
            "message": self.message,
            "detail": self.detail,
            "fix": self.fix,
            "code": self.code,
        }
        if self.taint is not None:
            out["taint"] = dict(self.taint)
        return out


@dataclass(frozen=True)
class NodeVerdict:
    """The verdict for one node.

    ``fits`` means every *evaluated* filter passed (see ``Evaluation.not_evaluated``).
    ``reasons`` holds the first failing filter's reasons (one filter can give several, e.g.
    "Insufficient cpu" and "Insufficient memory"); with ``all_reasons=True`` the reasons of every
    later failing filter follow. :attr:`scheduler_reasons` is what kube-scheduler counts.
    """

    name: str
    fits: bool
    reasons: tuple[Reason, ...] = ()
    recorded: int = 0  # leading reasons kube-scheduler records; 0: the first plugin's reasons

    @property
    def plugin(self) -> str | None:
        """The first failing plugin, or None when the node fits."""
        return self.reasons[0].plugin if self.reasons else None

    @property
    def scheduler_reasons(self) -> tuple[Reason, ...]:
        if not self.reasons:
            return ()
        if self.recorded:
            return self.reasons[: self.recorded]
        first = self.reasons[0].plugin
        out = []
        for r in self.reasons:
            if r.plugin != first:
                break
            out.append(r)
        return tuple(out)

    @property
    def code(self) -> str | None:
        """The status code kube-scheduler records for this node (None when it fits)."""
        rs = self.scheduler_reasons
        if not rs:
            return None
        if any(r.code == SCHEDULING_ERROR for r in rs):
            return SCHEDULING_ERROR
        return UNRESOLVABLE if any(r.unresolvable for r in rs) else UNSCHEDULABLE

    def to_dict(self) -> dict[str, Any]:
        reasons = [r.to_dict() for r in self.reasons]
        return {"name": self.name, "fits": self.fits, "code": self.code,
                "counted": len(self.scheduler_reasons), "reasons": reasons}  # fmt: skip


@dataclass(frozen=True)
class NotEvaluated:
    """A filter the engine could not evaluate for this pod (e.g. volumes), and why."""

    plugin: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"plugin": self.plugin, "why": self.why}


@dataclass(frozen=True)
class PreemptionCandidate:
    """A node where evicting ``victims`` (namespace/name, lower priority, most important
    first) lets the pod fit: the minimal set SelectVictimsOnNode keeps, ``pdb_violations`` of
    them beyond what their PodDisruptionBudgets allow. ``victim_priorities`` and
    ``top_start`` (earliest start of the highest-priority victims) rank candidates;
    ``victim_uids`` is what a scheduler deletes."""

    node: str
    victims: tuple[str, ...]
    pdb_violations: int = 0
    victim_priorities: tuple[int, ...] = ()
    top_start: str = ""
    victim_uids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "victims": list(self.victims),
            "pdbViolations": self.pdb_violations,
        }


@dataclass(frozen=True)
class Preemption:
    """What DefaultPreemption's PostFilter would do when no node fits.

    - ``ineligible``: the pod may not preempt (its message, e.g.
      "not eligible due to preemptionPolicy=Never.");
    - otherwise ``candidates`` lists nodes where evicting lower-priority pods helps, and
      ``chosen`` is the one the scheduler nominates, evicting its victims (the event then
      carries no preemption text);
    - otherwise ``node_reasons`` holds the dry-run status per potential node, and every other
      node counts as "Preemption is not helpful for scheduling".
    """

    ineligible: str | None = None
    candidates: tuple[PreemptionCandidate, ...] = ()
    node_reasons: dict[str, tuple[str, ...]] = field(default_factory=dict)
    num_nodes: int = 0
    chosen: PreemptionCandidate | None = None

    @property
    def helps(self) -> bool:
        return self.ineligible is None and bool(self.candidates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ineligible": self.ineligible,
            "helps": self.helps,
            "chosen": self.chosen.to_dict() if self.chosen else None,
            "candidates": [c.to_dict() for c in self.candidates],
            "nodeReasons": {k: list(v) for k, v in self.node_reasons.items()},
        }


@dataclass(frozen=True)
class Evaluation:
    """The result of evaluating one pod against a snapshot.

    ``nodes`` is in snapshot order. ``prefilter`` is set when a PreFilter rejected the pod as a
    whole (then every node carries that same reason and no per-node filter ran).
    ``preemption`` is computed only when no node fits. ``pod_has_claims`` tells the message
    builder that the DynamicResources PostFilter would not say "no new claims to deallocate".
    """

    pod: dict[str, str]
    nodes: tuple[NodeVerdict, ...]
    prefilter: Reason | None = None
    not_evaluated: tuple[NotEvaluated, ...] = ()
    preemption: Preemption | None = None
    pod_has_claims: bool = False
    notes: tuple[str, ...] = ()
    # The DynamicResources PostFilter's write when no node fits (``drapostfilter``): its
    # text replaces "still not schedulable".
    dra_release: Any = None

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    @property
    def feasible(self) -> list[str]:
        return [v.name for v in self.nodes if v.fits]

    @property
    def schedulable(self) -> bool:
        """True when at least one node passes every evaluated filter."""
        return any(v.fits for v in self.nodes)

    @property
    def complete(self) -> bool:
        """True when every filter that applies to this pod was evaluated."""
        return not self.not_evaluated

    def verdict(self, node: str) -> NodeVerdict:
        for v in self.nodes:
            if v.name == node:
                return v
        raise KeyError(node)

    def histogram(self) -> dict[str, int]:
        """kube-scheduler's reason counts (first failing filter per node), v1.36 wording."""
        counts: dict[str, int] = {}
        for v in self.nodes:
            for r in v.scheduler_reasons:
                counts[r.message] = counts.get(r.message, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": dict(self.pod),
            "schedulable": self.schedulable,
            "complete": self.complete,
            "prefilter": self.prefilter.to_dict() if self.prefilter else None,
            "notEvaluated": [n.to_dict() for n in self.not_evaluated],
            "preemption": self.preemption.to_dict() if self.preemption else None,
            "notes": list(self.notes),
            "nodes": [v.to_dict() for v in self.nodes],
        }
