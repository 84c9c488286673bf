"""Waiting until a deployed scheduler really serves: its new pods rolled out and Ready, its Lease
held by one of them, a canary bound; and stopping at once when a new pod cannot run."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from kschedctl.base.errors import KschedError, NotFoundError, RolloutFailed, WaitTimeout
from kschedctl.k8s.apply import list_owned
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.versions import PAUSE_IMAGE
from kschedctl.observe.crash import crash_lines
from kschedctl.observe.rollout import (
    RolloutState,
    deployment_state,
    fatal,
    lease_holder,
    pod_state,
)
from kschedctl.observe.schedulers import (
    INSTANCE,
    MANAGED_BY,
    SCHEDULER_LABEL,
    parse_lease,
)
from kschedctl.ops.crash import crash_reports

Progress = Callable[[str], None]


def poll(
    check: Callable[[], Any], until: float, what: str | Callable[[], str], hint: str,
    alive: Callable[[], None] | None = None,
) -> Any:  # fmt: skip
    """Call ``check`` until it returns something truthy; transient API errors are retried.

    ``alive`` raises when what we wait for can no longer happen (a process exited), as
    ``check`` does with :class:`RolloutFailed`. ``what`` (or what it returns, at the timeout)
    names what was awaited.
    """
    last_error = ""
    while True:
        try:
            result = check()
            if result:
                return result
        except RolloutFailed:
            raise
        except KschedError as err:  # e.g. the API server restarting under us
            last_error = f" (last error: {err.message})"
        if alive is not None:
            alive()
        if time.monotonic() > until:
            waited = what() if callable(what) else what
            raise WaitTimeout(f"timed out waiting for {waited}{last_error}", hint=hint)
        time.sleep(0.5)


@dataclass(frozen=True)
class Rollout:
    """What a deploy waits for: ``template`` the Deployment or the Pod it rendered (a static
    pod's manifest), ``lease`` the ``namespace/name`` of the Lease its pods take ("" without
    leader election)."""

    form: str  # deployment, pod or static-pod
    scheduler: str
    template: dict[str, Any]
    config_hash: str
    lease: str = ""

    @property
    def what(self) -> str:
        meta = self.template["metadata"]
        kind = {"deployment": "deployment", "pod": "pod"}.get(self.form, "static pod")
        return f"{kind} {meta.get('namespace') or 'default'}/{meta['name']}"


def wait_rolled_out(
    cluster: Cluster, rollout: Rollout, started: float, until: float,
    progress: Callable[[str, float], None], alive: Callable[[], None] | None = None,
) -> str:  # fmt: skip
    """Wait until ``rollout``'s new pods are all that runs and are Ready, then until one of
    them holds the Lease (its holder identity is returned; "" without leader election).
    Raises :class:`RolloutFailed` as soon as a new pod shows a problem ``status`` names."""
    namespace = rollout.template["metadata"].get("namespace") or "default"
    last = [f"{rollout.what} to roll out"]

    def check() -> tuple[str] | None:
        state = _state(cluster, rollout, namespace)
        if state.failed:
            raise RolloutFailed(
                f"{rollout.what} did not roll out: {state.failed}", hint=_next_steps(rollout)
            )
        _stop_on_problems(cluster, rollout, state)
        text, holder = state.text, ""
        if state.done and rollout.lease:
            holder = _new_holder(cluster, rollout.lease, state)
            if not holder:
                text += f"; Lease {rollout.lease} not yet held by a new pod"
        last[0] = f"{rollout.what}: {text}"
        progress(f"waiting for {last[0]}", time.monotonic() - started)
        return (holder,) if state.done and (holder or not rollout.lease) else None

    (holder,) = poll(
        check, until, lambda: last[0],
        hint=f"see `kschedctl status {rollout.scheduler}` and `kschedctl logs "
        f"{rollout.scheduler}`",
        alive=alive,
    )  # fmt: skip
    return holder


def _state(cluster: Cluster, rollout: Rollout, namespace: str) -> RolloutState:
    pods = list_owned(
        cluster, f"/api/v1/namespaces/{namespace}/pods", rollout.scheduler,
        "app.kubernetes.io/component=scheduler",
    )  # fmt: skip
    if rollout.form != "deployment":
        return pod_state(pods, rollout.template)
    name = rollout.template["metadata"]["name"]
    deployment = cluster.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
    replicasets = list_owned(
        cluster, f"/apis/apps/v1/namespaces/{namespace}/replicasets", rollout.scheduler
    )
    return deployment_state(deployment, replicasets, pods, rollout.config_hash)


def _stop_on_problems(cluster: Cluster, rollout: Rollout, state: RolloutState) -> None:
    """Raise RolloutFailed with ``status``' diagnosis when a new pod cannot run."""
    reports = fatal(crash_reports(cluster, state.current, rollout.scheduler))
    if not reports:
        return
    first = reports[0]
    said = first.key_line or first.problem.message
    lines = [line for report in reports for line in crash_lines(report)]
    raise RolloutFailed(
        f"{rollout.what} cannot run: pod {first.problem.pod} is {first.problem.reason}"
        + (f": {said}" if said else "") + "\n" + "\n".join(lines),
        hint=_next_steps(rollout),
    )  # fmt: skip


def _next_steps(rollout: Rollout) -> str:
    name = rollout.scheduler
    return (
        f"`kschedctl rollback {name}` goes back to the last good revision; or fix the spec "
        f"and deploy again; `kschedctl status {name}` shows what runs now"
    )


def _new_holder(cluster: Cluster, lease: str, state: RolloutState) -> str:
    namespace, name = lease.split("/", 1)
    try:
        obj = cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}")
    except NotFoundError:
        return ""
    if not parse_lease(obj, datetime.now(timezone.utc)).held:
        return ""
    return lease_holder(obj, state.current) or ""


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
