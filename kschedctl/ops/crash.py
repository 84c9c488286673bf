"""Why a scheduler's pods do not run, read from the cluster: `status`'s and `why`'s crash part.

The pure reading is :mod:`kschedctl.observe.crash`; this module fetches what it needs — the
scheduler's pods, their ``FailedMount`` events, the last lines of each crashed container's
previous instance (pods/log with ``previous=true``) — and degrades quietly where it may not
read them (no events, no pods/log: the container states alone still say what happens).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.k8s.logs import previous_lines
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.crash import STARTING, CrashReport, configmap_volumes, pod_problems
from kschedctl.observe.schedulers import Scheduler, owner

LOG_TAIL = 10  # lines of the previous container shown by `status`


def pods_of_scheduler(
    pods: Iterable[dict[str, Any]], name: str, entry: Scheduler | None
) -> list[dict[str, Any]]:
    """The pods among ``pods`` running scheduler ``name``: those discovery found for it, and those
    kschedctl labelled as its in its namespace (found even when their config cannot be
    read); a pod labelled so elsewhere only claims to be (observe.identity)."""
    wanted = set(entry.pods) if entry is not None else set()
    namespace = entry.namespace if entry is not None else None
    found = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") or _replaced(pod):
            continue
        ours = meta.get("namespace") == namespace and meta.get("name") in wanted
        if ours or (owner(pod) == name and namespace and meta.get("namespace") == namespace):
            found.append(pod)
    return sorted(found, key=lambda p: (p["metadata"].get("namespace"), p["metadata"]["name"]))


def _replaced(pod: dict[str, Any]) -> bool:
    """A failed pod of a ReplicaSet (evicted, node lost): its Deployment runs another."""
    owners = [r.get("kind") for r in (pod.get("metadata") or {}).get("ownerReferences") or []]
    return "ReplicaSet" in owners and (pod.get("status") or {}).get("phase") == "Failed"


def _mount_failures(cluster: Cluster, pod: dict[str, Any]) -> list[str]:
    """The messages of the pod's FailedMount events, oldest first ([] if unreadable)."""
    meta = pod["metadata"]
    try:
        events = cluster.list(
            f"/api/v1/namespaces/{meta['namespace']}/events",
            fieldSelector=f"involvedObject.name={meta['name']},reason=FailedMount",
        )
    except KschedError:
        return []
    uid = meta.get("uid")
    events = [e for e in events if not uid or (e.get("involvedObject") or {}).get("uid") == uid]
    events.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    return [str(e.get("message") or "") for e in events]


def _starting(pod: dict[str, Any]) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if not statuses:
        return bool((pod.get("spec") or {}).get("nodeName"))
    return any(
        ((s.get("state") or {}).get("waiting") or {}).get("reason") in STARTING for s in statuses
    )


def _missing_configmaps(cluster: Cluster, pod: dict[str, Any]) -> list[str]:
    namespace = pod["metadata"]["namespace"]
    missing = []
    for name in dict.fromkeys(configmap_volumes(pod)):
        try:
            cluster.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
        except NotFoundError:
            missing.append(name)
        except KschedError:
            continue  # forbidden, unreachable: cannot tell
    return missing


def _terminated(pod: dict[str, Any], container: str) -> bool:
    status = pod.get("status") or {}
    for entry in [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]:
        if entry.get("name") == container:
            return "terminated" in (entry.get("state") or {})
    return False


def crash_reports(
    cluster: Cluster, pods: Iterable[dict[str, Any]], scheduler: str | None, tail: int = LOG_TAIL
) -> list[CrashReport]:
    """What keeps each of ``pods`` from running, with its previous container's last lines."""
    reports = []
    for pod in pods:
        mounts: list[str] = []
        missing: list[str] = []
        if _starting(pod):
            mounts = _mount_failures(cluster, pod)
            missing = [] if mounts else _missing_configmaps(cluster, pod)
        for problem in pod_problems(
            pod, mount_failures=mounts, missing_configmaps=missing, scheduler=scheduler
        ):
            report = CrashReport(problem)
            if problem.restarts or problem.exit_code is not None:
                report.previous_log, report.previous_log_error = previous_lines(
                    cluster,
                    problem.namespace,
                    problem.pod,
                    problem.container,
                    tail,
                    # A container that will not restart (restartPolicy) ended as the current one.
                    previous=not _terminated(pod, problem.container),
                )
            reports.append(report)
    return reports
