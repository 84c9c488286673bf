"""What removing a scheduler would really leave without one (pure): `remove`'s reading.

A pod already bound to a node keeps running without its scheduler: only pods that still wait
for it (no ``spec.nodeName``, not terminating, not finished) and controllers whose pod template
names it and that will create more pods are left hanging — Pending, with no events at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME

# Kinds whose pod template may name a scheduler; where the template is in each.
CONTROLLER_TEMPLATES: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
_SCALED = frozenset({"Deployment", "ReplicaSet", "StatefulSet"})  # spec.replicas, default 1
_CANARY = ("app.kubernetes.io/component", "canary")  # deploy's own probe, removed with it

LISTED = 10  # names a message shows before "and N more"


@dataclass(frozen=True)
class Orphans:
    """Pods and controllers that name a scheduler, sorted by whether removing it hurts."""

    waiting: tuple[str, ...] = ()  # pod/NAMESPACE/NAME not yet bound: they would hang
    controllers: tuple[str, ...] = ()  # kind/NAMESPACE/NAME that will create more such pods
    bound: int = 0  # pods on a node already: they keep running

    @property
    def stranded(self) -> tuple[str, ...]:
        """Everything left without a scheduler: what `remove` refuses for."""
        return self.waiting + self.controllers


def _ref(obj: Mapping[str, Any], kind: str) -> str:
    meta = obj.get("metadata") or {}
    return f"{kind.lower()}/{meta.get('namespace', '')}/{meta.get('name', '')}"


def _finished_or_leaving(obj: Mapping[str, Any]) -> bool:
    phase = (obj.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed") or bool(
        (obj.get("metadata") or {}).get("deletionTimestamp")
    )


def _is_canary(obj: Mapping[str, Any]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get(_CANARY[0]) == _CANARY[1]


def _template_scheduler(obj: Mapping[str, Any], kind: str) -> str | None:
    node: Any = obj
    for key in CONTROLLER_TEMPLATES[kind]:
        node = node.get(key) if isinstance(node, Mapping) else None
    spec = node.get("spec") if isinstance(node, Mapping) else None
    return spec.get("schedulerName") if isinstance(spec, Mapping) else None


def _has_controller(obj: Mapping[str, Any]) -> bool:
    # A Deployment's ReplicaSets and a CronJob's Jobs: their owner is counted, once.
    owners = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(o.get("controller") for o in owners)


def _job_finished(obj: Mapping[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions
    )


def _creates_pods(obj: Mapping[str, Any], kind: str) -> bool:
    spec = obj.get("spec") or {}
    if kind in _SCALED:
        return int(spec.get("replicas", 1)) > 0
    if kind == "Job":
        return not _job_finished(obj)
    if kind == "CronJob":
        return not spec.get("suspend")  # a suspended CronJob starts no Job
    return True  # DaemonSet: a pod per new node


def orphans(
    name: str, pods: Iterable[Mapping[str, Any]], controllers: Iterable[Mapping[str, Any]]
) -> Orphans:
    """What removing scheduler ``name`` would leave without one. ``pods``: pods naming it;
    ``controllers``: objects of the :data:`CONTROLLER_TEMPLATES` kinds (with ``kind`` set)."""
    if name == DEFAULT_SCHEDULER_NAME:
        # Only a replacement of the default scheduler has this name (the spec refuses it
        # otherwise): its pods — every pod that names no scheduler — go back to kube-scheduler.
        return Orphans()
    waiting, bound = [], 0
    for pod in pods:
        if (pod.get("spec") or {}).get("schedulerName") != name:
            continue
        if _finished_or_leaving(pod) or _is_canary(pod):
            continue
        if (pod.get("spec") or {}).get("nodeName"):
            bound += 1
        else:
            waiting.append(_ref(pod, "Pod"))
    making = [
        _ref(obj, kind)
        for obj in controllers
        if (kind := str(obj.get("kind"))) in CONTROLLER_TEMPLATES
        and _template_scheduler(obj, kind) == name
        and not _has_controller(obj)
        and not (obj.get("metadata") or {}).get("deletionTimestamp")
        and _creates_pods(obj, kind)
    ]
    return Orphans(tuple(sorted(waiting)), tuple(sorted(making)), bound)


def bounded(names: Sequence[str], limit: int = LISTED) -> str:
    """``a, b, c`` — at most ``limit`` names, then "and N more"."""
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown
