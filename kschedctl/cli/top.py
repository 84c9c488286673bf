"""`kschedctl top nodes`: per node, the requests of the pods on it as bars split by scheduler."""

from __future__ import annotations

from typing import Annotated

import typer

from kschedctl.base.errors import shown_path
from kschedctl.cli import completers, output
from kschedctl.cli.common import connect
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.options import (
    DEFAULT_PRINTING,
    WIDE_FORMATS,
    AllNamespaces,
    LabelSelector,
    Namespace,
    Printing,
    export_option,
    namespace_scope,
    output_flags,
    parsed_label_selector,
)
from kschedctl.cli.usage import bad_choice
from kschedctl.printers import formats

# The table's default number of nodes: a screenful an operator reads; data formats give all.
TABLE_LIMIT = 50
SORT_KEYS = ("name", "cpu", "memory", "pods")  # kschedctl.observe.placement.SORT_KEYS

top_app = typer.Typer(
    help="What the pods on each node request, split by the scheduler that placed them.",
    no_args_is_help=True,
)

Export = Annotated[
    str | None,
    export_option(
        "Also write the picture to FILE.svg or FILE.html (fixed width, for a README or an issue)."
    ),
]


@top_app.command("nodes")
@kube_flags
@output_flags(WIDE_FORMATS)
def nodes(
    selector: LabelSelector = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            help="Only the nodes where this scheduler placed pods; its share drawn in colour, "
            "the others shaded.",
            show_default=False,
        ),
    ] = None,
    sort_by: Annotated[
        str,
        typer.Option(
            "--sort-by",
            help="name, or cpu, memory or pods: the busiest nodes (requested/allocatable) first.",
            autocompletion=completers.choices(SORT_KEYS),
        ),
    ] = "name",
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=0,
            help=f"At most this many nodes (0: all). Default: {TABLE_LIMIT} in the table and "
            "the picture, all with -o.",
            show_default=False,
        ),
    ] = None,
    pods: Annotated[
        bool,
        typer.Option(
            "--pods",
            help="One row per pod on the nodes shown: namespace, pod, node, scheduler, "
            "requests and limits (and usage with metrics-server).",
        ),
    ] = False,
    export_to: Export = None,
    namespace: Namespace = None,
    all_namespaces: AllNamespaces = False,
    printing: Printing = DEFAULT_PRINTING,
    kube: Kube = DEFAULT_KUBE,
) -> None:
    """Per node, one row: cpu and memory requests and limits (with their share of
    allocatable), pods, usage when metrics-server answers (metrics.k8s.io), taints, and the cpu
    requests as a bar split by the scheduler responsible (spec.schedulerName; "(none)" for pods
    given a node by hand and static pods), each scheduler drawn with its legend letter
    (-o wide: memory and pods bars too, taints listed). Requests are the effective ones (init
    containers, sidecars, overhead). Over-commit (requested beyond allocatable) is red with ⚠.
    """
    fmt = printing.format()
    if sort_by not in SORT_KEYS:
        bad_choice("--sort-by", sort_by, SORT_KEYS)
    parsed_label_selector(selector)  # exit 2 on a malformed selector, before connecting
    # the picture module loads rich (start-up): only when drawing
    from kschedctl.cli import picture_export, pictures

    target = picture_export.check_export(export_to)
    # Imported here: --help and the offline commands must not pay for the cluster layers.
    from kschedctl.ops.top import placement_dict, top_nodes

    with connect(kube) as cluster:
        found = top_nodes(
            cluster, selector=selector, scheduler=scheduler, sort_by=sort_by, pod_usage=pods,
            namespace=namespace_scope(namespace, all_namespaces),
        )  # fmt: skip
    drawn = found.first(TABLE_LIMIT if limit is None else limit)
    wide = fmt.kind == formats.WIDE
    if target is not None:
        picture = pictures.nodes_picture(drawn, wide=wide)
        picture_export.export(picture, target, "kschedctl top nodes")
        output.info(f"wrote {shown_path(target)}")
    if not fmt.is_table:
        output.emit(placement_dict(found.first(limit), pods=pods), fmt,
                    no_headers=printing.no_headers)  # fmt: skip
        return
    if not found.total_nodes:
        output.info("no nodes" + (f" with pods from {scheduler}" if scheduler else ""))
        return
    if not found.metrics:
        output.info("usage: metrics-server not available (the metrics.k8s.io API did not answer)")
    if pods:
        output.print_table(*pictures.pod_rows(drawn), headers=printing.headers)
        return
    picture = pictures.nodes_picture(drawn, headers=printing.headers, wide=wide)
    output.stdout_console().print(picture, highlight=False, soft_wrap=True, crop=False)


def register(app: typer.Typer) -> None:
    app.add_typer(top_app, name="top")
