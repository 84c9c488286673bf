"""`kschedctl why`: why a pod is Pending, node by node, with what to change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl import output
from kschedctl.cli import cluster_completers, completers
from kschedctl.cli.common import connect, label_selector
from kschedctl.cli.common import field_selector as field_selector_of
from kschedctl.cli.options import (
    TABLE_FORMATS,
    AllNamespaces,
    ClusterName,
    Context,
    FieldSelector,
    Kubeconfig,
    LabelSelector,
    Namespace,
    NoHeaders,
    TableOutput,
    User,
    check_output,
)
from kschedctl.errors import EXIT_FINDINGS, UsageError

if TYPE_CHECKING:
    from kschedctl.observe.diagnosis import Diagnosis
    from kschedctl.observe.pending import PendingReason

_MARK = {"error": "[red]✗[/red]", "warning": "[yellow]![/yellow]", "info": "[dim]·[/dim]"}


def why(
    pod: Annotated[
        str | None,
        typer.Argument(
            help="The pod (NAME or pod/NAME).",
            show_default=False,
            autocompletion=cluster_completers.pending_pods,
        ),
    ] = None,
    all_pods: Annotated[
        bool,
        typer.Option("--all", help="Every Pending pod of the namespace (with -A: of the cluster)."),
    ] = False,
    namespace: Namespace = None,
    all_namespaces: AllNamespaces = False,
    all_reasons: Annotated[
        bool,
        typer.Option(
            "--all-reasons",
            help="Every failing filter per node, not only the first (the one kube-scheduler reports).",
        ),
    ] = False,
    nodes: Annotated[
        str | None,
        typer.Option(
            "--nodes",
            metavar="grouped|all|N",
            autocompletion=completers.choices(("grouped", "all")),
            help="The node table of POD: 'grouped' (one row per distinct reason with the node "
            "count and a few example nodes), 'all' (one row per node) or N (one row per node, "
            "the first N in the cluster's order). Default: one row per node up to 10 nodes, "
            "grouped above. -o json|yaml always has every node and the groups.",
            show_default=False,
        ),
    ] = None,
    pods: Annotated[
        bool,
        typer.Option(
            "--pods",
            help="With --all: also one row per pod (its verdict and the FailedScheduling "
            "summary) after the table by scheduler and reason.",
        ),
    ] = False,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            metavar="PATH.py|package.module",
            help="A Python plugin of the pod's scheduler (kschedctl's own, run with the same "
            "--plugin): evaluated as the scheduler runs it, with its verdict per node; "
            "repeatable, in the scheduler's order.",
            show_default=False,
        ),
    ] = None,
    out: TableOutput = None,
    no_headers: NoHeaders = False,
    selector: LabelSelector = None,
    field_selector: FieldSelector = None,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    cluster_name: ClusterName = None,
    user: User = None,
) -> None:
    """Explain why a pod is Pending, node by node, and what to change. Exit 6 if it cannot run.

    Scheduling gates, a missing or unhealthy scheduler, then which filter rejects each node
    (on more than 10 nodes grouped by reason: see --nodes); the summary is the
    FailedScheduling message kube-scheduler writes. Exit 0 if it can be scheduled. --all:
    every Pending pod, as one row per scheduler and reason (--pods: and per pod).
    """
    fmt = check_output(out, TABLE_FORMATS)
    if all_pods == (pod is not None):
        raise UsageError(
            "name one pod, or pass --all",
            hint="kschedctl why POD [-n NS] | kschedctl why --all [-A]",
        )
    if all_namespaces and not all_pods:
        raise UsageError("-A/--all-namespaces goes with --all", hint="kschedctl why --all -A")
    if (selector is not None or field_selector is not None) and not all_pods:
        # kubectl's rule: a name and a selector together are refused
        raise UsageError(
            "-l/--field-selector select among the Pending pods: they go with --all",
            hint="kschedctl why --all -l app=web",
        )
    if nodes is not None and all_pods:
        raise UsageError(
            "--nodes shapes the node table of one pod: it goes with POD",
            hint="kschedctl why POD --nodes all; kschedctl why --all --pods lists each pod",
        )
    if pods and not all_pods:
        raise UsageError("--pods goes with --all", hint="kschedctl why --all --pods")
    layout = parse_nodes(nodes)
    label_selector(selector)  # a malformed selector is a usage error before any request
    field_selector_of(field_selector)
    # Imported here: --help and the offline commands must not pay for the cluster layers.
    from kschedctl.ops.why import explain
    from kschedctl.scheduling.plugins import load_plugins

    plugins = load_plugins(plugin or ())  # a plugin that cannot load: exit 3, no request
    with connect(kubeconfig, context, cluster_name, user) as cluster:
        found = explain(cluster, pod, namespace=namespace, all_namespaces=all_namespaces,
                        all_reasons=all_reasons, kubeconfig=kubeconfig,
                        label_selector=selector, field_selector=field_selector,
                        plugins=plugins)  # fmt: skip
    if not fmt.is_table:
        output.emit(found.to_dict(), fmt, no_headers=no_headers, names=found.names())
    elif found.one_pod:
        print_diagnosis(found.diagnoses[0], all_reasons, headers=not no_headers, nodes=layout)
    elif found.diagnoses:
        print_summary(found.summary(), all_namespaces, headers=not no_headers)
        if pods:
            output.stdout_console().print("")
            print_pending(found.diagnoses, all_namespaces, headers=not no_headers)
    else:
        where = "in any namespace" if all_namespaces else f"in namespace {found.namespace}"
        output.info(f"no pod is waiting for a scheduler {where}")
    if not found.schedulable:
        raise typer.Exit(EXIT_FINDINGS)


def parse_nodes(value: str | None) -> str | int | None:
    """``--nodes``: grouped, all, or a positive number of rows (None: the default)."""
    if value is None:
        return None
    choice = value.strip().lower()
    if choice in ("grouped", "all"):
        return choice
    if choice.isdigit() and int(choice) > 0:
        return int(choice)
    raise UsageError(
        f"--nodes {value}: expected grouped, all or a positive number of nodes",
        hint="kschedctl why POD --nodes all",
    )


def _scheduler_line(s: Mapping[str, Any]) -> str:
    if s.get("served") is None:
        return f"{s['name']} (not looked up)"
    if not s["served"]:
        return f"{s['name']}: NOT SERVED by anything in the cluster"
    parts = [s.get("form") or "?"]
    if s.get("managed"):
        parts.append("deployed by kschedctl")
    if s.get("desired") is not None:
        parts.append(f"ready {s.get('ready') or 0}/{s['desired']}")
    if s.get("leader"):
        parts.append(f"leader {s['leader']}")
    parts.append("healthy" if s.get("healthy") else "UNHEALTHY")
    return f"{s['name']} ({', '.join(parts)})"


def print_diagnosis(
    d: Diagnosis, all_reasons: bool, *, headers: bool = True, nodes: str | int | None = None
) -> None:
    # rich.markup when printing only (start-up)
    from rich.markup import escape

    console = output.stdout_console()
    pod = d.pod
    verdict = (
        "[green]can be scheduled[/green]" if d.schedulable else "[red]cannot be scheduled[/red]"
    )
    if d.evaluation is None:
        verdict = "[green]nothing to schedule[/green]" if d.schedulable else "[red]stuck[/red]"
    console.print(
        f"Pod:        {escape(pod['namespace'])}/{escape(pod['name'])} ({escape(str(d.phase))})",
        highlight=False,
    )
    console.print(f"Scheduler:  {escape(_scheduler_line(d.scheduler))}", highlight=False)
    console.print(f"Verdict:    {verdict}", highlight=False)
    if d.summary:
        console.print(f"Summary:    {escape(d.summary)}", highlight=False)
    console.print("\nFindings:", highlight=False)
    for f in d.findings:
        console.print(
            f"  {_MARK[f.severity]} {escape(f.code)}: {escape(f.message)}", highlight=False
        )
        if f.fix:
            console.print(f"      fix: {escape(f.fix)}", highlight=False)
    ev = d.evaluation
    if ev is None or not ev.nodes:
        return
    console.print("", highlight=False)
    # pure logic imported with the printing (start-up)
    from kschedctl.observe.nodegroups import ALL, GROUPED, node_layout

    shape = node_layout(nodes, len(ev.nodes))
    if shape == GROUPED:
        _print_groups(d, headers)
        output.info(
            f"{len(ev.nodes)} nodes in {len(d.node_groups)} group(s) by reason; "
            "--nodes all shows one row per node"
        )
        return
    shown = ev.nodes if shape == ALL else ev.nodes[: int(shape)]
    rows = []
    scores = _plugin_scores(d)
    for v in shown:
        if v.fits:
            rows.append((v.name, "yes", "", "", scores.get(v.name, "")))
            continue
        for index, r in enumerate(v.reasons if all_reasons else v.scheduler_reasons):
            rows.append((v.name if index == 0 else "", "no" if index == 0 else "",
                         r.plugin, r.message, r.detail))  # fmt: skip
    output.print_table(("node", "fits", "filter", "reason", "detail"), rows, headers=headers)
    if len(shown) < len(ev.nodes):
        output.info(f"… {len(ev.nodes) - len(shown)} more node(s): --nodes all lists them")


def _plugin_scores(d: Diagnosis) -> dict[str, str]:
    """Node -> "score NAME=… NAME=…": the plugins' scores where every filter passes."""
    if d.plugins is None:
        return {}
    return {
        node: "plugin score " + " ".join(f"{k}={v:g}" for k, v in s.items())
        for node, s in d.plugins.scores.items()
        if s
    }


def _print_groups(d: Diagnosis, headers: bool) -> None:
    """One row per distinct verdict (a row per reason when a node has several)."""
    rows: list[tuple[object, ...]] = []
    for g in d.node_groups:
        examples = ", ".join(g.examples) + (", …" if g.count > len(g.examples) else "")
        if g.fits:
            rows.append((g.count, "yes", "", "", "", examples))
            continue
        for index, r in enumerate(g.reasons):
            detail = (
                r.detail
                if r.details == 1
                else f"e.g. {g.names[0]}: {r.detail} ({r.details} different)"
            )
            first = index == 0
            rows.append((g.count if first else "", "no" if first else "", r.plugin, r.message,
                         detail, examples if first else ""))  # fmt: skip
    output.print_table(
        ("nodes", "fits", "filter", "reason", "detail", "examples"), rows, headers=headers
    )


def print_summary(
    summary: tuple[PendingReason, ...], all_namespaces: bool, *, headers: bool = True
) -> None:
    """``why --all``: one row per scheduler and reason."""
    # pure logic imported with the printing (start-up)
    from kschedctl.observe.nodegroups import EXAMPLES

    rows: list[tuple[object, ...]] = []
    for r in summary:
        names = r.pods if all_namespaces else tuple(p.partition("/")[2] for p in r.pods)
        shown = names[:EXAMPLES]
        examples = ", ".join(shown) + (", …" if len(names) > len(shown) else "")
        nodes = r.nodes if r.code.startswith("rejected-by-") or r.nodes else ""
        rows.append((r.scheduler, r.reason, len(r.pods), nodes, examples))
    output.print_table(("scheduler", "reason", "pods", "nodes", "examples"), rows, headers=headers)


def print_pending(
    diagnoses: list[Diagnosis], all_namespaces: bool, *, headers: bool = True
) -> None:
    columns = ["namespace"] if all_namespaces else []
    columns += ["pod", "scheduler", "verdict", "why"]
    rows = []
    for d in diagnoses:
        blocking = d.blocking
        reason = d.summary or (
            blocking.message if blocking else d.findings[0].message if d.findings else ""
        )
        row = [d.pod["namespace"]] if all_namespaces else []
        row += [d.pod["name"], d.pod["schedulerName"],
                "schedulable" if d.schedulable else (blocking.code if blocking else "blocked"),
                reason]  # fmt: skip
        rows.append(row)
    output.print_table(columns, rows, headers=headers)


def register(app: typer.Typer) -> None:
    app.command("why")(why)
