"""Which schedulers a cluster runs, from plain-dict snapshots of its objects (pure).

A scheduler shows itself in several ways and none is complete on its own: kschedctl's labels,
a kube-scheduler Deployment or Pod (its ``--config`` ConfigMap names its profiles), a mirror
pod of a static pod, the leader Lease it renews (the only trace of a scheduler running as a
host process, like the default one of a hand-built cluster), and pods that were bound under a
scheduler name. Pods asking for a name nothing serves are reported too: they hang with no
events at all.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from kschedctl.model.config.schema import YamlError, parse_yaml
from kschedctl.model.config.versions import DEFAULT_LEASE_NAME, DEFAULT_SCHEDULER_NAME
from kschedctl.observe import identity
from kschedctl.observe.bodies import SchedulerEntry
from kschedctl.observe.crash import pod_problems

# Re-exported: deploy, remove and placement read them here with the other kschedctl marks.
from kschedctl.observe.identity import FORM_ANNOTATION as FORM_ANNOTATION
from kschedctl.observe.identity import LEASE_ANNOTATION as LEASE_ANNOTATION
from kschedctl.observe.identity import MIRROR_ANNOTATION as MIRROR_ANNOTATION

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
        }


# -- parsing objects ------------------------------------------------------------------------------


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


def is_kube_scheduler_image(image: str) -> bool:
    """The image's repository ends in ``kube-scheduler`` (any registry, tag or digest): the
    upstream image, scheduler-plugins' ``scheduler-plugins/kube-scheduler`` and builds named
    like ``custom-kube-scheduler``."""
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[0].endswith("kube-scheduler")


def is_kube_scheduler_container(container: dict[str, Any]) -> bool:
    """A container running a kube-scheduler build: by its image, its command, or — for a
    ``program: custom`` image and binary of any name — the container name kschedctl (and
    kubeadm) give it, ``kube-scheduler``, with the ``--config`` every such scheduler reads."""
    argv = [str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])]]
    if is_kube_scheduler_image(str(container.get("image", ""))):
        return True
    if argv and argv[0].rsplit("/", 1)[-1].endswith("kube-scheduler"):
        return True
    return container.get("name") == "kube-scheduler" and _flag(argv, "config") is not None


def is_builtin_container(container: dict[str, Any]) -> bool:
    """kschedctl's own scheduler: ``kschedctl scheduler run`` (program: builtin)."""
    argv = [*(container.get("command") or []), *(container.get("args") or [])]
    if argv and argv[0].rsplit("/", 1)[-1] == "kschedctl":
        argv = argv[1:]
    return argv[:2] == ["scheduler", "run"]


def scheduler_container(pod_spec: dict[str, Any]) -> dict[str, Any] | None:
    containers: list[dict[str, Any]] = pod_spec.get("containers") or []
    for container in containers:
        if is_kube_scheduler_container(container):
            return container
        if is_builtin_container(container):
            return container
    return None


def _argv(container: dict[str, Any]) -> list[str]:
    # The API server keeps only strings here; a hand-written manifest may not.
    argv = [str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])]]
    # `sh -c "kube-scheduler --config=..."` forms: split the script too.
    return [part for arg in argv for part in (shlex.split(arg) if " --" in arg else [arg])]


# $(VAR) in a container's command and args, as the kubelet expands them ($$ escapes a $).
_VAR_REF = re.compile(r"\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)")


def expanded_argv(container: dict[str, Any], namespace: str) -> list[str]:
    """The container's argv with the ``$(VAR)`` references the kubelet would expand: env
    values and the pod's namespace (``fieldRef: metadata.namespace``, as the kustomize form's
    ``--leader-elect-resource-namespace=$(POD_NAMESPACE)``); other references stay as written."""
    env: dict[str, str] = {}
    for var in container.get("env") or []:
        if not isinstance(var, dict) or not isinstance(var.get("name"), str):
            continue
        field_ref = (var.get("valueFrom") or {}).get("fieldRef") or {}
        if isinstance(var.get("value"), str):
            env[var["name"]] = var["value"]
        elif field_ref.get("fieldPath") == "metadata.namespace" and namespace:
            env[var["name"]] = namespace

    def expand(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return [_VAR_REF.sub(expand, arg) if isinstance(arg, str) else arg for arg in _argv(container)]


def _flag(argv: list[str], name: str) -> str | None:
    for index, arg in enumerate(argv):
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
        if arg == f"--{name}" and index + 1 < len(argv):
            return argv[index + 1]
    return None


def config_source(pod_spec: dict[str, Any], container: dict[str, Any]) -> tuple[str, str] | None:
    """(ConfigMap name, key) holding the file ``--config`` points at, if it is a ConfigMap."""
    path = _flag(_argv(container), "config")
    if not path:
        return None
    volumes = {v.get("name"): v for v in pod_spec.get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        mount_path = mount.get("mountPath", "").rstrip("/")
        if not path.startswith(mount_path + "/"):
            continue
        volume = volumes.get(mount.get("name")) or {}
        cm = volume.get("configMap")
        if not cm:
            return None
        file_name = path[len(mount_path) + 1 :]
        for item in cm.get("items") or []:
            if item.get("path") == file_name:
                return cm.get("name", ""), item.get("key", "")
        return cm.get("name", ""), file_name
    return None


@dataclass
class ConfigFacts:
    names: list[str]
    lease: tuple[str, str] | None  # (namespace, name) when leader election is on


def config_facts(config_text: str | None, argv: list[str]) -> ConfigFacts:
    """Profile names and Lease of a kube-scheduler, from its config file and flags."""
    config: dict[str, Any] = {}
    if config_text:
        try:  # the cluster's data is input too: loaded with the same bounds as a file
            docs = parse_yaml(config_text)
            config = docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else {}
        except YamlError:
            config = {}
    raw_profiles = config.get("profiles")
    profiles = (
        [p for p in raw_profiles if isinstance(p, dict)] if isinstance(raw_profiles, list) else []
    )
    names = [str(p["schedulerName"]) for p in profiles if p.get("schedulerName")]
    if not names and len(profiles) <= 1:
        names = [DEFAULT_SCHEDULER_NAME]  # kube-scheduler's defaulting
    le = config.get("leaderElection") if isinstance(config.get("leaderElection"), dict) else {}
    assert isinstance(le, dict)
    elect = le.get("leaderElect", True)
    flag = _flag(argv, "leader-elect")
    if flag is not None:
        elect = flag.lower() != "false"
    if not elect:
        return ConfigFacts(names, None)
    namespace = (
        _flag(argv, "leader-elect-resource-namespace")
        or le.get("resourceNamespace")
        or LEASE_SYSTEM_NAMESPACE
    )
    name = _flag(argv, "leader-elect-resource-name") or le.get("resourceName") or DEFAULT_LEASE_NAME
    return ConfigFacts(names, (str(namespace), str(name)))


def builtin_facts(argv: list[str]) -> ConfigFacts:
    """Name and Lease of ``kschedctl scheduler run`` from its flags (its defaults otherwise)."""
    name = _flag(argv, "name") or ""
    if "--no-leader-elect" in argv:
        return ConfigFacts([name] if name else [], None)
    namespace = _flag(argv, "lease-namespace") or LEASE_SYSTEM_NAMESPACE
    return ConfigFacts([name] if name else [], (namespace, _flag(argv, "lease-name") or name))


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


def workload_leases(objects: Iterable[dict[str, Any]]) -> set[tuple[str, str]] | None:
    """The Leases (namespace, name) the scheduler workloads among ``objects`` hold, from what
    they run: flags with ``$(VAR)`` expanded for the namespace they are in now, and the config
    of a ConfigMap among ``objects``. None when no workload states it (host forms, a static
    pod whose config is on its node, a ConfigMap gone): then only the ``kschedctl.io/lease``
    annotation tells, and it says where the Lease was when the objects were rendered, which a
    kustomize overlay moving the namespace does not rewrite."""
    objects = list(objects)
    configmaps = {
        (_meta(o).get("namespace", ""), _meta(o).get("name", "")): o
        for o in objects
        if o.get("kind") == "ConfigMap"
    }
    found: set[tuple[str, str]] | None = None
    for obj in objects:
        meta = _meta(obj)
        if obj.get("kind") not in ("Deployment", "Pod"):
            continue
        if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
            continue  # a static pod: its config is a file on the node
        spec = obj.get("spec") or {}
        pod_spec = (spec.get("template") or {}).get("spec") or {} if "template" in spec else spec
        container = scheduler_container(pod_spec)
        if container is None:
            continue
        namespace = str(meta.get("namespace", ""))
        argv = expanded_argv(container, namespace)
        if is_builtin_container(container):
            facts = builtin_facts(argv)
        else:
            source = config_source(pod_spec, container)
            cm = configmaps.get((namespace, source[0])) if source else None
            if source is None or cm is None:
                continue
            facts = config_facts((cm.get("data") or {}).get(source[1]), argv)
        found = found or set()
        if facts.lease is not None:
            found.add(facts.lease)
    return found


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


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def is_pending(pod: dict[str, Any]) -> bool:
    return (
        not (pod.get("spec") or {}).get("nodeName")
        and (pod.get("status") or {}).get("phase", "Pending") == "Pending"
    )


# -- discovery ------------------------------------------------------------------------------------


@dataclass
class Snapshot:
    """``pods``: every pod, or (with ``bound_names``) only the pods discovery looks at one by
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


def discover(snap: Snapshot) -> list[Scheduler]:
    """Every scheduler name the snapshot shows, sorted: default first, then by name.

    Each object claiming a name is a claim, judged by :func:`identity.verdict`: the claims
    known to be the scheduler (or, when none is, the only unverified one) make its entry;
    the others are named on it as impostors, or as the candidates of a conflict."""
    leases = {
        (_meta(o).get("namespace"), _meta(o).get("name")): parse_lease(o, snap.now)
        for o in snap.leases
    }
    recorded = identity.recorded_namespaces(
        (who, o) for o in snap.bindings if (who := owner(o)) is not None
    )
    for obj in snap.managed:  # kschedctl's Roles: host forms are recorded by theirs
        if (who := owner(obj)) is not None and (ns := identity.host_rbac_namespace(obj)):
            recorded.setdefault(who, set()).add(ns)
    # One claim per name, namespace and verdict: the objects of one place merge, never two.
    claims: dict[tuple[str, str, str], Scheduler] = {}

    def add(name: str, form: str, source: str, obj: dict[str, Any], **facts: Any) -> Scheduler:
        namespace = str(facts.get("namespace") or "")
        is_pod = obj.get("kind", "Pod") == "Pod" and "containers" in (obj.get("spec") or {})
        trusted, reason = identity.verdict(
            name, owner(obj), namespace, recorded,
            control_plane=is_pod and identity.is_control_plane_mirror(obj, snap.nodes),
        )  # fmt: skip
        group = "verified" if trusted in identity.VERIFIED else trusted
        entry = claims.get((name, namespace, group))
        if entry is None:
            entry = claims[(name, namespace, group)] = Scheduler(
                name=name, form=form, identity=trusted, reason=reason, **facts
            )
        else:
            for key, value in facts.items():
                if getattr(entry, key) in (None, False, [], 0, {}) and value not in (None, False):
                    setattr(entry, key, value)
        if source not in entry.sources:
            entry.sources.append(source)
        return entry

    def facts_for(
        namespace: str, pod_spec: dict[str, Any], container: dict[str, Any]
    ) -> ConfigFacts:
        if is_builtin_container(container):
            return builtin_facts(_argv(container))
        source = config_source(pod_spec, container)
        text = None
        if source:
            cm = snap.configmaps.get((namespace, source[0])) or {}
            text = (cm.get("data") or {}).get(source[1])
        return config_facts(text, expanded_argv(container, namespace))

    def names_of(obj: dict[str, Any], facts: ConfigFacts, missing: list[str]) -> list[str]:
        # kschedctl's objects whose config cannot be read (its ConfigMap is missing) are still
        # the scheduler kschedctl labelled them as, not the default kube-scheduler would take.
        mine = owner(obj)
        if missing and mine and facts.names == [DEFAULT_SCHEDULER_NAME]:
            return [mine]
        return facts.names

    def missing_config(
        namespace: str, pod_spec: dict[str, Any], container: dict[str, Any]
    ) -> list[str]:
        """The --config ConfigMap, when the snapshot looked for it and it is not there."""
        if is_builtin_container(container):
            return []
        source = config_source(pod_spec, container)
        return [source[0]] if source and (namespace, source[0]) not in snap.configmaps else []

    def note_problem(entry: Scheduler, pod: dict[str, Any], missing: list[str]) -> None:
        if entry.problem is None:
            found_problems = pod_problems(pod, missing_configmaps=missing, scheduler=entry.name)
            entry.problem = found_problems[0].reason if found_problems else None

    # Deployments running kube-scheduler; their pods are theirs by the owner chain only.
    by_uid: dict[str, list[Scheduler]] = {}
    for dep in snap.deployments:
        template = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
        container = scheduler_container(template)
        if container is None:
            continue
        meta = _meta(dep)
        ns = meta.get("namespace", "")
        facts = facts_for(ns, template, container)
        status = dep.get("status") or {}
        managed = is_managed(dep)
        for name in names_of(dep, facts, missing_config(ns, template, container)):
            entry = add(
                name, "deployment", "deployment", dep, managed=managed, namespace=ns,
                instance=f"deployment/{meta.get('name')}", labels=dict(meta.get("labels") or {}),
                desired=(dep.get("spec") or {}).get("replicas", 1),
                ready=status.get("readyReplicas", 0),
                lease=leases.get(facts.lease) if facts.lease else None,
            )  # fmt: skip
            if meta.get("uid"):
                by_uid.setdefault(str(meta["uid"]), []).append(entry)

    # Bare and static (mirror) pods running kube-scheduler; deployment pods are listed per name.
    # The Lease each kschedctl-managed host-form scheduler recorded at deploy time.
    recorded_leases: dict[str, Lease] = {}
    for obj in snap.managed:
        annotations = _meta(obj).get("annotations") or {}
        instance = owner(obj)
        if instance and LEASE_ANNOTATION in annotations:
            ns, _, lease_name = annotations[LEASE_ANNOTATION].partition("/")
            recorded_leases[instance] = leases.get((ns, lease_name)) or Lease(ns, lease_name)

    replicasets = identity.deployment_uids(snap.replicasets)
    for pod in snap.pods:
        spec = pod.get("spec") or {}
        container = scheduler_container(spec)
        if container is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        meta = _meta(pod)
        ns = meta.get("namespace", "")
        owners = [r.get("kind") for r in meta.get("ownerReferences") or []]
        facts = facts_for(ns, spec, container)
        missing = missing_config(ns, spec, container)
        if "ReplicaSet" in owners:
            # A pod is its Deployment's when the ReplicaSet it names is that Deployment's:
            # one that only claims a ReplicaSet owner is no claim (the garbage collector
            # deletes it), never a replica of a scheduler of the same name.
            deployment = identity.owning_deployment(pod, replicasets)
            for entry in by_uid.get(deployment, []) if deployment else []:
                entry.pods.append(meta.get("name", ""))
                note_problem(entry, pod, missing)
            continue
        static = MIRROR_ANNOTATION in (meta.get("annotations") or {})
        form = "static-pod" if static else "pod"
        managed = is_managed(pod)
        names = names_of(pod, facts, missing)
        lease = leases.get(facts.lease) if facts.lease else None
        if managed and static and not (facts.names and facts.names != [DEFAULT_SCHEDULER_NAME]):
            # A static pod reads its config from the host: kschedctl's instance label names it,
            # and its Lease is the one recorded on its managed RBAC.
            instance = owner(pod) or DEFAULT_SCHEDULER_NAME
            names, lease = [instance], recorded_leases.get(instance)
        for name in names:
            entry = add(
                name, form, form, pod, managed=managed, namespace=ns,
                instance=f"pod/{meta.get('name')}", lease=lease,
                labels=dict(meta.get("labels") or {}),
            )  # fmt: skip
            entry.desired = (entry.desired or 0) + 1
            entry.ready = (entry.ready or 0) + (1 if _ready(pod) else 0)
            entry.pods.append(meta.get("name", ""))
            note_problem(entry, pod, [] if static else missing)

    def claimed(name: str) -> bool:
        return any(key[0] == name and key[2] != identity.IMPOSTOR for key in claims)

    # kschedctl-managed schedulers without pods (service form): their objects carry the lease.
    for obj in snap.managed:
        annotations = _meta(obj).get("annotations") or {}
        managed_form: str | None = annotations.get(FORM_ANNOTATION)
        managed_name = owner(obj)
        if (
            not managed_name
            or managed_form not in ("service", "static-pod")
            or claimed(managed_name)
        ):
            continue
        add(
            managed_name, managed_form, "kschedctl", obj, managed=True,
            namespace=_meta(obj).get("namespace"), lease=recorded_leases.get(managed_name),
            labels=dict(_meta(obj).get("labels") or {}),
        )  # fmt: skip

    # kschedctl's own scheduler running as a plain process: its Lease names it.
    for obj in snap.leases:
        builtin: str | None = (_meta(obj).get("annotations") or {}).get(BUILTIN_LEASE_ANNOTATION)
        if builtin and not claimed(builtin):
            ns = _meta(obj).get("namespace", "")
            add(
                builtin, "process", "lease", {"kind": "Lease"}, namespace=ns,
                lease=leases.get((ns, _meta(obj).get("name"))),
            )  # fmt: skip

    # The default scheduler of clusters whose control plane is not visible as pods (hand-built,
    # managed offerings, the lab): its Lease is the trace it leaves, and only admins write it.
    default_lease = leases.get((LEASE_SYSTEM_NAMESPACE, DEFAULT_LEASE_NAME))
    verified_default = any(
        key[0] == DEFAULT_SCHEDULER_NAME and key[2] == "verified" for key in claims
    )
    if not verified_default and default_lease is not None:
        add(
            DEFAULT_SCHEDULER_NAME, "process", "lease", {"kind": "Lease"},
            namespace=LEASE_SYSTEM_NAMESPACE, lease=default_lease,
        ).identity = identity.LEASE  # fmt: skip

    found = _resolve(claims.values())

    # Names pods were bound under or are waiting for.
    pending: dict[str, int] = {}
    bound: set[str] = set(snap.bound_names or ())
    for pod in snap.pods:
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

    # A scheduler whose Lease is held by none of its pods has no active leader among them.
    for entry in found.values():
        for one in [entry, *entry.candidates, *entry.impostors]:
            if one.lease is not None and one.lease.held and one.lease.holder:
                one.leader = one.lease.holder.split("_", 1)[0]

    return sorted(found.values(), key=lambda s: (s.name != DEFAULT_SCHEDULER_NAME, s.name))


def _resolve(claims: Iterable[Scheduler]) -> dict[str, Scheduler]:
    """One entry per name: its verified claim, else its only unverified one; several of
    those are a conflict (an entry of form ``conflict`` naming them); the rest impostors."""
    by_name: dict[str, list[Scheduler]] = {}
    for claim in claims:
        by_name.setdefault(claim.name, []).append(claim)
    found: dict[str, Scheduler] = {}
    for name, group in by_name.items():
        verified = [c for c in group if c.identity in identity.VERIFIED]
        unverified = [c for c in group if c.identity == identity.UNVERIFIED]
        impostors = [c for c in group if c.identity == identity.IMPOSTOR]
        if verified:
            for claim in unverified:  # a name served from where it is known to be
                claim.identity = identity.IMPOSTOR
                claim.reason = f"{name} is served from namespace {verified[0].namespace}"
            impostors, pickable = unverified + impostors, verified
        else:
            pickable = unverified
        if len(pickable) == 1:
            entry = pickable[0]
        elif pickable:
            entry = Scheduler(
                name, "conflict", sources=sorted({s for c in pickable for s in c.sources}),
                managed=any(c.managed for c in pickable), candidates=pickable,
            )  # fmt: skip
        else:  # only impostors: nothing known to serve the name
            entry = Scheduler(name, "none", served=False, sources=["impostor"])
        entry.impostors = sorted(impostors, key=lambda c: (c.namespace or "", c.instance or ""))
        found[name] = entry
    return found
