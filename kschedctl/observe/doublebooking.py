"""Double booking: pods the kubelet rejected because two schedulers filled one node at once.

Each scheduler decides from its own cache. Two of them (two kube-scheduler processes, or one and
kschedctl's own) that see the same free room on a node can both bind a pod there before either
learns of the other's binding; the kubelet then admits the first pod it sees and rejects the
other — phase ``Failed``, reason ``OutOfcpu`` / ``OutOfmemory`` / ``OutOfpods`` …, message "Pod
was rejected: Node didn't have enough resource: …" (pkg/kubelet/lifecycle/predicate.go;
kubernetes#72043, #60469). Nothing retries such a pod: a bare pod stays Failed, a controller's
replica is replaced.

Pure: from pods and ``Scheduled`` events (who bound what, where, when: the events'
``reportingController`` is the scheduler's name) it finds, per node, the rejected pods and the
schedulers that bound pods to that node in a window around each rejection. Two or more distinct
schedulers make a collision; its fix is one kube-scheduler serving every name as profiles of one
configuration (``kschedctl render NAME --as config --add-to FILE``), so one cache sees every
binding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kschedctl.observe.events import Event, first_time, iso_time
from kschedctl.observe.findings import ERROR, WARNING, Finding

OUT_OF = "OutOf"  # lifecycle.InsufficientResourcePrefix
DEFAULT_SCHEDULER = "default-scheduler"
# Bindings this long before a rejected pod's own binding still raced with it: a scheduler's cache
# learns of another's binding through its watch, normally well within a second; a busy API server
# or a scheduler in back-off stretches that.
WINDOW = timedelta(seconds=60)
# kube-scheduler's and kschedctl's Scheduled message (pkg/scheduler/schedule_one.go).
_ASSIGNED = re.compile(r"^Successfully assigned (?P<ns>[^/\s]+)/(?P<name>\S+) to (?P<node>\S+)$")


@dataclass(frozen=True)
class Binding:
    """One pod bound to a node by a scheduler."""

    namespace: str
    name: str
    uid: str
    node: str
    scheduler: str
    time: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": f"{self.namespace}/{self.name}",
            "scheduler": self.scheduler,
            "time": iso_time(self.time),
        }


@dataclass(frozen=True)
class RejectedPod:
    namespace: str
    name: str
    uid: str
    node: str
    reason: str  # OutOfcpu …
    message: str  # the pod's status.message, as the kubelet wrote it
    scheduler: str  # who bound it (the Scheduled event, else spec.schedulerName)
    bound: datetime | None

    @property
    def resource(self) -> str:
        return self.reason[len(OUT_OF) :]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": f"{self.namespace}/{self.name}",
            "reason": self.reason,
            "message": self.message,
            "scheduler": self.scheduler,
        }


@dataclass(frozen=True)
class NodeRejections:
    """The kubelet's resource rejections on one node and who bound pods there meanwhile."""

    node: str
    rejected: tuple[RejectedPod, ...]
    bindings: tuple[Binding, ...]  # in the windows around the rejections, oldest first

    @property
    def schedulers(self) -> tuple[str, ...]:
        return tuple(sorted({b.scheduler for b in self.bindings if b.scheduler}))

    @property
    def resources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.resource for r in self.rejected))

    @property
    def collision(self) -> bool:
        """Two or more schedulers bound pods here at once: they double-booked the node."""
        return len(self.schedulers) >= 2

    @property
    def message(self) -> str:
        pods = ", ".join(f"{r.namespace}/{r.name}" for r in self.rejected)
        what = "/".join(self.resources)
        if self.collision:
            return (
                f"node {self.node}: schedulers {_names(self.schedulers)} bound pods to it at the "
                f"same time and over-committed its {what}; the kubelet rejected {pods} "
                f"({self.rejected[0].reason})"
            )
        who = self.schedulers[0] if self.schedulers else "no scheduler on record"
        return (
            f"node {self.node}: the kubelet rejected {pods} ({self.rejected[0].reason}: its {what} "
            f"was taken); bound by {who}, no other scheduler bound pods there meanwhile"
        )

    @property
    def fix(self) -> str:
        if self.collision:
            return merge_fix(self.schedulers)
        return (
            "something placed pods on the node without the scheduler's knowledge (spec.nodeName "
            "set directly, a static pod, or a scheduler whose events are gone); "
            "recreate the rejected pods once there is room"
        )

    def involves(self, scheduler: str) -> bool:
        return scheduler in self.schedulers

    def to_dict(self) -> dict[str, Any]:
        """``status``/``why -o json``: keys are a contract."""
        return {
            "node": self.node,
            "collision": self.collision,
            "resources": list(self.resources),
            "schedulers": list(self.schedulers),
            "rejected": [r.to_dict() for r in self.rejected],
            "bindings": [b.to_dict() for b in self.bindings],
            "message": self.message,
            "fix": self.fix,
        }


def merge_fix(schedulers: Iterable[str]) -> str:
    """One kube-scheduler, several profiles, one cache: the others join one scheduler's config."""
    names = sorted(set(schedulers))
    host = DEFAULT_SCHEDULER if DEFAULT_SCHEDULER in names else names[0]
    added = [n for n in names if n != host]
    where = (
        "/etc/kubernetes/kube-scheduler-config.yaml"
        if host == DEFAULT_SCHEDULER
        else f"<{host}'s config file>"
    )
    commands = "; ".join(f"kschedctl render {n} --as config --add-to {where}" for n in added)
    return (
        f"serve {_names(names)} as profiles of one kube-scheduler, so one cache sees every "
        f"binding: `{commands}`, run {host} with the result, then stop the separate "
        f"{_names(added)} (`kschedctl remove NAME` if kschedctl deployed it); or give each "
        "scheduler its own nodes (nodeSelector / taints)"
    )


def _names(names: Iterable[str]) -> str:
    items = list(names)
    return " and ".join(items) if len(items) <= 2 else ", ".join(items[:-1]) + " and " + items[-1]


def is_rejected(pod: Mapping[str, Any]) -> bool:
    """Failed by the kubelet's resource admission (``OutOf…``) on a node."""
    status = pod.get("status") or {}
    return (
        status.get("phase") == "Failed"
        and str(status.get("reason") or "").startswith(OUT_OF)
        and bool((pod.get("spec") or {}).get("nodeName"))
    )


def bindings_from(
    pods: Iterable[Mapping[str, Any]], events: Iterable[Event]
) -> dict[str, list[Binding]]:
    """Per node, who bound which pod when: the ``Scheduled`` events (the scheduler's own word),
    and for bound pods without one (events expire after an hour) ``spec.schedulerName`` and the
    PodScheduled condition's time."""
    found: dict[str, Binding] = {}
    for event in events:
        if event.reason != "Scheduled" or event.kind not in ("Pod", ""):
            continue
        match = _ASSIGNED.match(event.message.strip())
        if match is None:
            continue
        key = event.uid or f"{match['ns']}/{match['name']}"
        binding = Binding(
            match["ns"], match["name"], event.uid, match["node"], event.controller,
            event.first_time or event.time,
        )  # fmt: skip
        found.setdefault(key, binding)
    for pod in pods:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        uid, node = str(meta.get("uid") or ""), str(spec.get("nodeName") or "")
        key = uid or f"{meta.get('namespace')}/{meta.get('name')}"
        if not node or key in found or f"{meta.get('namespace')}/{meta.get('name')}" in found:
            continue
        scheduled = next(
            (
                c
                for c in (pod.get("status") or {}).get("conditions") or []
                if c.get("type") == "PodScheduled" and c.get("status") == "True"
            ),
            None,
        )
        if scheduled is None:
            continue  # bound by hand (spec.nodeName): no scheduler took part
        found[key] = Binding(
            str(meta.get("namespace") or ""), str(meta.get("name") or ""), uid, node,
            str(spec.get("schedulerName") or DEFAULT_SCHEDULER),
            first_time(scheduled.get("lastTransitionTime")),
        )  # fmt: skip
    per_node: dict[str, list[Binding]] = {}
    for binding in found.values():
        per_node.setdefault(binding.node, []).append(binding)
    return per_node


def find_rejections(
    pods: Iterable[Mapping[str, Any]],
    events: Iterable[Event],
    *,
    window: timedelta = WINDOW,
) -> list[NodeRejections]:
    """The nodes where the kubelet rejected pods for lack of resources, collisions first."""
    pods = list(pods)
    per_node = bindings_from(pods, events)
    by_uid = {b.uid: b for bs in per_node.values() for b in bs if b.uid}
    by_name = {(b.namespace, b.name): b for bs in per_node.values() for b in bs}
    rejected: dict[str, list[RejectedPod]] = {}
    for pod in pods:
        if not is_rejected(pod):
            continue
        meta, spec, status = pod["metadata"], pod["spec"], pod["status"]
        own = by_uid.get(str(meta.get("uid") or "")) or by_name.get(
            (str(meta.get("namespace")), str(meta.get("name")))
        )
        rejected.setdefault(spec["nodeName"], []).append(
            RejectedPod(
                namespace=str(meta.get("namespace") or ""),
                name=str(meta.get("name") or ""),
                uid=str(meta.get("uid") or ""),
                node=str(spec["nodeName"]),
                reason=str(status.get("reason")),
                message=str(status.get("message") or ""),
                scheduler=own.scheduler if own else str(spec.get("schedulerName") or ""),
                bound=own.time if own else first_time(meta.get("creationTimestamp")),
            )
        )
    out = []
    for node, pods_here in rejected.items():
        pods_here.sort(key=lambda r: (r.bound is None, r.bound or datetime.min, r.name))
        near: dict[tuple[str, str], Binding] = {}
        for r in pods_here:
            own = by_uid.get(r.uid) or by_name.get((r.namespace, r.name))
            if own is not None:
                near[(own.namespace, own.name)] = own
            for b in per_node.get(node, []):
                if _within(b.time, r.bound, window):
                    near[(b.namespace, b.name)] = b
        bindings = sorted(
            near.values(), key=lambda b: (b.time is None, b.time or datetime.min, b.name)
        )
        out.append(NodeRejections(node, tuple(pods_here), tuple(bindings)))
    out.sort(key=lambda n: (not n.collision, n.node))
    return out


def _within(moment: datetime | None, around: datetime | None, window: timedelta) -> bool:
    """Bound within ``window`` either side of the rejected pod's binding: before it (the pod
    that took its room) or after it (the kubelet may see the rejected pod's rival late)."""
    if moment is None or around is None:
        return False
    return around - window <= moment <= around + window


def for_scheduler(found: Iterable[NodeRejections], scheduler: str) -> list[NodeRejections]:
    """The collisions a scheduler took part in (for ``status NAME``)."""
    return [n for n in found if n.collision and n.involves(scheduler)]


def for_pod(found: Iterable[NodeRejections], namespace: str, name: str) -> NodeRejections | None:
    return next(
        (n for n in found if any((r.namespace, r.name) == (namespace, name) for r in n.rejected)),
        None,
    )


def kubelet_rejection_findings(
    pod: Mapping[str, Any], found: NodeRejections | None
) -> list[Finding]:
    """``why`` for a pod the kubelet rejected: that (not the scheduler) is what stopped it, and
    whether two schedulers colliding on the node caused it."""
    status, spec = pod.get("status") or {}, pod.get("spec") or {}
    node = spec.get("nodeName") or "?"
    reason = str(status.get("reason") or "")
    out = [
        Finding(
            "kubelet-rejected",
            ERROR,
            f"the kubelet on node {node} rejected the pod after it was bound ({reason}): "
            f"{status.get('message') or 'no message'}; it is Failed, not Pending, and no "
            "scheduler tries it again",
            "recreate the pod once the cause below is fixed (a controller replaces its "
            "replicas by itself)",
        )
    ]
    if found is not None and found.collision:
        out.append(Finding("double-booked", ERROR, found.message, found.fix))
    elif found is not None:
        out.append(Finding("node-overcommitted", WARNING, found.message, found.fix))
    return out
