"""Everything `kschedctl status NAME` reports: objects, readiness, lease, RBAC, version skew,
recent events, Pending pods and the multi-scheduler traps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, TypedDict

from kschedctl.base.errors import NotFoundError
from kschedctl.k8s import access
from kschedctl.k8s.apply import managed_objects
from kschedctl.k8s.events import Query, list_events
from kschedctl.k8s.inventory import snapshot
from kschedctl.k8s.resources import describe
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.versions import image_kubernetes_version, parse_git_version
from kschedctl.observe.containers import is_builtin_container, scheduler_container
from kschedctl.observe.crash import CrashReport
from kschedctl.observe.discovery import discover
from kschedctl.observe.doublebooking import for_scheduler
from kschedctl.observe.identity import pick, trusted_objects
from kschedctl.observe.permissions import (
    DEFAULT_LEASE_UPDATE,
    metrics_object,
    rbac_mode,
    scheduler_access,
)
from kschedctl.observe.routing import matched_namespaces, routed_to
from kschedctl.observe.schedulers import Scheduler
from kschedctl.ops.crash import crash_reports, pods_of_scheduler
from kschedctl.ops.doublebooking import detect
from kschedctl.ops.routing import namespaces, routes_in
from kschedctl.ops.status_history import revision_state
from kschedctl.ops.status_metrics import MetricsReport, read_metrics


class ObjectState(TypedDict):
    ref: str
    kind: str
    state: str


class AccessCheck(TypedDict):
    access: str
    allowed: bool


class AccessReport(TypedDict):
    subject: str
    checks: list[AccessCheck]


class RbacReport(TypedDict):
    mode: str | None  # leastPrivilege | builtinRoles; None: no ClusterRoleBinding (host forms)
    clusterRoles: list[str]  # the ClusterRoles kschedctl bound it to
    # May its identity update kube-system/kube-scheduler, the default scheduler's Lease?
    # (a SubjectAccessReview; None when there is no identity to review)
    defaultLeaseUpdate: bool | None


class VersionReport(TypedDict):
    server: str
    image: str | None
    skew: str


class EventLine(TypedDict):
    time: str
    type: str
    reason: str
    object: str
    message: str


class RoutingReport(TypedDict):
    rule: str  # observe.routing.Route.rule: ns:team=ml
    namespaces: list[str]  # the namespaces it selects now
    routedPods: int  # live pods its policy routed (their kschedctl.io/routed-by names it)


@dataclass
class SchedulerStatus:
    name: str
    scheduler: Scheduler | None  # None: kschedctl's objects exist, but nothing serves the name
    objects: list[ObjectState]
    access: AccessReport | None  # None: no ServiceAccount or user to review
    rbac: RbacReport
    version: VersionReport
    events: list[EventLine]
    pending_pods: list[str]  # namespace/name
    warnings: list[str]
    # Why its pods do not run (CrashLoopBackOff, ImagePullBackOff, a missing ConfigMap, …),
    # with each crashed container's last log lines (kschedctl.ops.crash).
    problems: list[CrashReport] = field(default_factory=list)
    metrics: MetricsReport | None = None  # None: not asked (no --metrics)
    # Nodes where this scheduler and another bound pods at once and the kubelet rejected some
    # (observe.doublebooking.NodeRejections.to_dict each).
    double_booking: list[dict[str, Any]] = field(default_factory=list)
    # The current revision (history's fields) and where the live objects drifted from it.
    revision: dict[str, Any] | None = None
    drift: list[dict[str, Any]] | None = None  # None: not compared (see warnings)
    routing: RoutingReport | None = None  # None: no kschedctl routing sends it pods

    def to_dict(self) -> dict[str, Any]:
        """``status -o json|yaml``: its keys, and their order, are a contract."""
        return {
            "name": self.name,
            "scheduler": self.scheduler.to_dict() if self.scheduler else None,
            "objects": self.objects,
            "access": self.access,
            "rbac": self.rbac,
            "version": self.version,
            "events": self.events,
            "pendingPods": self.pending_pods,
            "warnings": self.warnings,
            "problems": [p.to_dict() for p in self.problems],
            "metrics": self.metrics,
            "doubleBooking": self.double_booking,
            "revision": self.revision,
            "drift": self.drift,
            "routing": self.routing,
        }


def scheduler_status(
    cluster: Cluster,
    name: str,
    *,
    metrics: bool = False,
    metrics_reader: str | None = None,
    namespace: str | None = None,
) -> SchedulerStatus:
    """``metrics``: the caller consents to port-forwards to the scheduler's pods, each sent a
    token minted for the purpose (``metrics_reader``: its ServiceAccount; .status_metrics).
    ``namespace``: the one of the claims to ``name`` to report (a conflict needs it)."""
    snap = snapshot(cluster)
    schedulers = discover(snap)
    # Only what is known to be the scheduler is read, scraped and reviewed: never a claim
    # to its name (observe.identity), nor an object only labelled like kschedctl's.
    entry = pick(schedulers, name, namespace)
    objects, _foreign = trusted_objects(name, managed_objects(cluster, name))
    if entry is None and not objects:
        raise NotFoundError(
            f"no scheduler named {name!r}: nothing serves it and no pod asks for it",
            hint="`kschedctl list` shows the schedulers in this cluster",
        )
    server = cluster.server_version().get("gitVersion", "")
    container = serving_container(objects, snap.deployments, snap.pods, entry)
    image = str(container.get("image")) if container else None
    # kschedctl's own scheduler is not a kube-scheduler release: no skew rule, its own RBAC.
    builtin = container is not None and is_builtin_container(container)
    subject = _subject(objects)
    rbac = _rbac(cluster, objects, subject)
    home = entry.namespace if entry and entry.namespace else _home(objects)
    history = revision_state(cluster, name, home, objects)
    return SchedulerStatus(
        name=name,
        scheduler=entry,
        objects=[{"ref": describe(o), "kind": o["kind"], "state": _state(o)} for o in objects],
        access=_access(cluster, subject, entry, builtin),
        rbac=rbac,
        version={
            "server": server,
            "image": image,
            "skew": "n/a (kschedctl's own scheduler)" if builtin else version_skew(image, server),
        },
        events=_events(cluster, name),
        pending_pods=[
            f"{p['metadata']['namespace']}/{p['metadata']['name']}"
            for p in cluster.list(
                "/api/v1/pods", fieldSelector=f"spec.schedulerName={name},status.phase=Pending"
            )
            if not p["spec"].get("nodeName")
        ],
        warnings=warnings(entry, schedulers, objects) + rbac_warnings(objects) + history.notes,
        problems=crash_reports(cluster, pods_of_scheduler(snap.pods, name, entry), name),
        metrics=read_metrics(cluster, entry, snap.pods, metrics_reader) if metrics else None,
        double_booking=[n.to_dict() for n in for_scheduler(detect(cluster, snap.pods), name)],
        revision=history.revision,
        drift=None if history.drift is None else [d.to_dict() for d in history.drift],
        routing=_routing(cluster, name, objects),
    )


def _home(objects: list[dict[str, Any]]) -> str | None:
    """The namespace the scheduler runs in: its workload's (or ConfigMap's)."""
    for obj in objects:
        if obj["kind"] in ("Deployment", "Pod", "ConfigMap"):
            return str(obj["metadata"].get("namespace") or "") or None
    return None


def _routing(cluster: Cluster, name: str, objects: list[dict[str, Any]]) -> RoutingReport | None:
    routes = routes_in(objects)
    if not routes:
        return None
    route = routes[0]
    routed = cluster.list("/api/v1/pods", fieldSelector=f"spec.schedulerName={name}")
    return {
        "rule": route.rule,
        "namespaces": matched_namespaces(route, namespaces(cluster)),
        "routedPods": sum(1 for pod in routed if routed_to(pod) == name),
    }


def _state(obj: dict[str, Any]) -> str:
    status = obj.get("status") or {}
    if obj["kind"] == "Deployment":
        want = (obj.get("spec") or {}).get("replicas", 1)
        return f"{status.get('readyReplicas', 0)}/{want} ready"
    if obj["kind"] == "Pod":
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        restarts = sum(c.get("restartCount", 0) for c in status.get("containerStatuses") or [])
        readiness = "ready" if ready else "not ready"
        return f"{status.get('phase', '?')}, {readiness}, {restarts} restart(s)"
    return "present"


def serving_container(
    objects: list[dict[str, Any]],
    deployments: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    entry: Scheduler | None,
) -> dict[str, Any] | None:
    candidates = [o for o in objects if o["kind"] in ("Deployment", "Pod")]
    if entry is not None and entry.instance:
        kind, _, obj_name = entry.instance.partition("/")
        pool = deployments if kind == "deployment" else pods
        wanted = (obj_name, entry.namespace)
        candidates += [
            o for o in pool if (o["metadata"]["name"], o["metadata"].get("namespace")) == wanted
        ]
    for obj in candidates:
        spec = obj.get("spec") or {}
        spec = (spec.get("template") or {}).get("spec") or spec
        container = scheduler_container(spec)
        if container:
            return container
    return None


def version_skew(image: str | None, server: str) -> str:
    o = image_kubernetes_version(image or "")
    theirs = parse_git_version(server)
    if not o or not theirs:
        return "unknown"
    t = theirs[:2]
    if o > t:
        return "NEWER than the API server (unsupported)"
    if o[1] < t[1] - 1:
        return "more than one minor older than the API server (unsupported)"
    return "ok" if o == t else "one minor older (supported)"


def _subject(objects: list[dict[str, Any]]) -> tuple[str, list[str]] | None:
    """The identity the scheduler runs as: its ServiceAccount, or the host user."""
    subject: tuple[str, list[str]] | None = None
    for obj in objects:
        if obj["kind"] == "ServiceAccount" and not metrics_object(obj):
            subject = access.service_account_identity(
                obj["metadata"]["namespace"], obj["metadata"]["name"]
            )
        elif obj["kind"] == "RoleBinding" and subject is None:
            for who in obj.get("subjects") or []:
                if who.get("kind") == "User":
                    subject = (who["name"], ["system:authenticated"])
    return subject


def _access(
    cluster: Cluster,
    subject: tuple[str, list[str]] | None,
    entry: Scheduler | None,
    builtin: bool = False,
) -> AccessReport | None:
    """Review the identity the scheduler runs as for everything a scheduler needs."""
    if subject is None:
        return None
    lease = entry.lease if entry else None
    checks = scheduler_access(
        lease.namespace if lease else None, lease.name if lease else None, builtin=builtin
    )
    results = access.review(cluster, subject[0], subject[1], checks)
    return {
        "subject": subject[0],
        "checks": [{"access": str(check), "allowed": allowed} for check, allowed in results],
    }


def _rbac(
    cluster: Cluster, objects: list[dict[str, Any]], subject: tuple[str, list[str]] | None
) -> RbacReport:
    """spec.rbac as deployed, and whether that identity can take the default scheduler's
    Lease (what least privilege takes away)."""
    found = rbac_mode(objects)
    lease_update: bool | None = None
    if subject is not None:
        ((_, lease_update),) = access.review(
            cluster, subject[0], subject[1], [DEFAULT_LEASE_UPDATE]
        )
    return {
        "mode": found.mode if found else None,
        "clusterRoles": list(found.cluster_roles) if found else [],
        "defaultLeaseUpdate": lease_update,
    }


def _events(cluster: Cluster, name: str, limit: int = 10) -> list[EventLine]:
    """The scheduler's last events (both event APIs, as `kschedctl events NAME` reads them)."""
    events = list_events(cluster, Query(namespace=None, controller=name))
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    events.sort(key=lambda e: e.time or epoch)
    now = datetime.now(timezone.utc)
    return [
        {
            "time": f"{int((now - e.time).total_seconds())}s ago" if e.time else "-",
            "type": e.type,
            "reason": e.reason,
            "object": "/".join((e.kind.lower(), e.namespace, e.name)),
            "message": e.message,
        }
        for e in events[-limit:]
    ]


def warnings(
    entry: Scheduler | None, schedulers: list[Scheduler], objects: list[dict[str, Any]]
) -> list[str]:
    """Multi-scheduler traps: replicas without leader election, a shared Lease, double-booking."""
    found: list[str] = []
    if entry is None:
        return found
    for impostor in entry.impostors:
        found.append(
            f"impostor: {impostor.instance or impostor.form} in namespace "
            f"{impostor.namespace or '-'} claims the name {entry.name} but is not it "
            f"({impostor.reason}); kschedctl ignores it — delete it if it should not run"
        )
    for obj in objects:
        spec = obj.get("spec") or {}
        if obj["kind"] == "Deployment" and spec.get("replicas", 1) > 1 and entry.lease is None:
            found.append(
                f"{spec['replicas']} replicas without leader election: every replica schedules "
                "and they double-book nodes; turn leaderElection.leaderElect on"
            )
    if entry.lease is not None:
        sharing = [
            s.name for s in schedulers
            if s is not entry and s.lease is not None and s.lease.ref == entry.lease.ref
            and s.instance != entry.instance
        ]  # fmt: skip
        if sharing:
            found.append(
                f"Lease {entry.lease.ref} is shared with {', '.join(sharing)}: only one of them "
                "can lead, the other waits as a standby; give each its own "
                "leaderElection.resourceName"
            )
    others = [
        s.name for s in schedulers
        if s is not entry and s.served and s.instance != entry.instance or (
            s is not entry and s.form == "process" and s.served)
    ]  # fmt: skip
    if entry.served and others:
        found.append(
            f"{entry.name} runs separately from {', '.join(sorted(set(others)))}; each keeps its "
            "own view of node usage, so two of them can place pods on the same node at once "
            "(double-booking). Separate their nodes (nodeSelector / taints), or serve both names "
            "as profiles of one kube-scheduler (`kschedctl render NAME --as config --add-to FILE`)"
        )
    return found


def rbac_warnings(objects: list[dict[str, Any]]) -> list[str]:
    """Bindings of both RBAC modes (deploy deletes the other mode's; one left by hand, or by an
    older kschedctl, keeps the built-in roles' rights)."""
    found = rbac_mode(objects)
    if found is None or not found.stale:
        return []
    bindings = {
        str(o["metadata"]["name"]): str((o.get("roleRef") or {}).get("name"))
        for o in objects
        if o["kind"] == "ClusterRoleBinding" and not metrics_object(o)
    }
    builtin = sorted(b for b, role in bindings.items() if role not in found.stale)
    explicit = sorted(b for b, role in bindings.items() if role in found.stale)
    return [
        f"both RBAC modes are bound: the built-in roles (ClusterRoleBinding "
        f"{', '.join(builtin)}) and the least-privilege ClusterRole (ClusterRoleBinding "
        f"{', '.join(explicit)}); one is left from the other spec.rbac, and the "
        "built-in roles' rights apply, the default scheduler's Lease included. Delete the "
        "bindings your spec no longer renders (kubectl delete clusterrolebinding NAME), or "
        "`kschedctl remove` and deploy again"
    ]
