"""``evaluate``: run kube-scheduler's Filter plugins for one pod over every node of a snapshot,
then DefaultPreemption's dry run when no node fits."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from .interpod import InterPodState, interpod_state
from .nodefilters import (
    Incoming,
    node_affinity,
    node_name,
    node_ports,
    node_resources_fit,
    node_unschedulable,
    taint_toleration,
)
from .snapshot import NodeInfo, PodInfo, Snapshot
from .spread import SpreadState, spread_state
from .verdicts import (
    DYNAMIC_RESOURCES,
    INTER_POD_AFFINITY,
    NODE_AFFINITY,
    NODE_DECLARED_FEATURES,
    NODE_VOLUME_LIMITS,
    REASON_AFFINITY_CONFLICT,
    REASON_NO_VICTIMS,
    REASON_NOT_IN_PREFILTER_RESULT,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    VOLUME_BINDING,
    VOLUME_RESTRICTIONS,
    VOLUME_ZONE,
    Evaluation,
    NodeVerdict,
    NotEvaluated,
    Preemption,
    PreemptionCandidate,
    Reason,
)
from .volumes import volume_prefilter

__all__ = ["evaluate"]

_INLINE_DISKS = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
_MIGRATABLE = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "azureDisk",
    "cinder",
    "vsphereVolume",
    "portworxVolume",
)


class _Cycle:
    """One scheduling cycle's PreFilter state (mutated and restored by nominated pods and the
    preemption dry run, like kube-scheduler's cloned CycleState)."""

    def __init__(
        self,
        inc: Incoming,
        snapshot: Snapshot,
        spread: SpreadState | None,
        ipa: InterPodState | None,
    ) -> None:
        self.inc = inc
        self.snapshot = snapshot
        self.spread = spread
        self.ipa = ipa
        scheduler = (inc.raw.get("spec") or {}).get("schedulerName") or "default-scheduler"
        self.nominated = {
            node: [p for p in pods if p.priority >= inc.priority and p.uid != inc.uid]
            for node, pods in snapshot.nominated_pods(scheduler).items()
        }

    def add(self, pod: PodInfo, node: NodeInfo) -> None:
        node.add(pod)
        if self.spread is not None:
            self.spread.update_with_pod(pod, node, 1)
        if self.ipa is not None:
            self.ipa.update_with_pod(pod, node, 1)

    def remove(self, pod: PodInfo, node: NodeInfo) -> None:
        node.remove(pod)
        if self.spread is not None:
            self.spread.update_with_pod(pod, node, -1)
        if self.ipa is not None:
            self.ipa.update_with_pod(pod, node, -1)

    def run_filters(self, node: NodeInfo, all_reasons: bool) -> tuple[list[Reason], int]:
        """The failing filters' reasons, and how many leading ones kube-scheduler records
        (the first failing plugin's; InterPodAffinity stops at its first failing check)."""
        inc = self.inc
        checks: list[Callable[[], list[Reason]]] = [
            lambda: node_unschedulable(inc, node),
            lambda: node_name(inc, node),
            lambda: taint_toleration(inc, node),
            lambda: node_affinity(inc, node),
        ]
        if inc.ports:
            checks.append(lambda: node_ports(inc, node))
        checks.append(lambda: node_resources_fit(inc, node, self.snapshot.dra_resources))
        spread, ipa = self.spread, self.ipa
        if spread is not None:
            checks.append(lambda: spread.filter(node))
        if ipa is not None:
            checks.append(lambda: ipa.filter(node, all_reasons=all_reasons))
        out: list[Reason] = []
        recorded = 0
        for check in checks:
            reasons = check()
            if reasons:
                if not out:
                    recorded = 1 if reasons[0].plugin == INTER_POD_AFFINITY else len(reasons)
                out.extend(reasons)
                if not all_reasons:
                    break
        return out, recorded

    def run_with_nominated(
        self, node: NodeInfo, all_reasons: bool = False
    ) -> tuple[list[Reason], int]:
        """``RunFilterPluginsWithNominatedPods``: first as if the nominated pods of at least
        this pod's priority were already on the node; if that passes, once more without them."""
        nominated = self.nominated.get(node.name)
        if nominated:
            for p in nominated:
                self.add(p, node)
            try:
                reasons, recorded = self.run_filters(node, all_reasons)
            finally:
                for p in nominated:
                    self.remove(p, node)
            if reasons:
                who = ", ".join(p.key for p in nominated)
                return [
                    replace(r, detail=f"{r.detail} (counting pod(s) nominated to this node: {who})")
                    for r in reasons
                ], recorded
        return self.run_filters(node, all_reasons)


def _not_evaluated(inc: Incoming, snapshot: Snapshot) -> tuple[list[NotEvaluated], bool]:
    spec = inc.raw.get("spec") or {}
    out: list[NotEvaluated] = []
    claims: list[str] = []
    inline: list[str] = []
    migratable = False
    for v in spec.get("volumes") or []:
        if "persistentVolumeClaim" in v:
            claims.append(str((v.get("persistentVolumeClaim") or {}).get("claimName")))
        elif "ephemeral" in v:
            claims.append(f"{inc.name}-{v.get('name')} (ephemeral)")
        for kind in _INLINE_DISKS:
            if kind in v:
                inline.append(f"{v.get('name')} ({kind})")
        migratable = migratable or any(k in v for k in _MIGRATABLE)
    if claims:
        if snapshot.pvcs is None:
            why = (
                f"the pod uses PersistentVolumeClaim(s) {', '.join(claims)}; volume filters "
                "need PV/PVC/StorageClass/CSINode state, which was not given"
            )
        else:
            why = (
                f"the pod uses PersistentVolumeClaim(s) {', '.join(claims)}; the claims were "
                "checked, but the per-node volume filters need PVs and CSINodes"
            )
        for plugin in (VOLUME_RESTRICTIONS, NODE_VOLUME_LIMITS, VOLUME_BINDING, VOLUME_ZONE):
            out.append(NotEvaluated(plugin, why))
    else:
        if inline:
            out.append(
                NotEvaluated(
                    VOLUME_RESTRICTIONS,
                    f"inline disk volume(s) {', '.join(inline)} may conflict with other pods' "
                    "disks",
                )
            )
        if migratable:
            out.append(
                NotEvaluated(
                    NODE_VOLUME_LIMITS,
                    "in-tree disk volumes count against the node's CSI attach limit",
                )
            )
    has_claims = bool(spec.get("resourceClaims"))
    dra_ext = sorted(k for k in inc.request if k in snapshot.dra_resources)
    if has_claims or dra_ext:
        what = "ResourceClaims" if has_claims else f"DRA-backed extended resource(s) {dra_ext}"
        out.append(
            NotEvaluated(
                DYNAMIC_RESOURCES, f"the pod uses {what}; device allocation is not modelled"
            )
        )
        has_claims = True
    if (
        spec.get("hostNetwork")
        and spec.get("hostUsers") is False
        or any(
            (rule.get("action") == "RestartAllContainers")
            for c in spec.get("containers") or []
            for rule in c.get("restartPolicyRules") or []
        )
    ):
        out.append(
            NotEvaluated(
                NODE_DECLARED_FEATURES,
                "the pod needs node-declared features "
                "(status.declaredFeatures), which are not checked",
            )
        )
    return out, has_claims


def evaluate(
    pod: Mapping[str, Any],
    snapshot: Snapshot,
    *,
    all_reasons: bool = False,
    preemption: bool = True,
    comparison_operators: bool = False,
) -> Evaluation:
    """Evaluate ``pod`` against every node of ``snapshot`` (see the package docstring)."""
    inc = Incoming(pod, comparison_operators=comparison_operators)
    notes: list[str] = []
    not_evaluated, has_claims = _not_evaluated(inc, snapshot)
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
        rejected = volume_prefilter(pod, snapshot.pvcs, snapshot.storage_classes, notes)

    cycle = _Cycle(inc, snapshot, spread_state(inc, snapshot), interpod_state(inc, snapshot, notes))
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
            pod_ref, verdicts, rejected, tuple(not_evaluated), pre, has_claims, tuple(notes)
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
    return Evaluation(
        pod_ref, tuple(out), None, tuple(not_evaluated), pre, has_claims, tuple(notes)
    )


def _terminating_by_preemption(pod: Mapping[str, Any]) -> bool:
    if (pod.get("metadata") or {}).get("deletionTimestamp") is None:
        return False
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "DisruptionTarget":
            return bool(c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler")
    return False


def _preempt(cycle: _Cycle, verdicts: list[NodeVerdict]) -> Preemption:
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
