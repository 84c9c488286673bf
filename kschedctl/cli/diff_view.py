"""How `diff` (and `deploy --diff`) prints: the `diff -u -N` lines on stdout, coloured on a
terminal only (rich leaves colour out when piped or under ``NO_COLOR``), what deploy does
beyond applying (replaces, prunes) on stderr. Every line is escaped: names, labels and file
text come from the cluster or the host."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedctl.cli import output
from kschedctl.printers.unified import line_style

if TYPE_CHECKING:
    from kschedctl.ops.diff import DiffResult


def print_diff(result: DiffResult) -> None:
    lines = []
    for change in result.changes:
        if change.note:
            output.info(f"{change.ref}: {change.note}")
        lines += [output.text(line, line_style(line)) for line in change.lines]
    output.write_lines(lines)
    if not result.differs:
        output.info(f"{result.name} ({result.form}): no differences")
