"""The RBAC of a kube-scheduler, per Kubernetes version: ONE table of the bootstrap rules.

Pure. :data:`BOOTSTRAP_RULES` holds every rule of the bootstrap ClusterRoles
``system:kube-scheduler`` and ``system:volume-scheduler`` with the minors that have it, in
upstream order; :func:`bootstrap_rules` gives a version's roles exactly as kube-apiserver
creates them with its default feature gates, :func:`scheduler_rules` what kschedctl grants an
*additional* kube-scheduler by default (``spec.rbac: leastPrivilege``): the same rules minus
the default scheduler's leader-election rights (rows marked ``lock``).

Source: ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`` and its
``testdata/cluster-roles.yaml`` (the same rules rendered with default feature gates) of
k8s.io/kubernetes at v1.25.16, v1.26.15, v1.27.16, v1.28.15, v1.29.15, v1.30.14, v1.31.13,
v1.32.9, v1.33.5, v1.34.1, v1.35.4, v1.36.3 and v1.37.0 (the patches of
:data:`kschedctl.model.config.versions.PATCH_RELEASES`), read from ``go mod download
k8s.io/kubernetes@TAG``. tests/unit/fixtures/bootstrap-scheduler-roles.yaml is a copy of those
rules per version, and the unit tests hold this table to it.

What changes between versions: 1.28 dropped the Endpoints lock, 1.31 added list/watch on the
Lease and the LeaseCandidates of coordinated leader election, 1.32 volumeattachments (CSI
attach limits), 1.34 dynamic resource allocation (GA, on by default), 1.36 the DRA extended
resources and per-binding status rules, 1.37 DRA device taint rules. Feature gates that are
off by default (e.g. DRA before 1.34, GenericWorkload's podgroups) add rules only on clusters
that turn them on: those clusters need ``spec.rbac: builtinRoles``, which follows the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any

from kschedctl.model.config.versions import NEWEST_MINOR, OLDEST_MINOR, KubeVersion

LEAST_PRIVILEGE = "leastPrivilege"
BUILTIN_ROLES = "builtinRoles"
RBAC_MODES = (LEAST_PRIVILEGE, BUILTIN_ROLES)
DEFAULT_RBAC = LEAST_PRIVILEGE

KUBE_SCHEDULER_ROLE = "system:kube-scheduler"
VOLUME_SCHEDULER_ROLE = "system:volume-scheduler"
BOOTSTRAP_ROLES = (KUBE_SCHEDULER_ROLE, VOLUME_SCHEDULER_ROLE)

_READ = ("get", "list", "watch")
_READ_UPDATE = ("get", "list", "patch", "update", "watch")
_READ_WRITE = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_LOCK = "kube-scheduler"  # the default scheduler's Lease (and, before 1.28, Endpoints) name


@dataclass(frozen=True)
class BootstrapRule:
    """One PolicyRule of a bootstrap role, and the minors whose role holds it."""

    role: str
    groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    names: tuple[str, ...] = ()
    since: int = OLDEST_MINOR
    until: int = NEWEST_MINOR  # the last minor that has it
    lock: bool = False
    """The default scheduler's leader election: never granted to an additional scheduler
    (it holds its own Lease through the Role ``NAME-leader-election``)."""

    def applies(self, version: KubeVersion) -> bool:
        return self.since <= version.minor <= self.until

    def policy_rule(self) -> dict[str, Any]:
        """The rule as a Kubernetes PolicyRule."""
        rule: dict[str, Any] = {"apiGroups": list(self.groups), "resources": list(self.resources)}
        if self.names:
            rule["resourceNames"] = list(self.names)
        rule["verbs"] = list(self.verbs)
        return rule


def _ks(*args: Any, **kwargs: Any) -> BootstrapRule:
    return BootstrapRule(KUBE_SCHEDULER_ROLE, *args, **kwargs)


def _vs(*args: Any, **kwargs: Any) -> BootstrapRule:
    return BootstrapRule(VOLUME_SCHEDULER_ROLE, *args, **kwargs)


_CORE, _COORD, _STORAGE, _DRA = "", "coordination.k8s.io", "storage.k8s.io", "resource.k8s.io"

BOOTSTRAP_RULES: tuple[BootstrapRule, ...] = (
    _ks((_CORE, "events.k8s.io"), ("events",), ("create", "patch", "update")),
    # Leader election of the default scheduler: a cluster-wide create, its own lock by name.
    _ks((_COORD,), ("leases",), ("create",), lock=True),
    _ks((_COORD,), ("leases",), ("get", "update"), (_LOCK,), until=30, lock=True),
    _ks((_COORD,), ("leases",), ("get", "list", "update", "watch"), (_LOCK,), since=31, lock=True),
    _ks((_CORE,), ("endpoints",), ("create",), until=27, lock=True),
    _ks((_CORE,), ("endpoints",), ("get", "update"), (_LOCK,), until=27, lock=True),
    # Coordinated leader election: kube-scheduler stands as a candidate for the Lease
    # kube-system/kube-scheduler, whatever its own Lease is called.
    _ks((_COORD,), ("leasecandidates",), _READ_WRITE, since=31, lock=True),
    _ks((_CORE,), ("nodes",), _READ),
    _ks((_CORE,), ("pods",), ("delete", "get", "list", "watch")),  # delete: preemption
    _ks((_CORE,), ("bindings", "pods/binding"), ("create",)),
    _ks((_CORE,), ("pods/status",), ("patch", "update")),
    _ks((_CORE,), ("replicationcontrollers", "services"), _READ),
    _ks(("apps", "extensions"), ("replicasets",), _READ),
    _ks(("apps",), ("statefulsets",), _READ),
    _ks(("policy",), ("poddisruptionbudgets",), _READ),
    _ks((_CORE,), ("persistentvolumeclaims", "persistentvolumes"), _READ),
    # Delegated authentication and authorization on the secure port.
    _ks(("authentication.k8s.io",), ("tokenreviews",), ("create",)),
    _ks(("authorization.k8s.io",), ("subjectaccessreviews",), ("create",)),
    _ks((_STORAGE,), ("csinodes",), _READ),
    _ks((_STORAGE,), ("volumeattachments",), _READ, since=32),
    _ks((_CORE,), ("namespaces",), _READ),  # namespaceSelector of pod affinity
    _ks((_STORAGE,), ("csidrivers",), _READ),
    _ks((_STORAGE,), ("csistoragecapacities",), _READ),
    # Dynamic resource allocation (feature gate DynamicResourceAllocation, on from 1.34).
    _ks((_DRA,), ("deviceclasses",), _READ, since=34),
    _ks((_DRA,), ("resourceclaims",), _READ_UPDATE, since=34),
    _ks((_DRA,), ("resourceclaims/status",), _READ_UPDATE, since=34),
    _ks((_CORE,), ("pods/finalizers",), ("update",), since=34),
    _ks((_DRA,), ("resourceslices",), _READ, since=34),
    _ks((_DRA,), ("resourceclaims",), ("create", "delete"), since=36),  # DRAExtendedResource
    _ks((_DRA,), ("devicetaintrules",), _READ, since=37),  # DRADeviceTaintRules
    _ks((_DRA,), ("resourceclaims/binding",), ("patch", "update"), since=36),
    _vs((_CORE,), ("persistentvolumes",), _READ_UPDATE),
    _vs((_STORAGE,), ("storageclasses",), _READ),
    _vs((_CORE,), ("persistentvolumeclaims",), _READ_UPDATE),
)


def bootstrap_rules(version: KubeVersion, role: str) -> list[dict[str, Any]]:
    """The rules of bootstrap ClusterRole ``role`` in ``version`` (default feature gates)."""
    return [r.policy_rule() for r in BOOTSTRAP_RULES if r.role == role and r.applies(version)]


def scheduler_rules(version: KubeVersion) -> list[dict[str, Any]]:
    """Least privilege: both bootstrap roles of ``version`` without the default scheduler's
    leader election (no Lease ``kube-scheduler``, no cluster-wide Lease create)."""
    return [r.policy_rule() for r in BOOTSTRAP_RULES if r.applies(version) and not r.lock]


def lock_rules(version: KubeVersion) -> list[dict[str, Any]]:
    """What :func:`scheduler_rules` leaves out of the bootstrap roles of ``version``."""
    return [r.policy_rule() for r in BOOTSTRAP_RULES if r.applies(version) and r.lock]


# --- what a set of rules grants -------------------------------------------------------------

Permission = tuple[str, str, str, str]
"""(verb, apiGroup, resource, resourceName); resourceName "" stands for every name."""


def permissions(rules: list[dict[str, Any]]) -> set[Permission]:
    """Every (verb × apiGroup × resource × resourceName) ``rules`` name (non-resource URLs are
    not scheduler business and are left out)."""
    return {
        (verb, group, resource, name)
        for rule in rules
        for verb, group, resource, name in product(
            rule.get("verbs") or [],
            rule.get("apiGroups") or [],
            rule.get("resources") or [],
            rule.get("resourceNames") or [""],
        )
    }


def allows(rules: list[dict[str, Any]], wanted: Permission) -> bool:
    """Whether ``rules`` grant ``wanted``, as the RBAC authorizer matches (``*`` wildcards; a
    rule without resourceNames covers every name; one with them never covers "every name")."""
    verb, group, resource, name = wanted
    for rule in rules:
        names = rule.get("resourceNames") or []
        if (
            _matches(rule.get("verbs"), verb)
            and _matches(rule.get("apiGroups"), group)
            and _matches(rule.get("resources"), resource)
            and (not names or (name != "" and name in names))
        ):
            return True
    return False


def uncovered(have: list[dict[str, Any]], want: list[dict[str, Any]]) -> set[Permission]:
    """The permissions of ``want`` that ``have`` does not grant."""
    return {p for p in permissions(want) if not allows(have, p)}


def _matches(values: Any, wanted: str) -> bool:
    return bool(values) and ("*" in values or wanted in values)
