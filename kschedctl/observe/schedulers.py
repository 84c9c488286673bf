"""A scheduler as kschedctl reports it, and the marks that tell kschedctl's objects (pure).

:class:`Scheduler` is one scheduler name as the cluster serves (or fails to serve) it, with
its leader :class:`Lease`; its :meth:`Scheduler.to_dict` is the JSON contract of ``list``,
``status`` and ``why``. The labels and annotations kschedctl writes on what it deploys, and
:func:`owner` / :func:`owned`, say which objects are kschedctl's. Finding the schedulers a
cluster runs is :mod:`kschedctl.observe.discovery`; telling a scheduler from a claim to its
name is :mod:`kschedctl.observe.identity`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kschedctl.observe.bodies import SchedulerEntry

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# Where deploy recorded the scheduler's Lease, on each of its objects ("namespace/name").
LEASE_ANNOTATION = "kschedctl.io/lease"
# The form deploy recorded on each object it applied (render.context writes it too).
FORM_ANNOTATION = "kschedctl.io/form"
MANAGED_BY = "app.kubernetes.io/managed-by"
INSTANCE = "app.kubernetes.io/instance"
# kschedctl's own mark on every object it renders: the scheduler's name. The recommended labels
# above are not kschedctl's to keep: `helm install` sets managed-by to Helm on every object it
# creates (helm.sh/helm/v4 pkg/action setMetadataVisitor) and Argo CD's default tracking label
# is app.kubernetes.io/instance, so kschedctl finds its objects by this label first.
SCHEDULER_LABEL = "kschedctl.io/scheduler"
# On the pod template: a changed config rolls the pods (written by the templates).
CONFIG_HASH = "kschedctl.io/config-hash"
# Host forms: where their files went (and which lab), so `remove` needs no workspace.
HOST_FILES_ANNOTATION = "kschedctl.io/host-files"
LAB_ANNOTATION = "kschedctl.io/lab"
# kschedctl's own scheduler names itself on the Lease it holds (with its fallback policy), so a
# `kschedctl scheduler run` process is found even when no pod or object of it is visible.
BUILTIN_LEASE_ANNOTATION = "kschedctl.io/scheduler"
LEASE_SYSTEM_NAMESPACE = "kube-system"


@dataclass
class Lease:
    namespace: str
    name: str
    holder: str | None = None
    renew_age: float | None = None  # seconds since renewTime
    duration: int | None = None

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def held(self) -> bool:
        """Held and renewed within its duration (plus a retry period of slack)."""
        if not self.holder or self.renew_age is None:
            return False
        return self.renew_age <= (self.duration or 15) + 2


@dataclass
class Scheduler:
    """One scheduler name as the cluster serves (or fails to serve) it. JSON keys are a contract."""

    name: str
    form: str  # deployment | pod | static-pod | service | process | unknown | none
    managed: bool = False
    namespace: str | None = None
    instance: str | None = None  # the object (or kschedctl name) that serves it
    desired: int | None = None
    ready: int | None = None
    lease: Lease | None = None
    leader: str | None = None
    pending: int = 0
    served: bool = True
    pods: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    # Why its pods' scheduler container does not run, as the kubelet says it
    # (CrashLoopBackOff, ImagePullBackOff, CreateContainerConfigError, FailedMount, …);
    # None while they run (kschedctl.observe.crash).
    problem: str | None = None
    # The labels of the object serving it (Deployment, Pod, kschedctl's RBAC for the host
    # forms): what `list -l SELECTOR` matches. Not in to_dict: `list` shows them as metadata.
    labels: dict[str, str] = field(default_factory=dict)
    # How it is known to be NAME's scheduler (observe.identity), None: nothing known to be it.
    identity: str | None = None
    # Why a claim is not (known to be) the scheduler (impostors, unverified ones).
    reason: str | None = None
    # Form "conflict": the claims that could each be it (none is known to be).
    candidates: list[Scheduler] = field(default_factory=list)
    # Claims of the name that are not it, each in its namespace (observe.identity).
    impostors: list[Scheduler] = field(default_factory=list)
    # The rule of the kschedctl routing that sends it new pods (observe.routing.Route.rule).
    routing: str | None = None

    @property
    def healthy(self) -> bool:
        if not self.served or self.candidates:
            return False
        if self.lease is not None and not self.lease.held:
            return False
        if self.desired is not None and (self.ready or 0) < 1:
            return False
        return True

    def to_dict(self) -> SchedulerEntry:
        lease = self.lease
        return {
            "name": self.name,
            "form": self.form,
            "managed": self.managed,
            "namespace": self.namespace,
            "instance": self.instance,
            "desired": self.desired,
            "ready": self.ready,
            "leader": self.leader,
            "pending": self.pending,
            "served": self.served,
            "pods": list(self.pods),
            "sources": list(self.sources),
            "healthy": self.healthy,
            "problem": self.problem,
            "lease": None
            if lease is None
            else {
                "namespace": lease.namespace,
                "name": lease.name,
                "holder": lease.holder,
                "renewAgeSeconds": None if lease.renew_age is None else round(lease.renew_age, 1),
                "durationSeconds": lease.duration,
            },
            "identity": self.identity,
            "claims": [
                {
                    "namespace": c.namespace,
                    "instance": c.instance,
                    "form": c.form,
                    "verdict": verdict,
                    "reason": c.reason,
                }
                for verdict, group in (("candidate", self.candidates), ("impostor", self.impostors))
                for c in group
            ],  # fmt: skip
            "routing": self.routing,
        }


# -- kschedctl's marks on objects ---------------------------------------------------------------


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def owner(obj: dict[str, Any]) -> str | None:
    """The scheduler kschedctl marked ``obj`` as part of, None when it is not kschedctl's.

    Its own label first; objects deployed before kschedctl wrote it carry only
    ``managed-by: kschedctl`` and the instance label, and are recognised by those."""
    labels = _meta(obj).get("labels") or {}
    marked = labels.get(SCHEDULER_LABEL)
    if isinstance(marked, str) and marked:
        return marked
    instance = labels.get(INSTANCE)
    if labels.get(MANAGED_BY) == "kschedctl" and isinstance(instance, str) and instance:
        return instance
    return None


def is_managed(obj: dict[str, Any]) -> bool:
    return owner(obj) is not None


def owner_selectors(name: str | None = None) -> tuple[str, str]:
    """Label selectors whose results, together and filtered by :func:`owner`, are every object
    kschedctl marked (as part of scheduler ``name``): a selector cannot say "either label"."""
    if name is None:
        return SCHEDULER_LABEL, f"{MANAGED_BY}=kschedctl"
    return f"{SCHEDULER_LABEL}={name}", f"{MANAGED_BY}=kschedctl,{INSTANCE}={name}"


def owned(batches: Iterable[list[dict[str, Any]]], name: str | None = None) -> list[dict[str, Any]]:
    """The objects of ``batches`` (the answers to :func:`owner_selectors`) that are kschedctl's
    (of scheduler ``name`` when given), each once, in first-seen order. An object whose
    kschedctl label names another scheduler is not ``name``'s, whatever its instance label."""
    seen: set[tuple[str, str, str, str]] = set()
    found: list[dict[str, Any]] = []
    for batch in batches:
        for obj in batch:
            meta = _meta(obj)
            key = (
                str(obj.get("kind", "")),
                str(meta.get("namespace", "")),
                str(meta.get("name", "")),
                str(meta.get("uid", "")),
            )
            who = owner(obj)
            if key in seen or who is None or (name is not None and who != name):
                continue
            seen.add(key)
            found.append(obj)
    return found


def recorded_host_files(objects: Iterable[dict[str, Any]]) -> tuple[set[str], str | None]:
    """The host files ``deploy`` recorded on a scheduler's objects (absolute paths) and the
    lab it deployed them into (None: the machine it ran on)."""
    files: set[str] = set()
    labs: set[str] = set()
    for obj in objects:
        annotations = _meta(obj).get("annotations") or {}
        try:
            listed = json.loads(annotations.get(HOST_FILES_ANNOTATION, "[]"))
        except ValueError:
            listed = None  # edited by hand into something else: nothing recorded
        if isinstance(listed, list):
            files.update(f for f in listed if isinstance(f, str))
        if LAB_ANNOTATION in annotations:
            labs.add(str(annotations[LAB_ANNOTATION]))
    return files, min(labs) if labs else None  # one deploy records one lab


# -- reading Leases -----------------------------------------------------------------------------


def parse_lease(obj: dict[str, Any], now: datetime) -> Lease:
    meta, spec = _meta(obj), obj.get("spec") or {}
    renew = spec.get("renewTime") or spec.get("acquireTime")
    age = None
    if renew:
        age = (now - parse_time(renew)).total_seconds()
    return Lease(
        namespace=meta.get("namespace", ""),
        name=meta.get("name", ""),
        holder=spec.get("holderIdentity") or None,
        renew_age=age,
        duration=spec.get("leaseDurationSeconds"),
    )


_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$")


def parse_time(text: str) -> datetime:
    """RFC 3339 Time or MicroTime (up to nanoseconds) as an aware datetime."""
    match = _TIME.match(text)
    if not match:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    base, fraction, zone = match.groups()
    micros = (fraction or "0")[:6].ljust(6, "0")
    offset = "+00:00" if zone in (None, "Z") else zone
    return datetime.fromisoformat(f"{base}.{micros}{offset}")
