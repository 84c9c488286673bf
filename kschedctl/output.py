"""Presentation: data to stdout (yaml/json with stable keys), tables and progress to stderr.

Consoles are created per call (never a module-global Console) so tests that capture
stdout/stderr see everything. rich is imported on first use: it costs ~30 ms of start-up
that commands printing plain data (render, validate) should not pay.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kschedctl import yamltext

if TYPE_CHECKING:
    from rich.console import Console


def stdout_console() -> Console:
    # rich.console on first use: --help and piped data never pay for it
    from rich.console import Console

    # Piped output must not wrap at 80 columns: kubectl never folds its tables.
    width = None if sys.stdout.isatty() else 1000
    return Console(file=sys.stdout, soft_wrap=True, width=width)


def stderr_console() -> Console:
    from rich.console import Console

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


def print_table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None
) -> None:
    """A kubectl-like plain table on stdout (data, so it stays pipeable).

    Cells are literal text: event messages and log lines carry brackets ("plugin(s)
    [NodeAffinity]") that rich would otherwise read as markup. Pass a ``rich.text.Text`` to
    style a cell.
    """
    # rich.table on first table only (start-up)
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=Text(title) if title else None,
        box=None,
        header_style="bold",
        pad_edge=False,
        show_edge=False,
    )
    for col in columns:
        table.add_column(col.upper(), no_wrap=True)
    for row in rows:
        table.add_row(
            *(v if isinstance(v, Text) else Text("" if v is None else str(v)) for v in row)
        )
    stdout_console().print(table)


def info(message: str) -> None:
    """Progress and notes for humans: stderr, never stdout. ``message`` is literal text (it
    quotes names, images and paths the user gave): never read as rich markup."""
    stderr_console().print(message, highlight=False, markup=False)


def warn(message: str) -> None:
    """A warning on stderr; ``message`` is literal text, as for :func:`info`."""
    from rich.text import Text

    stderr_console().print(
        Text.assemble(("warning:", "yellow"), " ", message), highlight=False, markup=False
    )
