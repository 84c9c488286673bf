"""Lease leader election, client-go style, as a pure state machine.

:class:`LeaderElector.attempt` looks at the Lease as read from the API (or None when it does
not exist) and says what to write: create it, take it over, renew it, or nothing. Expiry is
judged by the local clock from when *we* last saw the record change (client-go's
``observedTime``), never by comparing our clock with the holder's ``renewTime``, so clock skew
between replicas cannot make two leaders. Writes carry the read ``resourceVersion``; a
conflict means another candidate won the race (the loop reports it with :meth:`lost_race`).

A leader that cannot renew within ``renew_deadline`` steps down (:meth:`should_step_down`).
Releasing on shutdown empties ``holderIdentity`` so a standby takes over at its next retry
instead of waiting for the lease to expire.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

__all__ = ["LeaderElector", "LeaseAction", "micro_time"]


def micro_time(when: datetime | None = None) -> str:
    """A MicroTime the API server accepts: always six fractional digits, UTC, ``Z``."""
    when = when or datetime.now(timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaseAction:
    """``create`` or ``update`` with ``body``; ``none`` when someone else holds a live lease."""

    kind: str
    body: dict[str, Any] | None = None


@dataclass(eq=False)  # one per scheduler: compared by identity
class LeaderElector:
    identity: str
    namespace: str
    name: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
    leading: bool = field(default=False, init=False)
    last_renew: float = field(default=0.0, init=False)  # clock time of our last create/update
    _observed: tuple[Any, ...] | None = field(default=None, init=False, repr=False)
    _observed_at: float = field(default=0.0, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.lease_duration > self.renew_deadline > self.retry_period > 0:
            raise ValueError(
                "need leaseDuration > renewDeadline > retryPeriod > 0, got "
                f"{self.lease_duration} > {self.renew_deadline} > {self.retry_period}"
            )

    # -- deciding ----------------------------------------------------------------------------

    def attempt(self, lease: Mapping[str, Any] | None) -> LeaseAction:
        now = self.clock()
        if lease is None:
            return LeaseAction("create", self._body(None, now))
        spec = lease.get("spec") or {}
        record = (
            spec.get("holderIdentity"),
            spec.get("renewTime"),
            spec.get("acquireTime"),
            spec.get("leaseDurationSeconds"),
            spec.get("leaseTransitions"),
        )
        if record != self._observed:
            self._observed, self._observed_at = record, now
        holder = spec.get("holderIdentity") or ""
        duration = spec.get("leaseDurationSeconds") or self.lease_duration
        if holder and holder != self.identity and now < self._observed_at + duration:
            self.leading = False
            return LeaseAction("none")
        return LeaseAction("update", self._body(lease, now))

    def _body(self, lease: Mapping[str, Any] | None, now: float) -> dict[str, Any]:
        stamp = micro_time(self.wall())
        spec = dict((lease or {}).get("spec") or {})
        transitions = int(spec.get("leaseTransitions") or 0)
        if spec.get("holderIdentity") != self.identity:
            spec["acquireTime"] = stamp
            if lease is not None and spec.get("holderIdentity"):
                transitions += 1
        spec.update(
            holderIdentity=self.identity,
            leaseDurationSeconds=int(self.lease_duration),
            renewTime=stamp,
            leaseTransitions=transitions,
        )
        metadata: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if lease is not None:
            md = lease.get("metadata") or {}
            metadata = {**{k: v for k, v in md.items() if k != "managedFields"}, **metadata}
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": metadata,
            "spec": spec,
        }

    # -- outcomes ----------------------------------------------------------------------------

    def succeeded(self, written: Mapping[str, Any]) -> bool:
        """Our create/update went through. Returns True when we just became the leader."""
        became = not self.leading
        self.leading = True
        self.last_renew = self.clock()
        spec = written.get("spec") or {}
        self._observed = (
            spec.get("holderIdentity"),
            spec.get("renewTime"),
            spec.get("acquireTime"),
            spec.get("leaseDurationSeconds"),
            spec.get("leaseTransitions"),
        )
        self._observed_at = self.last_renew
        return became

    def lost_race(self) -> None:
        """A 409: someone else wrote the Lease first. We are not the leader for now."""
        self.leading = False

    def should_step_down(self) -> bool:
        """A leader that has not renewed within ``renew_deadline`` must stop scheduling."""
        return self.leading and self.clock() - self.last_renew > self.renew_deadline

    def step_down(self) -> None:
        self.leading = False

    def release_body(self, lease: Mapping[str, Any]) -> dict[str, Any] | None:
        """The update that gives the Lease up on shutdown (None if we do not hold it)."""
        spec = lease.get("spec") or {}
        if spec.get("holderIdentity") != self.identity:
            return None
        body = self._body(lease, self.clock())
        # client-go's release: no holder, a 1 s duration, so the next candidate acquires now.
        body["spec"].update(holderIdentity="", leaseDurationSeconds=1)
        return body
