"""The port kschedctl's scheduler talks to the cluster through: :class:`SchedulerApi` (watches,
bindings, evictions, events, status patches, the Lease), the errors it raises, and the resource
names its watch accepts.

``kschedctl.k8s.scheduler_api`` implements it over the kubernetes client; the unit tests with a
fake. The loop (``loop.py``) knows only this module, so the model block stays free of I/O.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

__all__ = [
    "NAMESPACES",
    "PDBS",
    "SYNC",
    "UNLISTED",
    "ApiConflict",
    "ApiNotFound",
    "ApiUnavailable",
    "SchedulerApi",
    "WatchEventLike",
]

# Resources ``SchedulerApi.watch`` accepts besides nodes, pods, ``VOLUME_KINDS`` and
# ``WORKLOAD_RESOURCES`` (cache.py).
PDBS = "poddisruptionbudgets"
NAMESPACES = "namespaces"
SYNC = "SYNC"  # the event type after each (re)list: ``objects`` holds every object
# The scheduler may not list the resource (an older ClusterRole): it stays unknown, never
# taken for empty; a SYNC follows once the right is granted.
UNLISTED = "UNLISTED"


class ApiConflict(Exception):
    """409: the object changed under us (a bound pod, a Lease another candidate wrote)."""


class ApiNotFound(Exception):
    """404: the object is gone."""


class ApiUnavailable(Exception):
    """Anything else: unreachable, throttled, a server error. Retried later."""


class WatchEventLike(Protocol):
    type: str
    object: dict[str, Any]
    objects: list[dict[str, Any]]


class SchedulerApi(Protocol):
    def watch(self, resource: str, stop: threading.Event) -> Iterator[WatchEventLike]:
        """``nodes``, ``pods`` (non-terminal), ``namespaces``, a key of ``VOLUME_KINDS``, of
        ``DRA_KINDS`` or of ``WORKLOAD_RESOURCES``: a SYNC with every object after each
        (re)list, then ADDED/MODIFIED/DELETED, reconnecting and relisting on its own until
        ``stop``; for ``CSI_RESOURCES`` and ``DRA_KINDS`` an UNLISTED first when listing
        them is forbidden (or the API is not served)."""
        ...

    def bind(self, pod: Mapping[str, Any], node: str, annotations: Mapping[str, str]) -> None: ...

    def bind_volume(self, pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> None:
        """Write the claimRef of ``pvc`` into the PersistentVolume (``GetBindVolumeToClaim``);
        ApiConflict when the volume was taken or changed meanwhile."""
        ...

    def reserve_claim(
        self,
        claim: Mapping[str, Any],
        allocation: Mapping[str, Any] | None,
        reserve: Mapping[str, str] | None,
    ) -> None:
        """DynamicResources' PreBind for one ResourceClaim (``bindClaim``): with an
        ``allocation``, add the delete-protection finalizer and write it (stamped with
        ``allocationTimestamp``), then append ``reserve`` to ``status.reservedFor``, in one
        status update; re-read and retry on a conflict. ApiConflict with kube-scheduler's
        text when the claim was allocated elsewhere or is being deleted meanwhile."""
        ...

    def unreserve_claim(self, claim: Mapping[str, Any], pod_uid: str) -> None:
        """Unreserve: take the pod out of the claim's ``status.reservedFor``."""
        ...

    def create_claim(self, claim: Mapping[str, Any]) -> dict[str, Any]:
        """PreBind for the pod's special claim (extended resources): create it (the API
        names it from ``generateName``); the created claim."""
        ...

    def delete_claim(self, claim: Mapping[str, Any]) -> None:
        """``deleteClaim``: take the delete-protection finalizer off (an update, re-read on
        conflicts), then delete the claim."""
        ...

    def deallocate_claim(self, claim: Mapping[str, Any]) -> None:
        """The DynamicResources PostFilter: a status update of ``claim`` (as read) without
        allocation, reservedFor and devices; ApiConflict when it changed meanwhile."""
        ...

    def delete_pod(self, pod: Mapping[str, Any]) -> None:
        """Delete with the pod's own grace period, only if its uid still matches."""
        ...

    def post_event(self, event: Mapping[str, Any]) -> None: ...

    def patch_pod_status(self, pod: Mapping[str, Any], patch: Mapping[str, Any]) -> None: ...

    def get_lease(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def create_lease(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]: ...

    def update_lease(
        self, namespace: str, name: str, body: Mapping[str, Any]
    ) -> dict[str, Any]: ...
