"""``evaluate``: run kube-scheduler's Filter plugins (the rows of ``table.FILTERS``) for one
pod over every node of a snapshot, then DefaultPreemption's dry run when no node fits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .cycle import CycleState, not_evaluated
from .nodefilters import Incoming
from .snapshot import Snapshot
from .verdicts import (
    NODE_AFFINITY,
    REASON_AFFINITY_CONFLICT,
    REASON_NO_VICTIMS,
    REASON_NOT_IN_PREFILTER_RESULT,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Evaluation,
    NodeVerdict,
    Preemption,
    PreemptionCandidate,
    Reason,
)
from .volumes import volume_prefilter

__all__ = ["evaluate", "evaluation_key"]


def evaluate(
    pod: Mapping[str, Any],
    snapshot: Snapshot,
    *,
    all_reasons: bool = False,
    preemption: bool = True,
    comparison_operators: bool = False,
    dynamic_provisioning: bool = True,
) -> Evaluation:
    """Evaluate ``pod`` against every node of ``snapshot`` (see the package docstring).
    ``dynamic_provisioning``: whether the scheduler provisions volumes (False for kschedctl's
    own scheduler: a node that would need it fails VolumeBinding)."""
    inc = Incoming(
        pod,
        comparison_operators=comparison_operators,
        dynamic_provisioning=dynamic_provisioning,
    )
    notes: list[str] = []
    missing, has_claims = not_evaluated(inc, snapshot)
    spec = pod.get("spec") or {}
    pod_ref = {
        "namespace": inc.namespace,
        "name": inc.name,
        "schedulerName": spec.get("schedulerName") or "default-scheduler",
    }
    nodes = snapshot.nodes

    names, conflict = inc.prefilter_node_names()
    rejected: Reason | None = None
    if conflict:
        rejected = Reason(
            NODE_AFFINITY,
            REASON_AFFINITY_CONFLICT,
            "every required nodeSelectorTerm pins metadata.name, and no name is in all of them "
            "at once (the terms' name sets have an empty union)",
            "fix the pod's matchFields metadata.name values",
            UNRESOLVABLE,
        )
    else:
        rejected = volume_prefilter(
            pod, snapshot.pvcs, snapshot.storage_classes, notes, snapshot.pvs
        )

    cycle = CycleState(inc, snapshot, notes)
    if rejected is not None:
        # A PreFilter rejected the pod: no node is filtered. With all_reasons the per-node
        # filters still run, for information only.
        verdicts = tuple(
            NodeVerdict(
                n.name,
                False,
                (rejected, *(cycle.run_with_nominated(n, True)[0] if all_reasons else [])),
                recorded=1,
            )
            for n in nodes
        )
        pre = None
        if preemption:
            never = spec.get("preemptionPolicy") == "Never"
            pre = Preemption(
                ineligible="not eligible due to preemptionPolicy=Never." if never else None,
                num_nodes=len(nodes),
            )
        return Evaluation(
            pod_ref, verdicts, rejected, tuple(missing), pre, has_claims, tuple(notes)
        )
    out: list[NodeVerdict] = []
    for node in nodes:
        if names is not None and node.name not in names:
            absent = Reason(
                NODE_AFFINITY,
                REASON_NOT_IN_PREFILTER_RESULT,
                "not among the nodes named by the pod's required matchFields metadata.name In "
                f"[{', '.join(sorted(names))}]",
                "fix the pod's matchFields metadata.name values",
                UNRESOLVABLE,
            )
            extra = cycle.run_with_nominated(node, True)[0] if all_reasons else []
            out.append(NodeVerdict(node.name, False, (absent, *extra), recorded=1))
            continue
        reasons, recorded = cycle.run_with_nominated(node, all_reasons)
        out.append(NodeVerdict(node.name, not reasons, tuple(reasons), recorded=recorded))

    pre = None
    if preemption and out and not any(v.fits for v in out):
        pre = _preempt(cycle, out)
    return Evaluation(pod_ref, tuple(out), None, tuple(missing), pre, has_claims, tuple(notes))


# Condition fields that vary from pod to pod without changing what the filters read.
_CONDITION_NOISE = ("message", "lastTransitionTime", "lastProbeTime")


def evaluation_key(pod: Mapping[str, Any]) -> str | None:
    """What :func:`evaluate` reads of ``pod``, as a string: two pods with the same key get the
    same verdicts against the same snapshot (only ``Evaluation.pod`` differs), so `why --all`
    evaluates each shape of pod once (replicas of one template share it). None when the
    verdicts depend on the pod's own identity: it is nominated (the nominated pods counted
    exclude it by uid) or has ephemeral volumes (their claims are named after the pod)."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    if status.get("nominatedNodeName"):
        return None
    if any("ephemeral" in v for v in spec.get("volumes") or []):
        return None
    md = pod.get("metadata") or {}
    conditions = [
        {k: v for k, v in c.items() if k not in _CONDITION_NOISE}
        for c in status.get("conditions") or []
    ]
    kept = {k: v for k, v in status.items() if k != "conditions"}
    shape = [md.get("namespace") or "default", md.get("labels") or {}, spec, kept, conditions]
    return json.dumps(shape, sort_keys=True, default=str)


def _terminating_by_preemption(pod: Mapping[str, Any]) -> bool:
    if (pod.get("metadata") or {}).get("deletionTimestamp") is None:
        return False
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "DisruptionTarget":
            return bool(c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler")
    return False


def _preempt(cycle: CycleState, verdicts: list[NodeVerdict]) -> Preemption:
    """DefaultPreemption.PostFilter: eligibility, then a dry run on every node whose failure
    was Unschedulable (not UnschedulableAndUnresolvable)."""
    inc = cycle.inc
    snapshot = cycle.snapshot
    spec = inc.raw.get("spec") or {}
    n = len(verdicts)
    if spec.get("preemptionPolicy") == "Never":
        return Preemption(ineligible="not eligible due to preemptionPolicy=Never.", num_nodes=n)
    by_name = {v.name: v for v in verdicts}
    nnn = (inc.raw.get("status") or {}).get("nominatedNodeName") or ""
    if nnn and nnn in snapshot:
        status = by_name.get(nnn)
        if status is not None and status.code != UNRESOLVABLE:
            for p in snapshot.node(nnn).pods:
                if p.priority < inc.priority and _terminating_by_preemption(p.raw):
                    return Preemption(
                        ineligible="not eligible due to a terminating pod on the nominated node.",
                        num_nodes=n,
                    )
    candidates: list[PreemptionCandidate] = []
    node_reasons: dict[str, tuple[str, ...]] = {}
    potential = [v for v in verdicts if v.code == UNSCHEDULABLE]
    # DryRunPreemption stops once it has enough candidates (DefaultPreemption args:
    # minCandidateNodesPercentage 10, minCandidateNodesAbsolute 100).
    wanted = min(max(len(potential) * 10 // 100, 100), len(potential))
    for v in potential:
        if len(candidates) >= wanted:
            break
        node = snapshot.node(v.name)
        victims = [p for p in node.pods if p.priority < inc.priority]
        if not victims:
            node_reasons[v.name] = (REASON_NO_VICTIMS,)
            continue
        for p in victims:
            cycle.remove(p, node)
        try:
            reasons, _ = cycle.run_with_nominated(node)
            if reasons:
                node_reasons[v.name] = tuple(r.message for r in reasons)
                continue
            # Reprieve as many victims as possible, most important first.
            chosen: list[str] = []
            for p in sorted(victims, key=lambda q: (-q.priority, q.start_time)):
                cycle.add(p, node)
                if cycle.run_with_nominated(node)[0]:
                    cycle.remove(p, node)
                    chosen.append(p.key)
            candidates.append(PreemptionCandidate(v.name, tuple(chosen)))
        finally:
            on_node = {id(p) for p in node.pods}
            for p in victims:
                if id(p) not in on_node:
                    cycle.add(p, node)
    return Preemption(candidates=tuple(candidates), node_reasons=node_reasons, num_nodes=n)
