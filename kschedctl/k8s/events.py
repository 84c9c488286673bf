"""Fetch scheduler events with server-side field selectors, and watch for new ones.

events.k8s.io/v1 first (the API kube-scheduler writes to); core/v1 when the server does not
serve it, with the same filters under their core names. Filters the server cannot express (a
set of reasons or types, a time window) are applied by :func:`kschedctl.observe.events.select`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.kubeclient.watch import SYNC, list_and_watch
from kschedctl.observe.events import SCHEDULER_REASONS, Event, normalize

EVENTS_V1 = "/apis/events.k8s.io/v1"
CORE_V1 = "/api/v1"

# Field names per API: events.k8s.io/v1 translates its own names to core's on the server.
_FIELDS = {
    EVENTS_V1: {
        "controller": "reportingController",
        "kind": "regarding.kind",
        "name": "regarding.name",
        "reason": "reason",
        "type": "type",
    },
    CORE_V1: {
        # Servers without events.k8s.io/v1 (< 1.19) ran schedulers with the old recorder,
        # which fills source.component.
        "controller": "source",
        "kind": "involvedObject.kind",
        "name": "involvedObject.name",
        "reason": "reason",
        "type": "type",
    },
}


@dataclass(frozen=True)
class Query:
    """What to ask the server for; None leaves a filter to the client."""

    namespace: str | None  # None: all namespaces
    controller: str | None = None
    kind: str | None = None
    name: str | None = None
    type: str | None = None


def _path(api: str, namespace: str | None) -> str:
    return f"{api}/namespaces/{namespace}/events" if namespace else f"{api}/events"


def field_selector(api: str, query: Query, reason: str | None = None) -> str | None:
    names = _FIELDS[api]
    parts = [
        f"{names[key]}={value}"
        for key, value in (
            ("controller", query.controller),
            ("kind", query.kind),
            ("name", query.name),
            ("reason", reason),
            ("type", query.type),
        )
        if value
    ]
    return ",".join(parts) or None


def served_api(cluster: Cluster) -> str:
    """events.k8s.io/v1 when served, else core/v1."""
    try:
        cluster.get(EVENTS_V1)
        return EVENTS_V1
    except NotFoundError:
        return CORE_V1


def list_events(cluster: Cluster, query: Query, api: str | None = None) -> list[Event]:
    """The matching events. Without a scheduler name, one request per scheduler reason, so
    the server filters out the (many) events other controllers write."""
    api = api or served_api(cluster)
    path = _path(api, query.namespace)
    reasons: tuple[str | None, ...] = (None,) if query.controller else SCHEDULER_REASONS
    out: list[Event] = []
    for reason in reasons:
        selector = field_selector(api, query, reason)
        out += [normalize(o) for o in cluster.list(path, fieldSelector=selector)]
    return out


def watch_events(
    cluster: Cluster,
    query: Query,
    stop: threading.Event,
    *,
    api: str | None = None,
    on_error: Callable[[Exception], None] = lambda _err: None,
) -> Iterator[tuple[bool, Event]]:
    """(initial, event) pairs: the current events (``initial``) and then every new or updated
    one, until ``stop`` is set. A relist after a broken watch yields its events again; the
    caller de-duplicates (by event uid and count)."""
    api = api or served_api(cluster)
    for change in list_and_watch(
        cluster,
        _path(api, query.namespace),
        stop,
        on_error=on_error,
        fieldSelector=field_selector(api, query),
    ):
        if change.type == SYNC:
            current = [normalize(obj) for obj in change.objects]
            current.sort(key=lambda e: e.time.timestamp() if e.time else 0.0)
            for event in current:
                yield True, event
        elif change.type in ("ADDED", "MODIFIED"):
            yield False, normalize(change.object)


def failed_scheduling(
    cluster: Cluster, namespace: str | None, pod: str | None = None
) -> dict[str, tuple[Event, int]]:
    """The newest FailedScheduling event per pod (keyed by uid, or namespace/name when the
    event has none) and how many failures that pod's events count in all."""
    query = Query(namespace, kind="Pod", name=pod)
    try:
        api = EVENTS_V1
        objs = cluster.list(_path(api, namespace), fieldSelector=field_selector(
            api, query, "FailedScheduling"))  # fmt: skip
    except NotFoundError:
        api = CORE_V1
        objs = cluster.list(_path(api, namespace), fieldSelector=field_selector(
            api, query, "FailedScheduling"))  # fmt: skip
    out: dict[str, tuple[Event, int]] = {}
    for event in (normalize(o) for o in objs):
        key = event.uid or f"{event.namespace}/{event.name}"
        latest, count = out.get(key, (event, 0))
        if event.time and (latest.time is None or event.time > latest.time):
            latest = event
        out[key] = (latest, count + event.count)
    return out


def scheduled_events(cluster: Cluster, namespace: str | None = None) -> list[Event]:
    """Every ``Scheduled`` event about a pod: which scheduler bound which pod to which node
    (double-booking detection). One request, the server filtering by reason."""
    api = served_api(cluster)
    selector = field_selector(api, Query(namespace, kind="Pod"), "Scheduled")
    return [normalize(o) for o in cluster.list(_path(api, namespace), fieldSelector=selector)]
