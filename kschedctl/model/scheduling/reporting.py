"""What the scheduler tells the API server off the decision path: events (``Scheduled``,
``FailedScheduling``, ``Preempted``), the ``PodScheduled=False`` condition with the nominated
node, and the preemption executor's evictions (pkg/scheduler/framework/preemption/executor.go).

Every write goes through the port, :class:`~.port.SchedulerApi`; a write the API refuses is
logged, never retried: the next attempt of the pod reports again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from kschedctl.model.kubetypes import Pod

from .algorithm import Decision
from .leader import micro_time
from .metrics import Metrics
from .port import ApiConflict, ApiNotFound, ApiUnavailable, SchedulerApi
from .queue import pod_uid

__all__ = ["NOTE_LIMIT", "Eviction", "Reporter", "pod_key"]

log = logging.getLogger("kschedctl.scheduler")

NOTE_LIMIT = 1024  # events.k8s.io note length limit (bytes)
_API_REFUSALS = (ApiConflict, ApiNotFound, ApiUnavailable)


def pod_key(pod: Mapping[str, Any]) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace')}/{md.get('name')}"


def _truncate_note(note: str) -> str:
    raw = note.encode()
    if len(raw) <= NOTE_LIMIT:
        return note
    return raw[: NOTE_LIMIT - 4].decode(errors="ignore") + " ..."


def _pod_reference(pod: Mapping[str, Any]) -> dict[str, Any]:
    md = pod.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": md.get("namespace"),
        "name": md.get("name"),
        "uid": md.get("uid"),
    }


def _condition_patch(uid: Any, condition: dict[str, Any]) -> dict[str, Any]:
    """A status patch that sets one condition, with the pod's uid as a precondition (never
    patch a re-created pod of that name)."""
    stamped = {**condition, "lastTransitionTime": micro_time()[:19] + "Z"}
    return {"metadata": {"uid": uid}, "status": {"conditions": [stamped]}}


@dataclass(frozen=True)
class Eviction:
    """What the preemption executor does for a decision: evict ``victims`` on ``node`` and
    take the nomination from ``unnominated`` (lower-priority pods nominated there)."""

    node: str | None
    victims: list[Pod]
    unnominated: list[Pod]


@dataclass(eq=False)  # one per scheduler: compared by identity
class Reporter:
    api: SchedulerApi
    name: str  # the scheduler's: reportingController, and schedulerName when a pod has none
    identity: str
    # The same FailedScheduling message for the same pod is posted at most this often.
    event_interval: float
    metrics: Metrics
    _reported: dict[str, tuple[str, float]] = field(default_factory=dict, init=False)

    def forget(self, uid: str) -> None:
        self._reported.pop(uid, None)

    def failure(self, pod: Pod, decision: Decision) -> None:
        message = decision.message or "no node is available"
        uid = pod_uid(pod)
        now = time.monotonic()
        last = self._reported.get(uid)
        if last is None or last[0] != message or now - last[1] >= self.event_interval:
            self._reported[uid] = (message, now)
            self.event(pod, "Warning", "FailedScheduling", "Scheduling", message)
        status = pod.get("status") or {}
        current = next(
            (c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None
        )
        # kube-scheduler's updatePod: the nominated node changes only when preemption says so
        # (set, or "" to clear) and differs from the pod's.
        nominate = decision.nominate
        nnn_changes = nominate is not None and nominate != (status.get("nominatedNodeName") or "")
        unchanged = ("False", "Unschedulable", message)
        if not nnn_changes and current is not None and _reason_of(current) == unchanged:
            return
        patch = _condition_patch(
            uid,
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastProbeTime": None,
            },
        )
        if nnn_changes:
            patch["status"] = {"nominatedNodeName": nominate or None, **patch["status"]}
        try:
            self.api.patch_pod_status(pod, patch)
        except _API_REFUSALS as err:
            log.info("cannot set PodScheduled=False on %s: %s", pod_key(pod), err)

    def evict(self, pod: Pod, eviction: Eviction) -> None:
        node = eviction.node
        md = pod.get("metadata") or {}
        scheduler = (pod.get("spec") or {}).get("schedulerName") or self.name
        for victim in eviction.victims:
            vmd = victim.get("metadata") or {}
            if vmd.get("deletionTimestamp"):
                continue  # already terminating: nothing to ask of the API
            target = {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": f"{scheduler}: preempting to accommodate a higher priority pod",
            }
            try:
                self.api.patch_pod_status(victim, _condition_patch(vmd.get("uid"), target))
                self.api.delete_pod(victim)
            except (ApiNotFound, ApiConflict):
                log.info("victim %s of %s is gone already", pod_key(victim), pod_key(pod))
                continue
            except ApiUnavailable as err:
                log.warning("cannot preempt %s for %s: %s", pod_key(victim), pod_key(pod), err)
                continue
            self.metrics.inc("preemption_victims_total")
            log.info("preempted %s on %s for %s", pod_key(victim), node, pod_key(pod))
            self.event(
                victim, "Normal", "Preempted", "Preempting",
                f"Preempted by pod {md.get('uid')} on node {node}", related=pod,
            )  # fmt: skip
        for other in eviction.unnominated:
            unset = {"metadata": {"uid": pod_uid(other)}, "status": {"nominatedNodeName": None}}
            try:
                self.api.patch_pod_status(other, unset)
            except _API_REFUSALS as err:
                log.info("cannot clear the nominated node of %s: %s", pod_key(other), err)

    def event(
        self,
        pod: Mapping[str, Any],
        kind: str,
        reason: str,
        action: str,
        note: str,
        related: Mapping[str, Any] | None = None,
        at_ns: int | None = None,
    ) -> None:
        """Post one event; ``at_ns`` is when it happened (``time.time_ns()``; default: now),
        for an event posted after a wait in a queue."""
        md = pod.get("metadata") or {}
        at_ns = at_ns or time.time_ns()
        seconds, ns = divmod(at_ns, 1_000_000_000)
        at = datetime.fromtimestamp(seconds, timezone.utc).replace(microsecond=ns // 1000)
        event = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{md.get('name')}.{at_ns:x}", "namespace": md.get("namespace")},
            "eventTime": micro_time(at),
            "reportingController": self.name,
            "reportingInstance": f"{self.name}-{self.identity.split('_', 1)[0]}"[:128],
            "action": action,
            "reason": reason,
            "type": kind,
            "note": _truncate_note(note),
            "regarding": _pod_reference(pod),
        }
        if related is not None:
            event["related"] = _pod_reference(related)
        try:
            self.api.post_event(event)
        except _API_REFUSALS as err:
            log.info("cannot post the %s event for %s: %s", reason, pod_key(pod), err)


def _reason_of(condition: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return condition.get("status"), condition.get("reason"), condition.get("message")
