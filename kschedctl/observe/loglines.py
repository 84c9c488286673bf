"""Scheduler log lines (pure): timestamps, which lines matter, how they are shown.

``kschedctl logs`` reads every replica with ``timestamps=true`` so that replicas can be merged
in time order and a follow can resume after a restart without repeating lines; the timestamp
is shown only when asked for. The lines that explain a scheduler that does not schedule are
highlighted: ``forbidden`` (RBAC), waiting for the leader Lease, and scheduling failures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kschedctl.base.errors import quote
from kschedctl.observe.userregex import PatternError, UserRegex

# Kinds of lines worth highlighting, most important first (the first match wins).
FORBIDDEN = "forbidden"
SCHEDULING_FAILURE = "scheduling-failure"
LEASE_WAIT = "lease-wait"
LEASE_LOST = "lease-lost"
LEASE_ACQUIRED = "lease-acquired"
ERROR = "error"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (FORBIDDEN, re.compile(r"\bforbidden\b", re.IGNORECASE)),
    (
        SCHEDULING_FAILURE,
        re.compile(
            r"unable to schedule pod|error scheduling pod|FailedScheduling|"
            r"nodes are available",
            re.IGNORECASE,
        ),
    ),
    (
        LEASE_LOST,
        re.compile(r"leaderelection lost|failed to renew lease|stopped leading", re.IGNORECASE),
    ),
    (
        LEASE_WAIT,
        re.compile(
            r"attempting to acquire leader lease|failed to acquire lease|"
            r"error retrieving resource lock|lock is held by",
            re.IGNORECASE,
        ),
    ),
    (LEASE_ACQUIRED, re.compile(r"successfully acquired lease", re.IGNORECASE)),
    # klog's header: severity letter, then MMDD (E0102 15:04:05.000000 ...).
    (ERROR, re.compile(r"^[EF]\d{4} ")),
)

_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) (.*)$")


@dataclass(frozen=True)
class LogLine:
    """One line of one source (a pod, or a unit). ``time`` is RFC 3339 (None if unknown)."""

    source: str
    text: str
    time: str | None = None
    leader: bool = False

    @property
    def kind(self) -> str | None:
        return classify(self.text)


def split_timestamp(raw: str) -> tuple[str | None, str]:
    """``2026-01-02T15:04:05.123456789Z text`` (pods/log with timestamps) as (time, text)."""
    match = _STAMP.match(raw)
    if not match:
        return None, raw
    return match.group(1), match.group(2)


def time_key(stamp: str | None) -> str:
    """A sort key for RFC 3339 UTC stamps of any precision (pods/log uses nanoseconds)."""
    if not stamp:
        return ""
    base, _, rest = stamp.partition(".")
    fraction = rest.rstrip("Z")[:9].ljust(9, "0") if rest else "0" * 9
    return f"{base.rstrip('Z')}.{fraction}"


def classify(text: str) -> str | None:
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    return None


def merge(streams: Iterable[Iterable[LogLine]]) -> list[LogLine]:
    """Lines of several replicas in time order (stable: a replica's own order is kept)."""
    lines = [line for stream in streams for line in stream]
    return sorted(lines, key=lambda line: time_key(line.time))


def prefix_for(line: LogLine) -> str:
    return f"[{line.source}{' (leader)' if line.leader else ''}]"


class Grep:
    """``--grep RE``: a compiled filter (raises ValueError on a bad expression). Matched in
    time linear in the line (:class:`UserRegex`): a log line is not to be trusted, and the
    pattern runs on every line of a follow."""

    def __init__(self, expression: str | None) -> None:
        try:
            self.pattern = UserRegex(expression) if expression else None
        except PatternError as err:
            raise ValueError(f"invalid --grep expression {quote(expression)}: {err}") from err

    def __call__(self, line: LogLine) -> bool:
        return self.pattern is None or self.pattern.search(line.text)
