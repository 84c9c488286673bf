"""Durations, one parser for two uses.

- Config fields (``leaseDuration``, ``httpTimeout``…) are Go durations, read by Go's
  ``time.ParseDuration`` (go/src/time/format.go): an optional sign, then numbers with units
  ``ns us µs ms s m h`` (``15s``, ``1m30s``, ``.5h``), or a bare ``0``.
- ``--since`` values are kubectl's durations (``30s``, ``10m``, ``1h30m``) plus days: no sign,
  units ``ms s m h d``, digits on both sides of a decimal point, and more than zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.base.errors import UsageError, quote


@dataclass(frozen=True)
class DurationSyntax:
    """What one use accepts: units (seconds each), how a number is written, whether signed."""

    units: Mapping[str, float]
    number: str  # a regular expression for one number
    signed: bool
    part: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Longest unit first, so ``ms`` is not read as ``m`` followed by garbage.
        units = "|".join(sorted(self.units, key=len, reverse=True))
        object.__setattr__(self, "part", re.compile(f"({self.number})({units})"))


# Go's unitMap spells microseconds three ways: us, U+00B5 (micro sign), U+03BC (Greek mu).
GO = DurationSyntax(
    units={
        "ns": 1e-9,
        "us": 1e-6,
        "\u00b5s": 1e-6,
        "\u03bcs": 1e-6,
        "ms": 1e-3,
        "s": 1.0,
        "m": 60.0,
        "h": 3600.0,
    },
    number=r"\d+(?:\.\d*)?|\.\d+",
    signed=True,
)
SINCE = DurationSyntax(
    units={"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400},
    number=r"\d+(?:\.\d+)?",
    signed=False,
)


# The longest time.Duration (1<<63 - 1 ns), in seconds: ParseDuration refuses more.
_GO_MAX_SECONDS = (2**63 - 1) / 1e9


def seconds(text: str, syntax: DurationSyntax = GO) -> float:
    """Seconds in ``text`` written in ``syntax``; ValueError (without a message) otherwise."""
    body, sign = text, 1.0
    if syntax.signed and body[:1] in ("+", "-"):
        sign, body = (-1.0 if body[0] == "-" else 1.0), body[1:]
    if body == "0":  # Go's time.ParseDuration: a bare zero needs no unit
        return 0.0
    pos, total = 0, 0.0
    for match in syntax.part.finditer(body):
        if match.start() != pos:
            break
        total += float(match.group(1)) * syntax.units[match.group(2)]
        pos = match.end()
    if pos == 0 or pos != len(body):
        raise ValueError
    if syntax is GO and total > _GO_MAX_SECONDS:
        raise ValueError  # time.ParseDuration: a time.Duration is int64 nanoseconds
    return sign * total


def parse_go_duration(value: Any) -> float:
    """A config field's Go duration (``15s``, ``1m30s``, ``500ms``) in seconds; ValueError.

    A null is no duration either: metav1.Duration's UnmarshalJSON reads it as "" and
    time.ParseDuration refuses that (kube-scheduler: time: invalid duration "")."""
    try:
        if isinstance(value, str):
            return seconds(value, GO)
    except ValueError:
        pass
    if value is None or isinstance(value, str):
        go = quote("" if value is None else value).replace("'", '"')
        raise ValueError(
            f"{quote(value)} is not a duration (write it like 15s, 1m30s or 500ms; "
            f"kube-scheduler: time: invalid duration {go})"
        )
    raise ValueError(f"{quote(value)} is not a duration (write it like 15s, 1m30s or 500ms)")


ACCEPTED = "a duration like 30s, 10m, 2h, 1h30m or 2d"


def parse_duration(text: str, option: str = "--since") -> float:
    """Seconds in a ``--since`` value; a UsageError (exit 2) naming the accepted format if not."""
    try:
        total = seconds(text.strip(), SINCE)
    except ValueError:
        total = 0.0
    if total <= 0:
        raise UsageError(f"invalid {option} {quote(text)}", hint=f"use {ACCEPTED}")
    return total
