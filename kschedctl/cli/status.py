"""`kschedctl status NAME`: one scheduler in depth, with what stops it (crashes, double
booking) and whether it keeps up (its own metrics)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.base.errors import UsageError
from kschedctl.cli import output, registers
from kschedctl.cli.common import SchedulerName, age, connect
from kschedctl.cli.inventory import health_text
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.options import (
    DEFAULT_PRINTING,
    TABLE_FORMATS,
    AllNamespaces,
    Namespace,
    Printing,
    namespace_scope,
    output_flags,
)
from kschedctl.model.config.shapes import dns_subdomain_problem
from kschedctl.observe import identity
from kschedctl.observe.crash import crash_lines

if TYPE_CHECKING:
    from kschedctl.observe.schedulers import Scheduler
    from kschedctl.ops.status import SchedulerStatus
    from kschedctl.ops.status_metrics import MetricsReport


@kube_flags
@output_flags(TABLE_FORMATS)
def status(
    name: SchedulerName,
    kube: Kube = DEFAULT_KUBE,
    printing: Printing = DEFAULT_PRINTING,
    metrics: Annotated[
        bool,
        typer.Option(
            "--metrics/--no-metrics",
            help="Read each replica's /metrics through pods/portforward, sending each pod a "
            "10-minute token minted for the purpose (never your credentials). Off by default.",
        ),
    ] = False,
    metrics_reader: Annotated[
        str | None,
        typer.Option(
            "--metrics-reader",
            metavar="SERVICEACCOUNT",
            help="The ServiceAccount of the scheduler's namespace (allowed only get on "
            "/metrics) to mint the tokens for (default: NAME-metrics-reader, deployed with "
            "kschedctl's pod and deployment forms). Implies --metrics.",
        ),
    ] = None,
    namespace: Namespace = None,
    all_namespaces: AllNamespaces = False,
) -> None:
    """One scheduler in depth: objects, leader, RBAC, version, events, Pending pods, warnings,
    and each replica's own metrics.

    The RBAC check is a SubjectAccessReview of the identity it runs as for every permission a
    scheduler needs; warnings cover the multi-scheduler traps (double-booking, shared Lease).
    With --metrics, each replica's /metrics (scheduling attempts by result, pending pods per
    queue, attempt latency p50/p99) is read through pods/portforward: your credentials open the
    port-forward at the API server and go no further; a kube-scheduler pod is sent a 10-minute
    token of a ServiceAccount allowed only `get` on /metrics (kschedctl's own
    scheduler is sent nothing). You need `get` and `create` on pods/portforward and `create` on
    serviceaccounts/token in the scheduler's namespace.
    """
    fmt = printing.format()
    if metrics_reader is not None:
        problem = dns_subdomain_problem(metrics_reader)
        if problem:
            raise UsageError(
                f"--metrics-reader: a ServiceAccount name {problem}",
                hint="name a ServiceAccount of the scheduler's namespace",
            )
    # the use case loads the cluster layers: not at start-up
    from kschedctl.ops.status import scheduler_status

    with connect(kube) as cluster:
        report = scheduler_status(
            cluster, name, metrics=metrics or metrics_reader is not None,
            metrics_reader=metrics_reader, namespace=namespace_scope(namespace, all_namespaces),
        )  # fmt: skip
    if not fmt.is_table:
        # -o name: the scheduler, as `list -o name` names it
        output.emit(
            report.to_dict(),
            fmt,
            no_headers=printing.no_headers,
            names=[f"scheduler/{report.name}"],
        )
        return
    _print_status(report)


_IDENTITIES = {
    identity.CONTROL_PLANE: "a static pod of a control-plane node",
    identity.SYSTEM: "runs in kube-system",
    identity.LEASE: "holds the Lease kube-system/kube-scheduler",
    identity.KSCHEDCTL: "where kschedctl deployed it (its ClusterRoleBinding)",
}


def identity_text(s: Scheduler) -> str:
    """status's Identity: how the scheduler is known to be the one of its name."""
    if s.identity in _IDENTITIES:
        return _IDENTITIES[s.identity]
    return f"UNVERIFIED: {s.reason}" if s.reason else "-"


def _print_status(report: SchedulerStatus) -> None:
    lines = [f"Name:       {report.name}"]
    if report.scheduler:
        s = report.scheduler.to_dict()  # the shape `-o json` shows, read as the table shows it
        ready = "-" if s["desired"] is None else f"{s['ready'] or 0}/{s['desired']}"
        lines += [
            f"Form:       {s['form']}{' (managed by kschedctl)' if s['managed'] else ''}",
            f"Namespace:  {s['namespace'] or '-'}",
            f"Identity:   {identity_text(report.scheduler)}",
            f"Health:     {health_text(report.scheduler)}",
            f"Ready:      {ready}",
        ]
        lease = s["lease"]
        if lease:
            lines.append(
                f"Lease:      {lease['namespace']}/{lease['name']} held by {lease['holder'] or '-'}"
                f", renewed {age(lease['renewAgeSeconds'])} ago"
            )
        else:
            lines.append("Lease:      - (leader election off, or not visible)")
    version = report.version
    lines.append(
        f"Version:    image {version['image'] or '-'} · server {version['server']} · {version['skew']}"
    )
    output.echo("\n".join(lines))
    _print_revision(report)
    _print_problems(report)
    if report.objects:
        output.echo("\nObjects:")
        output.print_table(("object", "state"), [(o["ref"], o["state"]) for o in report.objects])
    access = report.access
    rbac = [_rbac_line(report)]
    if access:
        missing = [c["access"] for c in access["checks"] if not c["allowed"]]
        verdict = "all allowed" if not missing else f"MISSING: {'; '.join(missing)}"
        rbac.insert(0, f"RBAC ({access['subject']}): {len(access['checks'])} checks, {verdict}")
    output.echo("\n" + "\n".join(rbac))
    if routing := report.routing:
        shown = ", ".join(routing["namespaces"][:10]) or "none now"
        more = len(routing["namespaces"]) - 10
        output.echo(
            f"\nRouting: {routing['rule']}: namespaces {shown}"
            + (f" (+{more} more)" if more > 0 else "")
            + f"; {routing['routedPods']} live pod(s) routed"
        )
    output.echo(f"\nPending pods: {len(report.pending_pods)}")
    for pod in report.pending_pods[:10]:
        output.echo(f"  {pod}")
    if report.events:
        output.echo("\nRecent events:")
        output.print_table(
            ("last seen", "type", "reason", "object", "message"),
            [(e["time"], e["type"], e["reason"], e["object"], e["message"]) for e in report.events],
        )
    _print_metrics(report.metrics)
    _print_double_booking(report)
    for warning in report.warnings:
        output.warn(warning)


def _print_revision(report: SchedulerStatus) -> None:
    """The current revision, and each field that drifted from it (kubectl edit/scale)."""
    revision = report.revision
    if revision is None:
        output.echo("Revision:   - (none recorded: deployed before kschedctl kept history?)")
        return
    output.echo(
        f"Revision:   {revision['revision']} ({revision['status']}, {revision['updated']}, by "
        f"{revision['by']}: {revision['description']})"
    )
    if report.drift is None:
        output.echo("Drift:      not compared (see the warnings below)")
        return
    if not report.drift:
        output.echo("Drift:      none (the live objects match the revision)")
        return
    output.echo(
        f"Drift:      {len(report.drift)} field(s) differ from revision {revision['revision']}"
    )
    output.print_table(
        ("object", "field", "revision", "live", "changed by"),
        [(d["object"], d["path"], _value(d["revision"]), _value(d["live"]), d["manager"] or "?")
         for d in report.drift],
    )  # fmt: skip


def _value(value: object) -> str:
    text = "-" if value is None else value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _print_problems(report: SchedulerStatus) -> None:
    """Why its pods do not run: the kubelet's reason, the last termination, what to do, and
    the last lines of the container that crashed."""
    if not report.problems:
        return
    output.echo("\nProblems:")
    for crash in report.problems:
        for line in crash_lines(crash):
            output.echo(f"  {line}")


def _millis(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}ms"


def _print_metrics(metrics: MetricsReport | None) -> None:
    """The Metrics section: what each pod was sent, one row per replica read, then why any
    could not be read (and what was read without credentials instead)."""
    if metrics is None:
        output.echo(
            "\nMetrics: not read (pass --metrics: each replica's /metrics is then read through "
            "a port-forward with a short-lived token minted for the purpose; your credentials are "
            "never sent to a pod)"
        )
        return
    output.echo("\nMetrics (each replica's /metrics, since it started):")
    if metrics["problem"]:
        output.echo(f"  not read: {metrics['problem']}")
        return
    sent = [r["sent"] for r in metrics["replicas"] if r["sent"] and r["sent"]["token"]]
    if sent:
        first = sent[0]
        output.echo(
            f"  sent: a token minted for ServiceAccount {first['serviceAccount']} (allowed only "
            f"get /metrics, valid {first['lifetimeSeconds']}s); your own credentials were not "
            "sent to any pod"
        )
    elif any(r["sent"] for r in metrics["replicas"]):
        output.echo("  sent: no credentials (your own were not sent to any pod)")
    if metrics["readerProblem"]:
        output.echo(f"  not read: {metrics['readerProblem']}")
    rows = []
    problems = []
    for replica in metrics["replicas"]:
        leader = {True: "yes", False: "no", None: "-"}[replica["leader"]]
        summary = replica["summary"]
        if replica["health"] is not None:
            health = " · ".join(f"{path} {answer}" for path, answer in replica["health"].items())
            problems.append(f"  {replica['pod']}: read without credentials: {health}")
            continue
        if summary is None:
            problems.append(f"  {replica['pod']}: not read: {replica['problem']}")
            continue
        attempts, pending = summary["attempts"], summary["pending"]
        latency = summary["attemptLatency"]
        rows.append([
            replica["pod"], leader, attempts["scheduled"], attempts["unschedulable"],
            attempts["error"],
            " ".join(f"{queue}={n}" for queue, n in pending.items()) or "-",
            _millis(latency["p50"]), _millis(latency["p99"]),
        ])  # fmt: skip
    if rows:
        output.print_table(
            ("replica", "leader", "scheduled", "unschedulable", "error", "pending",
             "attempt p50", "attempt p99"),
            rows,
        )  # fmt: skip
    for line in problems:
        output.echo(line)


def _print_double_booking(report: SchedulerStatus) -> None:
    """The nodes this scheduler double-booked with another: the kubelet rejected pods there."""
    if not report.double_booking:
        return
    output.echo(f"\nDouble booking: {len(report.double_booking)} node(s)")
    for node in report.double_booking:
        output.echo(f"  ✗ {node['message']}")
        for pod in node["rejected"]:
            output.echo(
                f"      {pod['pod']} (bound by {pod['scheduler'] or '?'}): {pod['message']}"
            )
        output.echo(f"      fix: {node['fix']}")


def _rbac_line(report: SchedulerStatus) -> str:
    rbac = report.rbac
    if rbac["mode"] is None:
        what = "- (no ClusterRoleBinding: a host form runs as its kubeconfig's user)"
    else:
        what = f"{rbac['mode']} (ClusterRole {', '.join(rbac['clusterRoles'])})"
    lease = rbac["defaultLeaseUpdate"]
    if lease is not None:
        what += (
            "; CAN update the default scheduler's Lease kube-system/kube-scheduler"
            if lease
            else "; cannot update the default scheduler's Lease"
        )
    return f"RBAC mode:  {what}"


register = registers("status", status)
