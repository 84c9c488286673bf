"""`kschedctl events`: what schedulers reported (Scheduled, FailedScheduling, Preempted)."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl import output
from kschedctl.cli import cluster_completers
from kschedctl.cli.common import age, connect
from kschedctl.cli.options import (
    WIDE_FORMATS,
    AllNamespaces,
    ClusterName,
    Context,
    EventsSince,
    Kubeconfig,
    Namespace,
    NoHeaders,
    User,
    WideOutput,
    check_output,
)
from kschedctl.printers import formats

if TYPE_CHECKING:
    from rich.console import Console

    # rich.text when printing only (start-up)
    from rich.text import Text

    from kschedctl.observe.events import Event
    from kschedctl.ops.events import SchedulerEvents
    from kschedctl.printers.formats import OutputFormat


def events(
    name: Annotated[
        str | None,
        typer.Argument(
            help="Scheduler name (the events' reportingController); every scheduler's events when left out.",
            show_default=False,
            autocompletion=cluster_completers.schedulers,
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
        typer.Option(
            "--export",
            help="With --timeline: also write the picture to FILE.svg or FILE.html.",
            metavar="FILE",
            show_default=False,
        ),
    ] = None,
    out: WideOutput = None,
    no_headers: NoHeaders = False,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    cluster_name: ClusterName = None,
    user: User = None,
) -> None:
    """The events a scheduler reported, oldest to newest, failures highlighted.

    Filtered on the server (scheduler name, object, type) where it can; events.k8s.io/v1, or
    core/v1 on servers without it.
    """
    fmt = check_output(out, WIDE_FORMATS)
    # Imported here: --help and the offline commands must not pay for the cluster layers.
    from kschedctl.ops.events import event_filter, open_events

    wanted = event_filter(name, for_object, types, since)
    if timeline or export_to is not None or limit is not None:
        # the timeline's own module (rich, for the picture): only when asked for
        from kschedctl.cli.events_timeline import run_timeline

        run_timeline(wanted, namespace=namespace, all_namespaces=all_namespaces,
                     kubeconfig=kubeconfig, context=context, cluster_name=cluster_name, user=user,
                     timeline=timeline, watch=watch, limit=limit, export_to=export_to, out=out,
                     no_headers=no_headers)  # fmt: skip
        return
    with connect(kubeconfig, context, cluster_name, user) as cluster:
        source = open_events(cluster, wanted, namespace=namespace, all_namespaces=all_namespaces)
        if watch:
            _watch(source, fmt, no_headers)
            return
        found = source.current()
    if not fmt.is_table:
        output.emit(found.to_dict(), fmt, no_headers=no_headers)
        return
    all_ns = found.namespace is None
    if not found.events:
        where = "in any namespace" if all_ns else f"in namespace {found.namespace}"
        output.info(f"no scheduler events {where}" + (f" from {name}" if name else ""))
        return
    now = datetime.now(timezone.utc)
    out = fmt.kind
    output.print_table(
        _columns(out, all_ns),
        [_row(e, out, all_ns, now, _color()) for e in found.events],
        headers=not no_headers,
    )


def _color() -> bool:
    return output.stdout_console().is_terminal


def _columns(out: str, all_namespaces: bool) -> list[str]:
    cols = ["namespace"] if all_namespaces else []
    cols += ["last seen", "type", "reason", "object"]
    if out == "wide":
        cols += ["scheduler", "count", "first seen"]
    return [*cols, "message"]


def _row(e: Event, out: str, all_namespaces: bool, now: datetime, color: bool) -> list[str | Text]:
    # rich.text when printing only (start-up)
    from rich.text import Text

    def seen(moment: datetime | None) -> str:
        return age((now - moment).total_seconds()) if moment else "-"

    row: list[str | Text] = [e.namespace] if all_namespaces else []
    style = "red" if e.failed else None
    row += [seen(e.time), Text(e.type, style=style) if color and style else e.type,
            Text(e.reason, style=style) if color and style else e.reason, e.object]  # fmt: skip
    if out == "wide":
        row += [e.controller or "-", str(e.count), seen(e.first_time)]
    row.append(Text(e.message, style="yellow") if color and e.failed else e.message)
    return row


def _line(console: Console, e: Event, fmt: OutputFormat, all_namespaces: bool) -> None:
    """One event of a watch: a JSON line, a YAML document, a name, the template applied to the
    event, a custom-columns row, or a table line with fixed columns."""
    # the use case module is loaded by now (the watch runs through it)
    from kschedctl.ops.events import event_item

    if not fmt.is_table:
        item = event_item(e)
        if fmt.kind == formats.JSON:
            line = json.dumps(item) + "\n"
        elif fmt.kind == formats.YAML:
            line = "---\n" + output.to_yaml(item)
        elif fmt.kind == formats.NAME:
            line = formats.name_of(item) + "\n"
        elif fmt.kind == formats.CUSTOM_COLUMNS:
            line = formats.custom_columns(fmt.argument, item, headers=False)
        else:
            line = formats.run_template(fmt, item)
        console.file.write(line)
        console.file.flush()
        return
    out = fmt.kind
    # rich.text when printing only (start-up)
    from rich.text import Text

    now = datetime.now(timezone.utc)
    cells = _row(e, out, all_namespaces, now, console.is_terminal)
    widths = [_WIDTHS.get(c, 0) for c in _columns(out, all_namespaces)]
    text = Text()
    for cell, width in zip(cells, widths, strict=True):
        piece = cell if isinstance(cell, Text) else Text(cell)
        text.append_text(piece)
        if width:
            text.append(" " * max(1, width - len(piece.plain)))
    console.print(text, soft_wrap=True, highlight=False)


_WIDTHS = {"namespace": 20, "last seen": 10, "type": 9, "reason": 18, "object": 36,
           "scheduler": 20, "count": 7, "first seen": 11}  # fmt: skip


def _watch(source: SchedulerEvents, fmt: OutputFormat, no_headers: bool) -> None:
    """Print matching events as they come until Ctrl-C, which ends the command with exit 0."""
    all_namespaces = source.namespace is None
    console = output.stdout_console()
    if fmt.kind == formats.CUSTOM_COLUMNS and not no_headers:
        console.file.write(formats.custom_columns(fmt.argument, formats.as_list([])))
    if fmt.is_table and not no_headers:
        header = _columns(fmt.kind, all_namespaces)
        console.print(
            "".join(c.upper().ljust(_WIDTHS.get(c, 0) or len(c)) for c in header), highlight=False
        )
    stop = threading.Event()
    try:
        for event in source.watch(stop, output.warn):
            _line(console, event, fmt, all_namespaces)
    except KeyboardInterrupt:
        stop.set()  # Ctrl-C is how a watch ends: exit 0, nothing more to say


def register(app: typer.Typer) -> None:
    app.command("events")(events)
