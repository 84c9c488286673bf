"""kubectl diff's output (pure): ``diff -u -N`` of a LIVE and a MERGED text per object or file.

kubectl diff writes both sides to two temporary trees and runs ``diff -u -N`` on them; here the
headers name the same two sides (``LIVE/<name>``, ``MERGED/<name>``) without the temporary
paths, and a side that does not exist is the empty text (``-N``: created, or deleted).
"""

from __future__ import annotations

import difflib


def unified(name: str, live: str, merged: str, context: int = 3) -> list[str]:
    """The lines of ``diff -u -N LIVE/name MERGED/name``; none when the texts are equal."""
    body = list(
        difflib.unified_diff(
            live.splitlines(),
            merged.splitlines(),
            f"LIVE/{name}",
            f"MERGED/{name}",
            n=context,
            lineterm="",
        )
    )
    return [f"diff -u -N LIVE/{name} MERGED/{name}", *body] if body else []


def line_style(line: str) -> str | None:
    """The colour kubectl's pager would give a diff line on a terminal (None: plain)."""
    if line.startswith(("diff ", "--- ", "+++ ")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return None
