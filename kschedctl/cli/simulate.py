"""`kschedctl simulate SNAPSHOT --scheduler SPEC …`: candidate schedulers side by side on a lab
built from a snapshot of a cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kschedctl.base.errors import UsageError, WorseError, shown_path
from kschedctl.cli import output, registers
from kschedctl.cli.options import check_output, output_option
from kschedctl.printers import formats

TABLE_LIMIT = 20  # nodes drawn per candidate in the table and the report
# One report, not a list of objects: no name or custom-columns rows to print.
FORMATS = (formats.TABLE, formats.YAML, formats.JSON, formats.JSONPATH, formats.JSONPATH_AS_JSON)


def simulate(
    snapshot: Annotated[
        str,
        typer.Argument(
            help="The snapshot file (`kschedctl snapshot -f FILE`).",
            metavar="SNAPSHOT",
            show_default=False,
        ),
    ],
    schedulers: Annotated[
        list[str],
        typer.Option(
            "--scheduler",
            help="A candidate: a workspace directory or its scheduler.yaml (kube-scheduler with "
            "the rendered config, or kschedctl's own scheduler with its strategy and policy). "
            "Repeat to compare; the first is the baseline.",
            metavar="SPEC",
            show_default=False,
        ),
    ],
    workload: Annotated[
        str | None,
        typer.Option(
            "--workload",
            help="Also submit these pods: a YAML file of Pods, Deployments, ReplicaSets, "
            "StatefulSets or Jobs (replicas / parallelism expanded to pods NAME-0, NAME-1, …).",
            metavar="FILE",
            show_default=False,
        ),
    ] = None,
    no_pending: Annotated[
        bool,
        typer.Option(
            "--no-pending", help="Submit only the --workload pods, not the snapshot's pending pods."
        ),
    ] = False,
    fail_if_worse: Annotated[
        bool,
        typer.Option(
            "--fail-if-worse",
            help="Exit 7 when a later candidate leaves more pods unschedulable than the first.",
        ),
    ] = False,
    report_to: Annotated[
        str | None,
        typer.Option(
            "--report",
            help="Also write the report to FILE.svg or FILE.html.",
            metavar="FILE",
            show_default=False,
        ),
    ] = None,
    settle: Annotated[
        float,
        typer.Option(
            "--settle",
            min=0.5,
            help="Seconds without a binding after which the pods left are unschedulable.",
        ),
    ] = 5.0,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=10, help="Seconds each candidate may take at most."),
    ] = 600.0,
    limit: Annotated[
        int,
        typer.Option("--limit", min=0, help="Nodes drawn per candidate (busiest first; 0: all)."),
    ] = TABLE_LIMIT,
    lab_dir: Annotated[
        str | None,
        typer.Option(
            "--lab-dir",
            help="Where to build the simulation's lab (default: a temporary directory); "
            "removed afterwards.",
            metavar="DIR",
            show_default=False,
        ),
    ] = None,
    out: Annotated[str | None, output_option(FORMATS, " (default table)")] = None,
) -> None:
    """Run each candidate scheduler on a fresh copy of the cluster in SNAPSHOT and compare:
    pods scheduled and left unschedulable (with kube-scheduler's reasons and `why`'s), fallback
    steps and preemptions, nodes used and per-node requests, pods placed differently, time to
    schedule. Builds a local lab (`kschedctl lab build` first): nodes on kwok, the snapshot's
    bound pods pinned to them, its pending pods submitted to the candidate.
    """
    fmt = check_output(out, FORMATS)
    if not schedulers:
        raise UsageError("give at least one --scheduler", hint="kschedctl simulate --help")
    # the picture module loads rich (start-up): only when drawing
    from kschedctl.cli import picture_export

    target = picture_export.check_export(report_to)
    # Imported here: --help must not pay for the lab and cluster layers.
    from kschedctl.ops.simulate import load_plan
    from kschedctl.ops.simulate import simulate as run_simulation

    plan, candidates = load_plan(snapshot, schedulers, workload, pending=not no_pending)
    found = run_simulation(
        plan,
        candidates,
        lab_dir=Path(lab_dir) if lab_dir else None,
        settle=settle,
        timeout=timeout,
        progress=output.info,
    )
    from kschedctl.cli.simulate_view import report_picture  # rich tables: on use, like pictures

    if target is not None:
        picture_export.export(report_picture(found, limit or None), target, "kschedctl simulate")
        output.info(f"wrote {shown_path(target)}")
    if fmt.is_table:
        output.stdout_console().print(report_picture(found, limit or None), highlight=False)
    else:
        output.emit(found.to_dict(), fmt)
    if fail_if_worse and found.worse:
        first = found.candidates[0]
        raise WorseError(
            f"{', '.join(found.worse)} leave(s) more pods unschedulable than {first.name} "
            f"({first.unschedulable})",
            hint="the report above says which pods and why",
        )


register = registers("simulate", simulate)
