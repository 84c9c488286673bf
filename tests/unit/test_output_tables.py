"""Tables: the direct layout of plain tables is byte for byte what rich prints, and fast."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console
from rich.text import Text

from kschedctl.cli import output

TABLES = {
    "ascii": (["node", "fits"], [["n-1", "yes"], ["node-22", None]]),
    "unicode": (["pod", "why"], [["…", "✗ 日本"], ["éé", "[red]not markup[/red]"]]),
    "empty-cells": (["a", "b", "c"], [["", "", ""], ["x", "", 3]]),
    "wide-header": (["a-very-long-header", "b"], [["x", "y"]]),
    "control": (["a"], [["line\nbreak"]]),  # rich lays it out
    "styled": (["a"], [[Text("red", style="red")]]),  # rich lays it out
    "ragged": (["a", "b"], [["only one"]]),  # rich lays it out
    "too-wide": (["a", "b"], [["x" * 600, "y" * 600]]),  # rich truncates it
}


def _rich(columns: list[str], rows: list[list[object]], headers: bool) -> str:
    out = io.StringIO()
    table = output._rich_table(columns, rows, title=None, headers=headers)
    Console(file=out, soft_wrap=True, width=1000).print(table)
    return out.getvalue()


@pytest.mark.parametrize("headers", [True, False], ids=["headers", "no-headers"])
@pytest.mark.parametrize("name", list(TABLES))
def test_plain_tables_print_what_rich_prints(
    name: str, headers: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    columns, rows = TABLES[name]
    output.print_table(columns, rows, headers=headers)
    assert capsys.readouterr().out == _rich(columns, rows, headers)


def test_thousands_of_rows_print_quickly(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [[f"node-{i:05d}", "no", "NodeResourcesFit", "Insufficient cpu", "cpu: 2 of 1"]
            for i in range(5000)]  # fmt: skip
    started = time.perf_counter()
    output.print_table(["node", "fits", "filter", "reason", "detail"], rows)
    took = time.perf_counter() - started
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5001 and lines[-1].startswith("node-04999  no    NodeResourcesFit")
    assert took < 2.0  # rich alone takes ~15 s for these
