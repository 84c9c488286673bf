"""`kschedctl simulate`: each candidate scheduler on a copy of a cluster, side by side.

One lab is built from the snapshot (:mod:`kschedctl.lab.seed`): its nodes on kwok, its bound
pods pinned to them, its PriorityClasses, PodDisruptionBudgets, storage and DRA objects. The
lab's own default kube-scheduler is stopped, so the candidate is the only scheduler. For each
candidate, in turn: the lab is reset to the seeded state (the first candidate gets it fresh),
the candidate runs as its service form runs in the lab (``deploy --as-service``: the rendered
host config and unit, leader election off, the lab's system:kube-scheduler kubeconfig;
kschedctl's own scheduler as ``kschedctl scheduler run`` with its strategy and policy), the
pending pods are submitted with the candidate's scheduler name, and the run ends when every
pod is bound or reported unschedulable and nothing moved for ``settle`` seconds. The candidate
is stopped by its pid.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kschedctl.base import limits
from kschedctl.base.errors import SpecError, UsageError, printable, quote
from kschedctl.clustersnapshot import (
    ClusterSnapshot,
    claim_template_objects,
    dra_objects,
    load_snapshot,
    pod_object,
    storage_objects,
)
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import seed
from kschedctl.lab.cluster import Lab
from kschedctl.lab.etcdload import EtcdLoader
from kschedctl.lab.nodes import kwok_node
from kschedctl.observe.simulation import (
    CandidateResult,
    SimulationReport,
    node_groups,
)
from kschedctl.observe.workload import lab_pod, load_workload
from kschedctl.ops.simulate_candidate import (
    DEFAULT_SETTLE,
    DEFAULT_TIMEOUT,
    Candidate,
    Progress,
    load_candidate,
    pod_key,
    run_candidate,
)

DEFAULT_PODS = "110"  # the kubelet's --max-pods default, for a node that gives no pods count


# -- the whole simulation -------------------------------------------------------------------------


@dataclass
class Plan:
    """What to simulate: the lab's seed, the pods to submit, and where they came from."""

    snapshot: str
    what: seed.Seed
    pending: list[dict[str, Any]]  # the snapshot's pending pods
    workload: list[dict[str, Any]]  # pods expanded from --workload


def plan_from_snapshot(
    snap: ClusterSnapshot, source: str, workload: Sequence[dict[str, Any]] = ()
) -> Plan:
    """The lab's seed and the pods to submit. Only bound, non-terminal pods are pinned; a pod
    naming a PriorityClass the snapshot lacks is refused (the API server would refuse it)."""
    nodes = []
    for n in snap.nodes:
        allocatable = dict(n.allocatable or n.capacity)
        capacity = dict(n.capacity or n.allocatable)
        for resources in (capacity, allocatable):
            resources.setdefault("pods", DEFAULT_PODS)  # what a kubelet allows by default
        nodes.append(
            kwok_node(
                n.name,
                labels=n.labels,
                taints=n.taints,
                capacity=capacity,
                allocatable=allocatable,
                unschedulable=n.unschedulable,
            )
        )
    pinned = [lab_pod(pod_object(p), None) for p in snap.pods
              if p.phase not in ("Succeeded", "Failed")]  # fmt: skip
    pending = [pod_object(p) for p in snap.pending_pods]
    classes = {pc.name for pc in snap.priority_classes} | set(seed.BUILTIN_PRIORITY_CLASSES)
    for pod in [*pinned, *pending, *workload]:
        wanted = (pod.get("spec") or {}).get("priorityClassName")
        if wanted and wanted not in classes:
            raise SpecError(
                "spec.priorityClasses",
                f"pod {pod_key(pod)} names PriorityClass {quote(wanted)}, which the snapshot "
                "does not hold",
                hint="take the snapshot again (it lists every PriorityClass), or add it",
                source=source,
            )
    labels = {ns.name: ns.labels for ns in snap.namespaces}
    names = sorted(
        set(labels) | {p["metadata"]["namespace"] for p in [*pinned, *pending, *workload]}
    )
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": name, **({"labels": labels[name]} if labels.get(name) else {})}}
        for name in names
    ]  # fmt: skip
    priority_classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": pc.name}, "value": pc.value, "globalDefault": pc.global_default,
         **({"preemptionPolicy": pc.preemption_policy} if pc.preemption_policy else {})}
        for pc in snap.priority_classes
    ]  # fmt: skip
    budgets = []
    for pdb in snap.pod_disruption_budgets:
        spec: dict[str, Any] = {"selector": pdb.selector or {}}
        if pdb.min_available is not None:
            spec["minAvailable"] = pdb.min_available
        if pdb.max_unavailable is not None:
            spec["maxUnavailable"] = pdb.max_unavailable
        budgets.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": pdb.name, "namespace": pdb.namespace},
                "spec": spec,
            }
        )
    what = seed.Seed(
        nodes,
        namespaces,
        priority_classes,
        budgets,
        pinned,
        resource_claim_templates=claim_template_objects(snap),
        storage=[o for kind in storage_objects(snap).values() for o in kind or ()],
        **dra_objects(snap),
    )
    return Plan(source, what, pending, list(workload))


def load_plan(
    snapshot: str, schedulers: Sequence[str], workload: str | None, *, pending: bool = True
) -> tuple[Plan, list[Candidate]]:
    """Everything read and checked before a lab starts: the snapshot, the workload, the specs
    (exit 3 or 5 on the first that is wrong)."""
    snap = load_snapshot(snapshot)  # at most limits.MAX_PODS pods
    held = len(snap.pods) + (len(snap.pending_pods) if pending else 0)
    budget = limits.pod_budget(held, f"the snapshot's {held:,} pods")
    extra = load_workload(workload, budget=budget) if workload else []
    candidates = [load_candidate(source) for source in schedulers]
    plan = plan_from_snapshot(snap, snapshot, extra)
    if not pending:
        plan.pending = []
    if not plan.pending and not plan.workload:
        raise UsageError(
            f"nothing to schedule: {printable(snapshot)} has no pending pods"
            + (" (--no-pending)" if not pending else "")
            + " and no --workload was given",
            hint="give the pods to place with --workload FILE",
        )
    return plan, candidates


def simulate(
    plan: Plan,
    candidates: Sequence[Candidate],
    *,
    lab_dir: Path | None = None,
    settle: float = DEFAULT_SETTLE,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Progress = lambda _m: None,
) -> SimulationReport:
    """Build the lab once, run each candidate on it (reset between them), tear it down."""
    submitted = plan.pending + plan.workload
    names = {pod_key(p) for p in plan.what.pinned}
    for pod in submitted:
        if pod_key(pod) in names:
            raise SpecError(
                "",
                f"pod {pod_key(pod)} is both bound in the snapshot and submitted",
                hint="rename the workload's pod",
            )
    with ExitStack() as stack:
        base = lab_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ksim-")))
        lab = Lab(base / "lab")
        progress(f"starting a lab in {lab.dir}")
        lab.up([], progress=progress, timeout=max(120.0, timeout))
        stack.callback(lab.down)
        # The lab's kube-scheduler serves default-scheduler: the candidate must be alone.
        lab.retire("kube-scheduler")
        with Cluster.connect(str(lab.kubeconfig)) as cluster:
            loader = EtcdLoader(lab)
            seed.seed(cluster, loader, plan.what, timeout=max(120.0, timeout), progress=progress)
            results = []
            for i, candidate in enumerate(candidates):
                if i:
                    seed.reset(cluster, loader, plan.what, timeout=timeout, progress=progress)
                results.append(
                    run_candidate(
                        lab,
                        cluster,
                        candidate,
                        submitted,
                        settle=settle,
                        timeout=timeout,
                        progress=progress,
                    )
                )
            groups = node_groups(cluster.list("/api/v1/nodes"))
    _distinct_names(results)
    return SimulationReport(
        snapshot=plan.snapshot,
        nodes=len(plan.what.nodes),
        pinned_pods=len(plan.what.pinned),
        pending_pods=len(plan.pending),
        workload_pods=len(plan.workload),
        groups=groups,
        candidates=results,
        lab="fresh for the first candidate, reset to the seeded state for the others"
        if len(results) > 1
        else "fresh",
    )


def _distinct_names(results: Sequence[CandidateResult]) -> None:
    """Two versions of one scheduler (old/ and new/ of the same spec) share a name: the report
    tells them apart by their --scheduler argument."""
    seen = Counter(r.name for r in results)
    for r in results:
        if seen[r.name] > 1:
            r.name = f"{r.name} ({r.source})"
