"""`kschedctl history NAME`: the revisions deploy recorded, like `helm history`."""

from __future__ import annotations

from typing import Annotated

import typer

from kschedctl.cli import output, registers
from kschedctl.cli.common import SchedulerName, connect
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.options import DEFAULT_PRINTING, WIDE_FORMATS, Printing, output_flags
from kschedctl.printers import formats

COLUMNS = ("revision", "updated", "status", "form", "version", "by", "description")


@kube_flags
@output_flags(WIDE_FORMATS)
def history(
    name: SchedulerName,
    kube: Kube = DEFAULT_KUBE,
    printing: Printing = DEFAULT_PRINTING,
    namespace: Annotated[
        str | None,
        typer.Option(
            "-n", "--namespace", show_default=False,
            help="The scheduler's namespace (default: the one holding its revisions).",
        ),
    ] = None,
    max_revisions: Annotated[
        int | None, typer.Option("--max", min=1, help="Only the last N revisions.")
    ] = None,
) -> None:  # fmt: skip
    """The revisions of a scheduler, oldest first: one per deploy or rollback.

    Each is a Secret of type kschedctl.io/revision.v1 beside the scheduler (the last 10 are
    kept, deploy --history-max); -o wide adds the overrides and the rendered objects' hash.
    """
    fmt = printing.format()
    # the use case loads the cluster layers: not at start-up
    from kschedctl.ops import history as use_case

    with connect(kube) as cluster:
        where = namespace or use_case.namespace_of(cluster, name)
        found = use_case.require_history(cluster, name, where)
    for problem in found.unreadable:
        output.warn(f"left out: {problem}")
    revisions = found.revisions[-max_revisions:] if max_revisions else found.revisions
    summaries = [r.to_summary() for r in revisions]
    if not fmt.is_table:
        output.emit(summaries, fmt, no_headers=printing.no_headers,
                    names=[f"secret/{r.secret_name}" for r in revisions])  # fmt: skip
        return
    wide = fmt.kind == formats.WIDE
    columns = COLUMNS + (("overrides", "objects hash") if wide else ())
    rows = []
    for s in summaries:
        row = [s[c] for c in ("revision", "updated", "status", "form", "version", "by",
                              "description")]  # fmt: skip
        if wide:
            given = ",".join(f"{k}={v}" for k, v in s["overrides"].items())
            row += [given or "-", s["objectsHash"][:12]]
        rows.append(row)
    output.print_table(columns, rows, headers=printing.headers)


register = registers("history", history)
