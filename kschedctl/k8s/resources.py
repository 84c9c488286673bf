"""REST paths of the object kinds kschedctl creates (a fixed table: no discovery round trip)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Resource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool

    def base(self) -> str:
        group_version = self.api_version
        return f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"

    def collection(self, namespace: str | None = None) -> str:
        if self.namespaced and namespace:
            return f"{self.base()}/namespaces/{namespace}/{self.plural}"
        return f"{self.base()}/{self.plural}"

    def item(self, name: str, namespace: str | None = None) -> str:
        return f"{self.collection(namespace)}/{name}"


RESOURCES = {
    r.kind: r
    for r in (
        Resource("v1", "Namespace", "namespaces", False),
        Resource("v1", "ServiceAccount", "serviceaccounts", True),
        Resource("v1", "ConfigMap", "configmaps", True),
        Resource("v1", "Secret", "secrets", True),
        Resource("v1", "Pod", "pods", True),
        Resource("apps/v1", "Deployment", "deployments", True),
        Resource("rbac.authorization.k8s.io/v1", "Role", "roles", True),
        Resource("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True),
        Resource("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False),
        Resource(
            "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False
        ),
        Resource("coordination.k8s.io/v1", "Lease", "leases", True),
        Resource("v1", "Service", "services", True),
        # The Prometheus Operator's CRD (spec.metrics.serviceMonitor): may not be served.
        Resource("monitoring.coreos.com/v1", "ServiceMonitor", "servicemonitors", True),
    )
}
# Kinds of CustomResourceDefinitions a cluster may not serve: listing them may answer 404.
OPTIONAL_KINDS = ("ServiceMonitor",)
# Deletion order: workloads first so nothing runs without its RBAC, bindings before roles.
DELETE_ORDER = (
    "Deployment", "Pod", "ServiceMonitor", "Service", "ConfigMap", "RoleBinding",
    "ClusterRoleBinding", "Role", "ClusterRole", "ServiceAccount", "Secret",
)  # fmt: skip


def resource_of(obj: dict[str, Any]) -> Resource:
    kind = obj.get("kind", "")
    resource = RESOURCES.get(kind)
    if resource is None or resource.api_version != obj.get("apiVersion"):
        raise ValueError(f"kschedctl does not manage {obj.get('apiVersion')} {kind} objects")
    return resource


def object_path(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return resource_of(obj).item(meta["name"], meta.get("namespace"))


def describe(obj: dict[str, Any]) -> str:
    """kubectl-style reference: ``deployment/my-scheduler -n kube-system``."""
    meta = obj.get("metadata") or {}
    ref = f"{obj.get('kind', '').lower()}/{meta.get('name')}"
    return f"{ref} -n {meta['namespace']}" if meta.get("namespace") else ref
