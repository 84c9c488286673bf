"""Scheduler log lines (pure): timestamps, which lines matter, how they are shown.

``kschedctl logs`` reads every replica with ``timestamps=true`` so that replicas can be merged
in time order and a follow can resume after a restart without repeating lines; the timestamp
is shown only when asked for. The lines that explain a scheduler that does not schedule are
highlighted: ``forbidden`` (RBAC), waiting for the leader Lease, and scheduling failures.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

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
    # client-go's leaderelection (kube-scheduler), and kschedctl's own scheduler
    (LEASE_ACQUIRED, re.compile(r"successfully acquired lease|became the leader", re.IGNORECASE)),
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
    container: str | None = None  # the container of a pod's line (None: not a pod's)

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


# One colour per pod, like stern: picked by the pod's name, so the same pod keeps its colour
# across runs and replicas rarely share one. The prefix carries the name: colour adds nothing
# the text does not say.
SOURCE_COLOURS = ("cyan", "green", "magenta", "blue", "bright_cyan", "bright_green",
                  "bright_magenta", "bright_blue", "dark_orange", "orchid")  # fmt: skip


def source_colour(source: str) -> str:
    return SOURCE_COLOURS[zlib.crc32(source.encode()) % len(SOURCE_COLOURS)]


def as_json(line: LogLine) -> dict[str, object]:
    """``logs -o json``: one object per line (a contract)."""
    return {"pod": line.source, "container": line.container, "leader": line.leader,
            "time": line.time, "message": line.text}  # fmt: skip


_STEPPED_DOWN = re.compile(r"released the Lease", re.IGNORECASE)


@dataclass
class Leadership:
    """Which lines a pod logged while it led: "(leader)" is never stamped on what it said
    before it became the leader.

    Two witnesses, both observable: the Lease (``holder`` and its ``acquireTime``, ``since``:
    the current holder leads from that moment on; the Lease keeps no history of earlier
    holders), and each pod's own lines (client-go's "successfully acquired lease", kschedctl's
    "became the leader" start a term; "stopped leading", "leaderelection lost", "released the
    Lease" end it), which also mark the terms of pods that led before and survive when the
    Lease has moved on. ``--tail`` may cut the acquisition line off: the Lease still marks the
    current term.
    """

    holder: str | None = None
    since: str | None = None
    leading: dict[str, bool] = field(default_factory=dict)
    # Pods whose own acquisition line is in the lines read: their own lines say when their
    # term began, more exactly than line times against acquireTime (a runtime may stamp the
    # lines of a fast start-up after the acquisition they precede).
    self_witnessed: set[str] = field(default_factory=set)

    def witness(self, lines: list[LogLine]) -> list[LogLine]:
        """Read a whole batch first (logs without -f): see :attr:`self_witnessed`."""
        self.self_witnessed = {line.source for line in lines if line.kind == LEASE_ACQUIRED}
        return lines

    def mark(self, line: LogLine) -> LogLine:
        kind = line.kind
        if kind == LEASE_ACQUIRED:
            self.leading[line.source] = True
        by_lease = (
            line.source == self.holder
            and line.source not in self.self_witnessed
            and self.since is not None
            and line.time is not None
            and time_key(line.time) >= time_key(self.since)
        )
        leader = by_lease or self.leading.get(line.source, False)
        if kind == LEASE_LOST or _STEPPED_DOWN.search(line.text):
            self.leading[line.source] = False
        return line if line.leader == leader else replace(line, leader=leader)


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
