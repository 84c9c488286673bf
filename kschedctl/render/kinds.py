"""The kinds of object kschedctl manages: ONE table the objects, the paths and the order come from.

A form's objects (:mod:`kschedctl.render.objects`, the ``objects`` of a FORMS row) each name a
:class:`Kind` of :data:`KINDS`; deploy reaches them by the REST paths a row gives (a fixed
table: no discovery round trip, :mod:`kschedctl.k8s.resources`); ``remove`` and ``status``
list them kind by kind and ``remove`` deletes them in the table's order
(:func:`kschedctl.k8s.apply.managed_objects`): workloads first, so nothing runs without its
RBAC, bindings before the roles they grant; deploy prunes only the ``prunable`` kinds
(:func:`kschedctl.render.objects.stale_rbac`).

How to extend it: a template that renders an object of a kind not here adds its row at its
place in the deletion order, then the object's :class:`~kschedctl.render.objects.Expected`
row. ``tests/unit/test_kinds.py`` renders every golden spec in every form and fails on a kind
the table lacks, a row no form renders, or an order that leaves a workload without its RBAC.

Imported at start-up by :mod:`kschedctl.render.objects`: the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["KINDS", "MANAGED_KINDS", "SECRET", "Kind"]


@dataclass(frozen=True)
class Kind:
    """One kind of object kschedctl creates, and how to reach it on the API server."""

    api_version: str
    name: str
    plural: str
    namespaced: bool
    prunable: bool = False
    """deploy deletes one kschedctl created that the spec no longer renders (the other
    ``spec.rbac`` mode's RBAC, metrics objects switched off, a status reader gone)."""
    optional: bool = False
    """The kind of a CustomResourceDefinition a cluster may not serve: listing it may answer
    404, and deploy checks it is served before sending anything."""
    older: tuple[tuple[int, str], ...] = ()
    """A kind whose apiVersion follows the target Kubernetes: (first minor, apiVersion) of
    each earlier version, newest first; ``since`` is the first minor of ``api_version``."""
    since: int = 0

    @property
    def api_versions(self) -> tuple[str, ...]:
        """Every apiVersion kschedctl renders it at (one REST path each: :meth:`at`)."""
        return (self.api_version, *(version for _, version in self.older))

    def at(self, api_version: str) -> Kind:
        """This kind at ``api_version`` (one of :attr:`api_versions`): its REST paths there."""
        if api_version == self.api_version:
            return self
        if api_version not in self.api_versions:
            raise ValueError(f"{self.name} is not rendered at {api_version}")
        return replace(self, api_version=api_version, older=(), since=0)

    def for_minor(self, minor: int) -> Kind | None:
        """This kind as a target Kubernetes 1.MINOR serves it; None before it is served."""
        if minor >= self.since:
            return self
        for first, version in self.older:
            if minor >= first:
                return self.at(version)
        return None

    @property
    def group(self) -> str:
        """The API group ("" for the core group)."""
        group, _, _ = self.api_version.rpartition("/")
        return group

    def base(self) -> str:
        group_version = self.api_version
        return f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"

    def collection(self, namespace: str | None = None) -> str:
        if self.namespaced and namespace:
            return f"{self.base()}/namespaces/{namespace}/{self.plural}"
        return f"{self.base()}/{self.plural}"

    def item(self, name: str, namespace: str | None = None) -> str:
        return f"{self.collection(namespace)}/{name}"


RBAC = "rbac.authorization.k8s.io/v1"

DEPLOYMENT = Kind("apps/v1", "Deployment", "deployments", True)
POD = Kind("v1", "Pod", "pods", True)
# The Prometheus Operator's CRD (spec.metrics.serviceMonitor): may not be served.
SERVICE_MONITOR = Kind(
    "monitoring.coreos.com/v1", "ServiceMonitor", "servicemonitors", True,
    prunable=True, optional=True,
)  # fmt: skip
SERVICE = Kind("v1", "Service", "services", True, prunable=True)
CONFIG_MAP = Kind("v1", "ConfigMap", "configmaps", True)
ROLE_BINDING = Kind(RBAC, "RoleBinding", "rolebindings", True, prunable=True)
CLUSTER_ROLE_BINDING = Kind(RBAC, "ClusterRoleBinding", "clusterrolebindings", False, prunable=True)
ROLE = Kind(RBAC, "Role", "roles", True, prunable=True)
CLUSTER_ROLE = Kind(RBAC, "ClusterRole", "clusterroles", False, prunable=True)
SERVICE_ACCOUNT = Kind("v1", "ServiceAccount", "serviceaccounts", True, prunable=True)
# spec.routing (kschedctl.render.routing): GA in 1.36, beta (the MutatingAdmissionPolicy
# gate, runtime-config admissionregistration.k8s.io/v1beta1) in 1.34 and 1.35. optional: a
# cluster without the gate answers 404 when they are listed.
ADMISSION = "admissionregistration.k8s.io"
_ROUTING_BETA = ((34, f"{ADMISSION}/v1beta1"),)
MUTATING_ADMISSION_POLICY = Kind(
    f"{ADMISSION}/v1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", False,
    prunable=True, optional=True, older=_ROUTING_BETA, since=36,
)  # fmt: skip
MUTATING_ADMISSION_POLICY_BINDING = Kind(
    f"{ADMISSION}/v1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings",
    False, prunable=True, optional=True, older=_ROUTING_BETA, since=36,
)  # fmt: skip

# In deletion order: the routing first, so no new pod is sent to a scheduler going away (the
# binding before its policy); then workloads, so nothing runs without its RBAC; bindings before
# roles.
KINDS = (
    MUTATING_ADMISSION_POLICY_BINDING, MUTATING_ADMISSION_POLICY,
    DEPLOYMENT, POD, SERVICE_MONITOR, SERVICE, CONFIG_MAP, ROLE_BINDING, CLUSTER_ROLE_BINDING,
    ROLE, CLUSTER_ROLE, SERVICE_ACCOUNT,
)  # fmt: skip

# Not a form's object: deploy records each revision of a scheduler in a Secret of its own, by
# its own narrow code path (kschedctl.ops.history), never through the rendered allow-list.
# Listed (only Secrets of the revision type) and deleted by `remove` after everything else.
SECRET = Kind("v1", "Secret", "secrets", True)
MANAGED_KINDS = (*KINDS, SECRET)
