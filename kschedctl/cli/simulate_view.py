"""`kschedctl simulate`'s side-by-side report as rich renderables: printed on the terminal and
exported as SVG or HTML with the pictures' machinery (kschedctl/cli/pictures.py).

Every name, reason and source is data from the snapshot, the specs and the lab's events: each
cell, title and header is a ``Text`` escaped by :func:`kschedctl.cli.output.text`, never a string
rich would read as markup (a reason ``[link=javascript:…]x[/link]`` stays text in the HTML).
Imported when a report is drawn: rich is not start-up material.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from kschedctl.base.terminal import escape
from kschedctl.cli import output, pictures
from kschedctl.cli.output import text
from kschedctl.model.filters.resources import CPU, MEMORY, PODS
from kschedctl.observe.simulation import DETERMINISM_NOTE, CandidateResult, SimulationReport

SHOWN_REASONS = 8  # reasons per candidate in the table
SHOWN_MOVED = 10  # moved pods listed per candidate
SHOWN_GROUP_NODES = 3  # node names shown for a group


def _percent(result: CandidateResult, resource: str) -> str:
    after = result.after
    total = after.allocatable.get(resource, 0)
    used = sum(u.requested(resource) for u in after.nodes)
    return f"{100 * used / total:.1f}%" if total else "-"


def _title(result: CandidateResult) -> str:
    return escape(result.name)


def summary_table(report: SimulationReport) -> RenderableType:
    moved = {c.name: len(m) for c, m in report.differences()}
    rows: list[tuple[str, list[str]]] = [
        (
            "program",
            [c.program + (f" ({c.strategy})" if c.strategy else "") for c in report.candidates],
        ),  # fmt: skip
        ("pods submitted", [str(len(c.outcomes)) for c in report.candidates]),
    ]
    if any(c.received for c in report.candidates):  # spec.routing: who the API server gave pods
        rows.append(("routed (pods received)", [c.received_text() for c in report.candidates]))
    rows += [
        ("scheduled", [str(c.scheduled) for c in report.candidates]),
        ("unschedulable", [str(c.unschedulable) for c in report.candidates]),
        (
            "by fallback step",
            [
                ", ".join(f"{k} {v}" for k, v in c.fallback_steps.items()) or "-"
                for c in report.candidates
            ],
        ),  # fmt: skip
        ("preemptions", [str(len(c.preemptions)) for c in report.candidates]),
        ("nodes used", [f"{_used(c.before)} → {_used(c.after)}" for c in report.candidates]),
        ("nodes given pods", [str(c.nodes_given_pods()) for c in report.candidates]),
        ("cpu requested", [_percent(c, CPU) for c in report.candidates]),
        ("memory requested", [_percent(c, MEMORY) for c in report.candidates]),
        ("pods / pod slots", [_percent(c, PODS) for c in report.candidates]),
        ("time to schedule", [f"{c.seconds:.1f}s" for c in report.candidates]),
        ("moved vs first", ["-"] + [str(moved.get(c.name, 0)) for c in report.candidates[1:]]),
    ]
    head: list[object] = [text(""), *(text(c.name, "bold") for c in report.candidates)]
    cells: list[list[object]] = [[text(label, "bold"), *values] for label, values in rows]
    return _titled("candidates, side by side", [head, *cells], right_from=1)


def _titled(title: str, rows: list[list[object]], *, right_from: int) -> RenderableType:
    """A table under its title, its columns from ``right_from`` on aligned right (counts); the
    first row is the header (names from the report, kept as written)."""
    width = max(len(r) for r in rows)
    table = output.table_text((), rows, headers=False, right=range(right_from, width))
    return Group(text(title, "bold"), table)


def _used(shown: object) -> int:
    nodes = getattr(shown, "nodes", [])
    return sum(1 for u in nodes if u.requested(PODS))


def groups_table(report: SimulationReport) -> RenderableType:
    head: list[object] = [text(h, "bold") for h in ("GROUP", "NODES", "EXAMPLES")]
    head += [text(c.name, "bold") for c in report.candidates]
    rows: list[list[object]] = [head]
    counts = [c.by_group(report.groups) for c in report.candidates]
    for group in report.groups:
        if not any(group.name in by for by in counts):
            continue
        examples = ", ".join(group.nodes[:SHOWN_GROUP_NODES])
        if len(group.nodes) > SHOWN_GROUP_NODES:
            examples += ", …"
        rows.append([group.name, len(group.nodes), examples,
                     *[by.get(group.name, 0) for by in counts]])  # fmt: skip
    unschedulable = [by.get("(unschedulable)", 0) for by in counts]
    if any(unschedulable):
        rows.append(["(unschedulable)", "", "", *unschedulable])
    return _titled("submitted pods per node group", rows, right_from=3)


def reasons_table(result: CandidateResult) -> RenderableType:
    rows: list[list[object]] = [[text(h, "bold") for h in ("PODS", "NODES", "REASON")]]
    reasons = result.reasons
    rows += [[r.pods, r.nodes or "", r.reason] for r in reasons[:SHOWN_REASONS]]
    if len(reasons) > SHOWN_REASONS:
        rows.append(["", "", f"… {len(reasons) - SHOWN_REASONS} more (-o yaml: all)"])
    title = f"{result.name}: why pods stay unschedulable (FailedScheduling)"
    return _titled(title, rows, right_from=0)


def moved_text(report: SimulationReport) -> Text:
    shown = Text()
    for c, moved in report.differences():
        shown.append(f"{_title(c)} vs {_title(report.candidates[0])}: ", style="bold")
        shown.append(f"{len(moved)} pod(s) in another node group (or node, or unschedulable)\n")
        for m in moved[:SHOWN_MOVED]:
            shown.append(f"  {escape(m.pod)}: {escape(m.baseline)} → {escape(m.candidate)}\n")
        if len(moved) > SHOWN_MOVED:
            shown.append(f"  … {len(moved) - SHOWN_MOVED} more (-o yaml: all)\n", style="dim")
    return shown


def report_picture(report: SimulationReport, limit: int | None) -> RenderableType:
    """The whole report: summary, groups, reasons, moved pods, per-node bars after each run."""
    head = text(
        f"snapshot {report.snapshot}: {report.nodes} nodes, {report.pinned_pods} "
        f"pods pinned to them, {report.pending_pods + report.workload_pods} pods submitted "
        f"({report.pending_pods} pending in the snapshot, {report.workload_pods} from the "
        f"workload); lab: {report.lab}"
    )
    sources = text("candidates: " + "; ".join(
        f"{c.name} = {c.source}" for c in report.candidates), "dim")  # fmt: skip
    parts: list[RenderableType] = [head, sources, Text(""), summary_table(report), Text("")]
    parts += [groups_table(report), Text("")]
    for c in report.candidates:
        if c.unschedulable:
            parts += [reasons_table(c), Text("")]
    if len(report.candidates) > 1:
        parts.append(moved_text(report))
    for c in report.candidates:
        shown = c.after.first(limit)
        parts += [
            text(f"{c.name}: per node after the run (busiest cpu first)", "bold"),
            pictures.nodes_picture(shown),
            Text(""),
        ]
    parts.append(Text(DETERMINISM_NOTE + ".", style="dim"))
    return Group(*parts)
