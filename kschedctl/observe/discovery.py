"""Which schedulers a cluster runs, from plain-dict readings of its objects (pure).

A scheduler shows itself in several ways and none is complete on its own: kschedctl's labels,
a kube-scheduler Deployment or Pod (its ``--config`` ConfigMap names its profiles), a mirror
pod of a static pod, the leader Lease it renews (the only trace of a scheduler running as a
host process, like the default one of a hand-built cluster), and pods that were bound under a
scheduler name. Pods asking for a name nothing serves are reported too: they hang with no
events at all.

:func:`discover` gathers one claim per object that shows a scheduler (:class:`_Claims`), lets
:func:`kschedctl.observe.identity.resolve_claims` pick the scheduler each name stands for, and adds
the names pods use that nothing serves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from kschedctl.model.config.versions import DEFAULT_LEASE_NAME, DEFAULT_SCHEDULER_NAME
from kschedctl.observe import identity
from kschedctl.observe.containers import (
    ConfigFacts,
    builtin_facts,
    config_facts,
    config_source,
    container_argv,
    expanded_argv,
    is_builtin_container,
    scheduler_container,
)
from kschedctl.observe.crash import pod_problems
from kschedctl.observe.schedulers import (
    BUILTIN_LEASE_ANNOTATION,
    FORM_ANNOTATION,
    LEASE_ANNOTATION,
    LEASE_SYSTEM_NAMESPACE,
    MIRROR_ANNOTATION,
    Lease,
    Scheduler,
    is_managed,
    owner,
    parse_lease,
)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


@dataclass
class ClusterReading:
    """What discovery reads of a cluster (:mod:`kschedctl.k8s.inventory` reads it).

    ``pods``: every pod, or (with ``bound_names``) only the pods discovery looks at one by
    one — the scheduler pods and the unbound ones — in the API's order (:func:`pod_order`)."""

    pods: list[dict[str, Any]]
    deployments: list[dict[str, Any]]
    configmaps: dict[tuple[str, str], dict[str, Any]]  # (namespace, name) -> ConfigMap
    leases: list[dict[str, Any]]
    managed: list[dict[str, Any]] = field(default_factory=list)  # kschedctl objects w/o pods
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    # Every schedulerName bound pods carry, when ``pods`` holds only some of them.
    bound_names: set[str] | None = None
    # What tells a scheduler from a claim to its name (observe.identity): the ReplicaSets of
    # the scheduler Deployments, kschedctl's ClusterRoleBindings, the nodes of kube-system's
    # mirror pods by name.
    replicasets: list[dict[str, Any]] = field(default_factory=list)
    bindings: list[dict[str, Any]] = field(default_factory=list)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)


# -- what discovery needs to see of the pods ------------------------------------------------------

# An object name as the API server accepts it (a DNS-1123 subdomain): a Lease holder identity
# that is not one cannot be a pod's hostname.
_OBJECT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
# kubeadm's label on its static kube-scheduler pod (cmd/kubeadm/app/util/staticpod/utils.go
# ComponentPod), wherever the manifest put it.
KUBEADM_COMPONENT_SELECTOR = "component=kube-scheduler"
# Pods the scheduler has not bound and that can still be: what `pending` counts (is_pending).
UNBOUND_PODS = "spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed"


def pod_order(pod: dict[str, Any]) -> str:
    """A pod list's order: the API server returns items by storage key, ``namespace/name``
    compared bytewise (not by the pair: ``a-b/x`` comes before ``a/x``)."""
    meta = _meta(pod)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def merge_pods(batches: Iterable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The pods of several lists, each once, in the order one list of them all would have."""
    by_key: dict[str, dict[str, Any]] = {}
    for batch in batches:
        for pod in batch:
            by_key.setdefault(pod_order(pod), pod)
    return [by_key[key] for key in sorted(by_key)]


def holder_pod_names(leases: Iterable[dict[str, Any]]) -> list[str]:
    """Pod names the holders of ``leases`` may be: kube-scheduler (and kschedctl's scheduler)
    hold their Lease as ``hostname_uuid`` (cmd/kube-scheduler/app/server.go), and a pod's
    hostname is its name."""
    names = set()
    for obj in leases:
        holder = str((obj.get("spec") or {}).get("holderIdentity") or "")
        host = holder.split("_", 1)[0]
        if _OBJECT_NAME.match(host):
            names.add(host)
    return sorted(names)


def scheduler_workload_selectors(deployments: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(namespace, label selector) finding the pods of every Deployment that runs a scheduler:
    its ``matchLabels`` only, a superset of its pods that discovery narrows down itself."""
    found = set()
    for dep in deployments:
        spec = dep.get("spec") or {}
        if scheduler_container(((spec.get("template") or {}).get("spec")) or {}) is None:
            continue
        match = (spec.get("selector") or {}).get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(match.items()))
        found.add((str(_meta(dep).get("namespace", "")), selector))
    return sorted(found)


def other_bound_pods(known: Iterable[str]) -> str:
    """Field selector of the bound pods whose schedulerName is none of ``known``."""
    return ",".join(
        ["spec.nodeName!=", *(f"spec.schedulerName!={escape_field(n)}" for n in sorted(known))]
    )


def escape_field(value: str) -> str:
    """A field selector value, escaped as apimachinery's fields.EscapeValue does."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def needs_every_pod(schedulers: Iterable[Scheduler]) -> bool:
    """A name pods use that nothing found serves: only a scan of every pod can tell whether a
    pod the targeted reads do not reach (a bare kube-scheduler pod outside kube-system that
    holds no Lease) serves it."""
    return any(not s.served for s in schedulers)


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def is_pending(pod: Mapping[str, Any]) -> bool:
    return (
        not (pod.get("spec") or {}).get("nodeName")
        and (pod.get("status") or {}).get("phase", "Pending") == "Pending"
    )


# -- discovery ------------------------------------------------------------------------------------


def discover(reading: ClusterReading) -> list[Scheduler]:
    """Every scheduler name the reading shows, sorted: default first, then by name.

    Each object claiming a name is a claim, judged by :func:`identity.verdict`: the claims
    known to be the scheduler (or, when none is, the only unverified one) make its entry;
    the others are named on it as impostors, or as the candidates of a conflict."""
    claims = _Claims(reading)
    by_uid = _claim_deployments(claims)
    recorded_leases = _recorded_leases(claims)
    _claim_pods(claims, by_uid, recorded_leases)
    _claim_managed(claims, recorded_leases)
    _claim_builtin_leases(claims)
    _claim_default_lease(claims)
    found = identity.resolve_claims(claims.values())
    _add_unserved(found, reading)
    # A scheduler whose Lease is held by none of its pods has no active leader among them.
    for entry in found.values():
        for one in [entry, *entry.candidates, *entry.impostors]:
            if one.lease is not None and one.lease.held and one.lease.holder:
                one.leader = one.lease.holder.split("_", 1)[0]
    return sorted(found.values(), key=lambda s: (s.name != DEFAULT_SCHEDULER_NAME, s.name))


class _Claims:
    """The claims gathered so far, one per name, namespace and verdict: the objects of one
    place merge, never two; and what judging a claim needs (Leases, kschedctl's records)."""

    def __init__(self, reading: ClusterReading) -> None:
        self.reading = reading
        self.leases = {
            (_meta(o).get("namespace"), _meta(o).get("name")): parse_lease(o, reading.now)
            for o in reading.leases
        }
        self.recorded = identity.recorded_namespaces(
            (who, o) for o in reading.bindings if (who := owner(o)) is not None
        )
        for obj in reading.managed:  # kschedctl's Roles: host forms are recorded by theirs
            if (who := owner(obj)) is not None and (ns := identity.host_rbac_namespace(obj)):
                self.recorded.setdefault(who, set()).add(ns)
        self.by_key: dict[tuple[str, str, str], Scheduler] = {}

    def values(self) -> Iterable[Scheduler]:
        return self.by_key.values()

    def add(
        self, name: str, form: str, source: str, obj: dict[str, Any], **facts: Any
    ) -> Scheduler:
        namespace = str(facts.get("namespace") or "")
        is_pod = obj.get("kind", "Pod") == "Pod" and "containers" in (obj.get("spec") or {})
        trusted, reason = identity.verdict(
            name, owner(obj), namespace, self.recorded,
            control_plane=is_pod and identity.is_control_plane_mirror(obj, self.reading.nodes),
        )  # fmt: skip
        group = "verified" if trusted in identity.VERIFIED else trusted
        entry = self.by_key.get((name, namespace, group))
        if entry is None:
            entry = self.by_key[(name, namespace, group)] = Scheduler(
                name=name, form=form, identity=trusted, reason=reason, **facts
            )
        else:
            for key, value in facts.items():
                if getattr(entry, key) in (None, False, [], 0, {}) and value not in (None, False):
                    setattr(entry, key, value)
        if source not in entry.sources:
            entry.sources.append(source)
        return entry

    def claimed(self, name: str) -> bool:
        return any(key[0] == name and key[2] != identity.IMPOSTOR for key in self.by_key)

    def verified(self, name: str) -> bool:
        return any(key[0] == name and key[2] == "verified" for key in self.by_key)

    def lease(self, ref: tuple[str, str] | None) -> Lease | None:
        return self.leases.get(ref) if ref else None

    def facts_for(
        self, namespace: str, pod_spec: dict[str, Any], container: dict[str, Any]
    ) -> ConfigFacts:
        if is_builtin_container(container):
            return builtin_facts(container_argv(container))
        source = config_source(pod_spec, container)
        text = None
        if source:
            cm = self.reading.configmaps.get((namespace, source[0])) or {}
            text = (cm.get("data") or {}).get(source[1])
        return config_facts(text, expanded_argv(container, namespace))

    def missing_config(
        self, namespace: str, pod_spec: dict[str, Any], container: dict[str, Any]
    ) -> list[str]:
        """The --config ConfigMap, when the reading looked for it and it is not there."""
        if is_builtin_container(container):
            return []
        source = config_source(pod_spec, container)
        configmaps = self.reading.configmaps
        return [source[0]] if source and (namespace, source[0]) not in configmaps else []


def _names_of(obj: dict[str, Any], facts: ConfigFacts, missing: list[str]) -> list[str]:
    # kschedctl's objects whose config cannot be read (its ConfigMap is missing) are still
    # the scheduler kschedctl labelled them as, not the default kube-scheduler would take.
    mine = owner(obj)
    if missing and mine and facts.names == [DEFAULT_SCHEDULER_NAME]:
        return [mine]
    return facts.names


def _note_problem(entry: Scheduler, pod: dict[str, Any], missing: list[str]) -> None:
    if entry.problem is None:
        found_problems = pod_problems(pod, missing_configmaps=missing, scheduler=entry.name)
        entry.problem = found_problems[0].reason if found_problems else None


def _claim_deployments(claims: _Claims) -> dict[str, list[Scheduler]]:
    """Deployments running a scheduler, by their uid: their pods are theirs by the owner
    chain only."""
    by_uid: dict[str, list[Scheduler]] = {}
    for dep in claims.reading.deployments:
        template = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
        container = scheduler_container(template)
        if container is None:
            continue
        meta = _meta(dep)
        ns = meta.get("namespace", "")
        facts = claims.facts_for(ns, template, container)
        status = dep.get("status") or {}
        managed = is_managed(dep)
        for name in _names_of(dep, facts, claims.missing_config(ns, template, container)):
            entry = claims.add(
                name, "deployment", "deployment", dep, managed=managed, namespace=ns,
                instance=f"deployment/{meta.get('name')}", labels=dict(meta.get("labels") or {}),
                desired=(dep.get("spec") or {}).get("replicas", 1),
                ready=status.get("readyReplicas", 0), lease=claims.lease(facts.lease),
            )  # fmt: skip
            if meta.get("uid"):
                by_uid.setdefault(str(meta["uid"]), []).append(entry)
    return by_uid


def _recorded_leases(claims: _Claims) -> dict[str, Lease]:
    """The Lease each kschedctl-managed host-form scheduler recorded at deploy time."""
    recorded: dict[str, Lease] = {}
    for obj in claims.reading.managed:
        annotations = _meta(obj).get("annotations") or {}
        instance = owner(obj)
        if instance and LEASE_ANNOTATION in annotations:
            ns, _, lease_name = annotations[LEASE_ANNOTATION].partition("/")
            recorded[instance] = claims.leases.get((ns, lease_name)) or Lease(ns, lease_name)
    return recorded


def _claim_pods(
    claims: _Claims, by_uid: dict[str, list[Scheduler]], recorded_leases: dict[str, Lease]
) -> None:
    """Bare and static (mirror) pods running a scheduler; a Deployment's pods join its entry."""
    replicasets = identity.deployment_uids(claims.reading.replicasets)
    for pod in claims.reading.pods:
        spec = pod.get("spec") or {}
        container = scheduler_container(spec)
        if container is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        meta = _meta(pod)
        ns = meta.get("namespace", "")
        owners = [r.get("kind") for r in meta.get("ownerReferences") or []]
        facts = claims.facts_for(ns, spec, container)
        missing = claims.missing_config(ns, spec, container)
        if "ReplicaSet" in owners:
            # A pod is its Deployment's when the ReplicaSet it names is that Deployment's:
            # one that only claims a ReplicaSet owner is no claim (the garbage collector
            # deletes it), never a replica of a scheduler of the same name.
            deployment = identity.owning_deployment(pod, replicasets)
            for entry in by_uid.get(deployment, []) if deployment else []:
                entry.pods.append(meta.get("name", ""))
                _note_problem(entry, pod, missing)
            continue
        static = MIRROR_ANNOTATION in (meta.get("annotations") or {})
        form = "static-pod" if static else "pod"
        managed = is_managed(pod)
        names = _names_of(pod, facts, missing)
        lease = claims.lease(facts.lease)
        if managed and static and not (facts.names and facts.names != [DEFAULT_SCHEDULER_NAME]):
            # A static pod reads its config from the host: kschedctl's instance label names it,
            # and its Lease is the one recorded on its managed RBAC.
            instance = owner(pod) or DEFAULT_SCHEDULER_NAME
            names, lease = [instance], recorded_leases.get(instance)
        for name in names:
            entry = claims.add(
                name, form, form, pod, managed=managed, namespace=ns,
                instance=f"pod/{meta.get('name')}", lease=lease,
                labels=dict(meta.get("labels") or {}),
            )  # fmt: skip
            entry.desired = (entry.desired or 0) + 1
            entry.ready = (entry.ready or 0) + (1 if _ready(pod) else 0)
            entry.pods.append(meta.get("name", ""))
            _note_problem(entry, pod, [] if static else missing)


def _claim_managed(claims: _Claims, recorded_leases: dict[str, Lease]) -> None:
    """kschedctl-managed schedulers without pods (service form): their objects carry the
    Lease."""
    for obj in claims.reading.managed:
        annotations = _meta(obj).get("annotations") or {}
        managed_form: str | None = annotations.get(FORM_ANNOTATION)
        managed_name = owner(obj)
        if (
            not managed_name
            or managed_form not in ("service", "static-pod")
            or claims.claimed(managed_name)
        ):
            continue
        claims.add(
            managed_name, managed_form, "kschedctl", obj, managed=True,
            namespace=_meta(obj).get("namespace"), lease=recorded_leases.get(managed_name),
            labels=dict(_meta(obj).get("labels") or {}),
        )  # fmt: skip


def _claim_builtin_leases(claims: _Claims) -> None:
    """kschedctl's own scheduler running as a plain process: its Lease names it."""
    for obj in claims.reading.leases:
        builtin: str | None = (_meta(obj).get("annotations") or {}).get(BUILTIN_LEASE_ANNOTATION)
        if builtin and not claims.claimed(builtin):
            ns = _meta(obj).get("namespace", "")
            claims.add(
                builtin, "process", "lease", {"kind": "Lease"}, namespace=ns,
                lease=claims.leases.get((ns, _meta(obj).get("name"))),
            )  # fmt: skip


def _claim_default_lease(claims: _Claims) -> None:
    """The default scheduler of clusters whose control plane is not visible as pods
    (hand-built, managed offerings, the lab): its Lease is the trace it leaves, and only
    admins write it."""
    default_lease = claims.leases.get((LEASE_SYSTEM_NAMESPACE, DEFAULT_LEASE_NAME))
    if not claims.verified(DEFAULT_SCHEDULER_NAME) and default_lease is not None:
        claims.add(
            DEFAULT_SCHEDULER_NAME, "process", "lease", {"kind": "Lease"},
            namespace=LEASE_SYSTEM_NAMESPACE, lease=default_lease,
        ).identity = identity.LEASE  # fmt: skip


def _add_unserved(found: dict[str, Scheduler], reading: ClusterReading) -> None:
    """Names pods were bound under or are waiting for that nothing found serves."""
    pending: dict[str, int] = {}
    bound: set[str] = set(reading.bound_names or ())
    for pod in reading.pods:
        name = (pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER_NAME
        if is_pending(pod):
            pending[name] = pending.get(name, 0) + 1
        elif (pod.get("spec") or {}).get("nodeName"):
            bound.add(name)
    for name in sorted(bound - set(found)):
        found[name] = Scheduler(name, "unknown", served=False, sources=["bound-pods"])
    for name, count in pending.items():
        if name not in found:
            found[name] = Scheduler(name, "none", served=False, sources=["pending-pods"])
        found[name].pending = count
