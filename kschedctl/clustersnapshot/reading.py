"""Reading a snapshot file: decode the YAML or JSON into :mod:`.model`'s dataclasses, strictly.

Bounded like every file kschedctl reads (:func:`read_user_file`: regular files, at most
:data:`MAX_SNAPSHOT_BYTES`; YAML through the bounded loader of
:mod:`kschedctl.model.config.schema`; a file starting with ``{`` is JSON, much faster to read for
a large cluster) and strict: unknown fields, wrong types, bad quantities, duplicate names and a
pod bound to a node the snapshot does not hold are refused with every problem listed.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Sequence
from typing import Any

from kschedctl.base import limits
from kschedctl.base.errors import Problem, SpecError, quote
from kschedctl.base.userfile import read_user_file
from kschedctl.clustersnapshot.model import (
    API_VERSION,
    KIND,
    ClusterSnapshot,
    SnapshotMetadata,
    SnapshotPod,
    is_model,
    union_members,
    yaml_fields,
)
from kschedctl.model.config import apinames
from kschedctl.model.config.decode import decode_json
from kschedctl.model.config.schema import YamlError, join, parse_yaml, type_message, type_ok
from kschedctl.model.filters.quantity import QuantityError, parse_quantity

# 20,000 pods take about 20 MB of YAML; a few times that leaves room for labels and affinity
# without letting /dev/zero-sized input in.
MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024
_HINT = 'see docs/commands/troubleshooting.md, "kschedctl snapshot", for the snapshot format'

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
    return options, nullable, is_model(base), origin, args


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
    if is_model(tp):
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
    _check_storage(snap, out)
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


def _check_storage(snap: ClusterSnapshot, out: list[Problem]) -> None:
    """The storage objects' names (a lab creates them) and quantities."""
    kinds: tuple[tuple[str, Sequence[Any] | None], ...] = (
        ("persistentVolumeClaims", snap.persistent_volume_claims),
        ("persistentVolumes", snap.persistent_volumes),
        ("storageClasses", snap.storage_classes),
        ("csiDrivers", snap.csi_drivers),
        ("csiNodes", snap.csi_nodes),
        ("csiStorageCapacities", snap.csi_storage_capacities),
    )
    for key, items in kinds:
        for i, item in enumerate(items or []):
            where = f"spec.{key}[{i}]"
            if item.name:
                apinames.check_name(item.name, f"{where}.name", out, "subdomain")
            namespace = getattr(item, "namespace", "")
            if namespace:
                apinames.check_name(namespace, f"{where}.namespace", out, "label")
    for i, pvc in enumerate(snap.persistent_volume_claims or []):
        _check_quantities(pvc.requests, f"spec.persistentVolumeClaims[{i}].requests", out)
    for i, pv in enumerate(snap.persistent_volumes or []):
        _check_quantities(pv.capacity, f"spec.persistentVolumes[{i}].capacity", out)
        apinames.check_labels(pv.labels, f"spec.persistentVolumes[{i}].labels", out)
    for i, cap in enumerate(snap.csi_storage_capacities or []):
        sizes = {"capacity": cap.capacity, "maximumVolumeSize": cap.maximum_volume_size}
        _check_quantities({k: v for k, v in sizes.items() if v},
                          f"spec.csiStorageCapacities[{i}]", out)  # fmt: skip


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
