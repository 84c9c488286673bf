"""Presentation: data to stdout (yaml/json with stable keys), tables and progress to stderr.

Consoles are created per call (never a module-global Console) so tests that capture
stdout/stderr see everything. rich is imported on first use: it costs ~30 ms of start-up
that commands printing plain data (render, validate) should not pay.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kschedctl import yamltext
from kschedctl.printers import formats
from kschedctl.printers.formats import OutputFormat

if TYPE_CHECKING:
    from rich.console import Console


def stdout_console() -> Console:
    # rich.console on first use: --help and piped data never pay for it
    from rich.console import Console

    # Piped output must not wrap at 80 columns: kubectl never folds its tables.
    width = None if sys.stdout.isatty() else 1000
    return Console(file=sys.stdout, soft_wrap=True, width=width)


def stderr_console() -> Console:
    from rich.console import Console  # on first use (module docstring)

    return Console(file=sys.stderr, soft_wrap=True)


def to_yaml(data: Any) -> str:
    """``data`` as a YAML document (block style, key order kept; see kschedctl.yamltext)."""
    return yamltext.to_yaml(data, document=True)


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def emit_data(data: Any, fmt: str) -> None:
    """Write ``data`` to stdout as yaml or json."""
    sys.stdout.write(to_yaml(data) if fmt == "yaml" else to_json(data))
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
        text = to_yaml(data) if fmt.kind == formats.YAML else to_json(data)
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

    Cells are literal text: event messages and log lines carry brackets ("plugin(s)
    [NodeAffinity]") that rich would otherwise read as markup. Pass a ``rich.text.Text`` to
    style a cell.
    """
    rows = list(rows)
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
        title=Text(title) if title else None,
        box=None,
        header_style="bold",
        show_header=headers,
        pad_edge=False,
        show_edge=False,
    )
    for col in columns:
        table.add_column(col.upper(), no_wrap=True)
    for row in rows:
        table.add_row(
            *(v if isinstance(v, Text) else Text("" if v is None else str(v)) for v in row)
        )
    return table


def _plain_lines(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], width: int, headers: bool
) -> list[str] | None:
    """The header (if ``headers``) and rows as rich lays out a table of plain one-line cells
    that fits ``width`` (columns padded to their widest cell, two spaces apart, the last one
    padded too); None when rich must do it: styled cells, control characters, too wide, no
    rows."""
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
    if any(_CONTROL.search(c) for line in cells for c in line):
        return None
    widths = [max(cell_len(line[i]) for line in cells) for i in range(len(columns))]
    if sum(widths) + 2 * (len(widths) - 1) > width:
        return None
    return [
        "  ".join(c + " " * (w - cell_len(c)) for c, w in zip(line, widths, strict=True))
        for line in cells
    ]


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def info(message: str) -> None:
    """Progress and notes for humans: stderr, never stdout. ``message`` is literal text (it
    quotes names, images and paths the user gave): never read as rich markup."""
    stderr_console().print(message, highlight=False, markup=False)


def warn(message: str) -> None:
    """A warning on stderr; ``message`` is literal text, as for :func:`info`."""
    from rich.text import Text  # on first use (module docstring)

    stderr_console().print(
        Text.assemble(("warning:", "yellow"), " ", message), highlight=False, markup=False
    )
