"""How `kschedctl why` prints a diagnosis: the verdict, findings, per-stage and per-node
tables (grouped on large clusters), and the summary of `why --all`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kschedctl.cli import output

if TYPE_CHECKING:
    from kschedctl.observe.diagnosis import Diagnosis
    from kschedctl.observe.pending import PendingReason

_MARK = {"error": ("✗", "red"), "warning": ("!", "yellow"), "info": ("·", "dim")}


def _scheduler_line(s: Mapping[str, Any]) -> str:
    if s.get("served") is None:
        return f"{s['name']} (not looked up)"
    if not s["served"]:
        return f"{s['name']}: NOT SERVED by anything in the cluster"
    parts = [s.get("form") or "?"]
    if s.get("managed"):
        parts.append("deployed by kschedctl")
    if s.get("desired") is not None:
        parts.append(f"ready {s.get('ready') or 0}/{s['desired']}")
    if s.get("leader"):
        parts.append(f"leader {s['leader']}")
    parts.append("healthy" if s.get("healthy") else "UNHEALTHY")
    return f"{s['name']} ({', '.join(parts)})"


def print_diagnosis(
    d: Diagnosis, all_reasons: bool, *, headers: bool = True, nodes: str | int | None = None
) -> None:
    # rich.text when printing only (start-up)
    from rich.text import Text

    text = output.text  # the pod's and the scheduler's text is data: escaped, never markup
    console = output.stdout_console()
    pod = d.pod
    # pure logic imported with the printing (start-up)
    from kschedctl.observe.diagnosis import WITHHELD

    verdict = (
        text("can be scheduled", "green") if d.schedulable else text("cannot be scheduled", "red")
    )
    if d.schedulable is None:
        verdict = Text.assemble(text(WITHHELD, "yellow"), " (no verdict: see plugins-not-run)")
    if d.evaluation is None:
        verdict = text("nothing to schedule", "green") if d.schedulable else text("stuck", "red")
    lines = [
        Text.assemble("Pod:        ", text(f"{pod['namespace']}/{pod['name']} ({d.phase})")),
        Text.assemble("Scheduler:  ", text(_scheduler_line(d.scheduler))),
        Text.assemble("Verdict:    ", verdict),
    ]
    if d.summary:
        lines.append(Text.assemble("Summary:    ", text(d.summary)))
    lines.append(Text("\nFindings:"))
    for f in d.findings:
        lines.append(
            Text.assemble("  ", text(*_MARK[f.severity]), " ", text(f"{f.code}: {f.message}"))
        )
        if f.fix:
            lines.append(Text.assemble("      fix: ", text(f.fix)))
    for line in lines:
        console.print(line, highlight=False)
    ev = d.evaluation
    if ev is None or not ev.nodes:
        return
    console.print("", highlight=False)
    # pure logic imported with the printing (start-up)
    from kschedctl.observe.nodegroups import ALL, GROUPED, node_layout

    shape = node_layout(nodes, len(ev.nodes))
    if shape == GROUPED:
        _print_groups(d, headers)
        output.info(
            f"{len(ev.nodes)} nodes in {len(d.node_groups)} group(s) by reason; "
            "--nodes all shows one row per node"
        )
        return
    shown = ev.nodes if shape == ALL else ev.nodes[: int(shape)]
    rows = []
    scores = _plugin_scores(d)
    for v in shown:
        if v.fits:
            rows.append((v.name, *_fitting(d), scores.get(v.name, "")))
            continue
        for index, r in enumerate(v.reasons if all_reasons else v.scheduler_reasons):
            rows.append((v.name if index == 0 else "", "no" if index == 0 else "",
                         r.plugin, r.message, r.detail))  # fmt: skip
    output.print_table(("node", "fits", "filter", "reason", "detail"), rows, headers=headers)
    if len(shown) < len(ev.nodes):
        output.info(f"… {len(ev.nodes) - len(shown)} more node(s): --nodes all lists them")


def _fitting(d: Diagnosis) -> tuple[str, str, str]:
    """FITS, FILTER and REASON of a node every built-in filter passes: with the scheduler's
    plugins not run, not "yes"."""
    if d.unrun_plugins is None:
        return ("yes", "", "")
    # pure logic imported with the printing (start-up)
    from kschedctl.observe.diagnosis import WITHHELD

    return ("unknown", "", WITHHELD)


def _plugin_scores(d: Diagnosis) -> dict[str, str]:
    """Node -> "score NAME=… NAME=…": the plugins' scores where every filter passes."""
    if d.plugins is None:
        return {}
    return {
        node: "plugin score " + " ".join(f"{k}={v:g}" for k, v in s.items())
        for node, s in d.plugins.scores.items()
        if s
    }


def _print_groups(d: Diagnosis, headers: bool) -> None:
    """One row per distinct verdict (a row per reason when a node has several)."""
    rows: list[tuple[object, ...]] = []
    for g in d.node_groups:
        examples = ", ".join(g.examples) + (", …" if g.count > len(g.examples) else "")
        if g.fits:
            rows.append((g.count, *_fitting(d), "", examples))
            continue
        for index, r in enumerate(g.reasons):
            detail = (
                r.detail
                if r.details == 1
                else f"e.g. {g.names[0]}: {r.detail} ({r.details} different)"
            )
            first = index == 0
            rows.append((g.count if first else "", "no" if first else "", r.plugin, r.message,
                         detail, examples if first else ""))  # fmt: skip
    output.print_table(
        ("nodes", "fits", "filter", "reason", "detail", "examples"), rows, headers=headers
    )


def print_summary(
    summary: tuple[PendingReason, ...], all_namespaces: bool, *, headers: bool = True
) -> None:
    """``why --all``: one row per scheduler and reason."""
    # pure logic imported with the printing (start-up)
    from kschedctl.observe.nodegroups import EXAMPLES

    rows: list[tuple[object, ...]] = []
    for r in summary:
        names = r.pods if all_namespaces else tuple(p.partition("/")[2] for p in r.pods)
        shown = names[:EXAMPLES]
        examples = ", ".join(shown) + (", …" if len(names) > len(shown) else "")
        nodes = r.nodes if r.code.startswith("rejected-by-") or r.nodes else ""
        rows.append((r.scheduler, r.reason, len(r.pods), nodes, examples))
    output.print_table(("scheduler", "reason", "pods", "nodes", "examples"), rows, headers=headers)


def print_pending(
    diagnoses: list[Diagnosis], all_namespaces: bool, *, headers: bool = True
) -> None:
    # pure logic imported with the printing (start-up)
    from kschedctl.observe.diagnosis import WITHHELD

    columns = ["namespace"] if all_namespaces else []
    columns += ["pod", "scheduler", "verdict", "why"]
    rows = []
    for d in diagnoses:
        blocking = d.blocking
        reason = d.summary or (
            blocking.message if blocking else d.findings[0].message if d.findings else ""
        )
        verdict = "schedulable" if d.schedulable else (blocking.code if blocking else "blocked")
        if d.schedulable is None:
            verdict, reason = "plugins-not-run", WITHHELD
        row = [d.pod["namespace"]] if all_namespaces else []
        row += [d.pod["name"], d.pod["schedulerName"], verdict, reason]
        rows.append(row)
    output.print_table(columns, rows, headers=headers)
