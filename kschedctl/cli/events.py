"""`kschedctl events`: what schedulers reported (Scheduled, FailedScheduling, Preempted)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl import output
from kschedctl.cli.common import age, check_output, connect
from kschedctl.cli.options import AllNamespaces, Context, Kubeconfig, Namespace
from kschedctl.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from kschedctl.k8s.client import Cluster
    from kschedctl.k8s.events import Query
    from kschedctl.observe.events import Event

OutputOpt = Annotated[str, typer.Option("-o", "--output", help="table, wide, yaml or json.")]


def events(
    name: Annotated[
        str | None,
        typer.Argument(
            help="Scheduler name (the events' reportingController); every scheduler's events when left out.",
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
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only events seen within this duration (30s, 10m, 2h).",
            show_default=False,
        ),
    ] = None,
    watch: Annotated[
        bool,
        typer.Option(
            "-w", "--watch", help="After the current events, stream new ones until interrupted."
        ),
    ] = False,
    out: OutputOpt = "table",
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """The events a scheduler reported, oldest to newest, failures highlighted.

    Filtered on the server (scheduler name, object, type) where it can; events.k8s.io/v1, or
    core/v1 on servers without it.
    """
    from kschedctl.config.durations import parse_duration
    from kschedctl.observe.events import SCHEDULER_REASONS, parse_for, parse_types, select

    check_output(out, ("table", "wide", "yaml", "json"))
    try:
        wanted_types = parse_types(types)
        kind, target = parse_for(for_object) if for_object else (None, None)
    except ValueError as err:
        raise UsageError(str(err)) from err
    window = timedelta(seconds=parse_duration(since)) if since else None
    from kschedctl.k8s.events import Query, list_events, served_api

    cluster = connect(kubeconfig, context)
    try:
        ns = None if all_namespaces else (namespace or cluster.namespace)
        query = Query(ns, controller=name, kind=kind, name=target,
                      type=wanted_types[0] if len(wanted_types) == 1 else None)  # fmt: skip
        reasons = None if name else SCHEDULER_REASONS
        api = served_api(cluster)
        if watch:
            _watch(cluster, query, api, wanted_types, reasons, window, out, ns is None)
            return
        found = select(list_events(cluster, query, api), types=wanted_types, reasons=reasons,
                       since=window, now=datetime.now(timezone.utc))  # fmt: skip
    finally:
        cluster.close()
    if out in ("yaml", "json"):
        output.emit_data({"events": [e.to_dict() for e in found]}, out)
        return
    if not found:
        where = "in any namespace" if ns is None else f"in namespace {ns}"
        output.info(f"no scheduler events {where}" + (f" from {name}" if name else ""))
        return
    now = datetime.now(timezone.utc)
    output.print_table(
        _columns(out, ns is None), [_row(e, out, ns is None, now, _color()) for e in found]
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


def _line(console: Console, e: Event, out: str, all_namespaces: bool) -> None:
    """One event of a watch: a JSON/YAML document, or a table line with fixed columns."""
    import json

    if out == "json":
        console.file.write(json.dumps(e.to_dict()) + "\n")
        console.file.flush()
        return
    if out == "yaml":
        console.file.write("---\n" + output.to_yaml(e.to_dict()))
        console.file.flush()
        return
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


def _watch(
    cluster: Cluster, query: Query, api: str, types: tuple[str, ...],
    reasons: tuple[str, ...] | None, window: timedelta | None, out: str, all_namespaces: bool,
) -> None:  # fmt: skip
    """Print matching events as they come until Ctrl-C, which ends the command with exit 0."""
    import threading

    from kschedctl.k8s.events import watch_events
    from kschedctl.observe.events import select

    console = output.stdout_console()
    if out in ("table", "wide"):
        header = _columns(out, all_namespaces)
        console.print(
            "".join(c.upper().ljust(_WIDTHS.get(c, 0) or len(c)) for c in header), highlight=False
        )
    stop = threading.Event()
    printed: dict[str, int] = {}  # event uid -> count shown (a repeat updates the count)
    problems: list[str] = []

    def on_error(err: Exception) -> None:
        text = getattr(err, "message", str(err))
        if text not in problems:  # say it once per distinct problem, then keep retrying
            problems.append(text)
            output.warn(f"watch: {text} (retrying)")

    try:
        for initial, event in watch_events(cluster, query, stop, api=api, on_error=on_error):
            now = datetime.now(timezone.utc)
            # --since bounds what was there before; new events are always recent.
            kept = select(
                [event], types=types, reasons=reasons, since=window if initial else None, now=now
            )
            if not kept or printed.get(event.event_uid) == event.count:
                continue
            printed[event.event_uid] = event.count
            _line(console, event, out, all_namespaces)
    except KeyboardInterrupt:
        stop.set()  # Ctrl-C is how a watch ends: exit 0, nothing more to say


def register(app: typer.Typer) -> None:
    app.command("events")(events)
