"""How `kschedctl logs` prints lines: plain when piped (stdout is data), highlighted on a
terminal. Imported when the command runs: rich is not start-up material.

A log line is whatever the scheduler's process wrote (pod names, event text, a plugin's
output): escaped (:mod:`kschedctl.base.terminal`, tabs kept) and styled as plain text, never markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich.text import Text

from kschedctl.base import terminal
from kschedctl.cli import output
from kschedctl.observe import loglines
from kschedctl.observe.loglines import Grep, LogLine

# How a terminal shows the lines that matter (the plain text is the same when piped).
STYLES = {
    loglines.FORBIDDEN: "bold red",
    loglines.SCHEDULING_FAILURE: "red",
    loglines.LEASE_LOST: "bold yellow",
    loglines.LEASE_WAIT: "yellow",
    loglines.LEASE_ACQUIRED: "green",
    loglines.ERROR: "red",
}


RAW = "raw"  # -o raw: the message only
JSON = "json"  # -o json: one object per line
LOG_FORMATS = (JSON, RAW)


def render_line(line: LogLine, *, prefix: bool, timestamps: bool, color: bool) -> str | Text:
    """The line as printed: plain text, or styled text for a terminal (the same characters):
    the prefix in its pod's colour (bold while it leads)."""
    parts = []
    if prefix:
        parts.append(loglines.prefix_for(line))
    if timestamps and line.time:
        parts.append(line.time)
    parts.append(line.text)
    if not color:
        return terminal.escape(" ".join(parts), terminal.LOG)
    body = output.text(" ".join(parts[1:] if prefix else parts), STYLES.get(line.kind or ""),
                       terminal.LOG)  # fmt: skip
    if not prefix:
        return body
    colour = loglines.source_colour(line.source)
    head = output.text(loglines.prefix_for(line) + " ", f"bold {colour}" if line.leader else colour)
    return Text.assemble(head, body)


class Printer:
    """Prints lines: markup on a terminal only, plain when piped (stdout is data); ``fmt``:
    None (the prefixed text), :data:`RAW` or :data:`JSON`."""

    def __init__(
        self, prefix: bool | None, timestamps: bool, keep: Grep, fmt: str | None = None
    ) -> None:
        self.console = output.stdout_console()
        self.color = self.console.is_terminal and fmt is None
        self.prefix = prefix
        self.timestamps = timestamps
        self.keep = keep
        self.fmt = fmt

    def __call__(self, lines: Iterable[LogLine], sources: int) -> None:
        prefix = self.prefix if self.prefix is not None else sources > 1
        out = self.console.file
        for line in lines:
            if not self.keep(line):
                continue
            if self.fmt == JSON:
                out.write(json.dumps(loglines.as_json(line)) + "\n")
            elif self.fmt == RAW:
                out.write(terminal.escape(line.text, terminal.LOG) + "\n")
            else:
                text = render_line(line, prefix=prefix, timestamps=self.timestamps,
                                   color=self.color)  # fmt: skip
                if isinstance(text, Text):
                    self.console.print(text, soft_wrap=True, highlight=False)
                    continue
                out.write(f"{text}\n")
            out.flush()
