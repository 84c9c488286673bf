"""The cell geometry of the pictures (kschedctl/observe/bars.py): exact widths, over-commit
past the capacity mark, every non-empty part visible."""

from __future__ import annotations

import pytest

from kschedctl.observe.bars import FREE, Run, bar, percent


def _cells(runs: list[Run]) -> str:
    """A bar as letters: the key's first letter, upper case past the capacity mark, '.' free."""
    return "".join(
        ("." if r.key == FREE else (r.key[0].upper() if r.over else r.key[0])) * r.cells
        for r in runs
    )


@pytest.mark.parametrize(
    ("parts", "capacity", "width", "expected"),
    [
        ([("a", 2), ("b", 1)], 4, 8, "aaaabb.."),  # 2/4 and 1/4 of 8 cells
        ([("a", 2), ("b", 2)], 4, 8, "aaaabbbb"),
        ([], 4, 5, "....."),
        ([("a", 0)], 4, 4, "...."),
        ([("a", 3), ("b", 3)], 4, 6, "aaabBB"),  # 6 of 4: rescaled, past 4/6 flagged over
        ([("a", 6)], 4, 6, "aaaaAA"),
        ([("a", 101)], 100, 10, "aaaaaaaaaA"),  # 1% over still shows a red cell
        ([("a", 1)], 0, 4, "AAAA"),  # nothing allocatable: all over-commit
        ([], 0, 3, "..."),
        ([("a", 1), ("b", 1000)], 1001, 10, "abbbbbbbbb"),  # the small part keeps one cell
        ([("a", 1), ("b", 1), ("c", 1)], 1000, 4, "abc."),
        ([("a", 1), ("b", 1), ("c", 1)], 3, 2, "bc"),  # fewer cells than parts: the last ones win
    ],
    ids=["fits", "full", "empty", "zero part", "over", "over one part", "slightly over", "no capacity",
         "nothing at all", "tiny part", "tiny parts", "narrow"],
)  # fmt: skip
def test_bar(parts: list[tuple[str, int]], capacity: int, width: int, expected: str) -> None:
    runs = bar(parts, capacity, width)
    assert _cells(runs) == expected
    assert sum(r.cells for r in runs) == width


def test_bar_of_no_width_is_empty() -> None:
    assert bar([("a", 1)], 1, 0) == []


@pytest.mark.parametrize("total", range(0, 40))
def test_cells_always_add_up(total: int) -> None:
    parts = [("a", total // 3), ("b", total - total // 3), ("c", 1)]
    for width in (1, 7, 40):
        runs = bar(parts, 25, width)
        assert sum(r.cells for r in runs) == width
        assert (total + 1 > 25) == any(r.over for r in runs)


def test_same_numbers_same_bar() -> None:
    parts = [("x", 1234), ("y", 777)]
    assert bar(parts, 4000, 40) == bar(list(parts), 4000, 40)


@pytest.mark.parametrize(
    ("amount", "capacity", "expected"),
    [(1, 2, 50), (1, 3, 33), (2, 3, 67), (5, 4, 125), (0, 4, 0), (3, 0, None)],
)
def test_percent(amount: int, capacity: int, expected: int | None) -> None:
    assert percent(amount, capacity) == expected
