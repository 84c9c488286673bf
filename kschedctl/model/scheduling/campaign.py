"""The elector thread: :class:`~.leader.LeaderElector` run against the Lease through the port.

Every retry period it reads the Lease and writes what the elector says (create, renew, take
over); a leader that cannot renew within the renew deadline steps down and campaigns again,
its caches still warm. On shutdown a leader releases the Lease so a standby takes over at its
next retry.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from .leader import LeaderElector
from .port import ApiConflict, ApiNotFound, ApiUnavailable, SchedulerApi

__all__ = ["Campaign"]

log = logging.getLogger("kschedctl.scheduler")


class Campaign:
    def __init__(
        self,
        api: SchedulerApi,
        elector: LeaderElector,
        annotations: dict[str, str],
        leading: threading.Event,
        on_step_down: Callable[[], None],
    ) -> None:
        self.api = api
        self.elector = elector
        # Published on the Lease so `kschedctl why` knows this scheduler's fallback policy.
        self.annotations = annotations
        self.leading = leading  # set while this replica may schedule
        self.on_step_down = on_step_down

    def run(self, stop: threading.Event) -> None:
        elector = self.elector
        namespace = elector.namespace
        while not stop.is_set():
            try:
                lease = self.api.get_lease(namespace, elector.name)
                action = elector.attempt(lease)
                written = None
                if action.kind == "create" and action.body is not None:
                    written = self.api.create_lease(namespace, self._annotated(action.body))
                elif action.kind == "update" and action.body is not None:
                    written = self.api.update_lease(
                        namespace, elector.name, self._annotated(action.body)
                    )
                if written is not None and elector.succeeded(written):
                    log.info("became the leader (Lease %s/%s, identity %s)",
                             namespace, elector.name, elector.identity)  # fmt: skip
                    self.leading.set()
                elif written is None and self.leading.is_set():
                    self.step_down("another replica holds the Lease")
            except ApiConflict:
                elector.lost_race()
                if self.leading.is_set():
                    self.step_down("another replica wrote the Lease first")
            except (ApiUnavailable, ApiNotFound) as err:
                log.warning("cannot renew or acquire the Lease: %s", err)
            if elector.should_step_down():
                self.step_down(f"the Lease was not renewed for {elector.renew_deadline:.0f}s")
            stop.wait(elector.retry_period)

    def _annotated(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.annotations:
            md = body.setdefault("metadata", {})
            md["annotations"] = {**(md.get("annotations") or {}), **self.annotations}
        return body

    def step_down(self, why: str) -> None:
        self.elector.step_down()
        if self.leading.is_set():
            log.warning("stopped leading: %s; campaigning again", why)
            self.leading.clear()
            self.on_step_down()

    def release(self) -> None:
        """Give the Lease up (a leader shutting down)."""
        elector = self.elector
        if not self.leading.is_set():
            return
        try:
            lease = self.api.get_lease(elector.namespace, elector.name)
            body = elector.release_body(lease) if lease else None
            if body is not None:
                self.api.update_lease(elector.namespace, elector.name, body)
                log.info("released the Lease %s/%s", elector.namespace, elector.name)
        except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
            log.warning("could not release the Lease: %s", err)
        self.leading.clear()
