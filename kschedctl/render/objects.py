"""The objects each rendered form holds for the API server: the ``objects`` of a FORMS row.

``deploy`` applies a document only if the row of the form it applies
(:data:`kschedctl.render.forms.FORMS`, ``objects``) expects it for the spec at hand: its
apiVersion, kind, namespace and name, and for a binding the role it grants and whom it grants
it to. Anything else in the rendered text, whatever put it there, is refused before anything
is sent (:func:`check_objects`). A template change that adds, renames or removes an object is
a change here too: ``tests/unit/test_render_objects.py`` renders every golden spec in every
form and fails until the two agree.

How to extend it: an object of the ServiceAccount forms (pod, deployment) is one
:class:`Expected` row in :data:`SERVICE_ACCOUNT_RBAC` (with a ``when`` condition for the
program or a spec option); a new form's objects are a tuple here, named by its FORMS row. A
row names its kind by a row of :data:`kschedctl.render.kinds.KINDS` (apiVersion, REST path,
deletion order, whether deploy prunes it): an object of a new kind adds that row first. A
row shared by several forms (host-rbac: service and static-pod) marks an object only some of
them apply with ``forms`` (the static pods' metrics Service): the others drop it.

Imported at start-up by :mod:`kschedctl.render.forms`: the standard library and
:mod:`kschedctl.render.kinds` only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from kschedctl.base.errors import SpecError
from kschedctl.render import kinds
from kschedctl.render.kinds import Kind

if TYPE_CHECKING:
    from kschedctl.spec import Spec

__all__ = [
    "DEPLOYMENT_OBJECTS",
    "HOST_RBAC_OBJECTS",
    "POD_OBJECTS",
    "ROUTING_OBJECTS",
    "SERVICE_ACCOUNT_RBAC",
    "Expected",
    "ObjectKey",
    "check_objects",
    "describe_key",
    "expected_objects",
    "for_form",
    "not_for_form",
    "object_key",
]

RBAC_GROUP = kinds.ROLE.group

ObjectKey = tuple[str, str, str, str]
"""(apiVersion, kind, namespace, name); namespace "" for a cluster-scoped object."""

# Where an object lives, named in the table and filled from the spec.
NAMESPACE = "{namespace}"  # the scheduler's namespace
LEASE_NAMESPACE = "{lease_namespace}"  # its Lease's namespace
CLUSTER = ""  # cluster-scoped

# Whom a binding grants its role to.
SERVICE_ACCOUNT = "ServiceAccount"  # the scheduler's ServiceAccount NAME in its namespace
HOST_USER = "User"  # the host kubeconfig's user (spec.service.user)
SCRAPER = "Scraper"  # the metrics scraper's ServiceAccount (spec.metrics.scraper)
METRICS_READER = "MetricsReader"  # the ServiceAccount NAME-metrics-reader in its namespace

Condition = Callable[["Spec"], bool]


def _always(spec: Spec) -> bool:
    return True


def kube_scheduler(spec: Spec) -> bool:
    """Program kube-scheduler or custom (a kube-scheduler: kube-scheduler's own RBAC)."""
    return spec.program in ("kube-scheduler", "custom")


def plugin_rbac(spec: Spec) -> bool:
    """Program custom whose enabled out-of-tree plugins need rules of their own."""
    return bool(spec.plugin_rules())


def host_rbac(spec: Spec) -> bool:
    """The host forms send API objects (the host-rbac form): the Lease's RBAC (leader election),
    the plugins' (program custom), the metrics objects (``spec.metrics.service``)."""
    return leader_elect(spec) or plugin_rbac(spec) or metrics_service(spec)


def builtin(spec: Spec) -> bool:
    """Program builtin (kschedctl's own scheduler and its ClusterRole)."""
    return spec.program == "builtin"


def builtin_roles(spec: Spec) -> bool:
    """Program kube-scheduler with ``spec.rbac: builtinRoles``: the cluster's built-in roles.

    (The literal, not kschedctl.model.config.rbac.BUILTIN_ROLES: this module loads at start-up.)"""
    return kube_scheduler(spec) and spec.rbac == "builtinRoles"


def own_cluster_role(spec: Spec) -> bool:
    """A ClusterRole ``NAME-scheduler`` of its own: program builtin, kube-scheduler (or custom)
    with least privilege (``spec.rbac: leastPrivilege``, the default), or custom with the
    built-in roles and plugins that need more (then it holds those rules only)."""
    return (
        builtin(spec)
        or (kube_scheduler(spec) and not builtin_roles(spec))
        or (builtin_roles(spec) and plugin_rbac(spec))
    )


def leader_elect(spec: Spec) -> bool:
    return spec.leader_election.leader_elect


def metrics_service(spec: Spec) -> bool:
    """``spec.metrics.service``: the metrics Service of the in-cluster forms."""
    return spec.metrics.service


def service_monitor(spec: Spec) -> bool:
    return spec.metrics.service and spec.metrics.service_monitor


def scraper_rbac(spec: Spec) -> bool:
    """The scraper's ``get`` on /metrics: a kube-scheduler's (program builtin authorizes no one)."""
    return spec.metrics.scraper_rbac and not builtin(spec)


def status_reader(spec: Spec) -> bool:
    """The ServiceAccount ``NAME-metrics-reader`` (only ``get`` on /metrics) that
    ``kschedctl status --metrics`` mints tokens for: a kube-scheduler's, in the pod and
    deployment forms (program builtin authorizes no one)."""
    return not builtin(spec)


def routed(spec: Spec) -> bool:
    """``spec.routing``: the MutatingAdmissionPolicy and its binding (kschedctl.render.routing)."""
    return spec.routing is not None


@dataclass(frozen=True)
class Expected:
    """One object a form renders: ``{name}`` in ``name`` (and ``role_ref``) is the scheduler's."""

    kind: Kind
    """A row of :data:`kschedctl.render.kinds.KINDS`."""
    namespace: str
    """:data:`NAMESPACE`, :data:`LEASE_NAMESPACE`, :data:`CLUSTER` or a fixed namespace."""
    name: str
    when: Condition = _always
    """Rendered only for the specs this is true of."""
    role_ref: str = ""
    """A binding: ``Kind/name`` of the role it grants (nothing else is accepted)."""
    subject: str = ""
    """A binding: :data:`SERVICE_ACCOUNT`, :data:`HOST_USER`, :data:`SCRAPER` or
    :data:`METRICS_READER`, its only subject."""
    forms: tuple[str, ...] = ()
    """Of the forms applying its row, the only ones that apply it (none: all of them); the
    others drop it from the rendered text (:func:`for_form`, :func:`not_for_form`)."""

    def key(self, spec: Spec) -> ObjectKey:
        namespace = self.namespace.format(
            namespace=spec.namespace, lease_namespace=spec.leader_election.resource_namespace
        )
        kind = self.kind.for_minor(spec.version.minor) or self.kind
        return (kind.api_version, kind.name, namespace, self.name.format(name=spec.name))


def _lease_rbac(binding: str, subject: str) -> tuple[Expected, ...]:
    """The scheduler's own Lease Role and its binding (leader election on)."""
    role = "{name}-leader-election"
    return (
        Expected(kinds.ROLE, LEASE_NAMESPACE, role, when=leader_elect),
        Expected(
            kinds.ROLE_BINDING, LEASE_NAMESPACE, binding,
            when=leader_elect, role_ref=f"Role/{role}", subject=subject,
        ),
    )  # fmt: skip


# The ServiceAccount and RBAC of the pod and deployment forms (templates/_rbac.yaml.j2 for
# program kube-scheduler, templates/_builtin-rbac.yaml.j2 for program builtin).
SERVICE_ACCOUNT_RBAC: tuple[Expected, ...] = (
    Expected(kinds.SERVICE_ACCOUNT, NAMESPACE, "{name}"),
    # Program kube-scheduler with spec.rbac: builtinRoles: the built-in roles, bound to it.
    Expected(
        kinds.CLUSTER_ROLE_BINDING, CLUSTER, "{name}-as-kube-scheduler", when=builtin_roles,
        role_ref="ClusterRole/system:kube-scheduler", subject=SERVICE_ACCOUNT,
    ),
    Expected(
        kinds.CLUSTER_ROLE_BINDING, CLUSTER, "{name}-as-volume-scheduler", when=builtin_roles,
        role_ref="ClusterRole/system:volume-scheduler", subject=SERVICE_ACCOUNT,
    ),
    Expected(
        kinds.ROLE_BINDING, "kube-system", "{name}-extension-apiserver-authentication-reader",
        when=kube_scheduler, role_ref="Role/extension-apiserver-authentication-reader",
        subject=SERVICE_ACCOUNT,
    ),
    # Program builtin, or kube-scheduler with least privilege: a ClusterRole of its own.
    Expected(kinds.CLUSTER_ROLE, CLUSTER, "{name}-scheduler", when=own_cluster_role),
    Expected(
        kinds.CLUSTER_ROLE_BINDING, CLUSTER, "{name}-scheduler", when=own_cluster_role,
        role_ref="ClusterRole/{name}-scheduler", subject=SERVICE_ACCOUNT,
    ),
    *_lease_rbac("{name}-leader-election", SERVICE_ACCOUNT),
    # The status reader (templates/_metrics-reader.yaml.j2); its ClusterRole is the scraper's too.
    Expected(kinds.SERVICE_ACCOUNT, NAMESPACE, "{name}-metrics-reader", when=status_reader),
    Expected(kinds.CLUSTER_ROLE, CLUSTER, "{name}-metrics-reader", when=status_reader),
    Expected(
        kinds.CLUSTER_ROLE_BINDING, CLUSTER, "{name}-metrics-reader-status", when=status_reader,
        role_ref="ClusterRole/{name}-metrics-reader", subject=METRICS_READER,
    ),
)  # fmt: skip

CONFIGMAP = Expected(kinds.CONFIG_MAP, NAMESPACE, "{name}-config")
SCRAPER_BINDING = Expected(
    kinds.CLUSTER_ROLE_BINDING, CLUSTER, "{name}-metrics-reader", when=scraper_rbac,
    role_ref="ClusterRole/{name}-metrics-reader", subject=SCRAPER,
)  # fmt: skip
# spec.metrics (templates/_metrics.yaml.j2), after the workload in both in-cluster forms.
METRICS_OBJECTS = (
    Expected(kinds.SERVICE, NAMESPACE, "{name}-metrics", when=metrics_service),
    Expected(kinds.SERVICE_MONITOR, NAMESPACE, "{name}", when=service_monitor),
    SCRAPER_BINDING,
)  # fmt: skip
# spec.routing (templates/routing.yaml.j2): cluster-scoped, named after the scheduler (its
# name is cluster-wide already: pods ask for it), last in both in-cluster forms.
ROUTING_OBJECTS = (
    Expected(kinds.MUTATING_ADMISSION_POLICY, CLUSTER, "kschedctl-route-{name}", when=routed),
    Expected(
        kinds.MUTATING_ADMISSION_POLICY_BINDING, CLUSTER, "kschedctl-route-{name}", when=routed
    ),
)
POD_OBJECTS = (
    *SERVICE_ACCOUNT_RBAC, CONFIGMAP, Expected(kinds.POD, NAMESPACE, "{name}"),
    *METRICS_OBJECTS, *ROUTING_OBJECTS,
)  # fmt: skip
DEPLOYMENT_OBJECTS = (
    *SERVICE_ACCOUNT_RBAC, CONFIGMAP, Expected(kinds.DEPLOYMENT, NAMESPACE, "{name}"),
    *METRICS_OBJECTS, *ROUTING_OBJECTS,
)  # fmt: skip
# spec.metrics for the host forms (templates/host-rbac.yaml.j2): a Service selects the static
# pods' mirror pods, as kube-prometheus scrapes kubeadm's kube-scheduler; a systemd service has
# no pod to select (an EndpointSlice would need the host's IP): only the scraper's right to
# /metrics, which its delegated authorization checks the same way. No status reader: its
# ServiceAccount would be the only one of a host form (`status --metrics-reader` names one).
HOST_METRICS_OBJECTS = (
    Expected(kinds.SERVICE, NAMESPACE, "{name}-metrics", when=metrics_service,
             forms=("static-pod",)),
    Expected(kinds.SERVICE_MONITOR, NAMESPACE, "{name}", when=service_monitor,
             forms=("static-pod",)),
    Expected(kinds.CLUSTER_ROLE, CLUSTER, "{name}-metrics-reader", when=scraper_rbac),
    SCRAPER_BINDING,
)  # fmt: skip
# The host forms (service, static-pod) send only this to the API server: their unit or
# manifest goes to the host.
HOST_RBAC_OBJECTS = (
    *_lease_rbac("{name}-host-leader-election", HOST_USER),
    # Program custom: what its enabled out-of-tree plugins read, granted to the host user.
    Expected(kinds.CLUSTER_ROLE, CLUSTER, "{name}-host-plugins", when=plugin_rbac),
    Expected(
        kinds.CLUSTER_ROLE_BINDING, CLUSTER, "{name}-host-plugins", when=plugin_rbac,
        role_ref="ClusterRole/{name}-host-plugins", subject=HOST_USER,
    ),
    *HOST_METRICS_OBJECTS,
)  # fmt: skip


def for_form(rows: Iterable[Expected], form: str) -> tuple[Expected, ...]:
    """The rows of a table that ``deploy --as-FORM`` applies (the others are another form's)."""
    return tuple(row for row in rows if not row.forms or form in row.forms)


def not_for_form(spec: Spec, rows: Iterable[Expected], form: str) -> dict[ObjectKey, Expected]:
    """The objects the table's rendered text holds for ``spec`` that ``form`` does not apply."""
    ours = for_form(rows, form)
    return {k: r for k, r in expected_objects(spec, rows).items() if r not in ours}


def expected_objects(spec: Spec, rows: Iterable[Expected]) -> dict[ObjectKey, Expected]:
    """The objects of ``rows`` (a form's) rendered for ``spec``, by key."""
    return {row.key(spec): row for row in rows if row.when(spec)}


def stale_rbac(spec: Spec, rows: Iterable[Expected], form: str = "") -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of the RBAC objects of ``rows`` that ``spec`` does not render
    (the other ``spec.rbac`` mode's, the Lease RBAC with leader election off), and of the
    metrics objects it no longer asks for (or ``form`` does not apply: a static pod's metrics
    Service once it runs as a systemd service), and of the routing once ``spec.routing`` is
    gone: what deploy deletes if kschedctl created them for this scheduler, so no right (nor
    scrape target, nor routing) outlives the spec."""
    rows = tuple(rows)
    wanted = {key[1:] for key in expected_objects(spec, for_form(rows, form) if form else rows)}
    return {row.key(spec)[1:] for row in rows if row.kind.prunable} - wanted


def object_key(doc: Mapping[str, Any]) -> ObjectKey:
    """A document's (apiVersion, kind, namespace, name); fields that are not strings read as ""."""
    meta = doc.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}

    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    return (
        text(doc.get("apiVersion")),
        text(doc.get("kind")),
        text(meta.get("namespace")),
        text(meta.get("name")),
    )


def describe_key(key: ObjectKey) -> str:
    """``Kind namespace/name`` (apiVersion), bounded and on one line, for messages."""
    api_version, kind, namespace, name = (repr(part)[1:-1][:80] for part in key)
    where = f"{namespace}/{name}" if namespace else name
    return f"{kind or '(no kind)'} {where or '(no name)'} ({api_version or 'no apiVersion'})"


def check_objects(
    spec: Spec, form: str, rows: Iterable[Expected], docs: Iterable[Any]
) -> list[dict[str, Any]]:
    """``docs`` (the parsed YAML documents of rendered form ``form``), if each is an object
    ``rows`` expect for ``spec``, at most once, and each binding grants the expected role to
    the expected subject only; else SpecError (exit 3) naming the first stray one."""
    expected = expected_objects(spec, rows)
    objects = [doc for doc in docs if doc is not None]
    keys = []
    for index, doc in enumerate(objects, 1):
        if not isinstance(doc, dict):
            _refuse(spec, form, f"document {index} is not an object ({type(doc).__name__})")
        key = object_key(doc)
        row = expected.get(key)
        if row is None:
            _refuse(spec, form, f"{describe_key(key)} is not an object kschedctl renders here")
        problem = _binding_problem(doc, row, spec)
        if problem:
            _refuse(spec, form, f"{describe_key(key)}: {problem}")
        keys.append(key)
    twice = [key for key, count in Counter(keys).items() if count > 1]
    if twice:
        _refuse(spec, form, f"{describe_key(twice[0])} appears more than once")
    return objects


def _binding_problem(doc: dict[str, Any], row: Expected, spec: Spec) -> str:
    if row.kind is kinds.MUTATING_ADMISSION_POLICY_BINDING:
        # it binds the scheduler's own policy (same name), nothing else
        policy = row.name.format(name=spec.name)
        if doc.get("spec") != {"policyName": policy}:
            return f"its spec must be policyName {policy} only"
        return ""
    if not row.role_ref:
        return ""
    ref = doc.get("roleRef")
    want_kind, _, want_name = row.role_ref.format(name=spec.name).partition("/")
    want_ref = {"apiGroup": RBAC_GROUP, "kind": want_kind, "name": want_name}
    if ref != want_ref:
        return f"its roleRef must be {want_kind} {want_name}"
    if row.subject == SERVICE_ACCOUNT:
        want: dict[str, Any] = {
            "kind": "ServiceAccount", "name": spec.name, "namespace": spec.namespace,
        }  # fmt: skip
    elif row.subject == SCRAPER:
        scraper = spec.metrics.scraper
        want = {
            "kind": "ServiceAccount", "name": scraper.service_account,
            "namespace": scraper.namespace,
        }  # fmt: skip
    elif row.subject == METRICS_READER:
        want = {
            "kind": "ServiceAccount", "name": f"{spec.name}-metrics-reader",
            "namespace": spec.namespace,
        }  # fmt: skip
    else:
        want = {"apiGroup": RBAC_GROUP, "kind": "User", "name": spec.service.user}
    if doc.get("subjects") != [want]:
        return f"its only subject must be {want['kind']} {want['name']}"
    return ""


def _refuse(spec: Spec, form: str, what: str) -> NoReturn:
    raise SpecError(
        "",
        f"refusing to apply the rendered {form} form of {spec.name}: {what}; "
        "kschedctl applies only the objects it renders for this spec, nothing was sent",
        hint="render it (kschedctl render SRC --as FORM) and look for what put that document "
        "there; if the templates changed, add the object to kschedctl/render/objects.py",
    )
