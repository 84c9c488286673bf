"""`kschedctl why`: why a pod is Pending, node by node, with what to change."""

from __future__ import annotations

from typing import Annotated

import typer

from kschedctl.base.errors import EXIT_FINDINGS, UsageError
from kschedctl.cli import cluster_completers, completers, output, registers, why_view
from kschedctl.cli.common import connect
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.options import (
    DEFAULT_PRINTING,
    DEFAULT_SELECTORS,
    TABLE_FORMATS,
    AllNamespaces,
    Namespace,
    Printing,
    Selectors,
    output_flags,
    plugin_option,
    selector_flags,
)


@kube_flags
@output_flags(TABLE_FORMATS)
@selector_flags
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
        plugin_option(
            "A Python plugin of the pod's scheduler (kschedctl's own, run with the same "
            "--plugin): evaluated as the scheduler runs it, with its verdict per node; "
            "repeatable, in the scheduler's order. Without it (or --run-cluster-plugins) no "
            "plugin runs, and a pod its scheduler's plugins could reject gets no verdict."
        ),
    ] = None,
    run_cluster_plugins: Annotated[
        list[str] | None,
        typer.Option(
            "--run-cluster-plugins",
            metavar="NS/NAME-config@sha256:HEX",
            help="Run the Python plugins of this ConfigMap of a kschedctl scheduler in this "
            "process, with your credentials, only if its plugin files hash to HEX (exit 3 "
            "otherwise, nothing run): whoever can edit the ConfigMap chooses that code. The "
            "plugins-not-run finding gives the exact value; repeatable, one per scheduler.",
            show_default=False,
        ),
    ] = None,
    printing: Printing = DEFAULT_PRINTING,
    selectors: Selectors = DEFAULT_SELECTORS,
    kube: Kube = DEFAULT_KUBE,
) -> None:
    """Explain why a pod is Pending, node by node, and what to change. Exit 6 if it cannot run.

    Scheduling gates, a missing or unhealthy scheduler, then which filter rejects each node
    (on more than 10 nodes grouped by reason: see --nodes); the summary is the
    FailedScheduling message kube-scheduler writes. Exit 0 if it can be scheduled. --all:
    every Pending pod, as one row per scheduler and reason (--pods: and per pod).

    Python plugins run only when you give them (--plugin, --run-cluster-plugins): otherwise
    a pod that passes the built-in filters gets no verdict when its scheduler's plugins could
    still reject it ("passes the built-in filters; plugins not run", exit 6).
    """
    fmt = printing.format()
    if all_pods == (pod is not None):
        raise UsageError(
            "name one pod, or pass --all",
            hint="kschedctl why POD [-n NS] | kschedctl why --all [-A]",
        )
    if all_namespaces and not all_pods:
        raise UsageError("-A/--all-namespaces goes with --all", hint="kschedctl why --all -A")
    if selectors.given and not all_pods:
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
    selectors.parsed()  # a malformed selector is a usage error before any request
    # Imported here: --help and the offline commands must not pay for the cluster layers.
    from kschedctl.model.scheduling.pluginload import load_plugins
    from kschedctl.observe.plugin_files import ClusterPluginsRef
    from kschedctl.ops.reporter import Reporter
    from kschedctl.ops.why import explain_pods

    refs = [ClusterPluginsRef.parse(r) for r in run_cluster_plugins or ()]
    plugins = load_plugins(plugin or ())  # a plugin that cannot load: exit 3, no request
    with connect(kube) as cluster:
        found = explain_pods(cluster, pod, namespace=namespace, all_namespaces=all_namespaces,
                        all_reasons=all_reasons, kubeconfig=kube.kubeconfig,
                        label_selector=selectors.selector, field_selector=selectors.field_selector,
                        plugins=plugins, run_cluster_plugins=refs,
                        reporter=Reporter(warn=output.warn))  # fmt: skip
    if not fmt.is_table:
        output.emit(found.to_dict(), fmt, no_headers=printing.no_headers, names=found.names())
    elif found.one_pod:
        why_view.print_diagnosis(
            found.diagnoses[0], all_reasons, headers=printing.headers, nodes=layout
        )
    elif found.diagnoses:
        why_view.print_summary(found.summary(), all_namespaces, headers=printing.headers)
        if pods:
            output.stdout_console().print("")
            why_view.print_pending(found.diagnoses, all_namespaces, headers=printing.headers)
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


register = registers("why", why)
