"""`kschedctl list -w`: the list, then its changes, until Ctrl-C (exit 0, as `events -w`).

A scheduler is assembled from several kinds of objects (Deployments, Pods, Leases, ConfigMaps,
kschedctl's own objects), so no single API watch shows its changes: the list is taken again
every POLL_SECONDS and a scheduler is printed again when it changed. On a terminal the table is
a rich Live view; piped, changed rows are appended (kubectl's `get -w`), and the data formats
print one object per change (a JSON/YAML document, a name line, the jsonpath template applied
to the object, a custom-columns row).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kschedctl.base import yamltext
from kschedctl.cli import output
from kschedctl.printers import formats

if TYPE_CHECKING:
    from rich.console import Console

    from kschedctl.ops.list import SchedulerList
    from kschedctl.printers.formats import OutputFormat

POLL_SECONDS = 2.0


def pause(seconds: float) -> None:
    """The wait between two lists (tests replace it)."""
    time.sleep(seconds)


Columns = Callable[["OutputFormat"], list[str]]
Rows = Callable[["SchedulerList", "OutputFormat"], list[list[Any]]]


@dataclass(frozen=True)
class _Watch:
    """What a watch shows, where, and how often."""

    console: Console
    fetch: Callable[[], SchedulerList]
    fmt: OutputFormat
    no_headers: bool
    columns: Columns
    rows: Rows
    poll: float
    rounds: int | None  # None: until Ctrl-C


def watch_list(
    fetch: Callable[[], SchedulerList],
    fmt: OutputFormat,
    no_headers: bool,
    columns: Columns,
    rows: Rows,
    *,
    poll: float = POLL_SECONDS,
    rounds: int | None = None,
) -> None:
    """Until Ctrl-C (or ``rounds`` polls)."""
    watch = _Watch(output.stdout_console(), fetch, fmt, no_headers, columns, rows, poll, rounds)
    try:
        if fmt.is_table and watch.console.is_terminal:
            _live(watch)
        else:
            _appended(watch)
    except KeyboardInterrupt:
        return  # Ctrl-C is how a watch ends: exit 0, nothing more to say


def _stable(item: dict[str, Any]) -> str:
    """An item without what changes at every poll (the Lease's renew age)."""
    lease = item.get("lease")
    if isinstance(lease, dict):
        item = {**item, "lease": {k: v for k, v in lease.items() if k != "renewAgeSeconds"}}
    return json.dumps(item, sort_keys=True)


def _live(watch: _Watch) -> None:
    # rich's live display only for a terminal watch (start-up)
    from rich.live import Live
    from rich.text import Text

    def table(found: SchedulerList) -> Text:
        rows = watch.rows(found, watch.fmt)
        return output.table_text(watch.columns(watch.fmt), rows, headers=not watch.no_headers)

    with Live(table(watch.fetch()), console=watch.console, auto_refresh=False) as live:
        done = 0
        while watch.rounds is None or done < watch.rounds:
            pause(watch.poll)
            live.update(table(watch.fetch()), refresh=True)
            done += 1


def _appended(watch: _Watch) -> None:
    # on use: ops.list loads the cluster layer, which `list` without -w does not need here
    from kschedctl.ops.list import SchedulerList, scheduler_item

    seen: dict[str, str] = {}
    first = True
    done = 0
    while True:
        found = watch.fetch()
        changed = []
        for s in found.schedulers:
            key = _stable(dict(s.to_dict()))
            if seen.get(s.name) != key:
                changed.append(s)
            seen[s.name] = key
        gone = [name for name in seen if name not in {s.name for s in found.schedulers}]
        for name in gone:
            del seen[name]
            output.info(f"scheduler {name} is gone")
        if changed or first:
            _print_batch(watch, SchedulerList(changed), first and not watch.no_headers,
                         scheduler_item)  # fmt: skip
        first = False
        if watch.rounds is not None and done >= watch.rounds:
            return
        pause(watch.poll)
        done += 1


def _print_batch(
    watch: _Watch, batch: SchedulerList, header: bool, item: Callable[[Any], dict[str, Any]]
) -> None:
    out, fmt, columns, rows = watch.console.file, watch.fmt, watch.columns, watch.rows
    if fmt.is_table:
        output.print_table(columns(fmt), rows(batch, fmt), headers=header)
    elif fmt.kind == formats.CUSTOM_COLUMNS:
        objects = formats.as_list([item(s) for s in batch.schedulers])
        out.write(formats.custom_columns(fmt.argument, objects, headers=header))
    else:
        for s in batch.schedulers:
            obj = item(s)
            if fmt.kind == formats.JSON:
                out.write(output.to_json(obj))
            elif fmt.kind == formats.YAML:
                out.write("---\n" + yamltext.to_yaml(obj, document=True))
            elif fmt.kind == formats.NAME:
                out.write(formats.name_of(obj) + "\n")
            else:
                out.write(formats.run_template(fmt, obj))
    out.flush()
