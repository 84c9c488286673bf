"""The pod status a kubelet would report, as a strategic-merge patch of ``pods/status``.

The runner is the only writer of its pods' status: ``lab up`` keeps kwok's pod-ready stage off
them (:func:`kschedctl.lab.images.kwok_selector_key`), so kwok never calls a pod Ready before
its process runs. Containers the lab does not run (a sidecar next to the scheduler) are
reported running and ready, as kwok would. Only the fields the runner decides are compared, so
a status that is already right is not patched again."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any


def iso(ts: float) -> str:
    """API time (whole seconds, as the server stores it): equal values compare equal."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _current(name: str, current: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    return next((dict(s) for s in current if s.get("name") == name), None)


def simulated_status(
    container: Mapping[str, Any], current: Sequence[Mapping[str, Any]], started: str
) -> dict[str, Any]:
    """A container the lab does not run: running and ready since the pod started."""
    return _current(container["name"], current) or {
        "name": container["name"],
        "image": container.get("image", ""),
        "imageID": "",
        "ready": True,
        "started": True,
        "restartCount": 0,
        "state": {"running": {"startedAt": started}},
        "lastState": {},
    }


def simulated_init_status(
    container: Mapping[str, Any], current: Sequence[Mapping[str, Any]], started: str
) -> dict[str, Any]:
    """An init container (never run in the lab): completed, or running if it is a sidecar."""
    if container.get("restartPolicy") == "Always":
        return simulated_status(container, current, started)
    return _current(container["name"], current) or {
        "name": container["name"],
        "image": container.get("image", ""),
        "imageID": "",
        "ready": True,
        "restartCount": 0,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                 "startedAt": started, "finishedAt": started}},
        "lastState": {},
    }  # fmt: skip


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
    same = before.get("status") == value
    return {
        "type": kind,
        "status": value,
        # Kept while the status does not change, as the kubelet does.
        "lastTransitionTime": before.get("lastTransitionTime") if same else now,
        # null removes what a False condition carried, in a strategic-merge patch.
        "reason": None if ok else reason,
        "message": None if ok else message,
    }


def desired_status(
    pod: Mapping[str, Any],
    statuses: Sequence[dict[str, Any]],
    phase: str,
    host_ip: str,
    now: float,
) -> dict[str, Any]:
    """Every status field the runner owns, computed from its containers' statuses."""
    current = pod.get("status") or {}
    spec = pod.get("spec") or {}
    conditions = {c.get("type"): c for c in current.get("conditions") or []}
    stamp = iso(now)
    started = current.get("startTime") or stamp
    unready = [s["name"] for s in statuses if not s.get("ready")]
    gates = [g["conditionType"] for g in spec.get("readinessGates") or []]
    gates_ok = all((conditions.get(g) or {}).get("status") == "True" for g in gates)
    message = f"containers with unready status: [{' '.join(unready)}]"
    ready_reason, ready_message = (
        ("ContainersNotReady", message) if unready else ("ReadinessGatesNotReady", "")
    )
    init = [
        simulated_init_status(c, current.get("initContainerStatuses") or [], started)
        for c in spec.get("initContainers") or []
    ]
    desired: dict[str, Any] = {
        "phase": phase,
        "startTime": started,
        "conditions": [
            _condition(conditions, "PodReadyToStartContainers", True, "", "", stamp),
            _condition(conditions, "Initialized", True, "", "", stamp),
            _condition(
                conditions, "ContainersReady", not unready, "ContainersNotReady", message, stamp
            ),
            _condition(
                conditions, "Ready", not unready and gates_ok, ready_reason, ready_message, stamp
            ),
        ],  # fmt: skip
        "containerStatuses": list(statuses),
    }
    if init:
        desired["initContainerStatuses"] = init
    if host_ip:
        # The process shares the host's network (it listens on 127.0.0.1), as a hostNetwork
        # pod does, so its pod IP is the node's.
        ips = [{"ip": host_ip}]
        desired.update(hostIP=host_ip, hostIPs=ips, podIP=host_ip, podIPs=ips)
    return desired


def needs_patch(pod: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    current = pod.get("status") or {}
    for key in ("phase", "hostIP", "podIP"):
        if key in desired and current.get(key) != desired[key]:
            return True
    if not current.get("startTime"):
        return True
    conditions = {c.get("type"): c for c in current.get("conditions") or []}
    for condition in desired["conditions"]:
        have = conditions.get(condition["type"]) or {}
        if (have.get("status"), have.get("reason")) != (condition["status"], condition["reason"]):
            return True
    for key in ("containerStatuses", "initContainerStatuses"):
        have = [_norm(s) for s in current.get(key) or []]
        if have != [_norm(s) for s in desired.get(key) or []]:
            return True
    return False
