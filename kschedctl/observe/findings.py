"""The findings of ``kschedctl why`` (pure): each conclusion about a pod with its fix.

:mod:`kschedctl.observe.diagnosis` walks the decision tree and asks this module for what each
branch concludes: whether something serves the pod's ``schedulerName`` and is healthy (claims,
readiness, leadership, crashes, ``forbidden`` in its log), what the filter evaluation says
(which filter rejects which nodes, whether preemption helps), and what the scheduler's Python
plugins decide or would decide. ``code`` is stable: scripts match on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME
from kschedctl.model.filters import Evaluation
from kschedctl.model.scheduling.explain import PluginReport
from kschedctl.observe import identity
from kschedctl.observe.crash import CrashReport, pod_problems
from kschedctl.observe.plugin_files import UnrunPlugins
from kschedctl.observe.schedulers import Scheduler
from kschedctl.printers.formats import json_fields

ERROR, WARNING, INFO = "error", "warning", "info"

# Lines of a kube-scheduler log that explain a scheduler that does not schedule.
# The API server's refusal ("pods is forbidden: User …"), not the word anywhere: a scheduler
# that exits on a bad flag prints its usage, where "… are forbidden." describes a flag.
FORBIDDEN = re.compile(r"\bis forbidden: ")


@dataclass(frozen=True)
class Finding:
    """One conclusion. ``code`` is stable (scripts match on it); ``fix`` is what to do."""

    code: str
    severity: str  # error | warning | info
    message: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return json_fields(self)


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


def scheduler_findings(
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


def _served_names(schedulers: Sequence[Scheduler] | None) -> str:
    served = [s for s in schedulers or () if s.served]
    if not served:
        return "nothing visible"
    return ", ".join(f"{s.name} ({s.form}{', kschedctl' if s.managed else ''})" for s in served)


def container_findings(pod: Mapping[str, Any]) -> list[Finding]:
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


def log_findings(entry: Scheduler | None, lines: Iterable[str]) -> list[Finding]:
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


def evaluation_findings(ev: Evaluation, unrun: bool = False) -> list[Finding]:
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
