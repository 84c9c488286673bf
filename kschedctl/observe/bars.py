"""Stacked bars laid out in character cells (pure): the geometry of `top nodes` and
`events --timeline`, drawn by kschedctl/cli/pictures.py.

A bar is ``width`` cells for ``capacity``. Parts fill it left to right; when they add up to
more than the capacity the bar is rescaled to the total, so the whole over-commit stays in
the same ``width`` and the cells past the capacity mark are flagged ``over``. Boundaries are
rounded cumulatively, so the cells add up exactly and the same numbers always give the same
bar (the golden pictures depend on it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

FREE = ""  # the key of the empty cells after the parts


@dataclass(frozen=True)
class Run:
    """``cells`` consecutive cells of one part (``key``; :data:`FREE` for the unused room);
    ``over``: they lie past the capacity mark."""

    key: str
    cells: int
    over: bool = False


def bar(parts: Sequence[tuple[str, int]], capacity: int, width: int) -> list[Run]:
    """The runs of one bar, left to right; their cells add up to ``width`` (``width`` ≥ 0).

    ``parts`` are (key, amount ≥ 0) in drawing order; each part with an amount gets a cell
    at least (while ``width`` allows), however small its share. A capacity of 0 or less with
    anything requested is all over-commit; with nothing requested, all free.
    """
    if width <= 0:
        return []
    amounts = [(key, max(0, amount)) for key, amount in parts]
    total = sum(amount for _, amount in amounts)
    scale = max(capacity, total)
    if scale <= 0:
        return [Run(FREE, width)]
    mark = _cell(max(0, capacity), scale, width)  # first cell past the capacity
    if total > capacity:
        mark = min(mark, width - 1)  # any over-commit shows, however small
    runs: list[Run] = []
    start = done = 0
    left = sum(1 for _, amount in amounts if amount)  # parts with something still to draw
    for key, amount in amounts:
        done += amount
        end = _cell(done, scale, width)
        if amount:
            # every part that requests something stays visible: one cell at least, taken
            # from its neighbours while there is room for one cell per part
            left -= 1
            end = max(start, min(max(end, start + 1), width - left))
        _split(runs, key, start, end, mark)
        start = end
    _split(runs, FREE, start, width, mark)
    return runs


def _cell(amount: int, scale: int, width: int) -> int:
    """``amount`` of ``scale`` in cells of ``width``, rounded half up (integers only)."""
    return (2 * amount * width + scale) // (2 * scale)


def _split(runs: list[Run], key: str, start: int, end: int, mark: int) -> None:
    """Cells ``start``..``end`` of ``key``, cut at the capacity mark."""
    for lo, hi, over in ((start, min(end, mark), False), (max(start, mark), end, True)):
        if hi > lo:
            if runs and runs[-1].key == key and runs[-1].over == over:
                runs[-1] = Run(key, runs[-1].cells + hi - lo, over)
            else:
                runs.append(Run(key, hi - lo, over))


def percent(amount: int, capacity: int) -> int | None:
    """``amount`` as a whole percentage of ``capacity`` (None without a capacity)."""
    if capacity <= 0:
        return None
    return (200 * amount + capacity) // (2 * capacity)
