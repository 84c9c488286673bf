"""The pod status a kubelet would report, as a strategic-merge patch of ``pods/status``.

kwok's pod-ready stage marks every bound pod Running and Ready the moment it is bound; from
then on the runner owns the status of the pods it runs. Only the fields the runner decides are
compared, so a status already right is never patched again (no patch loop with kwok, whose
stage no longer matches a pod once it is Running).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any


def iso(ts: float) -> str:
    """API time (whole seconds, as the server stores it): equal values compare equal."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def simulated_status(
    container: Mapping[str, Any], current: Sequence[Mapping[str, Any]], started: str
) -> dict[str, Any]:
    """A container the lab does not run: kwok's status for it, or running and ready."""
    for status in current:
        if status.get("name") == container["name"]:
            return dict(status)
    return {
        "name": container["name"],
        "image": container.get("image", ""),
        "ready": True,
        "started": True,
        "restartCount": 0,
        "state": {"running": {"startedAt": started}},
    }


def _norm(status: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        status.get("name"),
        status.get("image"),
        bool(status.get("ready")),
        bool(status.get("started")),
        int(status.get("restartCount") or 0),
        status.get("state") or {},
        status.get("lastState") or {},
        status.get("containerID") or "",
    )


def _condition(
    current: Mapping[str, Mapping[str, Any]],
    kind: str,
    ok: bool,
    reason: str,
    message: str,
    now: str,
) -> dict[str, Any]:
    value = "True" if ok else "False"
    before = current.get(kind) or {}
    condition: dict[str, Any] = {
        "type": kind,
        "status": value,
        # Kept while the status does not change, as the kubelet does.
        "lastTransitionTime": before.get("lastTransitionTime")
        if before.get("status") == value
        else now,
        # null removes what a False condition carried, in a strategic-merge patch.
        "reason": None if ok else reason,
        "message": None if ok else message,
    }
    return condition


def desired_status(
    pod: Mapping[str, Any], statuses: Sequence[dict[str, Any]], phase: str, now: float
) -> dict[str, Any]:
    """The status fields the runner owns: phase, Ready/ContainersReady, containerStatuses."""
    current = pod.get("status") or {}
    conditions = {c.get("type"): c for c in current.get("conditions") or []}
    unready = [s["name"] for s in statuses if not s.get("ready")]
    containers_ready = not unready
    gates = [g["conditionType"] for g in (pod.get("spec") or {}).get("readinessGates") or []]
    gates_ok = all((conditions.get(g) or {}).get("status") == "True" for g in gates)
    stamp = iso(now)
    message = f"containers with unready status: [{' '.join(unready)}]"
    ready_reason = "ContainersNotReady" if not containers_ready else "ReadinessGatesNotReady"
    return {
        "phase": phase,
        "conditions": [
            _condition(
                conditions,
                "ContainersReady",
                containers_ready,
                "ContainersNotReady",
                message,
                stamp,
            ),
            _condition(
                conditions,
                "Ready",
                containers_ready and gates_ok,
                ready_reason,
                message if not containers_ready else "readiness gates not ready",
                stamp,
            ),
        ],
        "containerStatuses": list(statuses),
    }


def needs_patch(pod: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    current = pod.get("status") or {}
    if current.get("phase") != desired["phase"]:
        return True
    conditions = {c.get("type"): c for c in current.get("conditions") or []}
    for condition in desired["conditions"]:
        have = conditions.get(condition["type"]) or {}
        if have.get("status") != condition["status"] or have.get("reason") != condition.get(
            "reason"
        ):
            return True
    have_statuses = [_norm(s) for s in current.get("containerStatuses") or []]
    return have_statuses != [_norm(s) for s in desired["containerStatuses"]]
