"""Why a pod is Pending (pure): the decision tree of ``kschedctl why`` over plain dicts.

The tree asks the questions in the order that makes the answer actionable: is the pod waiting
for a scheduler at all (phase, ``spec.nodeName``, deletion), is it held back before scheduling
(``spec.schedulingGates``), does something serve its ``schedulerName`` and is that something
healthy (Ready, leading its Lease, not logging ``forbidden``), and only then which filter
rejects each node. The per-node part and the FailedScheduling text come from
:mod:`kschedctl.model.filters`; what each branch concludes, with its fix, comes from
:mod:`kschedctl.observe.findings`; what the scheduler itself reported is read back by
:mod:`kschedctl.observe.failedscheduling`.

``diagnose`` needs nothing but dicts and discovered :class:`~kschedctl.observe.schedulers.Scheduler`
entries, so it is tested on fixtures; the cluster I/O lives in ``kschedctl.ops.why``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME
from kschedctl.model.filters import (
    Evaluation,
    NodeVerdict,
    Preemption,
    Reason,
    evaluate,
    evaluation_key,
    failed_scheduling_message,
)
from kschedctl.model.filters import (
    NodeInfoSnapshot as Snapshot,
)
from kschedctl.model.kubetypes import Pod
from kschedctl.model.scheduling.algorithm import PROVISIONS, Algorithm
from kschedctl.model.scheduling.explain import PluginReport, explain, plugin_report
from kschedctl.model.scheduling.plugins import NO_PLUGINS, PluginFailure, PluginSet
from kschedctl.model.scheduling.policy import FallbackPolicy
from kschedctl.model.scheduling.policyload import pod_policy
from kschedctl.observe.bodies import SchedulerEntry, UnknownScheduler
from kschedctl.observe.crash import CrashReport
from kschedctl.observe.failedscheduling import Reported, reported_findings
from kschedctl.observe.findings import (
    ERROR,
    INFO,
    WARNING,
    Finding,
    container_findings,
    crash_findings,
    evaluation_findings,
    log_findings,
    plugin_findings,
    plugins_not_run,
    scheduler_findings,
)
from kschedctl.observe.nodegroups import VerdictGroup, group_nodes
from kschedctl.observe.plugin_files import UnrunPlugins
from kschedctl.observe.schedulers import Scheduler

# The verdict `why` gives instead of "can be scheduled" when the pod's scheduler runs Python
# plugins `why` did not run: they can only reject nodes, so the built-in "no" stands.
WITHHELD = "passes the built-in filters; plugins not run"


@dataclass
class Diagnosis:
    """The answer for one pod. :meth:`to_dict` is the documented JSON contract."""

    pod: dict[str, str]
    phase: str
    schedulable: bool | None  # None: withheld (WITHHELD), plugins that decide were not run
    scheduler: SchedulerEntry | UnknownScheduler
    findings: list[Finding] = field(default_factory=list)
    summary: str | None = None
    evaluation: Evaluation | None = None
    reported: Reported | None = None
    fallback: dict[str, Any] | None = None  # kschedctl's own scheduler: every policy stage
    plugins: PluginReport | None = None  # kschedctl's own scheduler: its plugins' verdicts
    node_groups: tuple[VerdictGroup, ...] = ()  # the evaluation's nodes grouped by verdict
    # A pod the kubelet rejected (OutOf*): its node's rejections and who collided there
    # (observe.doublebooking.NodeRejections.to_dict).
    double_booking: dict[str, Any] | None = None
    # The Python plugins of the pod's scheduler that `why` did not run (code from the
    # cluster runs only when the caller names it): no node is said to fit.
    unrun_plugins: UnrunPlugins | None = None

    @property
    def blocking(self) -> Finding | None:
        """The first error: what stands between the pod and a node."""
        return next((f for f in self.findings if f.severity == ERROR), None)

    def to_dict(self) -> dict[str, Any]:
        ev = self.evaluation
        unrun = self.unrun_plugins
        nodes = [v.to_dict() for v in ev.nodes] if ev else []
        groups = [g.to_dict() for g in self.node_groups]
        if unrun is not None:  # passing the built-in filters is not fitting: null
            for entry in (*nodes, *groups):
                if entry["fits"]:
                    entry["fits"] = None
        return {
            "pod": dict(self.pod),
            "phase": self.phase,
            "schedulable": self.schedulable,
            "scheduler": dict(self.scheduler),
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary,
            "reported": self.reported.to_dict() if self.reported else None,
            "preemption": ev.preemption.to_dict() if ev and ev.preemption else None,
            "notEvaluated": [n.to_dict() for n in ev.not_evaluated] if ev else [],
            "notes": list(ev.notes) if ev else [],
            "nodes": nodes,
            "nodeGroups": groups,
            "fallback": self.fallback,
            "plugins": self.plugins.to_dict() if self.plugins else None,
            "doubleBooking": self.double_booking,
            "pluginsNotRun": unrun.to_dict() if unrun else None,
        }


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _pod_ref(pod: Mapping[str, Any]) -> dict[str, str]:
    return {
        "namespace": _meta(pod).get("namespace") or "default",
        "name": _meta(pod).get("name") or "",
        "schedulerName": (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME,
    }


def diagnose(
    pod: Pod,
    snapshot: Snapshot | None,
    schedulers: Sequence[Scheduler] | None,
    *,
    server_version: Sequence[int] = (1, 36),
    scheduler_log: Iterable[str] = (),
    reported: Reported | None = None,
    all_reasons: bool = False,
    fallback: FallbackPolicy | None = None,
    crashes: Sequence[CrashReport] = (),
    evaluations: dict[str, tuple[Evaluation, tuple[VerdictGroup, ...]]] | None = None,
    plugins: PluginSet = NO_PLUGINS,
    unrun: UnrunPlugins | None = None,
) -> Diagnosis:
    """Walk the decision tree for ``pod``.

    ``snapshot`` may be None only for pods that are not waiting for a scheduler (they are not
    evaluated). ``schedulers`` is ``discover()``'s result, or None when it could not be read;
    ``scheduler_log`` holds recent lines of the pod's scheduler; ``reported`` what it last
    wrote about the pod. ``fallback`` is the policy of kschedctl's own scheduler when that is
    the pod's scheduler (see :func:`fallback_outcome`). ``crashes``: why the scheduler's own
    pods do not run (:mod:`kschedctl.observe.crash`). ``evaluations``, shared by the calls
    for many pods over one snapshot (same ``server_version`` and ``all_reasons``), keeps each
    shape of pod's verdicts and node groups (:func:`~kschedctl.model.filters.evaluation_key`).
    ``plugins``: the Python plugins of kschedctl's scheduler (with ``fallback``): they run as
    the scheduler runs them, and the summary is the scheduler's FailedScheduling message.
    ``unrun``: plugins the scheduler runs that were not run here: a pod that passes the
    built-in filters (or a fallback step) gets no verdict (``schedulable`` None, WITHHELD),
    since they may reject every node; one rejected by the built-in filters stays rejected.
    """
    ref = _pod_ref(pod)
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    phase = status.get("phase") or "Pending"
    entry = _scheduler_entry(ref["schedulerName"], schedulers)
    sched: SchedulerEntry | UnknownScheduler = (
        entry.to_dict() if entry else {"name": ref["schedulerName"], "served": None}
    )
    diag = Diagnosis(ref, phase, True, sched, reported=reported)

    done = _not_waiting(pod, phase, spec, snapshot)
    if done is not None:
        diag.findings.append(done)
        diag.findings += container_findings(pod)
        diag.schedulable = done.severity != ERROR
        return diag
    if snapshot is None:
        raise ValueError("a pending pod needs a snapshot to be evaluated")

    key = evaluation_key(pod) if evaluations is not None else None
    if evaluations is not None and key is not None and key in evaluations:
        shared, diag.node_groups = evaluations[key]
        ev = replace(shared, pod={**shared.pod, "name": ref["name"]})
    else:
        # kschedctl's own scheduler (known by its policy) does not provision volumes.
        provisions = PROVISIONS if fallback is not None else True
        ev = evaluate(pod, snapshot, all_reasons=all_reasons, dynamic_provisioning=provisions)
        diag.node_groups = group_nodes(ev.nodes, server_version, all_reasons=all_reasons)
        if evaluations is not None and key is not None:
            evaluations[key] = (ev, diag.node_groups)
    if plugins and fallback is not None:
        # The plugins' verdicts join the built-in ones: table, groups and findings show them.
        diag.plugins = plugin_report(pod, snapshot, fallback, plugins)
        ev = with_plugins(ev, diag.plugins)
        diag.node_groups = group_nodes(ev.nodes, server_version, all_reasons=all_reasons)
    diag.evaluation = ev
    would = failed_scheduling_message(ev, server_version)
    fallback_found: list[Finding] = []
    placed = False
    if fallback is not None:
        would, placed, fallback_found, diag.fallback, preemption = fallback_outcome(
            pod, snapshot, fallback, server_version, plugins
        )
        # What kschedctl's scheduler preempts is what its own algorithm computed (its
        # plugins run in the dry run; none when a stage places the pod): shown as such.
        ev = diag.evaluation = replace(ev, preemption=preemption)
        if diag.plugins is not None:
            fallback_found = plugin_findings(diag.plugins) + fallback_found
    outcome = _outcome_text(ev, would)
    if unrun is not None and (ev.schedulable or placed):
        outcome = f"it {WITHHELD}"
    elif placed and not ev.schedulable:
        outcome = "no node fits under its own rules, but a fallback step of its scheduler places it"
    elif plugins and fallback is not None and not placed:
        outcome = f"it would be rejected: {would}"

    blockers: list[Finding] = []
    if _meta(pod).get("deletionTimestamp"):
        blockers.append(
            Finding(
                "pod-terminating",
                ERROR,
                "the pod is being deleted: schedulers skip pods with a deletionTimestamp",
                "wait for the deletion to finish; if it hangs, look at its finalizers",
            )
        )
    gates = [g.get("name", "") for g in spec.get("schedulingGates") or []]
    if gates:
        blockers.append(
            Finding(
                "scheduling-gated",
                ERROR,
                f"waiting for scheduling gates: [{', '.join(gates)}]; no scheduler looks at the "
                f"pod until they are removed (once they are: {outcome})",
                "the controller that added the gates removes them when it is ready; by hand: "
                f"kubectl patch pod {ref['name']} -n {ref['namespace']} --type=json "
                """-p '[{"op": "remove", "path": "/spec/schedulingGates"}]'""",
            )
        )
    about_scheduler = scheduler_findings(ref["schedulerName"], entry, schedulers, outcome)
    crashed = crash_findings(entry, crashes)
    if crashed:  # says why it has no Ready replica: the generic finding adds nothing
        about_scheduler = crashed + [
            f for f in about_scheduler if f.code not in ("scheduler-not-ready", "scheduler-ok")
        ]
    about_scheduler += log_findings(entry, scheduler_log)
    blockers += [f for f in about_scheduler if f.severity == ERROR]
    # Gates and a missing scheduler mean no scheduler tries the pod: it writes nothing.
    silent = any(f.code in ("scheduling-gated", "scheduler-not-served") for f in blockers)

    diag.findings = blockers + [f for f in about_scheduler if f.severity != ERROR]
    diag.findings += evaluation_findings(ev, unrun is not None)
    diag.findings += fallback_found
    if unrun is not None:
        diag.unrun_plugins = unrun
        diag.findings.append(plugins_not_run(unrun, ref, decides=ev.schedulable or placed))
    diag.findings += reported_findings(reported, None if silent else would, ev, unrun is not None)
    nominated = status.get("nominatedNodeName")
    if nominated:
        diag.findings.append(
            Finding(
                "nominated",
                INFO,
                f"preemption already nominated node {nominated}: the pod waits there for its "
                "victims to terminate",
            )
        )
    diag.summary = None if silent else would
    # With plugins, the scheduler's own algorithm decides: passing the built-in filters is
    # not enough.
    fits = placed if plugins and fallback is not None else ev.schedulable or placed
    diag.schedulable = fits and not blockers
    if diag.schedulable and unrun is not None:
        diag.schedulable = None
    return diag


def _scheduler_entry(name: str, schedulers: Sequence[Scheduler] | None) -> Scheduler | None:
    if schedulers is None:
        return None
    return next((s for s in schedulers if s.name == name), None)


def _not_waiting(
    pod: Pod, phase: str, spec: Mapping[str, Any], snapshot: Snapshot | None
) -> Finding | None:
    """A finding when the pod is not waiting for a scheduler at all, else None."""
    if phase in ("Succeeded", "Failed"):
        return Finding(
            "pod-finished", INFO, f"the pod has finished (phase {phase}): nothing to schedule"
        )
    node = spec.get("nodeName")
    if not node:
        if phase != "Pending":
            return Finding("pod-not-pending", INFO, f"the pod is {phase}: nothing to schedule")
        return None
    if phase == "Running":
        return Finding(
            "pod-running", INFO, f"the pod is Running on node {node}: nothing is pending"
        )
    if snapshot is not None and node not in snapshot:
        return Finding(
            "bound-to-missing-node",
            ERROR,
            f"the pod is bound to node {node}, which does not exist: no kubelet will start it",
            "delete the pod so that its controller recreates it without spec.nodeName",
        )
    return Finding(
        "pod-bound",
        INFO,
        f"the pod is already bound to node {node} (phase {phase}): scheduling is done; the "
        "kubelet is starting it (image pulls, volume mounts, admission)",
        f"kubectl describe pod {_meta(pod).get('name')} -n {_meta(pod).get('namespace')} "
        "shows the kubelet's events",
    )


def _outcome_text(ev: Evaluation, would: str | None) -> str:
    if ev.schedulable:
        return f"it fits on {len(ev.feasible)} of {ev.num_nodes} node(s)"
    return f"it would be rejected: {would}"


def with_plugins(ev: Evaluation, report: PluginReport) -> Evaluation:
    """``ev`` with the plugins' verdicts: a node a plugin filter rejects fails with the
    plugin's reason (``plugin`` is the plugin's NAME); a pre_filter rejection is a PreFilter
    rejection of every node."""
    if report.prefilter is not None:
        plugin, reason = report.prefilter
        pre = Reason(
            plugin, reason, f"pre_filter of Python plugin {plugin}", _plugin_fix(report, plugin)
        )
        nodes = tuple(NodeVerdict(v.name, False, (pre,)) for v in ev.nodes)
        return replace(ev, nodes=nodes, prefilter=pre, preemption=None)
    rejected = {
        node: next(v for v in verdicts if v.reason is not None)
        for node, verdicts in report.nodes.items()
        if any(v.reason is not None for v in verdicts)
    }
    if not rejected:
        return ev
    nodes = tuple(
        NodeVerdict(
            v.name,
            False,
            (
                Reason(
                    rejected[v.name].plugin,
                    rejected[v.name].reason or "",
                    f"filter of Python plugin {rejected[v.name].plugin}",
                    _plugin_fix(report, rejected[v.name].plugin),
                ),
            ),
        )
        if v.name in rejected
        else v
        for v in ev.nodes
    )
    return replace(ev, nodes=nodes)


def _plugin_fix(report: PluginReport, plugin: str) -> str:
    source = report.sources.get(plugin)
    where = f" ({source})" if source else ""
    return f"change the pod or the node to satisfy the rule of Python plugin {plugin}{where}"


# -- kschedctl's own scheduler: its fallback policy ----------------------------------------------


def fallback_outcome(
    pod: Pod,
    snapshot: Snapshot,
    policy: FallbackPolicy,
    server_version: Sequence[int] = (1, 36),
    plugins: PluginSet = NO_PLUGINS,
) -> tuple[str | None, bool, list[Finding], dict[str, Any], Preemption | None]:
    """What kschedctl's scheduler does with ``pod`` under its fallback ``policy`` (the pod's
    own annotation wins) and its ``plugins``: (its FailedScheduling text or None, placed at
    all, findings, every stage as JSON, its DefaultPreemption outcome when nothing places
    the pod). Uses the scheduler's own code (:mod:`kschedctl.model.scheduling.algorithm`); a
    plugin that raises gives the scheduler's message for it.
    """
    try:
        return _fallback_outcome(pod, snapshot, policy, server_version, plugins)
    except PluginFailure as err:
        used, _problem = pod_policy(pod, policy)
        data = {"policy": used.source, "strictPreferences": used.strict_preferences,
                "error": None, "stages": []}  # fmt: skip
        return err.message, False, [], data, None


def _fallback_outcome(
    pod: Pod,
    snapshot: Snapshot,
    policy: FallbackPolicy,
    server_version: Sequence[int],
    plugins: PluginSet,
) -> tuple[str | None, bool, list[Finding], dict[str, Any], Preemption | None]:
    used, error, stages = explain(pod, snapshot, policy, plugins=plugins)
    data = {
        "policy": used.source,
        "strictPreferences": used.strict_preferences,
        "error": error,
        "stages": [s.to_dict() for s in stages],
    }
    found: list[Finding] = []
    if error:
        found.append(
            Finding(
                "fallback-policy-invalid",
                WARNING,
                f"the pod's {used.source} is invalid, so no fallback step applies: {error}",
                "fix the annotation (same format as a FallbackPolicy file, apiVersion optional)",
            )
        )
    chosen = next((s for s in stages if s.chosen), None)
    if chosen is not None and chosen.step is None:
        return None, True, found, data, None
    if chosen is not None and chosen.step is not None:
        found.append(
            Finding(
                "fallback-applies",
                WARNING,
                f"no node fits under the pod's own rules; fallback step {chosen.step.name!r} of "
                f"{used.origin} ({chosen.step.describe()}) places it on {chosen.chosen} "
                f"({len(chosen.feasible)} node(s) fit that way)",
                "nothing to do if that is acceptable; otherwise change the pod or the nodes as "
                "the rejected-by-* findings say",
            )
        )
        return None, True, found, data, None
    tried = "; ".join(
        f"{s.step.name}: {(s.message or '').partition(' nodes are available: ')[2] or s.message}"
        for s in stages
        if s.step is not None
    )
    found.append(
        Finding(
            "fallback-none-fits",
            ERROR if used.steps else INFO,
            f"no fallback step of {used.origin} places it either: {tried}"
            if used.steps
            else f"{used.origin} has no fallback steps",
            "add a step that relaxes what rejects the remaining nodes (docs/commands/"
            'own-scheduler.md, "Fallback policy"), or change the pod or the nodes',
        )
    )
    _used, problem = pod_policy(pod, policy)
    message, preemption = Algorithm(
        policy=policy, server_version=tuple(server_version), plugins=plugins
    ).failure(pod, snapshot, used, problem)
    return message, False, found, data, preemption
