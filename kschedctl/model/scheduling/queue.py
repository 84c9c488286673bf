"""The scheduling queue: kube-scheduler's active, backoff and unschedulable queues in one.

- **active**: a heap ordered by priority (highest first), then age (oldest first), then
  namespace/name, so the order is total and repeatable;
- **backoff**: pods that failed wait ``initial × 2^(attempts−1)`` seconds (capped) before they
  are tried again;
- **unschedulable**: pods no node fits wait for a cluster change that could help
  (:meth:`SchedulingQueue.move_all`), or at most ``max_unschedulable`` seconds.

A pod is tried by one worker at a time (popped until :meth:`done` or a requeue). If a cluster
change arrives while a pod is being tried and the attempt fails, the pod goes to backoff
rather than waiting in unschedulable for a change that has already happened
(kube-scheduler's ``moveRequestCycle``). Thread-safe; ``clock`` is injectable for tests.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.model.kubetypes import Pod

__all__ = ["QueuedPod", "SchedulingQueue", "pod_uid", "sort_key"]

ACTIVE, BACKOFF, UNSCHEDULABLE, IN_FLIGHT = "active", "backoff", "unschedulable", "in-flight"


def pod_uid(pod: Mapping[str, Any]) -> str:
    md = pod.get("metadata") or {}
    return str(md.get("uid") or f"{md.get('namespace')}/{md.get('name')}")


def sort_key(pod: Mapping[str, Any]) -> tuple[int, str, str]:
    """Priority (highest first), creation time (oldest first), then namespace/name."""
    md = pod.get("metadata") or {}
    priority = (pod.get("spec") or {}).get("priority")
    return (
        -(priority if isinstance(priority, int) else 0),
        str(md.get("creationTimestamp") or ""),
        f"{md.get('namespace')}/{md.get('name')}",
    )


@dataclass
class QueuedPod:
    uid: str
    pod: Pod  # the latest version seen
    attempts: int = 0  # failed attempts so far
    state: str = ACTIVE
    since: float = 0.0  # when it entered its current queue
    ready_at: float = 0.0  # backoff: when it may be tried again
    cycle: int = 0  # the move cycle when it was popped
    generation: int = 0  # bumps on every heap push, so stale heap entries are skipped
    updated: bool = False  # changed while in flight: retry promptly if the attempt fails
    key: tuple[int, str, str] = field(default=(0, "", ""))


@dataclass(eq=False)  # one per scheduler: compared by identity
class SchedulingQueue:
    initial_backoff: float = 1.0
    max_backoff: float = 10.0
    max_unschedulable: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _entries: dict[str, QueuedPod] = field(default_factory=dict, init=False)
    _heap: list[tuple[tuple[int, str, str], int, str]] = field(default_factory=list, init=False)
    # (ready_at, generation, uid)
    _backoff_heap: list[tuple[float, int, str]] = field(default_factory=list, init=False)
    _unschedulable: dict[str, QueuedPod] = field(default_factory=dict, init=False)
    _move_cycle: int = field(default=0, init=False)
    _closed: bool = field(default=False, init=False)
    _cond: threading.Condition = field(default_factory=threading.Condition, init=False)

    # -- feeding -----------------------------------------------------------------------------

    def add(self, pod: Pod) -> None:
        """A pending pod appeared (or was seen again): queue it unless already known."""
        uid = pod_uid(pod)
        with self._cond:
            entry = self._entries.get(uid)
            if entry is not None:
                self._update_locked(entry, pod)
                return
            entry = QueuedPod(uid, pod, key=sort_key(pod), since=self.clock())
            self._entries[uid] = entry
            self._push_locked(entry)

    def add_backoff(self, pod: Pod) -> None:
        """Queue a pod whose placement failed after the decision (binding error): it is
        tried again after the first backoff, unless it is queued already."""
        uid = pod_uid(pod)
        with self._cond:
            if uid in self._entries:
                return
            now = self.clock()
            entry = QueuedPod(uid, pod, attempts=1, key=sort_key(pod), since=now)
            entry.ready_at = now + self.backoff(1)
            self._entries[uid] = entry
            self._to_backoff_locked(entry, now)

    def update(self, pod: Pod, relevant: bool) -> None:
        """A newer version of a queued pod; ``relevant``: its spec, labels or annotations
        changed, which may make it fit (then it leaves the unschedulable queue)."""
        uid = pod_uid(pod)
        with self._cond:
            entry = self._entries.get(uid)
            if entry is None:
                entry = QueuedPod(uid, pod, key=sort_key(pod), since=self.clock())
                self._entries[uid] = entry
                self._push_locked(entry)
                return
            self._update_locked(entry, pod, relevant)

    def _update_locked(self, entry: QueuedPod, pod: Pod, relevant: bool = False) -> None:
        entry.pod = pod
        if not relevant:
            return
        if entry.state == IN_FLIGHT:
            entry.updated = True
        elif entry.state == UNSCHEDULABLE:
            self._leave_unschedulable_locked(entry)

    def delete(self, uid: str) -> None:
        """The pod is gone, bound, or no longer ours."""
        with self._cond:
            entry = self._entries.pop(uid, None)
            if entry is not None:
                entry.generation += 1  # its heap entries are now stale
                self._unschedulable.pop(uid, None)

    def move_all(self) -> int:
        """Something changed that could help unschedulable pods (a node appeared or changed,
        a pod went away): retry them, after their backoff. Returns how many moved."""
        with self._cond:
            self._move_cycle += 1
            waiting = list(self._unschedulable.values())
            for entry in waiting:
                self._leave_unschedulable_locked(entry)
            return len(waiting)

    # -- the worker's side -------------------------------------------------------------------

    def pop(self, timeout: float | None = None) -> QueuedPod | None:
        """The next pod to try (now in flight), or None on timeout or close."""
        deadline = None if timeout is None else self.clock() + timeout
        with self._cond:
            while not self._closed:
                now = self.clock()
                self._flush_locked(now)
                while self._heap:
                    _key, generation, uid = heapq.heappop(self._heap)
                    entry = self._entries.get(uid)
                    if entry is None or entry.generation != generation or entry.state != ACTIVE:
                        continue
                    entry.state, entry.cycle, entry.updated = IN_FLIGHT, self._move_cycle, False
                    return entry
                wake = self._next_wake_locked()
                if deadline is not None:
                    wake = deadline if wake is None else min(wake, deadline)
                    if now >= deadline:
                        return None
                self._cond.wait(None if wake is None else max(wake - now, 0.001))
            return None

    def done(self, uid: str) -> None:
        """The attempt placed the pod: forget it (binding takes over)."""
        self.delete(uid)

    def unschedulable(self, entry: QueuedPod) -> None:
        """The attempt found no node: wait for a change (or backoff, if one came meanwhile)."""
        with self._cond:
            if self._entries.get(entry.uid) is not entry:
                return  # deleted while in flight
            entry.attempts += 1
            now = self.clock()
            entry.ready_at = now + self.backoff(entry.attempts)
            if entry.updated or self._move_cycle > entry.cycle:
                self._to_backoff_locked(entry, now)
            else:
                entry.state, entry.since = UNSCHEDULABLE, now
                self._unschedulable[entry.uid] = entry

    def retry(self, entry: QueuedPod) -> None:
        """The attempt failed for another reason (API error, lost binding): back off."""
        with self._cond:
            if self._entries.get(entry.uid) is not entry:
                return
            entry.attempts += 1
            now = self.clock()
            entry.ready_at = now + self.backoff(entry.attempts)
            self._to_backoff_locked(entry, now)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def wake(self) -> None:
        """Wake a waiting ``pop`` (e.g. to let the worker notice it lost leadership)."""
        with self._cond:
            self._cond.notify_all()

    # -- reading -----------------------------------------------------------------------------

    def backoff(self, attempts: int) -> float:
        return float(min(self.initial_backoff * 2 ** max(attempts - 1, 0), self.max_backoff))

    def counts(self) -> dict[str, int]:
        with self._cond:
            self._flush_locked(self.clock())
            out = {ACTIVE: 0, BACKOFF: 0, UNSCHEDULABLE: 0, IN_FLIGHT: 0}
            for entry in self._entries.values():
                out[entry.state] += 1
            return out

    def __len__(self) -> int:
        with self._cond:
            return len(self._entries)

    def __contains__(self, uid: object) -> bool:
        with self._cond:
            return uid in self._entries

    # -- internals ---------------------------------------------------------------------------

    def _push_locked(self, entry: QueuedPod) -> None:
        entry.state = ACTIVE
        entry.generation += 1
        heapq.heappush(self._heap, (entry.key, entry.generation, entry.uid))
        self._cond.notify()

    def _to_backoff_locked(self, entry: QueuedPod, now: float) -> None:
        self._unschedulable.pop(entry.uid, None)
        if entry.ready_at <= now:
            self._push_locked(entry)
            return
        entry.state, entry.since = BACKOFF, now
        entry.generation += 1
        heapq.heappush(self._backoff_heap, (entry.ready_at, entry.generation, entry.uid))
        self._cond.notify()  # a waiting pop must recompute its wake-up time

    def _leave_unschedulable_locked(self, entry: QueuedPod) -> None:
        self._to_backoff_locked(entry, self.clock())

    def _flush_locked(self, now: float) -> None:
        heap = self._backoff_heap
        while heap and heap[0][0] <= now:
            _at, generation, uid = heapq.heappop(heap)
            entry = self._entries.get(uid)
            if entry is not None and entry.generation == generation and entry.state == BACKOFF:
                self._push_locked(entry)
        # Insertion order is the order pods became unschedulable: the oldest come first.
        while self._unschedulable:
            entry = next(iter(self._unschedulable.values()))
            if now - entry.since < self.max_unschedulable:
                break
            self._to_backoff_locked(entry, now)

    def _next_wake_locked(self) -> float | None:
        heap = self._backoff_heap
        while heap:
            _at, generation, uid = heap[0]
            entry = self._entries.get(uid)
            if entry is not None and entry.generation == generation and entry.state == BACKOFF:
                break
            heapq.heappop(heap)  # stale
        wake = heap[0][0] if heap else None
        if self._unschedulable:
            oldest = next(iter(self._unschedulable.values()))
            flush = oldest.since + self.max_unschedulable
            wake = flush if wake is None else min(wake, flush)
        return wake
