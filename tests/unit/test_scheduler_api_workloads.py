"""The scheduler's watches of services and controllers (the default spreading's selectors)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kschedctl.base.errors import ForbiddenError
from kschedctl.k8s import scheduler_api
from kschedctl.k8s.scheduler_api import ClusterSchedulerApi
from kschedctl.kubeclient.watch import SYNC, WatchEvent


class Refusing:
    def __init__(self, refuse: bool) -> None:
        self.refuse = refuse
        self.gets: list[tuple[str, dict[str, Any]]] = []

    def get(self, path: str, **query: Any) -> dict[str, Any]:
        self.gets.append((path, query))
        if self.refuse:
            raise ForbiddenError('services is forbidden: User "x" cannot list resource')
        return {"items": []}


@pytest.mark.parametrize("refuse", [True, False], ids=["forbidden", "allowed"])
def test_a_forbidden_workload_list_still_lets_the_scheduler_become_ready(
    refuse: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = WatchEvent(SYNC, objects=[{"metadata": {"name": "web"}, "spec": {"selector": {}}}])

    def fake_list_and_watch(_cluster: Any, path: str, *_a: Any, **_k: Any) -> Iterator[WatchEvent]:
        assert path == "/api/v1/services"
        yield listed

    monkeypatch.setattr(scheduler_api, "list_and_watch", fake_list_and_watch)
    api = ClusterSchedulerApi.__new__(ClusterSchedulerApi)
    api.cluster = Refusing(refuse)  # type: ignore[assignment]
    api.watch_timeout = 300
    events = list(api.watch("services", threading.Event()))
    assert api.cluster.gets == [("/api/v1/services", {"limit": 1})]  # type: ignore[attr-defined]
    # forbidden: an empty SYNC first (readiness), then the retrying watch
    assert events == ([WatchEvent(SYNC, objects=[])] if refuse else []) + [listed]
