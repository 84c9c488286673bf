"""What a kube-scheduler must be allowed to do (checked by `status` with SubjectAccessReviews).

The list follows the rules of the built-in ``system:kube-scheduler`` and
``system:volume-scheduler`` ClusterRoles that the work really needs, plus the scheduler's own
Lease; a missing one shows up in the scheduler log as ``forbidden`` and pods stay Pending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kschedctl.model.config.rbac import BOOTSTRAP_ROLES, BUILTIN_ROLES, LEAST_PRIVILEGE
from kschedctl.model.config.versions import DEFAULT_LEASE_NAME
from kschedctl.observe.schedulers import LEASE_SYSTEM_NAMESPACE


@dataclass(frozen=True)
class Access:
    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        what = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        if self.group:
            what = f"{what}.{self.group}"
        if self.name:
            what = f"{what} {self.name!r}"
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.verb} {what}{where}"


def scheduler_access(
    lease_namespace: str | None, lease_name: str | None, *, builtin: bool = False
) -> list[Access]:
    """``builtin``: kschedctl's own scheduler needs the first seven, the volume binding ones,
    the list and watch of services and controllers its scoring reads (the system-default
    topology spreading), what preemption does (delete pods, list and watch
    PodDisruptionBudgets) and its Lease: it models no namespaces, and serves plain HTTP."""
    checks = [
        Access("list", "pods"),
        Access("watch", "pods"),
        Access("create", "pods", subresource="binding"),
        Access("patch", "pods", subresource="status"),
        Access("list", "nodes"),
        Access("watch", "nodes"),
        Access("create", "events", group="events.k8s.io"),
    ]
    if builtin:
        checks += [
            Access("list", "persistentvolumeclaims"),
            Access("watch", "persistentvolumeclaims"),
            Access("get", "persistentvolumes"),
            Access("list", "persistentvolumes"),
            Access("watch", "persistentvolumes"),
            Access("update", "persistentvolumes"),
            Access("list", "storageclasses", group="storage.k8s.io"),
            Access("watch", "storageclasses", group="storage.k8s.io"),
            *(
                Access(verb, resource, group="storage.k8s.io")
                for resource in ("csidrivers", "csistoragecapacities", "csinodes")
                for verb in ("list", "watch")
            ),
            *(
                Access(verb, resource, group=group)
                for group, resource in (
                    ("", "services"),
                    ("", "replicationcontrollers"),
                    ("apps", "replicasets"),
                    ("apps", "statefulsets"),
                )
                for verb in ("list", "watch")
            ),
            *(
                Access(verb, resource, group="resource.k8s.io")
                for resource in ("deviceclasses", "resourceslices", "resourceclaims")
                for verb in ("list", "watch")
            ),
            # PreBind re-reads a claim on a conflict, adds its finalizer, writes its status;
            # Unreserve patches the status; a pod's claim for DRA-backed extended resources
            # is created in PreBind, deleted by Unreserve or the PostFilter
            *(
                Access(verb, "resourceclaims", group="resource.k8s.io")
                for verb in ("get", "update", "create", "delete")
            ),
            *(
                Access(verb, "resourceclaims", group="resource.k8s.io", subresource="status")
                for verb in ("update", "patch")
            ),
            Access("delete", "pods"),
            Access("list", "poddisruptionbudgets", group="policy"),
            Access("watch", "poddisruptionbudgets", group="policy"),
            Access("list", "namespaces"),
            Access("watch", "namespaces"),
        ]
    else:
        checks += [
            Access("list", "persistentvolumeclaims"),
            Access("list", "persistentvolumes"),
            Access("list", "storageclasses", group="storage.k8s.io"),
            Access("list", "csinodes", group="storage.k8s.io"),
            Access("list", "csidrivers", group="storage.k8s.io"),
            Access("list", "csistoragecapacities", group="storage.k8s.io"),
            Access("list", "poddisruptionbudgets", group="policy"),
            Access("list", "namespaces"),
            Access(
                "get",
                "configmaps",
                namespace="kube-system",
                name="extension-apiserver-authentication",
            ),
        ]
    if lease_namespace and lease_name:
        checks += [
            Access("create", "leases", group="coordination.k8s.io", namespace=lease_namespace),
            Access(
                "get",
                "leases",
                group="coordination.k8s.io",
                namespace=lease_namespace,
                name=lease_name,
            ),
            Access(
                "update",
                "leases",
                group="coordination.k8s.io",
                namespace=lease_namespace,
                name=lease_name,
            ),
        ]
    return checks


# The default scheduler's lock: what least privilege takes away (kschedctl.model.config.rbac).
DEFAULT_LEASE_UPDATE = Access(
    "update",
    "leases",
    group="coordination.k8s.io",
    namespace=LEASE_SYSTEM_NAMESPACE,
    name=DEFAULT_LEASE_NAME,
)


@dataclass(frozen=True)
class RbacMode:
    """Which RBAC a deployed scheduler's ServiceAccount got (``spec.rbac``), read from the
    roleRefs of kschedctl's ClusterRoleBindings: the built-in roles, or its own ClusterRole."""

    mode: str  # leastPrivilege | builtinRoles
    cluster_roles: tuple[str, ...]  # the ClusterRoles bound, in object order

    @property
    def stale(self) -> tuple[str, ...]:
        """Bindings of the other mode next to this one: left by an earlier deploy."""
        if self.mode != BUILTIN_ROLES:
            return ()
        return tuple(r for r in self.cluster_roles if r not in BOOTSTRAP_ROLES)


def metrics_object(obj: dict[str, Any]) -> bool:
    """One of spec.metrics' objects (component ``metrics``: the Service, the readers of
    /metrics and their bindings), not the scheduler's own identity or rights."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get("app.kubernetes.io/component") == "metrics"


def rbac_mode(objects: list[dict[str, Any]]) -> RbacMode | None:
    """The RBAC mode of kschedctl's ``objects`` of one scheduler; None without a
    ClusterRoleBinding (host forms run as their kubeconfig's user). Any binding of a built-in
    role makes it ``builtinRoles``: the wider one is what the ServiceAccount can do."""
    bound = tuple(
        str(ref.get("name"))
        for obj in objects
        if obj.get("kind") == "ClusterRoleBinding"
        and not metrics_object(obj)
        and isinstance(ref := obj.get("roleRef"), dict)
        and ref.get("kind") == "ClusterRole"
    )
    if not bound:
        return None
    mode = BUILTIN_ROLES if any(r in BOOTSTRAP_ROLES for r in bound) else LEAST_PRIVILEGE
    return RbacMode(mode, bound)
