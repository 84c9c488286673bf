"""``evaluate``: run kube-scheduler's Filter plugins (the rows of ``table.FILTERS``) for one
pod over every node of a snapshot, then DefaultPreemption's dry run when no node fits."""

from __future__ import annotations

import json

from kschedctl.model.kubetypes import Pod

from .cycle import CycleState, ExtraFilter, not_evaluated
from .dra import dra_prefilter_rejection, pod_dra_state
from .drapostfilter import dra_release
from .nodefilters import Incoming
from .preemption import INELIGIBLE_NEVER, preempt
from .snapshot import NodeInfoSnapshot
from .verdicts import (
    NODE_AFFINITY,
    REASON_AFFINITY_CONFLICT,
    REASON_NOT_IN_PREFILTER_RESULT,
    UNRESOLVABLE,
    Evaluation,
    NodeVerdict,
    Preemption,
    Reason,
)
from .volumes import volume_prefilter

__all__ = ["evaluate", "evaluation_key"]


def evaluate(
    pod: Pod,
    snapshot: NodeInfoSnapshot,
    *,
    all_reasons: bool = False,
    preemption: bool = True,
    comparison_operators: bool = False,
    dynamic_provisioning: bool = True,
    extra: ExtraFilter | None = None,
) -> Evaluation:
    """Evaluate ``pod`` against every node of ``snapshot`` (see the package docstring).
    ``dynamic_provisioning``: whether the scheduler provisions volumes (False for kschedctl's
    own scheduler: a node that would need it fails VolumeBinding). ``extra``: the scheduler's
    own filter (its Python plugins), after the built-in ones on the nodes they pass, in the
    preemption dry run too (kube-scheduler's SelectVictimsOnNode runs every Filter plugin)."""
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
        ) or dra_prefilter_rejection(inc, snapshot)

    cycle = CycleState(inc, snapshot, notes, extra)
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
            pre = Preemption(ineligible=INELIGIBLE_NEVER if never else None, num_nodes=len(nodes))
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
            more = cycle.run_with_nominated(node, True)[0] if all_reasons else []
            out.append(NodeVerdict(node.name, False, (absent, *more), recorded=1))
            continue
        reasons, recorded = cycle.run_with_nominated(node, all_reasons)
        out.append(NodeVerdict(node.name, not reasons, tuple(reasons), recorded=recorded))

    pre = None
    release = None
    if out and not any(v.fits for v in out):
        # the DynamicResources PostFilter runs before DefaultPreemption
        if snapshot.dra is not None and not missing:
            state = pod_dra_state(inc, snapshot.dra)
            uid = str((pod.get("metadata") or {}).get("uid") or "")
            release = dra_release(state, uid, out, {n.name: n for n in nodes})
        if preemption:
            pre = preempt(cycle, out)
    return Evaluation(
        pod_ref, tuple(out), None, tuple(missing), pre, has_claims, tuple(notes), release
    )


# Condition fields that vary from pod to pod without changing what the filters read.
_CONDITION_NOISE = ("message", "lastTransitionTime", "lastProbeTime")


def evaluation_key(pod: Pod) -> str | None:
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
