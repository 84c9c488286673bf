"""The one write-or-check step of every generator (completion scripts and table, JSON Schemas,
the docs' reference pages): write the files whose text changed, or with ``check`` name them
and fail, so a drift test and ``tools/regen.py --check`` read the same verdict."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path


def write_or_check(
    outputs: Iterable[tuple[Path, Callable[[], str]]],
    *,
    check: bool,
    what: str,
    regenerate: str,
    shown: Callable[[Path], str] = str,
) -> int:
    """``outputs``: (path, the text it should hold). Returns 1 when ``check`` finds one stale."""
    stale: list[Path] = []
    for path, make in outputs:
        text = make()
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    names = [shown(path) for path in stale]
    if check and stale:
        print(f"stale {what}: {', '.join(names)}; run: {regenerate}", file=sys.stderr)
        return 1
    for name in names:
        print(f"wrote {name}", file=sys.stderr)
    return 0
