"""What kschedctl's scheduler asks of the API server, on plain dicts.

Implements :class:`kschedctl.model.scheduling.port.SchedulerApi`: list+watch of nodes,
non-terminal pods, PersistentVolumeClaims, PersistentVolumes and StorageClasses, services and
controllers, namespaces, PodDisruptionBudgets (slimmed as pages arrive), a PersistentVolume's
claimRef for a WaitForFirstConsumer claim (read, then written with the read resourceVersion), the
``pods/binding`` subresource with the pod's uid as a precondition, events.k8s.io/v1 events, the
pod status patch, the graceful delete of preemption victims, and the Lease. Client errors become
the loop's three outcomes (conflict, gone, unavailable).

Requests are rate limited like client-go clientsets: one token bucket for what the scheduler
does, one for events and one for the Lease (kube-scheduler's event broadcaster and leader
election have clients of their own too). The binding response is read raw, so the Python
client's ``V1Binding`` deserialisation of the ``Status`` it gets back
(kubernetes-client/python#825) never runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kschedctl.base.errors import ConflictError, ForbiddenError, KschedError, NotFoundError
from kschedctl.k8s.ratelimit import TokenBucket
from kschedctl.kubeclient.client import Cluster
from kschedctl.kubeclient.watch import SYNC, WatchEvent, list_and_watch
from kschedctl.model.config.versions import parse_git_version
from kschedctl.model.filters.drabind import FINALIZER
from kschedctl.model.filters.volumebinding import bind_volume_to_claim, claim_key
from kschedctl.model.scheduling.cache import CSI_RESOURCES
from kschedctl.model.scheduling.dracache import DRA_KINDS, slim_dra
from kschedctl.model.scheduling.port import (
    NAMESPACES,
    PDBS,
    UNLISTED,
    ApiConflict,
    ApiNotFound,
    ApiUnavailable,
)
from kschedctl.model.scheduling.slim import (
    slim_namespace,
    slim_node,
    slim_pdb,
    slim_pod,
    slim_volume,
    slim_workload,
)

__all__ = ["ThrottledCluster", "ClusterSchedulerApi"]

log = logging.getLogger("kschedctl.scheduler")

NON_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
VOLUME_PATHS = {
    "persistentvolumeclaims": "/api/v1/persistentvolumeclaims",
    "persistentvolumes": "/api/v1/persistentvolumes",
    "storageclasses": "/apis/storage.k8s.io/v1/storageclasses",
    "csidrivers": "/apis/storage.k8s.io/v1/csidrivers",
    "csistoragecapacities": "/apis/storage.k8s.io/v1/csistoragecapacities",
    "csinodes": "/apis/storage.k8s.io/v1/csinodes",
}
DRA_GROUP = "resource.k8s.io"
DRA = f"/apis/{DRA_GROUP}/v1"
DRA_PATHS = {resource: f"{DRA}/{resource}" for resource in DRA_KINDS}
# The objects the system-default topology spreading takes its selector from.
WORKLOAD_PATHS = {
    "services": "/api/v1/services",
    "replicationcontrollers": "/api/v1/replicationcontrollers",
    "replicasets": "/apis/apps/v1/replicasets",
    "statefulsets": "/apis/apps/v1/statefulsets",
}


class ThrottledCluster(Cluster):
    """The same connection, every request first taking a token from ``bucket``."""

    def __init__(self, base: Cluster, bucket: TokenBucket) -> None:
        super().__init__(base.transport, base.context, base.namespace)
        self.bucket = bucket

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        self.bucket.take()
        return super()._call(*args, **kwargs)


def _outcome(err: KschedError) -> Exception:
    if isinstance(err, ConflictError):
        return ApiConflict(err.message)
    if isinstance(err, NotFoundError):
        return ApiNotFound(err.message)
    return ApiUnavailable(err.message)


class ClusterSchedulerApi:
    def __init__(
        self,
        cluster: Cluster,
        *,
        qps: float = 50,
        burst: int = 100,
        watch_timeout: int = 300,
        annotations: bool = False,
    ) -> None:
        """``annotations``: keep every annotation of nodes and pods (the scheduler's Python
        plugins may read them); otherwise only those the scheduler reads."""
        # Three clients with the same limits, as kube-scheduler has: a slow event stream or
        # a burst of bindings must not starve the Lease renewals (or the other way round).
        self.cluster = ThrottledCluster(cluster, TokenBucket(qps, burst))
        self.events = ThrottledCluster(cluster, TokenBucket(qps, burst))
        self.leases = ThrottledCluster(cluster, TokenBucket(qps, burst))
        self.watch_timeout = watch_timeout
        self.annotations = annotations

    def watch(self, resource: str, stop: threading.Event) -> Iterator[WatchEvent]:
        def on_error(err: Exception) -> None:
            log.warning("watch of %s: %s; retrying", resource, getattr(err, "message", err))

        if resource in CSI_RESOURCES:
            unchecked = (
                "pods with CSI or in-tree disk volumes get NodeVolumeLimits not evaluated"
                if resource == "csinodes"
                else "pods that need VolumeBinding's storage capacity check are not evaluated"
            )
            return self._optional(
                resource, VOLUME_PATHS[resource], slim_volume, stop, on_error, unchecked,
                sync_without=False,
            )  # fmt: skip
        if resource in DRA_PATHS:
            return self._optional(
                resource, DRA_PATHS[resource], slim_dra, stop, on_error,
                "pods with ResourceClaims are not evaluated", sync_without=False,
            )  # fmt: skip
        if resource in VOLUME_PATHS:
            return list_and_watch(
                self.cluster, VOLUME_PATHS[resource], stop, timeout_seconds=self.watch_timeout,
                on_error=on_error, transform=slim_volume,
            )  # fmt: skip
        if resource in WORKLOAD_PATHS:
            return self._optional(
                resource, WORKLOAD_PATHS[resource], slim_workload, stop, on_error,
                "pods get no system-default topology spreading",
            )  # fmt: skip
        if resource == NAMESPACES:
            return self._optional(
                resource, "/api/v1/namespaces", slim_namespace, stop, on_error,
                "a namespaceSelector in pod affinity terms selects no namespace",
            )  # fmt: skip
        if resource == PDBS:
            return list_and_watch(
                self.cluster, "/apis/policy/v1/poddisruptionbudgets", stop,
                timeout_seconds=self.watch_timeout, on_error=on_error, transform=slim_pdb,
            )  # fmt: skip
        keep = self.annotations  # every annotation when Python plugins may read them
        # {**…}: the slim Node / Pod travels the untyped watch as a plain dict (one small
        # copy of its three top-level keys); the cache slims it again into the model.
        if resource == "nodes":
            return list_and_watch(
                self.cluster, "/api/v1/nodes", stop, timeout_seconds=self.watch_timeout,
                on_error=on_error, transform=lambda n: {**slim_node(n, annotations=keep)},
            )  # fmt: skip
        return list_and_watch(
            self.cluster, "/api/v1/pods", stop, timeout_seconds=self.watch_timeout,
            on_error=on_error, transform=lambda p: {**slim_pod(p, annotations=keep)},
            fieldSelector=NON_TERMINAL,
        )  # fmt: skip

    def _optional(
        self,
        resource: str,
        path: str,
        transform: Callable[[dict[str, Any]], dict[str, Any]],
        stop: threading.Event,
        on_error: Callable[[Exception], None],
        without: str,
        *,
        sync_without: bool = True,
    ) -> Iterator[WatchEvent]:
        """Services, controllers, namespaces or the CSI objects. Without the right to list
        them (a scheduler deployed with an older ClusterRole) the scheduler still starts: an
        empty SYNC first (``sync_without``; else UNLISTED, so they stay unknown, never taken
        for absent), a warning saying what is missing (``without``), and the watch keeps
        retrying until the right is granted."""
        try:
            self.cluster.get(path, limit=1)
        except (ForbiddenError, NotFoundError) as err:  # NotFound: an API not served
            log.warning(
                "cannot list %s (%s): %s until the scheduler's ClusterRole grants list and "
                "watch on them (redeploy it with this kschedctl)",
                resource,
                err.message,
                without,
            )
            yield WatchEvent(SYNC if sync_without else UNLISTED, objects=[])
        except KschedError:
            pass  # unreachable or the like: list_and_watch retries and reports it
        yield from list_and_watch(
            self.cluster, path, stop, timeout_seconds=self.watch_timeout, on_error=on_error,
            transform=transform,
        )  # fmt: skip

    def bind(self, pod: Mapping[str, Any], node: str, annotations: Mapping[str, str]) -> None:
        md = pod["metadata"]
        metadata: dict[str, Any] = {
            "name": md["name"],
            "namespace": md["namespace"],
            "uid": md["uid"],  # a re-created pod of the same name is a different pod
        }
        if annotations:
            metadata["annotations"] = dict(annotations)  # merged into the pod's annotations
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": metadata,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        try:
            self.cluster.create(
                f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}/binding", body
            )
        except KschedError as err:
            raise _outcome(err) from err

    def bind_volume(self, pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> None:
        name = (pv.get("metadata") or {}).get("name") or ""
        path = f"/api/v1/persistentvolumes/{name}"
        try:
            live = self.cluster.get(path)
            ref = (live.get("spec") or {}).get("claimRef") or {}
            cmd = pvc.get("metadata") or {}
            mine = ref.get("name") == cmd.get("name") and ref.get("namespace") == cmd.get(
                "namespace"
            )
            if ref and not mine:
                raise ApiConflict(
                    f'persistentvolume "{name}" was bound to claim '
                    f"{ref.get('namespace')}/{ref.get('name')} meanwhile, not {claim_key(pvc)}"
                )
            self.cluster.request("PUT", path, body=bind_volume_to_claim(live, pvc))
        except KschedError as err:
            raise _outcome(err) from err

    def reserve_claim(
        self,
        claim: Mapping[str, Any],
        allocation: Mapping[str, Any] | None,
        reserve: Mapping[str, str] | None,
    ) -> None:
        md = claim.get("metadata") or {}
        namespace, name = md.get("namespace") or "default", md.get("name") or ""
        path = f"{DRA}/namespaces/{namespace}/resourceclaims/{name}"
        live: dict[str, Any] = {"apiVersion": f"{DRA_GROUP}/v1", "kind": "ResourceClaim", **claim}
        try:
            for attempt in range(5):  # retry.DefaultRetry: 5 steps
                if attempt:
                    live = self.cluster.get(path)
                lmd = live.get("metadata") or {}
                if lmd.get("deletionTimestamp"):
                    raise ApiConflict(f"claim {namespace}/{name} got deleted in the meantime")
                status = dict(live.get("status") or {})
                if allocation is not None:
                    if status.get("allocation"):
                        raise ApiConflict(
                            f"claim {namespace}/{name} got allocated elsewhere in the meantime"
                        )
                    if FINALIZER not in (lmd.get("finalizers") or []):
                        body = {**live, "metadata": {**lmd, "finalizers": [
                            *(lmd.get("finalizers") or []), FINALIZER]}}  # fmt: skip
                        try:
                            live = self.cluster.request("PUT", path, body=body)
                        except ConflictError:
                            continue
                        status = dict(live.get("status") or {})
                    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                    status["allocation"] = {**allocation, "allocationTimestamp": stamp}
                if reserve is not None:
                    status["reservedFor"] = [*(status.get("reservedFor") or []), dict(reserve)]
                try:
                    self.cluster.request("PUT", f"{path}/status", body={**live, "status": status})
                    return
                except ConflictError:
                    continue
            raise ApiConflict(f"claim {namespace}/{name} kept changing (conflicts)")
        except KschedError as err:
            what = "allocation and reservation" if allocation is not None else "reservation"
            outcome = type(_outcome(err))
            raise outcome(f"add {what} to claim {namespace}/{name}: {err.message}") from err

    def unreserve_claim(self, claim: Mapping[str, Any], pod_uid: str) -> None:
        md = claim.get("metadata") or {}
        namespace = md.get("namespace") or "default"
        path = f"{DRA}/namespaces/{namespace}/resourceclaims/{md.get('name')}"
        patch = {
            "metadata": {"uid": md.get("uid")},
            "status": {"reservedFor": [{"$patch": "delete", "uid": pod_uid}]},
        }
        try:
            self.cluster.patch(f"{path}/status", patch, merge=False)
        except KschedError as err:
            raise _outcome(err) from err

    def create_claim(self, claim: Mapping[str, Any]) -> dict[str, Any]:
        md = dict(claim.get("metadata") or {})
        namespace = md.get("namespace") or "default"
        # the API names it (generateName) and gives it its uid
        body = {"apiVersion": f"{DRA_GROUP}/v1", "kind": "ResourceClaim",
                "metadata": {k: v for k, v in md.items() if k not in ("name", "uid")},
                "spec": claim.get("spec") or {}}  # fmt: skip
        try:
            return self.cluster.create(f"{DRA}/namespaces/{namespace}/resourceclaims", body)
        except KschedError as err:
            outcome = type(_outcome(err))
            raise outcome(
                f"create claim for extended resources {namespace}/{md.get('name')}: {err.message}"
            ) from err

    def delete_claim(self, claim: Mapping[str, Any]) -> None:
        md = claim.get("metadata") or {}
        namespace, name = md.get("namespace") or "default", md.get("name") or ""
        path = f"{DRA}/namespaces/{namespace}/resourceclaims/{name}"
        live: dict[str, Any] = {"apiVersion": f"{DRA_GROUP}/v1", "kind": "ResourceClaim", **claim}
        try:
            for attempt in range(5):  # retry.RetryOnConflict(DefaultRetry)
                if attempt:
                    live = self.cluster.get(path)
                lmd = live.get("metadata") or {}
                kept = [f for f in lmd.get("finalizers") or [] if f != FINALIZER]
                try:  # the finalizer off first, in an update, as deleteClaim does
                    self.cluster.request(
                        "PUT", path, body={**live, "metadata": {**lmd, "finalizers": kept}}
                    )
                    break
                except ConflictError:
                    continue
            else:
                raise ApiConflict(f"claim {namespace}/{name} kept changing (conflicts)")
            self.cluster.delete(path)
        except KschedError as err:
            raise _outcome(err) from err

    def deallocate_claim(self, claim: Mapping[str, Any]) -> None:
        md = claim.get("metadata") or {}
        namespace, name = md.get("namespace") or "default", md.get("name") or ""
        path = f"{DRA}/namespaces/{namespace}/resourceclaims/{name}/status"
        status = {k: v for k, v in (claim.get("status") or {}).items()
                  if k not in ("allocation", "reservedFor", "devices")}  # fmt: skip
        body = {"apiVersion": f"{DRA_GROUP}/v1", "kind": "ResourceClaim", **claim,
                "status": status}  # fmt: skip
        try:
            self.cluster.request("PUT", path, body=body)
        except KschedError as err:
            raise _outcome(err) from err

    def delete_pod(self, pod: Mapping[str, Any]) -> None:
        md = pod["metadata"]
        # No gracePeriodSeconds: the pod's own terminationGracePeriodSeconds applies, as
        # with kube-scheduler's DeletePod; the uid precondition spares a re-created pod.
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": md["uid"]}}
        try:
            self.cluster.request(
                "DELETE", f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}", body=body
            )
        except KschedError as err:
            raise _outcome(err) from err

    def post_event(self, event: Mapping[str, Any]) -> None:
        namespace = event["metadata"]["namespace"]
        try:
            self.events.create(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", event)
        except KschedError as err:
            raise _outcome(err) from err

    def patch_pod_status(self, pod: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
        md = pod["metadata"]
        path = f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}/status"
        try:
            self.cluster.patch(path, dict(patch), merge=False)  # strategic: conditions by type
        except KschedError as err:
            raise _outcome(err) from err

    def get_lease(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self.leases.get(f"{LEASES.format(namespace=namespace)}/{name}")
        except NotFoundError:
            return None
        except KschedError as err:
            raise _outcome(err) from err

    def create_lease(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self.leases.create(LEASES.format(namespace=namespace), body)
        except KschedError as err:
            raise _outcome(err) from err

    def update_lease(self, namespace: str, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self.leases.request(
                "PUT", f"{LEASES.format(namespace=namespace)}/{name}", body=dict(body)
            )
        except KschedError as err:
            raise _outcome(err) from err

    def server_version(self) -> tuple[int, ...]:
        try:
            info = self.cluster.server_version()
        except KschedError:
            return (1, 36)
        version = parse_git_version(str(info.get("gitVersion", "")))
        return version if version is not None and len(version) == 3 else (1, 36)
