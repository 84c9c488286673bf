"""Waiting until a deployed scheduler really serves: pods Ready, its Lease held, a canary bound."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from kschedctl.base.errors import KschedError, NotFoundError, WaitTimeout
from kschedctl.k8s.apply import list_owned
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.versions import PAUSE_IMAGE
from kschedctl.observe.schedulers import (
    CONFIG_HASH,
    INSTANCE,
    MANAGED_BY,
    SCHEDULER_LABEL,
    parse_lease,
)

Progress = Callable[[str], None]


def poll(
    check: Callable[[], Any], until: float, what: str, hint: str,
    alive: Callable[[], None] | None = None,
) -> Any:  # fmt: skip
    """Call ``check`` until it returns something truthy; transient API errors are retried.

    ``alive`` raises when what we wait for can no longer happen (a process exited).
    """
    last_error = ""
    while True:
        try:
            result = check()
            if result:
                return result
        except KschedError as err:  # e.g. the API server restarting under us
            last_error = f" (last error: {err.message})"
        if alive is not None:
            alive()
        if time.monotonic() > until:
            raise WaitTimeout(f"timed out waiting for {what}{last_error}", hint=hint)
        time.sleep(0.5)


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def deployed_pods(
    cluster: Cluster, namespace: str, name: str, config_hash: str | None
) -> list[dict[str, Any]]:
    """The live pods kschedctl deployed for scheduler ``name`` in ``namespace``, listed from the
    cluster by their labels; only those running the current config when a hash is given."""
    pods = list_owned(
        cluster, f"/api/v1/namespaces/{namespace}/pods", name,
        "app.kubernetes.io/component=scheduler",
    )  # fmt: skip
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    if config_hash:
        live = [
            p for p in live
            if (p["metadata"].get("annotations") or {}).get(CONFIG_HASH) == config_hash
        ]  # fmt: skip
    return live


def wait_ready(
    cluster: Cluster, namespace: str, name: str, want: int, config_hash: str | None, until: float
) -> list[dict[str, Any]]:
    def check() -> list[dict[str, Any]] | None:
        pods = deployed_pods(cluster, namespace, name, config_hash)
        ready = [p for p in pods if _ready(p)]
        return ready if len(ready) >= want else None

    return poll(
        check, until, f"{want} Ready pod(s) of scheduler {name} in {namespace}",
        hint=f"see `kschedctl status {name}` and `kschedctl logs {name}`",
    )  # fmt: skip


def wait_lease(
    cluster: Cluster, namespace: str, lease: str, holders: list[str] | None, until: float,
    alive: Callable[[], None] | None = None,
) -> str:  # fmt: skip
    """The holder identity once the Lease is held (by one of ``holders``' pods, if given)."""

    def check() -> str | None:
        try:
            obj = cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease}")
        except NotFoundError:
            return None
        parsed = parse_lease(obj, datetime.now(timezone.utc))
        if not parsed.held or not parsed.holder:
            return None
        if holders is not None and parsed.holder.split("_", 1)[0] not in holders:
            return None
        return parsed.holder

    who = "one of its pods" if holders is not None else "the scheduler"
    return poll(
        check, until, f"Lease {namespace}/{lease} to be held by {who}",
        hint="a scheduler that cannot take its Lease only waits as a standby: look for "
        "'forbidden' or 'lease' in `kschedctl logs NAME`",
        alive=alive,
    )  # fmt: skip


def canary(
    cluster: Cluster, scheduler: str, namespace: str, until: float, progress: Progress
) -> str:
    """Create a pod for ``scheduler``, wait for its Scheduled event, delete it; returns the node."""
    name = f"{scheduler}-canary-{uuid.uuid4().hex[:5]}"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {MANAGED_BY: "kschedctl", INSTANCE: scheduler, SCHEDULER_LABEL: scheduler,
                       "app.kubernetes.io/component": "canary"},
        },
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "canary", "image": PAUSE_IMAGE}],
            "terminationGracePeriodSeconds": 0,
        },
    }  # fmt: skip
    path = f"/api/v1/namespaces/{namespace}/pods"
    cluster.create(path, pod)
    progress(f"canary pod {namespace}/{name} created with schedulerName: {scheduler}")
    try:

        def scheduled() -> str | None:
            events = cluster.list(
                f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
                fieldSelector=f"regarding.name={name},reason=Scheduled",
            )
            for event in events:
                if event.get("reportingController") == scheduler:
                    return cluster.get(f"{path}/{name}")["spec"].get("nodeName") or "?"
            return None

        return poll(
            scheduled, until, f"a Scheduled event from {scheduler} for pod {namespace}/{name}",
            hint=f"see `kschedctl why {name} -n {namespace}`, `kschedctl events {scheduler}` "
            f"and `kschedctl logs {scheduler}`",
        )  # fmt: skip
    finally:
        try:
            cluster.delete(f"{path}/{name}", gracePeriodSeconds=0)
        except KschedError:
            pass  # best effort; it carries our labels, so `remove` finds it
