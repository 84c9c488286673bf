"""The snapshot file: a portable copy of what scheduling needs from a cluster.

``kschedctl snapshot`` writes it, ``kschedctl simulate`` reads it. A versioned format
(``apiVersion: kschedctl.io/v1alpha1``, ``kind: Snapshot``) whose JSON Schema ships as
``kschedctl/_generated/schemas/snapshot.schema.json`` (generated from these dataclasses by
:mod:`kschedctl.render.schemas`). Named ``ClusterSnapshot`` (not ``Snapshot``): the filters'
indexed cluster state is :class:`kschedctl.model.filters.snapshot.Snapshot`, scheduler discovery's
reads are :class:`kschedctl.observe.discovery.ClusterReading`.

Pure. Nodes and pods are reduced to the fields kube-scheduler's plugins read (no uid, no
status but the phase, no annotations, no env, no commands); the Kubernetes-shaped parts
(affinity, tolerations, taints, topology spread constraints) are kept as the API spells them.
:func:`node_object` and :func:`pod_object` turn the reduced forms back into API objects, for
:class:`kschedctl.model.filters.snapshot.Snapshot` and for a lab built from the snapshot.

Reading is bounded like every file kschedctl reads (:func:`read_user_file`: regular files,
at most :data:`MAX_SNAPSHOT_BYTES`; YAML through the bounded loader of
:mod:`kschedctl.model.config.schema`; a file starting with ``{`` is JSON, much faster to read for a
large cluster) and strict: unknown fields, wrong types, bad quantities, duplicate names and
a pod bound to a node the snapshot does not hold are refused with every problem listed.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from kschedctl.base import limits
from kschedctl.base.errors import Problem, SpecError, quote
from kschedctl.base.userfile import read_user_file
from kschedctl.base.yamltext import to_yaml
from kschedctl.model.config import apinames
from kschedctl.model.config.decode import decode_json
from kschedctl.model.config.schema import YamlError, join, parse_yaml, type_message, type_ok
from kschedctl.model.filters.quantity import QuantityError, parse_quantity

__all__ = [
    "API_VERSION",
    "KIND",
    "MAX_SNAPSHOT_BYTES",
    "ClusterSnapshot",
    "Omission",
    "PodDisruptionBudget",
    "PriorityClass",
    "SnapshotContainer",
    "SnapshotMetadata",
    "SnapshotNamespace",
    "SnapshotNode",
    "SnapshotPod",
    "SnapshotSource",
    "dump",
    "load_snapshot",
    "node_object",
    "pod_object",
    "snapshot_from_dict",
    "snapshot_from_text",
    "snapshot_to_dict",
]

API_VERSION = "kschedctl.io/v1alpha1"
KIND = "Snapshot"
# 20,000 pods take about 20 MB of YAML; a few times that leaves room for labels and affinity
# without letting /dev/zero-sized input in.
MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024
_HINT = 'see README, "kschedctl snapshot", for the snapshot format'

RawDict = dict[str, Any]


# --- the model -------------------------------------------------------------------------------


@dataclass
class SnapshotSource:
    """The cluster it was read from: a hash of the API server URL (not the URL), its version."""

    server_hash: str = ""
    version: str = ""


@dataclass
class Omission:
    """Something the snapshot leaves out, how many objects if counted, and why."""

    what: str = field(default="", metadata={"required": True})
    reason: str = ""
    count: int | None = None


@dataclass
class SnapshotMetadata:
    """When and how the snapshot was taken, and what it leaves out."""

    created: str = ""
    kschedctl_version: str = ""
    source: SnapshotSource = field(default_factory=SnapshotSource)
    anonymized: bool = False
    omitted: list[Omission] = field(default_factory=list)


@dataclass
class SnapshotNode:
    """A node as the scheduler sees it (``status.capacity``/``allocatable``, ``spec``)."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    labels: dict[str, str] = field(default_factory=dict)
    capacity: dict[str, str] = field(default_factory=dict)
    allocatable: dict[str, str] = field(default_factory=dict)
    taints: list[RawDict] = field(default_factory=list)
    unschedulable: bool = False
    images: list[RawDict] = field(default_factory=list)  # status.images: names, sizeBytes


@dataclass
class SnapshotContainer:
    """A container's scheduling part: resources, host ports, image (ImageLocality)."""

    name: str = ""
    image: str = ""
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    ports: list[RawDict] = field(default_factory=list)  # those with a hostPort only
    restart_policy: str = ""  # "Always" on an init container: a sidecar


@dataclass
class SnapshotPod:
    """A pod reduced to what scheduling reads; ``nodeName`` empty for a pending pod."""

    namespace: str = field(default="", metadata={"required": True, "name": "label"})
    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    node_name: str = ""
    phase: str = ""
    scheduler_name: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str = ""
    owner_kind: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: RawDict | None = None
    tolerations: list[RawDict] = field(default_factory=list)
    topology_spread_constraints: list[RawDict] = field(default_factory=list)
    scheduling_gates: list[str] = field(default_factory=list)
    overhead: dict[str, str] = field(default_factory=dict)
    resources: RawDict | None = None  # pod-level resources (PodLevelResources)
    containers: list[SnapshotContainer] = field(default_factory=list)
    init_containers: list[SnapshotContainer] = field(default_factory=list)
    persistent_volume_claims: list[str] = field(default_factory=list)
    nominated_node_name: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class SnapshotNamespace:
    """A namespace's labels: what ``namespaceSelector`` in pod affinity terms matches."""

    name: str = field(default="", metadata={"required": True, "name": "label"})
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class PodDisruptionBudget:
    """A PDB as preemption reads it (``selector``, the budget, ``status.disruptionsAllowed``)."""

    namespace: str = field(default="", metadata={"required": True, "name": "label"})
    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    selector: RawDict | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disruptions_allowed: int | None = None


@dataclass
class PriorityClass:
    """A PriorityClass: ``value``, ``globalDefault``, ``preemptionPolicy``."""

    name: str = field(default="", metadata={"required": True, "name": "subdomain"})
    value: int = 0
    global_default: bool = False
    preemption_policy: str = ""


@dataclass
class ClusterSnapshot:
    """Everything a snapshot file holds (``spec`` of the document)."""

    metadata: SnapshotMetadata = field(default_factory=SnapshotMetadata, metadata={"top": True})
    nodes: list[SnapshotNode] = field(default_factory=list)
    pods: list[SnapshotPod] = field(default_factory=list)
    pending_pods: list[SnapshotPod] = field(default_factory=list)
    namespaces: list[SnapshotNamespace] = field(default_factory=list)
    pod_disruption_budgets: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)

    def node_names(self) -> set[str]:
        return {n.name for n in self.nodes}


# --- field names and types (shared with the JSON Schema) --------------------------------------


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# Cached: resolving annotations costs far more than reading a pod (20,000 pods per file).
@functools.cache
def yaml_fields(cls: type) -> tuple[tuple[dataclasses.Field[Any], str, Any], ...]:
    """(field, YAML key, type) of a model dataclass, in file order."""
    hints = typing.get_type_hints(cls)
    return tuple((f, camel(f.name), hints[f.name]) for f in dataclasses.fields(cls))


@functools.cache
def _written(cls: type) -> tuple[tuple[str, str, Any, bool], ...]:
    """(attribute, YAML key, default, required) of a model dataclass, for writing."""
    return tuple(
        (
            f.name,
            key,
            f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default,
            bool(f.metadata.get("required")),
        )
        for f, key, _ in yaml_fields(cls)
    )


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


@functools.cache
def union_members(tp: Any) -> tuple[tuple[Any, ...], bool]:
    """The non-None members of a union type, and whether None is one."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        return tuple(a for a in args if a is not type(None)), type(None) in args
    return (tp,), False


# --- reading -------------------------------------------------------------------------------


# A field path, built as nested pairs and spelled out only for a problem: a 20,000-pod file
# has a million values and (nearly always) no problem.
Where = Any  # str, or (Where, key or index)


def _spelled(where: Where) -> str:
    if isinstance(where, str):
        return where
    parent, key = where
    return f"{_spelled(parent)}[{key}]" if isinstance(key, int) else join(_spelled(parent), key)


@functools.cache
def _plan(tp: Any) -> tuple[tuple[Any, ...], bool, bool, Any, tuple[Any, ...]]:
    """What decoding ``tp`` needs: its union members, nullable, a model?, origin, arguments."""
    options, nullable = union_members(tp)
    base = options[0]
    origin, args = typing.get_origin(base) or base, typing.get_args(base)
    return options, nullable, _is_model(base), origin, args


def _decode(value: Any, tp: Any, where: Where, out: list[Problem]) -> Any:
    """``value`` as type ``tp``; a problem (and the zero value) where it is not."""
    options, nullable, model, origin, args = _plan(tp)
    if value is None:
        return None if nullable else _zero(options[0])
    if len(options) > 1:  # int | str (an IntOrString)
        if any(type_ok(value, o) for o in options):
            return value
        out.append(Problem(_spelled(where), f"must be an integer or a string, not {quote(value)}"))
        return None
    if model:
        return _decode_model(value, origin, where, out)
    if origin is list:
        if not isinstance(value, list):
            out.append(Problem(_spelled(where), f"must be a list, not {quote(value)}"))
            return []
        (item,) = args
        return [_decode(v, item, (where, i), out) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            out.append(Problem(_spelled(where), f"must be a mapping, not {quote(value)}"))
            return {}
        _, item = args
        if item is Any:
            return value
        if item is str and all(type(v) is str for v in value.values()):
            return value  # the common case: labels, quantities
        kept = {}
        for k, v in value.items():
            before = len(out)
            decoded = _decode(v, item, (where, str(k)), out)
            if len(out) == before:  # a wrong entry is reported, not kept as its zero value
                kept[k] = decoded
        return kept
    if not type_ok(value, origin):
        out.append(Problem(_spelled(where), type_message(value, origin)))
        return _zero(origin)
    return value


def _zero(tp: Any) -> Any:
    if _is_model(tp):
        return tp()
    origin = typing.get_origin(tp) or tp
    return origin() if origin in (str, int, bool, list, dict) else None


@functools.cache
def _known(cls: type) -> dict[str, tuple[str, Any]]:
    return {key: (f.name, tp) for f, key, tp in yaml_fields(cls)}


@functools.cache
def _required(cls: type) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, key) for f, key, _ in yaml_fields(cls) if f.metadata.get("required"))


def _decode_model(value: Any, cls: type, where: Where, out: list[Problem]) -> Any:
    if not isinstance(value, dict):
        out.append(Problem(_spelled(where), f"must be a mapping, not {quote(value)}"))
        return cls()
    known = _known(cls)
    kwargs: dict[str, Any] = {}
    for key, raw in value.items():
        if key not in known:
            from kschedctl.model.config.schema import unknown_field_message  # only on errors

            child = join(_spelled(where), key)
            out.append(Problem(child, unknown_field_message(str(key), list(known))))
            continue
        name, tp = known[key]
        kwargs[name] = _decode(raw, tp, (where, key), out)
    for name, key in _required(cls):
        if not kwargs.get(name):
            out.append(Problem(join(_spelled(where), key), "is required and must not be empty"))
    return cls(**kwargs)


_TOP_KEYS = ("apiVersion", "kind", "metadata", "spec")


def snapshot_from_dict(doc: Any, source: str = "") -> ClusterSnapshot:
    """A parsed snapshot document, checked; SpecError (exit 3) lists every problem."""
    out: list[Problem] = []
    if not isinstance(doc, dict):
        raise SpecError("", f"must be a mapping, not {quote(doc)}", _HINT, source)
    if doc.get("apiVersion") != API_VERSION:
        raise SpecError(
            "apiVersion",
            f"expected {API_VERSION!r}, got {quote(doc.get('apiVersion'))}",
            "this kschedctl reads snapshots of that version; take the snapshot again with it",
            source,
        )
    if doc.get("kind") != KIND:
        raise SpecError("kind", f"expected {KIND!r}, got {quote(doc.get('kind'))}", _HINT, source)
    for key in doc:
        if key not in _TOP_KEYS:
            from kschedctl.model.config.schema import unknown_field_message  # only on errors

            out.append(Problem(join("", key), unknown_field_message(str(key), list(_TOP_KEYS))))
    metadata = _decode_model(doc.get("metadata") or {}, SnapshotMetadata, "metadata", out)
    spec = dict(doc.get("spec") or {}) if isinstance(doc.get("spec"), dict) else doc.get("spec")
    if isinstance(spec, dict):
        _check_counts(spec, source)
    snap = _decode_model(spec or {}, ClusterSnapshot, "spec", out)
    if isinstance(spec, dict) and "metadata" in spec:
        out.append(Problem("spec.metadata", "unknown field (metadata belongs at the top level)"))
    snap.metadata = metadata
    _check_consistency(snap, out)
    if out:
        raise SpecError.from_problems([p.moved(source=source) for p in out], hint=_HINT)
    typed: ClusterSnapshot = snap
    return typed


def _check_counts(spec: dict[str, Any], source: str) -> None:
    """The limits, before a node or pod is decoded (a lab holds every one of them)."""
    hint = "take the snapshot of a smaller cluster, or of fewer namespaces (-n)"
    nodes, pods = limits.node_budget(), limits.pod_budget()
    for key, budget in (("nodes", nodes), ("pods", pods), ("pendingPods", pods)):
        if isinstance(spec.get(key), list):
            budget.take(len(spec[key]), f"spec.{key}", source, hint)


def _check_consistency(snap: ClusterSnapshot, out: list[Problem]) -> None:
    """What the types cannot say: names and labels are what the API server accepts, quantities
    parse, names are unique, bound pods have a node the snapshot holds and pending pods none."""
    _check_api_names(snap, out)
    nodes: set[str] = set()
    for i, node in enumerate(snap.nodes):
        where = f"spec.nodes[{i}]"
        if node.name in nodes:
            out.append(Problem(f"{where}.name", f"node {quote(node.name)} is listed twice"))
        nodes.add(node.name)
        _check_quantities(node.capacity, f"{where}.capacity", out)
        _check_quantities(node.allocatable, f"{where}.allocatable", out)
    seen: set[str] = set()
    for kind, pods in (("pods", snap.pods), ("pendingPods", snap.pending_pods)):
        for i, pod in enumerate(pods):
            where = f"spec.{kind}[{i}]"
            if pod.key in seen:
                out.append(Problem(f"{where}.name", f"pod {quote(pod.key)} is listed twice"))
            seen.add(pod.key)
            _check_pod(pod, where, kind == "pods", nodes, out)
    names = [pc.name for pc in snap.priority_classes]
    for i, name in enumerate(names):
        if name in names[:i]:
            out.append(Problem(f"spec.priorityClasses[{i}].name", f"{quote(name)} is listed twice"))


def _check_api_names(snap: ClusterSnapshot, out: list[Problem]) -> None:
    """Every name, label, taint and resource name by the API server's rules, so that a lab is
    never started for a snapshot whose objects it would refuse (or a name like ``../x``)."""

    def name(value: str, where: str, rule: apinames.NameRule = "subdomain") -> None:
        if value:  # empty: the required check's, or an optional field left out
            apinames.check_name(value, where, out, rule)

    for i, node in enumerate(snap.nodes):
        where = f"spec.nodes[{i}]"
        name(node.name, f"{where}.name")
        apinames.check_labels(node.labels, f"{where}.labels", out)
        apinames.check_keys(node.capacity, f"{where}.capacity", out, "resource name")
        apinames.check_keys(node.allocatable, f"{where}.allocatable", out, "resource name")
        for j, taint in enumerate(node.taints):
            if "key" in taint:
                apinames.check_key(taint["key"], f"{where}.taints[{j}].key", out, "taint key")
            if taint.get("value"):
                apinames.check_label_value(taint["value"], f"{where}.taints[{j}].value", out)
    for kind, pods in (("pods", snap.pods), ("pendingPods", snap.pending_pods)):
        for i, pod in enumerate(pods):
            where = f"spec.{kind}[{i}]"
            name(pod.namespace, f"{where}.namespace", "label")
            name(pod.name, f"{where}.name")
            name(pod.node_name, f"{where}.nodeName")
            name(pod.scheduler_name, f"{where}.schedulerName")
            name(pod.priority_class_name, f"{where}.priorityClassName")
            apinames.check_labels(pod.labels, f"{where}.labels", out)
            apinames.check_labels(pod.node_selector, f"{where}.nodeSelector", out)
            apinames.check_keys(pod.overhead, f"{where}.overhead", out, "resource name")
            for j, gate in enumerate(pod.scheduling_gates):
                apinames.check_key(gate, f"{where}.schedulingGates[{j}]", out, "gate")
            for j, claim in enumerate(pod.persistent_volume_claims):
                name(claim, f"{where}.persistentVolumeClaims[{j}]")
            groups = (("containers", pod.containers), ("initContainers", pod.init_containers))
            for group, containers in groups:
                for j, c in enumerate(containers):
                    at = f"{where}.{group}[{j}]"
                    name(c.name, f"{at}.name", "label")
                    apinames.check_keys(c.requests, f"{at}.requests", out, "resource name")
                    apinames.check_keys(c.limits, f"{at}.limits", out, "resource name")
    for i, ns in enumerate(snap.namespaces):
        name(ns.name, f"spec.namespaces[{i}].name", "label")
        apinames.check_labels(ns.labels, f"spec.namespaces[{i}].labels", out)
    for i, pdb in enumerate(snap.pod_disruption_budgets):
        name(pdb.namespace, f"spec.podDisruptionBudgets[{i}].namespace", "label")
        name(pdb.name, f"spec.podDisruptionBudgets[{i}].name")
    for i, pc in enumerate(snap.priority_classes):
        name(pc.name, f"spec.priorityClasses[{i}].name")


def _check_pod(
    pod: SnapshotPod, where: str, bound: bool, nodes: set[str], out: list[Problem]
) -> None:
    if bound and not pod.node_name:
        out.append(
            Problem(f"{where}.nodeName", "a bound pod needs a node (pending pods: pendingPods)")
        )
    elif bound and pod.node_name not in nodes:
        out.append(
            Problem(
                f"{where}.nodeName",
                f"node {quote(pod.node_name)} is not in the snapshot's nodes",
            )
        )
    elif not bound and pod.node_name:
        out.append(
            Problem(f"{where}.nodeName", "a pending pod has no node (bound pods go in pods)")
        )
    _check_quantities(pod.overhead, f"{where}.overhead", out)
    groups = (("containers", pod.containers), ("initContainers", pod.init_containers))
    for kind, containers in groups:
        for j, c in enumerate(containers):
            _check_quantities(c.requests, f"{where}.{kind}[{j}].requests", out)
            _check_quantities(c.limits, f"{where}.{kind}[{j}].limits", out)


def _check_quantities(values: dict[str, str], where: str, out: list[Problem]) -> None:
    for name, value in values.items():
        try:
            parse_quantity(value)
        except QuantityError:
            out.append(
                Problem(join(where, name), f"{quote(value)} is not a quantity (e.g. 500m, 2Gi)")
            )


def snapshot_from_text(text: str, source: str = "") -> ClusterSnapshot:
    """A snapshot from its YAML or JSON text (``{`` first: JSON)."""
    try:
        if text.lstrip(" \t\r\n").startswith("{"):
            docs = [decode_json(text)]
        else:
            docs = parse_yaml(text)
    except YamlError as err:
        raise SpecError("", str(err), _HINT, source) from err
    if len(docs) != 1:
        raise SpecError("", f"expected one YAML document, found {len(docs)}", _HINT, source)
    return snapshot_from_dict(docs[0], source)


def load_snapshot(path: str) -> ClusterSnapshot:
    """The snapshot file at ``path``: NotFoundError (5) if missing, SpecError (3) if invalid."""
    text = read_user_file(
        path,
        MAX_SNAPSHOT_BYTES,
        too_big_hint="a snapshot of 20,000 pods is about 20 MB: is this the right file?",
    )
    return snapshot_from_text(text, path)


# --- writing -------------------------------------------------------------------------------


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encode_model(value)
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _encode_model(obj: Any) -> dict[str, Any]:
    """The fields that differ from their default (files stay small), in declaration order."""
    out: dict[str, Any] = {}
    cls: type = type(obj)
    for name, key, default, required in _written(cls):
        value = getattr(obj, name)
        if value == default and not required:
            continue
        out[key] = _encode(value)
    return out


def snapshot_to_dict(snap: ClusterSnapshot) -> dict[str, Any]:
    spec = _encode_model(snap)
    spec.pop("metadata", None)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": _encode_model(snap.metadata),
        "spec": spec,
    }


def dump(snap: ClusterSnapshot, *, as_json: bool = False) -> str:
    """The file's text: YAML, or JSON (``as_json``: faster to write and read back).

    YAML through libyaml's emitter (the template-slot form of :func:`to_yaml`, which quotes
    every value that needs it and escapes non-ASCII): PyYAML's own emitter takes minutes for
    20,000 pods."""
    doc = snapshot_to_dict(snap)
    if as_json:
        return json.dumps(doc, separators=(",", ":")) + "\n"  # the C encoder: no indent
    return to_yaml(doc) + "\n"


# --- back to API objects ---------------------------------------------------------------------


def node_object(node: SnapshotNode) -> dict[str, Any]:
    """A Node API object with what the snapshot holds (Ready, as the scheduler assumes)."""
    spec: dict[str, Any] = {}
    if node.taints:
        spec["taints"] = [dict(t) for t in node.taints]
    if node.unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {
        "capacity": dict(node.capacity),
        "allocatable": dict(node.allocatable),
    }
    if node.images:
        status["images"] = [dict(i) for i in node.images]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": dict(node.labels)},
        "spec": spec,
        "status": status,
    }


def _container_object(c: SnapshotContainer, index: int, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name or f"{prefix}{index}", "image": c.image or "pause"}
    resources: dict[str, Any] = {}
    if c.requests:
        resources["requests"] = dict(c.requests)
    if c.limits:
        resources["limits"] = dict(c.limits)
    if resources:
        out["resources"] = resources
    if c.ports:
        out["ports"] = [dict(p) for p in c.ports]
    if c.restart_policy:
        out["restartPolicy"] = c.restart_policy
    return out


def pod_object(pod: SnapshotPod) -> dict[str, Any]:
    """A Pod API object with what the snapshot holds (bound: ``spec.nodeName`` set)."""
    spec: dict[str, Any] = {
        "containers": [_container_object(c, i, "c") for i, c in enumerate(pod.containers)]
    }
    if pod.init_containers:
        spec["initContainers"] = [
            _container_object(c, i, "init") for i, c in enumerate(pod.init_containers)
        ]
    optional = {
        "nodeName": pod.node_name,
        "schedulerName": pod.scheduler_name,
        "priority": pod.priority,
        "priorityClassName": pod.priority_class_name,
        "preemptionPolicy": pod.preemption_policy,
        "nodeSelector": dict(pod.node_selector),
        "affinity": pod.affinity,
        "tolerations": [dict(t) for t in pod.tolerations],
        "topologySpreadConstraints": [dict(t) for t in pod.topology_spread_constraints],
        "schedulingGates": [{"name": g} for g in pod.scheduling_gates],
        "overhead": dict(pod.overhead),
        "resources": pod.resources,
        "volumes": [
            {"name": f"pvc-{i}", "persistentVolumeClaim": {"claimName": claim}}
            for i, claim in enumerate(pod.persistent_volume_claims)
        ],
    }
    spec.update({k: v for k, v in optional.items() if v not in (None, "", [], {})})
    metadata: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace}
    if pod.labels:
        metadata["labels"] = dict(pod.labels)
    status: dict[str, Any] = {"phase": pod.phase or ("Running" if pod.node_name else "Pending")}
    if pod.nominated_node_name:
        status["nominatedNodeName"] = pod.nominated_node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}
