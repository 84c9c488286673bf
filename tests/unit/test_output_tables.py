"""Tables: the one printer (kschedctl/printers/table.py through kschedctl/cli/output.py) lays
them out as kubectl does, at any terminal width: upper-case headers, columns three spaces
apart, no cell cut, no trailing space."""

from __future__ import annotations

import pytest
from rich.text import Text

from kschedctl.cli import output
from kschedctl.printers import table

LONG = "a-scheduler-name-much-longer-than-any-column-rich-would-have-given-it-" * 2
TABLES = {
    "ascii": (["node", "fits"], [["n-1", "yes"], ["node-22", None]]),
    "unicode": (["pod", "why"], [["…", "✗ 日本"], ["éé", "[red]not markup[/red]"]]),
    "empty-cells": (["a", "b", "c"], [["", "", ""], ["x", "", 3]]),
    "wide-header": (["a-very-long-header", "b"], [["x", "y"]]),
    "control": (["a", "b"], [["line\nbreak", "tab\there"]]),
    "styled": (["a", "b"], [[Text("red", style="red"), Text("x\x1b[2J", style="bold")]]),
    "ragged": (["a", "b"], [["only one"]]),
    "too-wide": (["a", "b", "c"], [[LONG, "y" * 300, LONG]]),
}


@pytest.fixture(params=[80, 200], ids=["80-columns", "200-columns"])
def columns_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("COLUMNS", str(request.param))
    return int(request.param)


def _cells_of(line: str, starts: list[int]) -> list[str]:
    ends = [*starts[1:], None]
    return [line[a:b].rstrip(" ") for a, b in zip(starts, ends, strict=True)]


@pytest.mark.parametrize("headers", [True, False], ids=["headers", "no-headers"])
@pytest.mark.parametrize("name", list(TABLES))
def test_tables_never_cut_and_never_trail(
    name: str, headers: bool, columns_env: int, capsys: pytest.CaptureFixture[str]
) -> None:
    columns, rows = TABLES[name]
    output.print_table(columns, rows, headers=headers)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(rows) + headers
    for line in lines:
        assert line == line.rstrip(), repr(line)
        assert "\x1b" not in line  # piped: no colour, the escape in a cell is shown escaped
    shown = "\n".join(lines)
    for row in rows:
        for cell in row:
            plain = cell.plain if isinstance(cell, Text) else "" if cell is None else str(cell)
            assert output.cells([plain])[0] in shown  # whole, escaped to one line
    if "…" not in str(rows):
        assert "…" not in shown
    if headers:
        assert lines[0].split() == [c.upper() for c in columns]


def test_columns_line_up_three_spaces_apart(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [["default-scheduler", "pod", "1"], ["x", LONG, "22"], ["kschedctl", "", "333"]]
    output.print_table(["scheduler", "form", "pods"], rows)
    lines = capsys.readouterr().out.splitlines()
    starts = [0, len("default-scheduler") + 3, len("default-scheduler") + 3 + len(LONG) + 3]
    assert [_cells_of(line, starts) for line in lines] == [["SCHEDULER", "FORM", "PODS"], *rows]


def test_right_aligned_columns_end_together() -> None:
    rows = [["NAME", "PODS", "X"], ["a", "1", "y"], ["b", "1234", "z"]]
    widths = table.widths(rows)
    end = widths[0] + widths[1] - table.GAP
    lines = table.lines(rows, right={1})
    assert [line[:end].split()[-1] for line in lines] == ["PODS", "1", "1234"]
    assert [line[end : end + table.GAP] for line in lines] == ["   "] * 3


def test_wide_characters_take_two_cells() -> None:
    assert table.cell_width("日本") == 4 and table.cell_width("é") == 1
    assert table.cell_width("e\u0301") == 1
    first, second = table.lines([["日本", "x"], ["abcd", "y"]])
    assert table.cell_width(first[: first.index("x")]) == second.index("y") == 7


def test_a_watch_keeps_its_minimum_widths_but_never_cuts() -> None:
    (line,) = output.table_lines([["ab", LONG, "end"]], minimum=[10, 5])
    assert line == "ab" + " " * 8 + LONG + "   end"


def test_styled_cells_keep_their_style_and_layout() -> None:
    rows = [[Text("NAME", style="bold"), Text("STATE")], [Text("a", style="red"), "ok"]]
    head, row = output.table_lines(rows)
    assert head.plain == "NAME   STATE" and row.plain == "a      ok"
    assert any(span.style == "red" for span in row.spans)


def test_the_picture_form_is_the_same_layout() -> None:
    shown = output.table_text(["node", "fits"], [["n-1", "yes"], ["node-22", None]])
    rows = [["NODE", "FITS"], ["n-1", "yes"], ["node-22", ""]]
    assert shown.plain.splitlines() == table.lines(rows)


def test_thousands_of_rows_stay_whole(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [[f"node-{i:05d}", "no", "NodeResourcesFit", "Insufficient cpu", "cpu: 2 of 1"]
            for i in range(5000)]  # fmt: skip
    output.print_table(["node", "fits", "filter", "reason", "detail"], rows)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5001
    assert lines[-1] == "node-04999   no     NodeResourcesFit   Insufficient cpu   cpu: 2 of 1"
