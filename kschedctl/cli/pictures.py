"""The pictures of `top nodes` and `events --timeline`: rich renderables drawn from the pure
layouts (kschedctl/observe/bars.py), printed on the terminal and exported as SVG or HTML by
kschedctl/cli/picture_export.py.

Names from the cluster are data: escaped (:func:`kschedctl.base.terminal.escape`: one line, control
characters escaped) and drawn as ``Text``, never markup; rich escapes the text for SVG and
HTML.
Imported when a picture is drawn: rich is not start-up material.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from kschedctl.base.terminal import escape
from kschedctl.model.filters.resources import CPU, MEMORY, PODS, format_amount
from kschedctl.observe.bars import FREE, Run, bar, percent
from kschedctl.observe.placement import NO_SCHEDULER, RESOURCES, Placement
from kschedctl.observe.timeline import DECISIONS, FAILED, PREEMPTED, SCHEDULED, Timeline

BAR_WIDTH = 40  # cells of a node's bar
TIMELINE_WIDTH = 40  # cells of the busiest minute's bar

# One colour per scheduler, by legend position (schedulers sorted by name): the same cluster
# gives the same colours. Red and yellow are kept for over-commit and failures.
PALETTE = ("dodger_blue2", "green3", "magenta", "dark_cyan", "medium_purple1", "chartreuse3",
           "deep_pink3", "steel_blue1")  # fmt: skip
NONE_COLOUR = "grey62"
OTHERS_COLOUR = "grey42"  # the schedulers not highlighted by --scheduler
FREE_STYLE = "grey23"
OVER_STYLE = "bold red"
DECISION_STYLES = {SCHEDULED: "green3", FAILED: "red", PREEMPTED: "yellow"}
FULL, SHADE, LIGHT, OVER = "█", "▒", "░", "▓"
WARNING = "⚠"


def scheduler_colours(schedulers: list[str]) -> dict[str, str]:
    colours = {}
    for i, name in enumerate(s for s in schedulers if s != NO_SCHEDULER):
        colours[name] = PALETTE[i % len(PALETTE)]
    colours[NO_SCHEDULER] = NONE_COLOUR
    return colours


def _amount(resource: str, value: int) -> str:
    return format_amount(resource, value)


def _bar_text(runs: list[Run], styles: dict[str, tuple[str, str]]) -> Text:
    """``styles``: key -> (character, style); the free room is light, over-commit red."""
    text = Text()
    for run in runs:
        if run.over:
            text.append(OVER * run.cells, style=OVER_STYLE)
        elif run.key == FREE:
            text.append(LIGHT * run.cells, style=FREE_STYLE)
        else:
            char, style = styles[run.key]
            text.append(char * run.cells, style=style)
    return text


def nodes_picture(shown: Placement, *, headers: bool = True) -> RenderableType:
    """Per node, three bars (cpu, memory, pods) stacked by scheduler, with a legend and a
    summary line."""
    colours = scheduler_colours(shown.schedulers)
    styles: dict[str, tuple[str, str]] = {}
    for name, colour in colours.items():
        if shown.highlight and name != shown.highlight:
            styles[name] = (SHADE, OTHERS_COLOUR)
        else:
            styles[name] = (FULL, colour)
    legend = Text()
    for name in shown.schedulers:
        char, style = styles[name]
        pods = shown.totals.get(name, {}).get(PODS, 0)
        legend.append(char * 2, style=style)
        legend.append(f" {escape(name)} ")
        legend.append(f"{pods} pod{'s' if pods != 1 else ''}", style="dim")
        legend.append("  ")
    legend.append(LIGHT * 2, style=FREE_STYLE)
    legend.append(" free  ")
    legend.append(OVER * 2, style=OVER_STYLE)
    legend.append(f" over-commit {WARNING}")
    table = Table(
        box=None, pad_edge=False, show_edge=False, header_style="bold", show_header=headers
    )
    for column, justify in (("NODE", "left"), ("", "left"), ("REQUESTED BY SCHEDULER", "left"),
                            ("REQ/ALLOC", "right"), ("%", "right")):  # fmt: skip
        table.add_column(column, no_wrap=True, justify=justify)  # type: ignore[arg-type]
    for usage in shown.nodes:
        over = usage.overcommitted
        for i, resource in enumerate(RESOURCES):
            parts = [(s, a.get(resource, 0)) for s, a in usage.by_scheduler.items()]
            capacity = usage.allocatable.get(resource, 0)
            requested = usage.requested(resource)
            share = percent(requested, capacity)
            flagged = resource in over
            name_cell = Text("")
            if i == 0:
                name_cell = Text(escape(usage.name), style="bold red" if over else "bold")
            elif i == 1 and usage.unschedulable:
                name_cell = Text("(cordoned)", style="dim")
            table.add_row(
                name_cell,
                Text(resource, style="dim"),
                _bar_text(bar(parts, capacity, BAR_WIDTH), styles),
                Text(
                    f"{_amount(resource, requested)}/{_amount(resource, capacity)}",
                    style=OVER_STYLE if flagged else "",
                ),
                Text(
                    ("-" if share is None else f"{share}%") + (f" {WARNING}" if flagged else "  "),
                    style=OVER_STYLE if flagged else "",
                ),
            )
    return Group(legend, Text(""), table, Text(""), nodes_summary(shown))


def nodes_summary(shown: Placement) -> Text:
    """One line: nodes, pods, requests against allocatable, over-committed nodes, what the
    limit left out."""
    requested = {r: sum(t.get(r, 0) for t in shown.totals.values()) for r in RESOURCES}
    parts = [f"{shown.total_nodes} node{'s' if shown.total_nodes != 1 else ''}"]
    parts.append(f"{requested[PODS]} pod{'s' if requested[PODS] != 1 else ''}")
    for resource in (CPU, MEMORY):
        capacity = shown.allocatable.get(resource, 0)
        share = percent(requested[resource], capacity)
        parts.append(
            f"{resource} {_amount(resource, requested[resource])}/"
            f"{_amount(resource, capacity)}" + (f" ({share}%)" if share is not None else "")
        )
    text = Text(" · ".join(parts))
    if shown.overcommitted_nodes:
        count = shown.overcommitted_nodes
        text.append(
            f" · {count} node{'s' if count != 1 else ''} over-committed {WARNING}", style=OVER_STYLE
        )
    if shown.omitted:
        text.append(
            f"\nshowing {len(shown.nodes)} of {shown.total_nodes} nodes by {shown.sort_by}"
            " (--limit 0: all; --sort-by cpu|memory|pods: the busiest first)",
            style="dim",
        )
    return text


def timeline_picture(
    shown: Timeline, scheduler: str | None, *, headers: bool = True
) -> RenderableType:
    """One row per minute: the counts and a bar stacked scheduled / failed / preempted,
    scaled to the busiest minute."""
    legend = Text()
    legend.append(f"{escape(scheduler) if scheduler else 'every scheduler'}: ", style="bold")
    for decision in DECISIONS:
        legend.append(FULL * 2, style=DECISION_STYLES[decision])
        legend.append(f" {decision} {shown.totals.get(decision, 0)}   ")
    legend.append("(minutes in UTC)", style="dim")
    table = Table(
        box=None, pad_edge=False, show_edge=False, header_style="bold", show_header=headers
    )
    table.add_column("MINUTE", no_wrap=True)
    for decision in DECISIONS:
        table.add_column(decision.upper(), justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    styles = {d: (FULL, DECISION_STYLES[d]) for d in DECISIONS}
    busiest = shown.busiest
    previous_day = None
    for minute in shown.minutes:
        day = minute.start.strftime("%Y-%m-%d")
        label = minute.start.strftime("%H:%M" if day == previous_day else "%Y-%m-%d %H:%M")
        previous_day = day
        parts = [(d, minute.count(d)) for d in DECISIONS]
        width = (TIMELINE_WIDTH * minute.total + busiest - 1) // busiest if busiest else 0
        runs = [r for r in bar(parts, minute.total, width) if r.key != FREE]
        table.add_row(
            Text(label.rjust(16)),
            *(
                Text(str(minute.count(d)), style=DECISION_STYLES[d] if minute.count(d) else "dim")
                for d in DECISIONS
            ),
            _bar_text(runs, styles) if runs else Text("·", style="dim"),
        )
    rows: list[RenderableType] = [legend, Text("")]
    if shown.minutes:
        rows.append(table)
    else:
        rows.append(Text("no scheduling decisions in these events", style="dim"))
    if shown.omitted:
        rows += [Text(""), Text(f"{shown.omitted} earlier minutes not shown (--limit 0: all)",
                                style="dim")]  # fmt: skip
    return Group(*rows)
