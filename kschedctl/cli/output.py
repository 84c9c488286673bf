"""Presentation: data to stdout (yaml/json with stable keys), tables and progress to stderr.

Consoles are created per call (never a module-global Console) so tests that capture
stdout/stderr see everything. rich is imported on first use: it costs ~30 ms of start-up
that commands printing plain data (render, validate) should not pay.

What the cluster says is data (DESIGN.md "Trust"): every table cell, message and line printed
here goes through :func:`kschedctl.base.terminal.escape`, and rich never reads it as markup or
emoji codes (the consoles have both off; styled text is built with :func:`text`). The data
formats stay exact: JSON escapes control characters itself, YAML writes them escaped
(:mod:`kschedctl.base.yamltext`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kschedctl.base import terminal, yamltext
from kschedctl.base.errors import as_called
from kschedctl.printers import formats
from kschedctl.printers.formats import OutputFormat

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


def stdout_console() -> Console:
    # rich.console on first use: --help and piped data never pay for it
    from rich.console import Console

    # Piped output must not wrap at 80 columns: kubectl never folds its tables.
    width = None if sys.stdout.isatty() else 1000
    # markup and emoji off: a string printed is shown as it is, never read as "[link=…]"
    return Console(file=sys.stdout, soft_wrap=True, width=width, markup=False, emoji=False)


def stderr_console() -> Console:
    from rich.console import Console  # on first use (module docstring)

    return Console(file=sys.stderr, soft_wrap=True, markup=False, emoji=False)


def text(value: object, style: str | None = None, keep: str = "") -> Text:
    """A styled piece of output from data: ``value`` escaped (:func:`kschedctl.base.terminal.escape`
    with ``keep``), as plain text, never markup."""
    from rich.text import Text  # on first use (module docstring)

    return Text(terminal.escape("" if value is None else str(value), keep), style=style or "")


def _cell(value: Any) -> Any:
    """A table cell as printed: text escaped to one line; a styled ``Text`` keeps its style
    (and its spans when it holds nothing to escape)."""
    from rich.text import Text  # on first use (module docstring)

    if isinstance(value, Text):
        if terminal.is_inert(value.plain):
            return value
        return Text(terminal.escape(value.plain), style=value.style)
    return terminal.escape("" if value is None else str(value))


def echo(message: str = "", *, err: bool = False) -> None:
    """A line of a command's text output (stdout, or stderr with ``err``): ``message`` may
    hold several lines; everything else a terminal acts on is escaped."""
    stream = sys.stderr if err else sys.stdout
    stream.write(terminal.escape(message, terminal.LINES) + "\n")
    stream.flush()


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def emit_data(data: Any, fmt: str) -> None:
    """Write ``data`` to stdout as yaml or json."""
    sys.stdout.write(yamltext.to_yaml(data, document=True) if fmt == "yaml" else to_json(data))
    sys.stdout.flush()


def emit(
    data: Any,
    fmt: OutputFormat,
    *,
    no_headers: bool = False,
    names: Sequence[str] | None = None,
) -> None:
    """Print ``data`` in one of the data formats (``fmt`` is not a table): yaml, json, name,
    jsonpath, jsonpath-as-json, custom-columns. Every command prints through here, so each
    format reads the same data ``-o json`` shows.

    ``names`` replaces the ``kind/name`` lines ``-o name`` derives from ``data`` where the
    rows are not objects (``why``: the pods it explains).
    """
    if fmt.kind in (formats.YAML, formats.JSON):
        text = yamltext.to_yaml(data, document=True) if fmt.kind == formats.YAML else to_json(data)
    elif fmt.kind == formats.NAME:
        lines = list(names) if names is not None else formats.names(data)
        text = "".join(f"{line}\n" for line in lines)
    elif fmt.kind in (formats.JSONPATH, formats.JSONPATH_AS_JSON):
        text = formats.run_template(fmt, data)
    elif fmt.kind == formats.CUSTOM_COLUMNS:
        text = formats.custom_columns(fmt.argument, data, headers=not no_headers)
    else:
        raise ValueError(f"{fmt} is a table format: the command prints its table")
    sys.stdout.write(text)
    sys.stdout.flush()


def print_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    headers: bool = True,
) -> None:
    """A kubectl-like plain table on stdout (data, so it stays pipeable).

    Cells are literal text, escaped to one line (:func:`kschedctl.base.terminal.escape`): event
    messages and log lines carry brackets ("plugin(s) [NodeAffinity]") that rich would
    otherwise read as markup, and whatever an object's editor wrote. Pass :func:`text` to
    style a cell.
    """
    rows = [[_cell(v) for v in row] for row in rows]
    console = stdout_console()
    lines = _plain_lines(columns, rows, console.width, headers) if title is None else None
    if lines is None:
        console.print(_rich_table(columns, rows, title=title, headers=headers))
        return
    # The same text rich lays out, written directly: rich spends ~3 ms a row measuring
    # and rendering, which is seconds for `why --nodes all` on thousands of nodes.
    body = lines
    if headers:
        # rich.text only for the header's style (start-up)
        from rich.text import Text

        head, *body = lines
        console.print(Text(head, style="bold"), highlight=False)
    sys.stdout.write("".join(f"{line}\n" for line in body))
    sys.stdout.flush()


def _rich_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None, headers: bool
) -> Any:
    # rich.table on first table only (start-up)
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=text(title) if title else None,
        box=None,
        header_style="bold",
        show_header=headers,
        pad_edge=False,
        show_edge=False,
    )
    for col in columns:
        table.add_column(col.upper(), no_wrap=True)
    for row in rows:
        table.add_row(*(v if isinstance(v, Text) else text(v) for v in row))
    return table


def _plain_lines(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], width: int, headers: bool
) -> list[str] | None:
    """The header (if ``headers``) and rows as rich lays out a table of plain one-line cells
    that fits ``width`` (columns padded to their widest cell, two spaces apart, the last one
    padded too); None when rich must do it: styled cells, too wide, no rows. The cells are
    escaped already (:func:`print_table`)."""
    # rich on first use (module docstring)
    from rich.cells import cell_len
    from rich.text import Text

    if not rows:
        return None
    cells = [[c.upper() for c in columns]] if headers else []
    for row in rows:
        if len(row) != len(columns) or any(isinstance(v, Text) for v in row):
            return None
        cells.append(["" if v is None else str(v) for v in row])
    widths = [max(cell_len(line[i]) for line in cells) for i in range(len(columns))]
    if sum(widths) + 2 * (len(widths) - 1) > width:
        return None
    return [
        "  ".join(c + " " * (w - cell_len(c)) for c, w in zip(line, widths, strict=True))
        for line in cells
    ]


def info(message: str) -> None:
    """Progress and notes for humans: stderr, never stdout. ``message`` is literal text (it
    quotes names, images and paths the user gave, and what the cluster said): never read as
    rich markup, and escaped but for its line breaks."""
    stderr_console().print(terminal.escape(as_called(message), terminal.LINES), highlight=False)


def warn(message: str) -> None:
    """A warning on stderr; ``message`` is literal text, as for :func:`info`."""
    from rich.text import Text  # on first use (module docstring)

    stderr_console().print(
        Text.assemble(
            ("warning:", "yellow"), " ", terminal.escape(as_called(message), terminal.LINES)
        ),
        highlight=False,
    )
