"""Why a pod is Pending (pure): the decision tree of ``kschedctl why`` over plain dicts.

The tree asks the questions in the order that makes the answer actionable: is the pod waiting
for a scheduler at all (phase, ``spec.nodeName``, deletion), is it held back before scheduling
(``spec.schedulingGates``), does something serve its ``schedulerName`` and is that something
healthy (Ready, leading its Lease, not logging ``forbidden``), and only then which filter
rejects each node. The per-node part and the FailedScheduling text come from
:mod:`kschedctl.model.filters`; this module turns them into findings with fixes.

``diagnose`` needs nothing but dicts and discovered :class:`~kschedctl.observe.schedulers.Scheduler`
entries, so it is tested on fixtures; the cluster I/O lives in ``kschedctl.ops.why``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME, parse_git_version
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
from kschedctl.model.scheduling.algorithm import (
    PROVISIONS,
    Algorithm,
    PluginReport,
    explain,
    plugin_report,
)
from kschedctl.model.scheduling.plugins import NO_PLUGINS, PluginFailure, PluginSet
from kschedctl.model.scheduling.policy import FallbackPolicy, pod_policy
from kschedctl.observe import identity
from kschedctl.observe.bodies import SchedulerEntry, UnknownScheduler
from kschedctl.observe.crash import CrashReport, pod_problems
from kschedctl.observe.nodegroups import NodeGroup, group_nodes
from kschedctl.observe.plugin_files import UnrunPlugins
from kschedctl.observe.schedulers import Scheduler

ERROR, WARNING, INFO = "error", "warning", "info"

# The verdict `why` gives instead of "can be scheduled" when the pod's scheduler runs Python
# plugins `why` did not run: they can only reject nodes, so the built-in "no" stands.
WITHHELD = "passes the built-in filters; plugins not run"

# Lines of a kube-scheduler log that explain a scheduler that does not schedule.
FORBIDDEN = re.compile(r"\bforbidden\b", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    """One conclusion. ``code`` is stable (scripts match on it); ``fix`` is what to do."""

    code: str
    severity: str  # error | warning | info
    message: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class Reported:
    """What the pod's scheduler last said about it: the latest FailedScheduling event and the
    PodScheduled condition (the same text, the condition untruncated)."""

    event: str | None = None
    event_time: str | None = None
    count: int = 0
    condition: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "eventTime": self.event_time,
            "count": self.count,
            "condition": self.condition,
        }


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
    node_groups: tuple[NodeGroup, ...] = ()  # the evaluation's nodes grouped by verdict
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


def parse_version(git_version: str) -> tuple[int, ...]:
    """``v1.36.3`` (distro suffixes allowed) as (1, 36, 3); the engine's default if unreadable."""
    return parse_git_version(git_version or "") or (1, 36)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _pod_ref(pod: Mapping[str, Any]) -> dict[str, str]:
    return {
        "namespace": _meta(pod).get("namespace") or "default",
        "name": _meta(pod).get("name") or "",
        "schedulerName": (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME,
    }


def diagnose(
    pod: Mapping[str, Any],
    snapshot: Snapshot | None,
    schedulers: Sequence[Scheduler] | None,
    *,
    server_version: Sequence[int] = (1, 36),
    scheduler_log: Iterable[str] = (),
    reported: Reported | None = None,
    all_reasons: bool = False,
    fallback: FallbackPolicy | None = None,
    crashes: Sequence[CrashReport] = (),
    evaluations: dict[str, tuple[Evaluation, tuple[NodeGroup, ...]]] | None = None,
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
        diag.findings += _container_findings(pod)
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
    scheduler_findings = _scheduler_findings(ref["schedulerName"], entry, schedulers, outcome)
    crashed = crash_findings(entry, crashes)
    if crashed:  # says why it has no Ready replica: the generic finding adds nothing
        scheduler_findings = crashed + [
            f for f in scheduler_findings if f.code not in ("scheduler-not-ready", "scheduler-ok")
        ]
    scheduler_findings += _log_findings(entry, scheduler_log)
    blockers += [f for f in scheduler_findings if f.severity == ERROR]
    # Gates and a missing scheduler mean no scheduler tries the pod: it writes nothing.
    silent = any(f.code in ("scheduling-gated", "scheduler-not-served") for f in blockers)

    diag.findings = blockers + [f for f in scheduler_findings if f.severity != ERROR]
    diag.findings += _evaluation_findings(ev, unrun is not None)
    diag.findings += fallback_found
    if unrun is not None:
        diag.unrun_plugins = unrun
        diag.findings.append(plugins_not_run(unrun, ref, decides=ev.schedulable or placed))
    diag.findings += _reported_findings(reported, None if silent else would, ev, unrun is not None)
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


def plugins_not_run(unrun: UnrunPlugins, pod: Mapping[str, str], decides: bool) -> Finding:
    """The plugins `why` did not run; ``decides``: the built-in filters pass the pod, so they
    decide (else it is rejected without them: they can only reject nodes)."""
    effect = (
        "they may reject every node that passes the built-in filters, so `why` cannot say "
        "that it fits"
        if decides
        else "the verdict stands without them (a plugin can only reject a node)"
    )
    if unrun.run_with:
        fix = (
            f"only if you trust that code (it runs in your process, with your credentials): "
            f"kschedctl why {pod['name']} -n {pod['namespace']} {unrun.run_with}"
        )
    else:
        fix = f"{unrun.note}; " if unrun.note else ""
        fix += "pass each of its plugin files with --plugin FILE, in the scheduler's order"
    return Finding(
        "plugins-not-run",
        WARNING if decides else INFO,
        f"scheduler {unrun.scheduler} runs the Python plugins {unrun.describe()}, which `why` "
        f"did not run (code read from the cluster is run only when you name it): {effect}",
        fix,
    )


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


def plugin_findings(report: PluginReport) -> list[Finding]:
    """A plugin that fails on the pod, or which nodes pass every plugin filter (the nodes
    they reject are rejected-by-<plugin> findings of the evaluation)."""
    if report.error is not None:
        return [
            Finding(
                "plugin-error",
                ERROR,
                f"a plugin of its scheduler fails on this pod: {report.error}",
                "fix the plugin (the scheduler logs the same error and counts it in "
                "kschedctl_scheduler_plugin_errors_total); other pods are scheduled meanwhile",
            )
        ]
    if report.prefilter is not None:
        return []
    fitting = report.fitting()
    shown = ", ".join(fitting[:5]) + ("…" if len(fitting) > 5 else "")
    return [
        Finding(
            "plugins",
            INFO,
            f"plugins {', '.join(report.names)}: {len(fitting)} of the {len(report.nodes)} "
            f"node(s) passing the built-in filters pass every plugin filter"
            + (f": {shown}" if fitting else ""),
        )
    ]


def _scheduler_entry(name: str, schedulers: Sequence[Scheduler] | None) -> Scheduler | None:
    if schedulers is None:
        return None
    return next((s for s in schedulers if s.name == name), None)


def _not_waiting(
    pod: Mapping[str, Any], phase: str, spec: Mapping[str, Any], snapshot: Snapshot | None
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


def _served_names(schedulers: Sequence[Scheduler] | None) -> str:
    served = [s for s in schedulers or () if s.served]
    if not served:
        return "nothing visible"
    return ", ".join(f"{s.name} ({s.form}{', kschedctl' if s.managed else ''})" for s in served)


def _scheduler_findings(
    name: str, entry: Scheduler | None, schedulers: Sequence[Scheduler] | None, outcome: str
) -> list[Finding]:
    if schedulers is None:
        return [
            Finding(
                "scheduler-unknown",
                WARNING,
                f"could not look for scheduler {name!r} (no permission to list pods, "
                "deployments or leases); only the filters were evaluated",
            )
        ]
    claims = _claim_findings(name, entry)
    if entry is not None and entry.candidates:
        return claims
    return claims + _served_findings(name, entry, schedulers, outcome)


def _claim_findings(name: str, entry: Scheduler | None) -> list[Finding]:
    """Schedulers claiming the name that are not known to be it (observe.identity): why
    looks at none of them as the pod's scheduler."""
    if entry is None:
        return []
    found = []
    if entry.candidates:
        found.append(
            Finding(
                "scheduler-conflict",
                WARNING,
                f"{len(entry.candidates)} schedulers claim schedulerName {name!r}: "
                f"{identity.claims(entry)}; none is known to be it, so none was checked",
                "remove the ones that should not serve it (`kschedctl list` shows them)",
            )
        )
    for impostor in entry.impostors:
        found.append(
            Finding(
                "scheduler-impostor",
                WARNING,
                f"{impostor.instance or impostor.form} in namespace {impostor.namespace or '-'} "
                f"claims schedulerName {name!r} but is not it ({impostor.reason}); if it runs, "
                "it may bind this pod too",
                f"delete it: kubectl delete -n {impostor.namespace or '-'} "
                f"{impostor.instance or impostor.form}",
            )
        )
    return found


def _served_findings(
    name: str, entry: Scheduler | None, schedulers: Sequence[Scheduler], outcome: str
) -> list[Finding]:
    if entry is None or not entry.served:
        running = _served_names(schedulers)
        if name == DEFAULT_SCHEDULER_NAME:
            # Managed control planes often show neither the scheduler's pod nor its Lease.
            return [
                Finding(
                    "scheduler-not-visible",
                    WARNING,
                    "no kube-scheduler serving default-scheduler is visible (no pod, no Lease "
                    f"kube-system/kube-scheduler); running: {running}",
                    "on a managed control plane this is normal; otherwise start kube-scheduler",
                )
            ]
        return [
            Finding(
                "scheduler-not-served",
                ERROR,
                f"no scheduler serves schedulerName {name!r}: the pod waits with no events at "
                f"all. Running: {running}. Once {name} is served, {outcome}",
                f"deploy it (kschedctl create {name} && kschedctl deploy {name} "
                "--as-deployment), or recreate the pod with a served spec.schedulerName "
                "(it cannot be changed on an existing pod)",
            )
        ]
    where = entry.instance or entry.form
    found: list[Finding] = []
    if entry.desired is not None and (entry.ready or 0) < 1:
        found.append(
            Finding(
                "scheduler-not-ready",
                ERROR,
                f"scheduler {name} ({where}) has {entry.ready or 0}/{entry.desired} Ready "
                "replica(s)",
                f"kschedctl status {name}; kschedctl logs {name}",
            )
        )
    if entry.lease is not None and not entry.lease.held:
        holder = entry.lease.holder or "nobody"
        renewed = (
            f", last renewed {entry.lease.renew_age:.0f}s ago"
            if entry.lease.renew_age is not None
            else ""
        )
        found.append(
            Finding(
                "scheduler-no-leader",
                ERROR,
                f"scheduler {name} has no leader: Lease {entry.lease.ref} is not held "
                f"(holder {holder}{renewed}), so no replica schedules",
                f"kschedctl logs {name} shows whether the replicas can reach and update the "
                "Lease (look for 'forbidden' and lease lines)",
            )
        )
    if entry.managed and not found:
        found.append(
            Finding(
                "scheduler-ok",
                INFO,
                f"scheduler {name} ({where}, deployed by kschedctl) is Ready"
                + (f" and led by {entry.leader}" if entry.leader else ""),
            )
        )
    return found


def _container_findings(pod: Mapping[str, Any]) -> list[Finding]:
    """A bound pod whose containers do not run: scheduling is done, the kubelet says why."""
    return [
        Finding(
            "container-not-running",
            WARNING,
            f"container {p.container} is {p.headline}"
            + (f": {p.message[:400]}" if p.message else ""),
            p.hint,
        )
        for p in pod_problems(pod)
    ]


def crash_findings(entry: Scheduler | None, crashes: Sequence[CrashReport]) -> list[Finding]:
    """One finding per scheduler container that does not run: the kubelet's reason, the last
    termination, the log line that says why, and the fix. An error while no replica is Ready;
    a warning when another replica serves."""
    if entry is None or not entry.served:
        return []
    severity = WARNING if entry.healthy else ERROR
    found = []
    for crash in crashes:
        problem = crash.problem
        state = (
            "is not running" if severity == ERROR else "serves, but one of its pods does not run"
        )
        said = f"; its log said: {crash.key_line[:400]}" if crash.key_line else ""
        if not said and problem.message:
            said = f"; the kubelet says: {problem.message[:400]}"
        found.append(
            Finding(
                "scheduler-not-running",
                severity,
                f"scheduler {entry.name} {state}: pod {problem.namespace}/{problem.pod} "
                f"container {problem.container} is {problem.headline}{said}",
                problem.hint,
            )
        )
    return found


def _log_findings(entry: Scheduler | None, lines: Iterable[str]) -> list[Finding]:
    if entry is None:
        return []
    forbidden = [line.strip() for line in lines if FORBIDDEN.search(line)]
    if not forbidden:
        return []
    # A Ready scheduler that leads may have logged a transient refusal (RBAC bootstrapping
    # while it started) or may fail only some requests: worth a warning, not a verdict.
    severity = ERROR if not entry.healthy else WARNING
    state = "" if severity == ERROR else "is Ready and leading but "
    return [
        Finding(
            "scheduler-forbidden",
            severity,
            f"scheduler {entry.name} {state}logs 'forbidden' ({len(forbidden)} recent line(s)); "
            f"the latest: {forbidden[-1][:400]}",
            f"grant the missing permission to its identity; `kschedctl status {entry.name}` "
            f"checks its RBAC, `kschedctl deploy {entry.name}` restores what kschedctl "
            "rendered",
        )
    ]


def _evaluation_findings(ev: Evaluation, unrun: bool = False) -> list[Finding]:
    found: list[Finding] = []
    if ev.not_evaluated:
        plugins = ", ".join(sorted({n.plugin for n in ev.not_evaluated}))
        found.append(
            Finding(
                "not-evaluated",
                WARNING,
                f"filters not evaluated: {plugins} ({ev.not_evaluated[0].why}); a node shown as "
                "fitting may still be rejected by them",
            )
        )
    if ev.prefilter is not None:
        found.append(
            Finding(
                "prefilter-rejected",
                ERROR,
                f"{ev.prefilter.plugin} rejects the pod before any node is tried: "
                f"{ev.prefilter.message} ({ev.prefilter.detail})",
                ev.prefilter.fix,
            )
        )
    elif ev.schedulable:
        names = ev.feasible
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        if unrun:  # not "fits": the scheduler's plugins may reject these nodes
            found.append(
                Finding(
                    "builtin-filters-pass",
                    INFO,
                    f"passes the built-in filters on {len(names)} of {ev.num_nodes} node(s): "
                    f"{shown}; plugins not run",
                )
            )
        else:
            found.append(
                Finding("fits", INFO, f"fits on {len(names)} of {ev.num_nodes} node(s): {shown}")
            )
    elif ev.num_nodes == 0:
        found.append(
            Finding("no-nodes", ERROR, "the cluster has no nodes", "add nodes to the cluster")
        )
    else:
        found.append(
            Finding(
                "no-node-fits",
                ERROR,
                f"none of the {ev.num_nodes} node(s) passes the filters",
                "change the pod or the nodes as the rejected-by-* findings say",
            )
        )
        found += rejection_findings(ev)
    if ev.preemption is not None and ev.prefilter is None and not ev.schedulable:
        found.append(_preemption_finding(ev))
    return found


def rejection_findings(ev: Evaluation) -> list[Finding]:
    """One finding per rejecting filter: its reasons, the nodes, their details and fixes."""
    groups: dict[str, list[tuple[str, str, str, str | None]]] = {}
    for v in ev.nodes:
        for r in v.reasons:
            groups.setdefault(r.plugin, []).append((v.name, r.message, r.detail, r.fix))
    found = []
    for plugin, hits in groups.items():
        nodes = list(dict.fromkeys(h[0] for h in hits))
        shown = ", ".join(nodes[:5]) + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
        messages = " / ".join(dict.fromkeys(h[1] for h in hits))
        details = list(dict.fromkeys(f"{n}: {d}" for n, _, d, _ in hits))
        fixes = list(dict.fromkeys(f for *_, f in hits if f))
        found.append(
            Finding(
                f"rejected-by-{plugin}",
                ERROR,
                f"{messages} ({len(nodes)} node(s): {shown}) — "
                + "; ".join(details[:3])
                + ("; …" if len(details) > 3 else ""),
                "; ".join(fixes[:3]) + ("; …" if len(fixes) > 3 else "") if fixes else None,
            )
        )
    return found


def _preemption_finding(ev: Evaluation) -> Finding:
    p = ev.preemption
    assert p is not None
    if p.ineligible:
        return Finding("preemption-not-allowed", INFO, f"preemption cannot help: {p.ineligible}")
    if p.helps:
        chosen = p.chosen or p.candidates[0]
        victims = ", ".join(chosen.victims) or "no pod"
        budgets = (
            f", violating PodDisruptionBudgets for {chosen.pdb_violations} of them"
            if chosen.pdb_violations
            else ""
        )
        return Finding(
            "preemption-possible",
            INFO,
            f"preemption can help on {len(p.candidates)} node(s): the scheduler picks "
            f"{chosen.node}, evicting {victims} (lower priority{budgets}), and nominates it "
            "there",
        )
    if not p.node_reasons:
        return Finding(
            "preemption-not-helpful",
            INFO,
            "preemption cannot help: every node rejects the pod for a reason that evicting "
            "pods does not change (taints, cordon, labels, node size)",
        )
    return Finding(
        "preemption-not-helpful",
        INFO,
        "preemption cannot help: evicting the lower-priority pods (if any) of "
        f"{len(p.node_reasons)} node(s) would not make room",
        "give the pod a higher priorityClassName, or change what the filters reject",
    )


def _reported_findings(
    reported: Reported | None, would: str | None, ev: Evaluation, unrun: bool = False
) -> list[Finding]:
    if reported is None or not reported.event or would is None:
        # With plugins not run, the event may be a plugin's reason: "now fits" is not known.
        if reported is not None and reported.event and ev.schedulable and not unrun:
            return [
                Finding(
                    "reported-stale",
                    INFO,
                    f"the scheduler's last FailedScheduling ({reported.event_time}) said "
                    f"{reported.event!r}; the cluster has changed since and the pod now fits: "
                    "the next retry (on a cluster event, or within 5 minutes) should place it",
                )
            ]
        return []
    if reported.event == would:
        return [
            Finding(
                "reported-matches",
                INFO,
                "the scheduler's latest FailedScheduling event says exactly this",
            )
        ]
    return [
        Finding(
            "reported-differs",
            WARNING,
            f"the scheduler's latest FailedScheduling ({reported.event_time}) says "
            f"{reported.event!r}, which differs from this evaluation: the event may predate a "
            "change, or the scheduler sees other state (assumed or nominated pods, volumes, a "
            "non-default profile)",
        )
    ]


# -- reading kube-scheduler's message back ------------------------------------------------------

_HEAD = re.compile(r"^0/(\d+) nodes are available: ")


def parse_failed_scheduling(message: str) -> tuple[int, dict[str, int], str]:
    """(N, {reason: count}, PostFilter text) from a FailedScheduling message.

    Splits on the first ``". "`` after the histogram; reason strings contain no ``". "``.
    A PreFilter rejection comes back as a single reason counted N times.
    """
    match = _HEAD.match(message)
    if not match:
        raise ValueError(f"not a FailedScheduling message: {message!r}")
    total = int(match.group(1))
    rest = message[match.end() :]
    body, sep, post = rest.partition(". ")
    if not sep:
        body = rest.removesuffix(".")
    counts: dict[str, int] = {}
    for part in body.split(", "):
        number, _, reason = part.partition(" ")
        if number.isdigit():
            counts[reason] = counts.get(reason, 0) + int(number)
        else:
            counts[part] = total  # a PreFilter message applies to every node
    return total, counts, post


# -- kschedctl's own scheduler: its fallback policy ----------------------------------------------


def fallback_outcome(
    pod: Mapping[str, Any],
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
    pod: Mapping[str, Any],
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
            "add a step that relaxes what rejects the remaining nodes (README, \"kschedctl's "
            'own scheduler"), or change the pod or the nodes',
        )
    )
    _used, problem = pod_policy(pod, policy)
    message, preemption = Algorithm(
        policy=policy, server_version=tuple(server_version), plugins=plugins
    ).failure(pod, snapshot, used, problem)
    return message, False, found, data, preemption
