"""The scheduling queue: order, backoff, unschedulable pods and cluster changes."""

from __future__ import annotations

import threading
from typing import Any

from kschedctl.model.scheduling.queue import SchedulingQueue


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def pod(
    name: str, priority: int | None = None, created: str = "2026-01-01T00:00:00Z"
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if priority is not None:
        spec["priority"] = priority
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "creationTimestamp": created,
        },
        "spec": spec,
    }


def names(q: SchedulingQueue) -> list[str]:
    out = []
    while (entry := q.pop(timeout=0)) is not None:
        out.append(entry.pod["metadata"]["name"])
    return out


def test_priority_then_age_then_name() -> None:
    q = SchedulingQueue(clock=Clock())
    q.add(pod("late", created="2026-01-01T00:00:05Z"))
    q.add(pod("b-early", created="2026-01-01T00:00:01Z"))
    q.add(pod("a-early", created="2026-01-01T00:00:01Z"))
    q.add(pod("important", priority=1000, created="2026-01-01T00:00:09Z"))
    q.add(pod("negative", priority=-5))
    assert names(q) == ["important", "a-early", "b-early", "late", "negative"]


def test_a_pod_is_in_flight_once() -> None:
    q = SchedulingQueue(clock=Clock())
    q.add(pod("a"))
    first = q.pop(timeout=0)
    assert first is not None
    q.add(pod("a"))  # seen again while in flight: not queued twice
    assert q.pop(timeout=0) is None
    assert q.counts()["in-flight"] == 1


def test_unschedulable_waits_for_a_change_then_backs_off() -> None:
    clock = Clock()
    q = SchedulingQueue(initial_backoff=1, max_backoff=10, clock=clock)
    q.add(pod("a"))
    entry = q.pop(timeout=0)
    assert entry is not None
    q.unschedulable(entry)
    clock.now += 60
    assert q.pop(timeout=0) is None  # no change: it waits
    assert q.counts()["unschedulable"] == 1
    assert q.move_all() == 1
    assert q.pop(timeout=0) is entry  # its backoff (1 s) is long over: straight to active


def test_backoff_doubles_and_is_capped() -> None:
    clock = Clock()
    q = SchedulingQueue(initial_backoff=1, max_backoff=10, clock=clock)
    assert [q.backoff(n) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    q.add(pod("a"))
    entry = q.pop(timeout=0)
    assert entry is not None
    for attempt in range(1, 4):
        q.retry(entry)
        assert q.pop(timeout=0) is None
        clock.now += q.backoff(attempt) - 0.01
        assert q.pop(timeout=0) is None
        clock.now += 0.02
        popped = q.pop(timeout=0)
        assert popped is entry


def test_change_during_the_attempt_sends_the_pod_to_backoff_not_unschedulable() -> None:
    clock = Clock()
    q = SchedulingQueue(initial_backoff=1, clock=clock)
    q.add(pod("a"))
    entry = q.pop(timeout=0)
    assert entry is not None
    q.move_all()  # a node appeared while we were deciding
    q.unschedulable(entry)
    assert q.counts()["backoff"] == 1
    clock.now += 1.5
    assert q.pop(timeout=0) is entry


def test_relevant_update_moves_an_unschedulable_pod() -> None:
    clock = Clock()
    q = SchedulingQueue(initial_backoff=1, clock=clock)
    q.add(pod("a"))
    entry = q.pop(timeout=0)
    assert entry is not None
    q.unschedulable(entry)
    clock.now += 5
    q.update(pod("a"), relevant=False)  # e.g. our own status patch
    assert q.counts()["unschedulable"] == 1
    newer = pod("a")
    newer["metadata"]["labels"] = {"x": "y"}
    q.update(newer, relevant=True)
    popped = q.pop(timeout=0)
    assert popped is not None and popped.pod is newer


def test_unschedulable_pods_are_retried_after_five_minutes() -> None:
    clock = Clock()
    q = SchedulingQueue(clock=clock)
    q.add(pod("a"))
    entry = q.pop(timeout=0)
    assert entry is not None
    q.unschedulable(entry)
    clock.now += 299
    assert q.pop(timeout=0) is None
    clock.now += 2
    assert q.pop(timeout=0) is entry


def test_deleted_pods_are_never_popped() -> None:
    q = SchedulingQueue(clock=Clock())
    q.add(pod("a"))
    q.add(pod("b"))
    q.delete("uid-a")
    assert names(q) == ["b"]
    assert "uid-a" not in q and len(q) == 1


def test_deleted_while_in_flight_is_not_requeued() -> None:
    q = SchedulingQueue(clock=Clock())
    q.add(pod("a"))
    entry = q.pop(timeout=0)
    assert entry is not None
    q.delete(entry.uid)
    q.unschedulable(entry)
    q.retry(entry)
    assert len(q) == 0


def test_pop_blocks_until_a_pod_arrives_and_close_releases_it() -> None:
    q = SchedulingQueue()
    got: list[Any] = []
    worker = threading.Thread(target=lambda: got.append(q.pop()))
    worker.start()
    q.add(pod("a"))
    worker.join(5)
    assert got and got[0].uid == "uid-a"
    waiter = threading.Thread(target=lambda: got.append(q.pop()))
    waiter.start()
    q.close()
    waiter.join(5)
    assert not waiter.is_alive() and got[1] is None


def test_pop_waits_out_a_backoff_with_the_real_clock() -> None:
    q = SchedulingQueue(initial_backoff=0.05)
    q.add(pod("a"))
    entry = q.pop(timeout=0)
    assert entry is not None
    q.retry(entry)
    assert q.pop(timeout=0) is None
    assert q.pop(timeout=2) is entry
