"""``--since`` values: kubectl's Go durations (``30s``, ``10m``, ``1h30m``), plus days."""

from __future__ import annotations

import re

from kschedctl.errors import UsageError

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
ACCEPTED = "a duration like 30s, 10m, 2h, 1h30m or 2d"


def parse_duration(text: str, option: str = "--since") -> float:
    """Seconds in ``text``; a UsageError (exit 2) naming the accepted format otherwise."""
    value = text.strip()
    pos, total = 0, 0.0
    for match in _PART.finditer(value):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not value or pos != len(value) or total <= 0:
        raise UsageError(f"invalid {option} {text!r}", hint=f"use {ACCEPTED}")
    return total
