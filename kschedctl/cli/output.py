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
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kschedctl.base import terminal, yamltext
from kschedctl.base.errors import as_called
from kschedctl.printers import formats, table
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


def cells(row: Sequence[Any]) -> list[Any]:
    """A table row as printed (:func:`_cell`), for :func:`table_lines`."""
    return [_cell(v) for v in row]


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
    headers: bool = True,
    right: Collection[int] = (),
) -> None:
    """A kubectl table on stdout (data, so it stays pipeable): the one table printer
    (:mod:`kschedctl.printers.table`). Headers in upper case, columns three spaces apart,
    nothing cut (a long cell widens its column; the terminal wraps the line), no trailing
    spaces; ``right``: the indexes of the columns aligned right.

    Cells are literal text, escaped to one line (:func:`kschedctl.base.terminal.escape`): event
    messages and log lines carry brackets ("plugin(s) [NodeAffinity]") that rich would
    otherwise read as markup, and whatever an object's editor wrote. Pass :func:`text` to
    colour a cell: colour only adds to what the text says (it is dropped when piped and
    under ``NO_COLOR``).
    """
    write_lines(table_lines(_grid(columns, rows, headers), right=right))


def _grid(columns: Sequence[str], rows: Iterable[Sequence[Any]], headers: bool) -> list[list[Any]]:
    """The cells as printed (:func:`_cell`), under the bold upper-case headers."""
    from rich.text import Text  # on first use (module docstring)

    grid = [cells(row) for row in rows]
    if headers:
        grid.insert(0, [Text(c.upper(), style="bold") for c in columns])
    return grid


def table_lines(
    grid: Sequence[Sequence[Any]], *, right: Collection[int] = (), minimum: Sequence[int] = ()
) -> list[Any]:
    """The rows of ``grid`` (escaped cells: strings or styled ``Text``) laid out by
    :mod:`kschedctl.printers.table`: a plain string per row of strings, a ``Text`` per row
    holding styled cells. ``minimum``: as :func:`kschedctl.printers.table.widths`."""
    from rich.text import Text  # on first use (module docstring)

    plain = [[v.plain if isinstance(v, Text) else v for v in row] for row in grid]
    if not any(isinstance(v, Text) for row in grid for v in row):
        return table.lines(plain, right=right, minimum=minimum)
    widths = table.widths(plain, minimum)
    out: list[Any] = []
    for row, cells in zip(grid, plain, strict=True):
        line = Text()
        for i, (value, cell) in enumerate(zip(row, cells, strict=True)):
            width = widths[i] if i < len(row) - 1 else 0
            before, after = table.padding(cell, width, right=i in right)
            line.append(before)
            line.append_text(value if isinstance(value, Text) else Text(value))
            line.append(after)
        line.rstrip()
        out.append(line)
    return out


def table_text(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    headers: bool = True,
    right: Collection[int] = (),
) -> Text:
    """The table :func:`print_table` prints, as one ``Text`` for a picture (``top nodes``,
    ``simulate``) that is printed or exported as SVG or HTML."""
    from rich.text import Text  # on first use (module docstring)

    grid = _grid(columns, rows, headers)
    lines = [v if isinstance(v, Text) else Text(v) for v in table_lines(grid, right=right)]
    return Text("\n").join(lines)


def write_lines(lines: Sequence[Any]) -> None:
    """Lines of :func:`table_lines` on stdout: strings written as they are (rich spends ~3 ms
    a line measuring, which is seconds for `why --nodes all` on thousands of nodes), styled
    lines through a console that neither wraps nor crops them."""
    from rich.text import Text  # on first use (module docstring)

    console: Console | None = None
    for line in lines:
        if isinstance(line, Text):
            console = console or stdout_console()
            console.print(line, soft_wrap=True, highlight=False, crop=False)
        else:
            sys.stdout.write(f"{line}\n")
    sys.stdout.flush()


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
