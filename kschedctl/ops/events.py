"""`kschedctl events`: the events schedulers reported, listed once or watched.

:func:`event_filter` turns the command's arguments into an :class:`EventFilter` (pure: usage
errors come before any connection); :func:`open_events` aims it at a cluster. The server
filters what a field selector can express (scheduler, object, a single type); the rest (a set
of reasons or types, a time window) is applied here by
:func:`kschedctl.observe.events.select_events`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from kschedctl.base.errors import UsageError
from kschedctl.k8s.events import Query, list_events, served_api, watch_events
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.durations import parse_duration
from kschedctl.observe.events import (
    SCHEDULER_REASONS,
    TYPES,
    Event,
    parse_for,
    parse_types,
    select_events,
)
from kschedctl.printers.formats import as_item, as_list


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class EventFilter:
    """Which events to show."""

    scheduler: str | None  # the events' reportingController; None: every scheduler
    kind: str | None = None  # with ``name``: only events about this object
    name: str | None = None
    types: tuple[str, ...] = TYPES
    since: timedelta | None = None

    @property
    def reasons(self) -> tuple[str, ...] | None:
        """Without a scheduler name, only the reasons schedulers report."""
        return None if self.scheduler else SCHEDULER_REASONS

    def query(self, namespace: str | None) -> Query:
        """The part the server can filter on."""
        single = self.types[0] if len(self.types) == 1 else None
        return Query(namespace, controller=self.scheduler, kind=self.kind, name=self.name,
                     type=single)  # fmt: skip

    def select(self, events: Iterable[Event], now: datetime, *, window: bool = True) -> list[Event]:
        """The events that pass, oldest first; ``window=False`` ignores ``since``."""
        return select_events(events, types=self.types, reasons=self.reasons,
                      since=self.since if window else None, now=now)  # fmt: skip


def event_filter(
    scheduler: str | None = None,
    for_object: str | None = None,
    types: str | None = None,
    since: str | None = None,
) -> EventFilter:
    """From the command's words: ``--for pod/NAME``, ``--types Warning,Normal``, ``--since 10m``.
    A UsageError (exit 2) names what is wrong."""
    try:
        wanted_types = parse_types(types)
        kind, name = parse_for(for_object) if for_object else (None, None)
    except ValueError as err:
        raise UsageError(str(err)) from err
    window = timedelta(seconds=parse_duration(since)) if since else None
    return EventFilter(scheduler, kind, name, wanted_types, window)


def new_events(
    changes: Iterable[tuple[bool, Event]],
    wanted: EventFilter,
    now: Callable[[], datetime] = _now,
) -> Iterator[Event]:
    """The events of a watch worth showing: those that pass ``wanted``, each once per count.

    ``changes`` are ``(initial, event)`` pairs: ``--since`` bounds the initial ones only (new
    events are always recent), and a relist's repeats or an unchanged event are dropped; a
    repeat whose count grew is shown again.
    """
    shown: dict[str, int] = {}  # event uid -> count shown
    for initial, event in changes:
        if not wanted.select([event], now(), window=initial):
            continue
        if shown.get(event.event_uid) == event.count:
            continue
        shown[event.event_uid] = event.count
        yield event


@dataclass
class EventList:
    events: list[Event]
    namespace: str | None  # None: all namespaces

    def to_dict(self) -> dict[str, Any]:
        """``events -o json|yaml``: a kubectl ``List`` of ``Event`` items, each
        ``kind``/``metadata`` then the event's keys (a contract)."""
        return as_list([event_item(e) for e in self.events])


def event_item(event: Event) -> dict[str, Any]:
    """One event as ``events -o json`` (and, one document each, ``events -w -o json``) shows it."""
    return as_item("Event", event.event_name, event.to_dict(), namespace=event.namespace or None)


class SchedulerEvents:
    """One filter aimed at one cluster and namespace, with the event API the server serves."""

    def __init__(
        self, cluster: Cluster, wanted: EventFilter, namespace: str | None, api: str
    ) -> None:
        self.cluster = cluster
        self.wanted = wanted
        self.namespace = namespace  # None: all namespaces
        self.api = api

    def current(self) -> EventList:
        """The events there are now, oldest to newest."""
        listed = list_events(self.cluster, self.wanted.query(self.namespace), self.api)
        return EventList(self.wanted.select(listed, _now()), self.namespace)

    def watch(self, stop: threading.Event, warn: Callable[[str], None]) -> Iterator[Event]:
        """The current events, then new ones as they come, until ``stop`` is set. A broken
        watch is retried; ``warn`` hears about each distinct problem once."""
        problems: list[str] = []

        def on_error(err: Exception) -> None:
            text = getattr(err, "message", str(err))
            if text not in problems:
                problems.append(text)
                warn(f"watch: {text} (retrying)")

        changes = watch_events(self.cluster, self.wanted.query(self.namespace), stop,
                               api=self.api, on_error=on_error)  # fmt: skip
        yield from new_events(changes, self.wanted)


def open_events(
    cluster: Cluster,
    wanted: EventFilter,
    *,
    namespace: str | None = None,
    all_namespaces: bool = False,
) -> SchedulerEvents:
    """``namespace`` defaults to the context's; asks the server which event API it serves
    (events.k8s.io/v1, else core/v1)."""
    ns = None if all_namespaces else (namespace or cluster.namespace)
    return SchedulerEvents(cluster, wanted, ns, served_api(cluster))
