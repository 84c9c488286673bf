"""The rows of `kschedctl events`: the table's columns and cells, and the lines of a watch."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from kschedctl.base import yamltext
from kschedctl.cli import output
from kschedctl.cli.common import age
from kschedctl.printers import formats

if TYPE_CHECKING:
    from rich.console import Console

    # rich.text when printing only (start-up)
    from rich.text import Text

    from kschedctl.observe.events import Event
    from kschedctl.ops.events import SchedulerEvents
    from kschedctl.printers.formats import OutputFormat


def on_terminal() -> bool:
    return output.stdout_console().is_terminal


def event_columns(out: str, all_namespaces: bool) -> list[str]:
    cols = ["namespace"] if all_namespaces else []
    cols += ["last seen", "type", "reason", "object"]
    if out == "wide":
        cols += ["scheduler", "count", "first seen"]
    return [*cols, "message"]


def row(e: Event, out: str, all_namespaces: bool, now: datetime, color: bool) -> list[str | Text]:
    """The cells: plain strings (escaped where printed) or :func:`output.text` (escaped)."""

    def seen(moment: datetime | None) -> str:
        return age((now - moment).total_seconds()) if moment else "-"

    row: list[str | Text] = [e.namespace] if all_namespaces else []
    style = "red" if e.failed else None
    row += [seen(e.time), output.text(e.type, style) if color and style else e.type,
            output.text(e.reason, style) if color and style else e.reason, e.object]  # fmt: skip
    if out == "wide":
        row += [e.controller or "-", str(e.count), seen(e.first_time)]
    row.append(output.text(e.message, "yellow") if color and e.failed else e.message)
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
            line = "---\n" + yamltext.to_yaml(item, document=True)
        elif fmt.kind == formats.NAME:
            line = formats.name_of(item) + "\n"
        elif fmt.kind == formats.CUSTOM_COLUMNS:
            line = formats.custom_columns(fmt.argument, item, headers=False)
        else:
            line = formats.run_template(fmt, item)
        console.file.write(line)
        console.file.flush()
        return
    now = datetime.now(timezone.utc)
    cells = row(e, fmt.kind, all_namespaces, now, console.is_terminal)
    minimum = _minimum(fmt, all_namespaces)
    output.write_lines(output.table_lines([output.cells(cells)], minimum=minimum))


def _minimum(fmt: OutputFormat, all_namespaces: bool) -> list[int]:
    """A watch prints its rows one by one: columns this wide line up while their cells fit
    (a longer cell widens its own row, never cut)."""
    return [_WIDTHS.get(c, 0) for c in event_columns(fmt.kind, all_namespaces)]


_WIDTHS = {"namespace": 20, "last seen": 10, "type": 9, "reason": 18, "object": 36,
           "scheduler": 20, "count": 7, "first seen": 11}  # fmt: skip


def watch(source: SchedulerEvents, fmt: OutputFormat, no_headers: bool) -> None:
    """Print matching events as they come until Ctrl-C, which ends the command with exit 0."""
    all_namespaces = source.namespace is None
    console = output.stdout_console()
    if fmt.kind == formats.CUSTOM_COLUMNS and not no_headers:
        console.file.write(formats.custom_columns(fmt.argument, formats.as_list([])))
    if fmt.is_table and not no_headers:
        header = [c.upper() for c in event_columns(fmt.kind, all_namespaces)]
        output.write_lines(output.table_lines([header], minimum=_minimum(fmt, all_namespaces)))
    stop = threading.Event()
    try:
        for event in source.watch(stop, output.warn):
            _line(console, event, fmt, all_namespaces)
    except KeyboardInterrupt:
        stop.set()  # Ctrl-C is how a watch ends: exit 0, nothing more to say
