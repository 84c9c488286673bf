"""List, then watch from the list's resourceVersion — client-go's reflector, on plain dicts.

The consumer sees a ``SYNC`` event with every object after each (re)list, then ``ADDED`` /
``MODIFIED`` / ``DELETED`` events. A watch the server ends (``timeoutSeconds``) or that drops
resumes from the last resourceVersion seen; ``410 Gone`` (history compacted) relists; an
unreachable API server is retried with a capped backoff, so the loop outlives API server
restarts.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kschedctl.base.errors import ApiError, KschedError
from kschedctl.kubeclient.client import Cluster

SYNC = "SYNC"


@dataclass
class WatchEvent:
    type: str  # SYNC, ADDED, MODIFIED or DELETED
    object: dict[str, Any] = field(default_factory=dict)  # empty for SYNC
    objects: list[dict[str, Any]] = field(default_factory=list)  # SYNC only


class Gone(Exception):
    """The resourceVersion we watch from has been compacted away: relist."""


Transform = Callable[[dict[str, Any]], dict[str, Any]]


def _same(obj: dict[str, Any]) -> dict[str, Any]:
    return obj


def list_with_version(
    cluster: Cluster, path: str, *, transform: Transform = _same, **query: Any
) -> tuple[list[dict[str, Any]], str]:
    """Every item (following ``continue``) and the resourceVersion to watch from.

    ``transform`` is applied to each item as its page arrives, so a caller that keeps only a
    few fields never holds every full object at once.
    """
    items: list[dict[str, Any]] = []
    token = None
    version = ""
    while True:
        page = cluster.get(path, limit=500, **query, **{"continue": token})
        items.extend(transform(item) for item in page.get("items") or [])
        meta = page.get("metadata") or {}
        # Every page of a paginated list is served from the first page's snapshot.
        version = version or meta.get("resourceVersion", "")
        token = meta.get("continue")
        if not token:
            return items, version


def watch_once(
    cluster: Cluster, path: str, resource_version: str, timeout_seconds: int, **query: Any
) -> Iterator[tuple[str, dict[str, Any]]]:
    """One watch request: (type, object) pairs, BOOKMARKs included, until the server ends it."""
    lines = cluster.stream_lines(
        path,
        read_timeout=timeout_seconds + 30,
        watch=True,
        resourceVersion=resource_version,
        allowWatchBookmarks=True,
        timeoutSeconds=timeout_seconds,
        **query,
    )
    for line in lines:
        if not line.strip():
            continue
        event = json.loads(line)
        kind, obj = event.get("type", ""), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Gone(obj.get("message", "resource version too old"))
            raise ApiError(obj.get("code", 500), obj.get("reason", ""), obj.get("message", ""))
        yield kind, obj


def list_and_watch(
    cluster: Cluster,
    path: str,
    stop: threading.Event,
    *,
    timeout_seconds: int = 300,
    max_backoff: float = 10.0,
    on_error: Callable[[Exception], None] = lambda _err: None,
    transform: Transform = _same,
    **query: Any,
) -> Iterator[WatchEvent]:
    """Events of ``path`` until ``stop`` is set (checked between events and retries).

    ``transform`` maps every listed or watched object before it is yielded.
    """
    version = ""
    backoff = 0.5
    while not stop.is_set():
        try:
            if not version:
                items, version = list_with_version(cluster, path, transform=transform, **query)
                yield WatchEvent(SYNC, objects=items)
            # Jitter spreads the re-watches of several watchers after an API server restart.
            timeout = int(timeout_seconds * random.uniform(0.8, 1.0))
            for kind, obj in watch_once(cluster, path, version, timeout, **query):
                version = (obj.get("metadata") or {}).get("resourceVersion") or version
                if kind != "BOOKMARK":
                    yield WatchEvent(kind, transform(obj))
                if stop.is_set():
                    return
            backoff = 0.5
        except Gone:
            version = ""
        except ApiError as err:
            if err.status == 410:
                version = ""
                continue
            on_error(err)
            stop.wait(backoff)
            backoff = min(backoff * 2, max_backoff)
        except (KschedError, ValueError) as err:  # unreachable, forbidden, broken stream
            on_error(err)
            stop.wait(backoff)
            backoff = min(backoff * 2, max_backoff)
