"""The pictures of `top nodes` and `events --timeline`: rich renderables drawn from the pure
layouts (kschedctl/observe/bars.py), printed on the terminal and exported as SVG or HTML by
kschedctl/cli/picture_export.py.

Names from the cluster are data: escaped (:func:`kschedctl.base.terminal.escape`: one line, control
characters escaped) and drawn as ``Text``, never markup; rich escapes the text for SVG and
HTML.
Imported when a picture is drawn: rich is not start-up material.
"""

from __future__ import annotations

import string

from rich.console import Group, RenderableType
from rich.text import Text

from kschedctl.base.terminal import escape
from kschedctl.cli import output
from kschedctl.model.filters.resources import CPU, MEMORY, PODS, format_amount
from kschedctl.observe.bars import FREE, Run, bar, percent
from kschedctl.observe.placement import NO_SCHEDULER, RESOURCES, NodeUsage, Placement
from kschedctl.observe.timeline import DECISIONS, FAILED, PREEMPTED, SCHEDULED, Timeline

BAR_WIDTH = 20  # cells of a node's bar
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


def scheduler_letters(schedulers: list[str]) -> dict[str, str]:
    """The character each scheduler's share of a bar is drawn with, by legend position: the
    bar says whose it is without colour (``NO_COLOR``, a log, a screen reader)."""
    marks = string.ascii_lowercase + string.ascii_uppercase + string.digits
    return {name: marks[i % len(marks)] for i, name in enumerate(schedulers)}


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


def _bar_styles(shown: Placement) -> dict[str, tuple[str, str]]:
    """Per scheduler: its letter and colour; with ``--scheduler``, the others shaded."""
    colours = scheduler_colours(shown.schedulers)
    letters = scheduler_letters(shown.schedulers)
    styles: dict[str, tuple[str, str]] = {}
    for name in shown.schedulers:
        if shown.highlight and name != shown.highlight:
            styles[name] = (SHADE, OTHERS_COLOUR)
        else:
            styles[name] = (letters[name], colours[name])
    return styles


def _legend(shown: Placement, styles: dict[str, tuple[str, str]]) -> Text:
    legend = Text()
    for name in shown.schedulers:
        char, style = styles[name]
        if shown.highlight and name != shown.highlight:
            continue
        pods = shown.totals.get(name, {}).get(PODS, 0)
        legend.append(char, style=style)
        legend.append(f" {escape(name)} ")
        legend.append(f"({pods} pod{'s' if pods != 1 else ''})", style="dim")
        legend.append("   ")
    if shown.highlight and len(shown.schedulers) > 1:
        legend.append(SHADE, style=OTHERS_COLOUR)
        legend.append(" other schedulers   ")
    legend.append(LIGHT, style=FREE_STYLE)
    legend.append(" free   ")
    legend.append(OVER, style=OVER_STYLE)
    legend.append(f" over-commit {WARNING}")
    return legend


def _share(resource: str, amount: int, capacity: int, flagged: bool = False) -> Text:
    """``amount (share%)`` like kube-capacity; red with ⚠ past the capacity."""
    share = percent(amount, capacity)
    shown = _amount(resource, amount) + ("" if share is None else f" ({share}%)")
    if flagged:
        return Text(f"{shown} {WARNING}", style=OVER_STYLE)
    return Text(shown)


def _usage(resource: str, usage: dict[str, int] | None, capacity: int) -> Text:
    return Text("-") if usage is None else _share(resource, usage.get(resource, 0), capacity)


def node_rows(shown: Placement, *, wide: bool = False) -> tuple[list[str], list[list[Text]]]:
    """One row per node, like kube-capacity: requests and limits of cpu and memory (their
    share of allocatable), pods, usage when metrics-server answers, taints; the cpu requests
    as a bar split by scheduler (``wide``: memory and pods bars too, and the taints
    listed)."""
    styles = _bar_styles(shown)
    bars = RESOURCES if wide else (CPU,)
    columns = ["node", "cpu requests", "cpu limits", "memory requests", "memory limits", "pods"]
    if shown.metrics:
        columns += ["cpu usage", "memory usage"]
    columns += [f"{r} by scheduler" for r in bars] + ["taints"]
    rows = []
    for usage in shown.nodes:
        over = usage.overcommitted
        alloc = usage.allocatable
        name = Text(escape(usage.name), style="bold red" if over else "bold")
        row = [name]
        for r in (CPU, MEMORY):
            row += [
                _share(r, usage.requested(r), alloc.get(r, 0), r in over),
                _share(r, usage.limits.get(r, 0), alloc.get(r, 0)),
            ]
        pods = Text(f"{usage.requested(PODS)}/{alloc.get(PODS, 0)}")
        if PODS in over:
            pods = Text(f"{pods.plain} {WARNING}", style=OVER_STYLE)
        row.append(pods)
        if shown.metrics:
            row += [_usage(r, usage.usage, alloc.get(r, 0)) for r in (CPU, MEMORY)]
        for r in bars:
            parts = [(s, a.get(r, 0)) for s, a in usage.by_scheduler.items()]
            row.append(_bar_text(bar(parts, alloc.get(r, 0), BAR_WIDTH), styles))
        row.append(Text(_taints(usage, wide), style="yellow" if usage.taints else ""))
        rows.append(row)
    return columns, rows


def _taints(usage: NodeUsage, wide: bool) -> str:
    """The taints: listed (``wide``) or counted; a cordoned node says so."""
    shown = []
    if usage.unschedulable:
        shown.append("cordoned")
    if usage.taints:
        shown += (
            usage.taints if wide else [f"{len(usage.taints)} taint{'s' * (len(usage.taints) != 1)}"]
        )
    return ", ".join(escape(t) for t in shown) or "-"


def nodes_picture(shown: Placement, *, headers: bool = True, wide: bool = False) -> RenderableType:
    """A legend, one row per node (:func:`node_rows`) and a summary line."""
    columns, rows = node_rows(shown, wide=wide)
    table = output.table_text(columns, rows, headers=headers)
    return Group(
        _legend(shown, _bar_styles(shown)), Text(""), table, Text(""), nodes_summary(shown)
    )


def pod_rows(shown: Placement) -> tuple[list[str], list[list[str]]]:
    """``top nodes --pods``: one row per pod on the nodes shown, by node."""
    columns = ["namespace", "pod", "node", "scheduler", "cpu requests", "cpu limits",
               "memory requests", "memory limits"]  # fmt: skip
    if shown.metrics:
        columns += ["cpu usage", "memory usage"]
    rows = []
    for p in shown.pods:
        row = [p.namespace, p.name, p.node, p.scheduler]
        for r in (CPU, MEMORY):
            row += [_amount(r, p.requests.get(r, 0)), _amount(r, p.limits.get(r, 0))]
        if shown.metrics:
            row += [
                "-" if p.usage is None else _amount(r, p.usage.get(r, 0)) for r in (CPU, MEMORY)
            ]
        rows.append(row)
    return columns, rows


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
    styles = {d: (FULL, DECISION_STYLES[d]) for d in DECISIONS}
    busiest = shown.busiest
    previous_day = None
    cells: list[list[Text]] = []
    for minute in shown.minutes:
        day = minute.start.strftime("%Y-%m-%d")
        label = minute.start.strftime("%H:%M" if day == previous_day else "%Y-%m-%d %H:%M")
        previous_day = day
        parts = [(d, minute.count(d)) for d in DECISIONS]
        width = (TIMELINE_WIDTH * minute.total + busiest - 1) // busiest if busiest else 0
        runs = [r for r in bar(parts, minute.total, width) if r.key != FREE]
        cells.append([
            Text(label.rjust(16)),
            *(
                Text(str(minute.count(d)), style=DECISION_STYLES[d] if minute.count(d) else "dim")
                for d in DECISIONS
            ),
            _bar_text(runs, styles) if runs else Text("·", style="dim"),
        ])  # fmt: skip
    columns = ["minute", *DECISIONS, ""]
    table = output.table_text(columns, cells, headers=headers, right=range(1, 1 + len(DECISIONS)))
    rows: list[RenderableType] = [legend, Text("")]
    if shown.minutes:
        rows.append(table)
    else:
        rows.append(Text("no scheduling decisions in these events", style="dim"))
    if shown.omitted:
        rows += [Text(""), Text(f"{shown.omitted} earlier minutes not shown (--limit 0: all)",
                                style="dim")]  # fmt: skip
    return Group(*rows)
