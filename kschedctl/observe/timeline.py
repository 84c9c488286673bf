"""A scheduler's decisions per minute (pure): the data of `kschedctl events --timeline`.

Each scheduler event is one kind of decision: ``Scheduled`` (a pod bound), ``FailedScheduling``
(an attempt that found no node) and ``Preempted`` (a victim evicted to make room), the reasons
kube-scheduler records (pkg/scheduler/schedule_one.go, pkg/scheduler/framework/preemption/
preemption.go). A repeated event is one object whose ``series.count`` (or ``count``) says how
often it happened, with only its first and last time kept: its first occurrence counts in the
minute of its first time, the other ``count - 1`` in the minute it was last seen.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from kschedctl.observe.events import Event

SCHEDULED = "scheduled"
FAILED = "failed"
PREEMPTED = "preempted"
DECISIONS = (SCHEDULED, FAILED, PREEMPTED)
_DECISION_OF = {"Scheduled": SCHEDULED, "FailedScheduling": FAILED, "Preempted": PREEMPTED}
MINUTE = timedelta(minutes=1)
# Events come from the cluster: one with a time in the year 1 next to one from today would make
# a minute per row for two thousand years. A week covers any event TTL (default 1 hour).
MAX_MINUTES = 7 * 24 * 60


@dataclass(frozen=True)
class Minute:
    """The decisions made in the minute starting at ``start`` (UTC)."""

    start: datetime
    scheduled: int = 0
    failed: int = 0
    preempted: int = 0

    def count(self, decision: str) -> int:
        value: int = getattr(self, decision)
        return value

    @property
    def total(self) -> int:
        return self.scheduled + self.failed + self.preempted

    @property
    def label(self) -> str:
        """``2026-12-03T09:41Z``: the item's name in ``-o json``."""
        return self.start.strftime("%Y-%m-%dT%H:%MZ")

    def to_dict(self) -> dict[str, Any]:
        return {
            "minute": self.start.isoformat().replace("+00:00", "Z"),
            SCHEDULED: self.scheduled,
            FAILED: self.failed,
            PREEMPTED: self.preempted,
        }


@dataclass
class Timeline:
    """Every minute from the first decision to the last (quiet minutes included, so gaps
    show), the earliest ``omitted`` ones left out by a limit."""

    minutes: list[Minute]
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DECISIONS, 0))
    omitted: int = 0  # minutes before the first one shown

    @property
    def busiest(self) -> int:
        return max((m.total for m in self.minutes), default=0)

    def last(self, limit: int | None) -> Timeline:
        """Only the last ``limit`` minutes (None or 0: all); the totals stay the whole's."""
        if not limit or limit >= len(self.minutes):
            return self
        cut = len(self.minutes) - limit
        return replace(self, minutes=self.minutes[cut:], omitted=self.omitted + cut)


def minute_of(moment: datetime) -> datetime:
    """The start of ``moment``'s minute, in UTC."""
    utc = moment.astimezone(timezone.utc)
    return utc.replace(second=0, microsecond=0)


def timeline(events: Iterable[Event]) -> Timeline:
    """``events`` (any order) per minute; events of other reasons or without a time are left
    out."""
    buckets: dict[datetime, dict[str, int]] = {}
    totals = dict.fromkeys(DECISIONS, 0)
    for event in events:
        decision = _DECISION_OF.get(event.reason)
        last = event.time or event.first_time
        if decision is None or last is None:
            continue
        first = event.first_time or last
        count = max(1, event.count)
        for moment, n in ((first, 1), (last, count - 1)):
            if n:
                bucket = buckets.setdefault(minute_of(moment), dict.fromkeys(DECISIONS, 0))
                bucket[decision] += n
        totals[decision] += count
    if not buckets:
        return Timeline([], totals)
    start, end = min(buckets), max(buckets)
    span = int((end - start) / MINUTE) + 1
    omitted = max(0, span - MAX_MINUTES)  # counted, never built
    minutes = []
    for i in range(omitted, span):
        moment = start + i * MINUTE
        minutes.append(Minute(moment, **buckets.get(moment, {})))
    return Timeline(minutes, totals, omitted)
