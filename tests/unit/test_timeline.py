"""`events --timeline`'s model (kschedctl/observe/timeline.py): decisions per minute, repeats
split between their first and last minute, quiet minutes kept, the latest minutes kept."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.observe.events import normalize
from kschedctl.observe.timeline import timeline
from kschedctl.ops.timeline import timeline_dict

SNAPSHOT = Path(__file__).parent / "fixtures" / "pictures" / "snapshot.yaml"


@pytest.fixture(scope="module")
def events() -> list[Any]:
    data = yaml.safe_load(SNAPSHOT.read_text(encoding="utf-8"))
    return [normalize(e) for e in data["events"]]


def _rows(shown: Any) -> list[tuple[str, int, int, int]]:
    return [(m.start.strftime("%H:%M"), m.scheduled, m.failed, m.preempted) for m in shown.minutes]


def test_per_minute(events: list[Any]) -> None:
    shown = timeline(events)
    assert _rows(shown) == [
        ("09:40", 2, 0, 0),
        ("09:41", 0, 1, 0),  # the failure's first time
        ("09:42", 0, 0, 0),  # quiet, kept: gaps show
        ("09:43", 1, 3, 1),  # its three repeats, counted when last seen
    ]
    assert shown.totals == {"scheduled": 3, "failed": 4, "preempted": 1}
    assert shown.busiest == 5


def test_order_does_not_matter(events: list[Any]) -> None:
    assert _rows(timeline(reversed(events))) == _rows(timeline(events))


def test_last_minutes(events: list[Any]) -> None:
    shown = timeline(events).last(2)
    assert _rows(shown) == [("09:42", 0, 0, 0), ("09:43", 1, 3, 1)]
    assert shown.omitted == 2
    assert shown.totals["failed"] == 4  # the totals stay the whole window's
    assert timeline(events).last(0).omitted == 0
    assert timeline(events).last(10).minutes == timeline(events).minutes


def test_other_reasons_and_no_time_are_left_out(events: list[Any]) -> None:
    other = normalize({"apiVersion": "events.k8s.io/v1", "metadata": {"uid": "x"},
                       "reason": "Pulled", "eventTime": "2026-12-03T10:00:00Z"})  # fmt: skip
    timeless = normalize({"apiVersion": "events.k8s.io/v1", "metadata": {"uid": "y"},
                          "reason": "Scheduled"})  # fmt: skip
    assert _rows(timeline([*events, other, timeless])) == _rows(timeline(events))
    assert timeline([]).minutes == [] and timeline([]).busiest == 0


def test_minutes_are_utc() -> None:
    event = normalize({"apiVersion": "events.k8s.io/v1", "metadata": {"uid": "z"},
                       "reason": "Scheduled", "eventTime": "2026-12-03T11:40:59+02:00"})  # fmt: skip
    (minute,) = timeline([event]).minutes
    assert minute.start == datetime(2026, 12, 3, 9, 40, tzinfo=timezone.utc)
    assert minute.label == "2026-12-03T09:40Z"


def test_json_contract(events: list[Any]) -> None:
    data = timeline_dict(timeline(events).last(1))
    assert data["kind"] == "List"
    assert data["items"] == [
        {"kind": "SchedulingMinute", "metadata": {"name": "2026-12-03T09:43Z"},
         "minute": "2026-12-03T09:43:00Z", "scheduled": 1, "failed": 3, "preempted": 1}
    ]  # fmt: skip
