"""`kschedctl events --timeline`: a scheduler's decisions per minute, from the same events
`kschedctl events` lists (same filters, same server-side selectors)."""

from __future__ import annotations

from typing import Any

from kschedctl.observe.timeline import Timeline, timeline
from kschedctl.ops.events import SchedulerEvents
from kschedctl.printers.formats import as_item, as_list


def event_timeline(source: SchedulerEvents) -> Timeline:
    """The current events of ``source`` per minute (``Timeline.last`` keeps the latest)."""
    return timeline(source.current().events)


def timeline_dict(shown: Timeline) -> dict[str, Any]:
    """``events --timeline -o json|yaml``: a kubectl ``List`` of ``SchedulingMinute`` items
    (named after their minute, ``2026-12-03T09:41Z``), each with ``minute`` (RFC 3339, UTC)
    and the counts ``scheduled``, ``failed``, ``preempted`` (a contract)."""
    return as_list([as_item("SchedulingMinute", m.label, m.to_dict()) for m in shown.minutes])
