"""`kschedctl events`: what schedulers reported (Scheduled, FailedScheduling, Preempted)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated

import typer

from kschedctl.cli import eventrows, output, registers
from kschedctl.cli.common import connect, scheduler_argument
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.options import (
    DEFAULT_PRINTING,
    WIDE_FORMATS,
    AllNamespaces,
    EventsSince,
    Namespace,
    Printing,
    export_option,
    output_flags,
)


@kube_flags
@output_flags(WIDE_FORMATS)
def events(
    name: Annotated[
        str | None,
        scheduler_argument(
            "Scheduler name (the events' reportingController); every scheduler's events when "
            "left out.",
            show_default=False,
        ),
    ] = None,
    namespace: Namespace = None,
    all_namespaces: AllNamespaces = False,
    for_object: Annotated[
        str | None,
        typer.Option(
            "--for", help="Only events about this object: pod/NAME (or NAME).", show_default=False
        ),
    ] = None,
    types: Annotated[
        str | None,
        typer.Option(
            "--types",
            help="Event types to show: Warning, Normal or Warning,Normal.",
            show_default=False,
        ),
    ] = None,
    since: EventsSince = None,
    watch: Annotated[
        bool,
        typer.Option(
            "-w", "--watch", help="After the current events, stream new ones until interrupted."
        ),
    ] = False,
    timeline: Annotated[
        bool,
        typer.Option(
            "--timeline",
            help="Decisions per minute instead of events: scheduled, failed, preempted, with "
            "bars (-o json|yaml: one item per minute).",
        ),
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=0,
            help="With --timeline: only the last this many minutes (0: all; default 60 in the "
            "table and the picture, all with -o).",
            show_default=False,
        ),
    ] = None,
    export_to: Annotated[
        str | None,
        export_option("With --timeline: also write the picture to FILE.svg or FILE.html."),
    ] = None,
    printing: Printing = DEFAULT_PRINTING,
    kube: Kube = DEFAULT_KUBE,
) -> None:
    """The events a scheduler reported, oldest to newest, failures highlighted.

    Filtered on the server (scheduler name, object, type) where it can; events.k8s.io/v1, or
    core/v1 on servers without it.
    """
    fmt = printing.format()
    # Imported here: --help and the offline commands must not pay for the cluster layers.
    from kschedctl.ops.events import event_filter, open_events

    wanted = event_filter(name, for_object, types, since)
    if timeline or export_to is not None or limit is not None:
        # the timeline's own module (rich, for the picture): only when asked for
        from kschedctl.cli.events_timeline import run_timeline

        run_timeline(wanted, namespace=namespace, all_namespaces=all_namespaces,
                     kube=kube,
                     timeline=timeline, watch=watch, limit=limit, export_to=export_to, out=printing.out,
                     no_headers=printing.no_headers)  # fmt: skip
        return
    with connect(kube) as cluster:
        source = open_events(cluster, wanted, namespace=namespace, all_namespaces=all_namespaces)
        if watch:
            eventrows.watch(source, fmt, printing.no_headers)
            return
        found = source.current()
    if not fmt.is_table:
        output.emit(found.to_dict(), fmt, no_headers=printing.no_headers)
        return
    all_ns = found.namespace is None
    if not found.events:
        where = "in any namespace" if all_ns else f"in namespace {found.namespace}"
        output.info(f"no scheduler events {where}" + (f" from {name}" if name else ""))
        return
    now = datetime.now(timezone.utc)
    out = fmt.kind
    output.print_table(
        eventrows.event_columns(out, all_ns),
        [eventrows.row(e, out, all_ns, now, eventrows.on_terminal()) for e in found.events],
        headers=printing.headers,
    )


register = registers("events", events)
