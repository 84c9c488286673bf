"""Scheduler events in one shape (pure), from either API that serves them.

kube-scheduler records through events.k8s.io/v1 (``reportingController`` = the scheduler
name, ``regarding``, ``note``, repeats aggregated into ``series``); clusters and tools that
read core/v1 see the same objects as ``involvedObject``, ``message``, ``count`` and
``reportingComponent`` (or ``source.component`` for events written by the old recorder).
Both become :class:`Event`, ordered by the time they were last seen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kschedctl.observe.schedulers import parse_time

# What kube-scheduler reports: binding, failures, and the pods it evicts to make room.
SCHEDULER_REASONS = ("Scheduled", "FailedScheduling", "Preempted")
TYPES = ("Normal", "Warning")

_KIND_ALIASES = {"po": "Pod", "pod": "Pod", "pods": "Pod", "node": "Node", "nodes": "Node"}


@dataclass(frozen=True)
class Event:
    """One event; ``time`` is when it was last seen (series/count aware)."""

    time: datetime | None
    first_time: datetime | None
    type: str
    reason: str
    message: str
    count: int
    controller: str
    instance: str
    kind: str
    namespace: str
    name: str
    uid: str  # the regarded object's uid
    event_uid: str
    event_name: str = ""  # the Event object's own name (`events -o name`)

    @property
    def object(self) -> str:
        """kubectl's OBJECT column: ``Pod/name`` (namespace shown separately)."""
        return f"{self.kind}/{self.name}" if self.kind else self.name

    @property
    def failed(self) -> bool:
        return self.type == "Warning" or self.reason == "FailedScheduling"

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": iso_time(self.time),
            "firstTime": iso_time(self.first_time),
            "type": self.type,
            "reason": self.reason,
            "message": self.message,
            "count": self.count,
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "regarding": {
                "kind": self.kind,
                "namespace": self.namespace,
                "name": self.name,
                "uid": self.uid,
            },
        }


def iso_time(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def first_time(*candidates: Any) -> datetime | None:
    """The first of ``candidates`` that parses as an API timestamp (events and pods share it)."""
    for value in candidates:
        if value:
            try:
                return parse_time(str(value))
            except ValueError:
                continue
    return None


@dataclass(frozen=True)
class _Shape:
    """Where one Event API keeps what :class:`Event` holds."""

    first: tuple[str, str]  # the first-seen timestamps, in the order they are trusted
    last: str  # the last-seen timestamp besides ``series`` and ``eventTime``
    message: str
    count: str
    controller: str
    source: str  # the old recorder's {component: …}
    about: str  # the object the event is about


# The same fields side by side: (events.k8s.io/v1, core/v1), one row per field of _Shape.
_WHERE = (
    (("eventTime", "deprecatedFirstTimestamp"), ("firstTimestamp", "eventTime")),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("note", "message"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("regarding", "involvedObject"),
)
EVENTS_V1, CORE_V1 = (_Shape(*column) for column in zip(*_WHERE, strict=True))


def _event(obj: Mapping[str, Any], shape: _Shape) -> Event:
    meta = obj.get("metadata") or {}
    series = obj.get("series") or {}
    about = obj.get(shape.about) or {}
    first = first_time(*(obj.get(key) for key in shape.first))
    last = first_time(
        series.get("lastObservedTime"),
        obj.get(shape.last),
        obj.get("eventTime"),
        meta.get("creationTimestamp"),
    )
    return Event(
        time=last,
        first_time=first or last,
        type=obj.get("type") or "",
        reason=obj.get("reason") or "",
        message=obj.get(shape.message) or "",
        count=int(series.get("count") or obj.get(shape.count) or 1),
        controller=obj.get(shape.controller)
        or (obj.get(shape.source) or {}).get("component")
        or "",
        instance=obj.get("reportingInstance") or "",
        kind=about.get("kind") or "",
        namespace=about.get("namespace") or meta.get("namespace") or "",
        name=about.get("name") or "",
        uid=about.get("uid") or "",
        event_uid=meta.get("uid") or "",
        event_name=meta.get("name") or "",
    )


def from_events_v1(obj: Mapping[str, Any]) -> Event:
    return _event(obj, EVENTS_V1)


def from_core_v1(obj: Mapping[str, Any]) -> Event:
    return _event(obj, CORE_V1)


def normalize(obj: Mapping[str, Any]) -> Event:
    """Either shape: events.k8s.io/v1 objects have ``regarding``/``note``, core/v1 ones not."""
    api = str(obj.get("apiVersion") or "")
    if api.startswith("events.k8s.io/") or (
        not api and ("regarding" in obj or "note" in obj or "reportingController" in obj)
    ):
        return from_events_v1(obj)
    return from_core_v1(obj)


def parse_for(target: str) -> tuple[str, str]:
    """``--for pod/NAME`` (or ``NAME``, a pod) as (Kind, name)."""
    kind, sep, name = target.partition("/")
    if not sep:
        return "Pod", target
    if not kind or not name:
        raise ValueError(f"--for {target!r}: use KIND/NAME, e.g. pod/my-pod")
    return _KIND_ALIASES.get(kind.lower(), kind[:1].upper() + kind[1:]), name


def parse_types(text: str | None) -> tuple[str, ...]:
    """``--types Warning,Normal`` as a tuple of canonical type names."""
    if not text:
        return TYPES
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        match = next((t for t in TYPES if t.lower() == part.lower()), None)
        if match is None:
            raise ValueError(f"unknown event type {part!r}: use {' and/or '.join(TYPES)}")
        out.append(match)
    return tuple(dict.fromkeys(out))


def select_events(
    events: Iterable[Event],
    *,
    types: Iterable[str] = TYPES,
    reasons: Iterable[str] | None = None,
    since: timedelta | None = None,
    now: datetime | None = None,
) -> list[Event]:
    """The events that pass the filters, oldest to newest, each once (by event uid)."""
    wanted_types = set(types)
    wanted_reasons = set(reasons) if reasons is not None else None
    cutoff = (now - since) if (since is not None and now is not None) else None
    seen: dict[str, Event] = {}
    for event in events:
        if event.type not in wanted_types:
            continue
        if wanted_reasons is not None and event.reason not in wanted_reasons:
            continue
        if cutoff is not None and (event.time is None or event.time < cutoff):
            continue
        seen[event.event_uid or str(id(event))] = event
    return sorted(seen.values(), key=lambda e: (e.time is None, e.time or datetime.min))
