"""kubectl's table layout (pure): the one layout every kschedctl table is printed with.

kubectl writes its tables through Go's text/tabwriter (minwidth 6, padding 3, spaces): every
cell but a row's last is padded to its column's widest cell plus three spaces, and nothing is
ever cut: a long cell widens its column and the terminal wraps the line. Lines never end in
spaces (kubectl's do when the last cell is empty; piped output is compared and diffed).

Cells are text already escaped to one line (:func:`kschedctl.base.terminal.escape`); widths
count terminal cells (East Asian wide characters take two, combining marks none).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Sequence

GAP = 3  # spaces between columns (kubectl's tabwriter padding)
MIN_WIDTH = 6  # a column and its gap take this much at least (kubectl's minwidth)


def cell_width(text: str) -> int:
    """The terminal cells ``text`` takes."""
    if text.isascii():
        return len(text)
    width = 0
    for c in text:
        if unicodedata.combining(c):
            continue
        width += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return width


def widths(rows: Sequence[Sequence[str]], minimum: Sequence[int] = ()) -> list[int]:
    """Each column's width with its gap (every column but the last, which is never padded);
    ``minimum``: the least width of the first columns (a watch's rows, printed one by one,
    line up while their cells fit)."""
    count = max((len(r) for r in rows), default=0)
    found = [*minimum[:count], *[0] * (count - len(minimum))]
    for row in rows:
        for i, cell in enumerate(row[:-1]):
            found[i] = max(found[i], MIN_WIDTH, cell_width(cell) + GAP)
    return found


def padding(cell: str, width: int, *, right: bool = False) -> tuple[str, str]:
    """The spaces before and after ``cell`` in a column ``width`` wide (its gap included)."""
    room = max(0, width - cell_width(cell))
    if right and width:
        return " " * max(0, room - GAP), " " * min(room, GAP)
    return "", " " * room


def lines(
    rows: Sequence[Sequence[str]], *, right: Collection[int] = (), minimum: Sequence[int] = ()
) -> list[str]:
    """The rows laid out; ``right``: the indexes of the columns aligned right (numbers);
    ``minimum``: as :func:`widths`."""
    found = widths(rows, minimum)
    out = []
    for row in rows:
        parts = []
        for i, cell in enumerate(row):
            width = found[i] if i < len(row) - 1 else 0
            before, after = padding(cell, width, right=i in right)
            parts.append(before + cell + after)
        out.append("".join(parts).rstrip(" "))
    return out


def render(rows: Sequence[Sequence[str]], *, right: Collection[int] = ()) -> str:
    """The rows laid out as text, a newline after each (nothing for no rows)."""
    return "".join(f"{line}\n" for line in lines(rows, right=right))
