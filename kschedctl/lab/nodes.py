"""Simulated nodes: the default set and the ``--nodes-file`` format, as Node objects for kwok.

kwok manages every node annotated ``kwok.x-k8s.io/node: fake`` and keeps the capacity and
allocatable it was created with, so a node file gives each node a real shape.

Nodes file (YAML)::

    nodes:
    - name: big                # required, DNS-1123 subdomain; with count: big-1, big-2, ...
      count: 2                 # optional, default 1
      labels: {disktype: ssd}
      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
      capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}
      unschedulable: false
      devices:                 # optional: DRA devices the lab publishes as ResourceSlices
      - {driver: gpu.example.com, name: gpu, count: 4, attributes: {model: a100}}

(``devices``: see ``lab/devices.py``.)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kschedctl.base import limits
from kschedctl.base.errors import NotFoundError, Problem, SpecError, missing_file, printable, quote
from kschedctl.base.userfile import read_user_file
from kschedctl.model.config import apinames
from kschedctl.model.config.schema import YamlError, join, key_segment, parse_yaml

from .devices import DEVICES_ANNOTATION, check_devices, devices_annotation

DEFAULT_CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
KWOK_ANNOTATIONS = {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}
ZONES = ("zone-a", "zone-b")
BETA_LABELS = {"beta.kubernetes.io/os": "kubernetes.io/os",
               "beta.kubernetes.io/arch": "kubernetes.io/arch"}  # fmt: skip
MAX_COUNT = limits.MAX_NODES  # nodes in a file: 2,000 take about a minute to become Ready
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUANTITY = re.compile(r"^[+]?[0-9.]+([eE][-+]?[0-9]+|[numkMGTPE]i?|Ki)?$")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_NODE_KEYS = {"name", "count", "labels", "taints", "capacity", "unschedulable", "devices"}


def kwok_node(
    name: str,
    *,
    labels: Mapping[str, str],
    taints: Sequence[Mapping[str, Any]] = (),
    capacity: Mapping[str, str],
    allocatable: Mapping[str, str] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A Node kwok manages, with exactly these labels (no lab defaults added), taints,
    capacity and allocatable (kwok keeps the status it was created with)."""
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels), "annotations": dict(KWOK_ANNOTATIONS)},
        "spec": spec,
        "status": {
            "capacity": dict(capacity),
            "allocatable": dict(allocatable if allocatable is not None else capacity),
        },
    }


def lab_node(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    capacity: dict[str, str] | None = None,
    unschedulable: bool = False,
    zone: str | None = None,
    devices: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A kwok Node of the lab: the lab's labels (hostname, os, arch, ``type: kwok``, the zone)
    under ``labels``, :data:`DEFAULT_CAPACITY` unless ``capacity`` is given."""
    all_labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "type": "kwok",
    }
    if zone:
        all_labels["topology.kubernetes.io/zone"] = zone
    all_labels.update(labels or {})
    # The beta twins a kubelet registers too; without them the node lifecycle controller
    # adds them itself, a request per node that delays lifting the not-ready taint.
    for beta, stable in BETA_LABELS.items():
        all_labels.setdefault(beta, all_labels[stable])
    node = kwok_node(
        name,
        labels=all_labels,
        taints=taints or (),
        capacity=capacity or DEFAULT_CAPACITY,
        unschedulable=unschedulable,
    )
    if devices:
        node["metadata"]["annotations"][DEVICES_ANNOTATION] = devices_annotation(devices)
    return node


def default_nodes(count: int, prefix: str = "lab-node") -> list[dict[str, Any]]:
    return [
        lab_node(f"{prefix}-{i}", zone=ZONES[(i - 1) % len(ZONES)]) for i in range(1, count + 1)
    ]


def load_nodes_file(path: str | Path) -> list[dict[str, Any]]:
    """Node objects from a nodes file; every problem names its field."""
    source = str(path)
    try:
        docs = parse_yaml(read_user_file(path))
    except NotFoundError as err:
        raise missing_file(f"nodes file {printable(source)} does not exist") from err
    except YamlError as err:
        raise SpecError("", f"not valid YAML: {err}", source=source) from err
    if len(docs) > 1:
        raise SpecError("", f"expected one YAML document, found {len(docs)}", source=source)
    data = docs[0] if docs else None
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise SpecError("nodes", "must be a list of nodes", hint=_HINT, source=source)
    unknown = set(data) - {"nodes"}
    if unknown:
        raise SpecError(key_segment(sorted(unknown)[0]), "unknown field", hint=_HINT, source=source)
    budget = limits.node_budget()
    for index, entry in enumerate(data["nodes"]):  # counted before any node is built
        count = entry.get("count", 1) if isinstance(entry, dict) else 1
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            budget.take(count, f"nodes[{index}].count", source, _HINT)
    nodes: list[dict[str, Any]] = []
    for index, entry in enumerate(data["nodes"]):
        nodes.extend(_entry_nodes(entry, f"nodes[{index}]", source))
    counts = Counter(n["metadata"]["name"] for n in nodes)
    duplicates = sorted(name for name, seen in counts.items() if seen > 1)
    if duplicates:
        raise SpecError("nodes", f"duplicate node name {quote(duplicates[0])}", source=source)
    return nodes


_HINT = "see `kschedctl lab up --help` for the nodes file format"


def _entry_nodes(entry: Any, at: str, source: str) -> list[dict[str, Any]]:
    def fail(field: str, message: str) -> SpecError:
        return SpecError(f"{at}.{field}" if field else at, message, hint=_HINT, source=source)

    if not isinstance(entry, dict):
        raise fail("", "must be a mapping with at least a name")
    unknown = sorted(set(entry) - _NODE_KEYS)
    if unknown:
        raise fail(key_segment(unknown[0]), "unknown field")
    name = entry.get("name")
    if not isinstance(name, str) or not _DNS_SUBDOMAIN.match(name) or len(name) > 240:
        raise fail("name", f"{quote(name)} is not a valid node name (lowercase DNS-1123 subdomain)")
    count = entry.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COUNT:
        raise fail("count", f"must be an integer from 1 to {MAX_COUNT}, not {quote(count)}")
    labels = entry.get("labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(k, str) for k in labels):
        raise fail("labels", "must be a mapping of label keys to string values")
    labels = {k: str(v) for k, v in labels.items()}
    problems: list[Problem] = []
    apinames.check_labels(labels, f"{at}.labels", problems)
    taints = entry.get("taints") or []
    if not isinstance(taints, list):
        raise fail("taints", "must be a list of {key, value, effect}")
    for t_index, taint in enumerate(taints):
        if not isinstance(taint, dict) or not taint.get("key"):
            raise fail(f"taints[{t_index}].key", "is required")
        apinames.check_key(taint["key"], f"{at}.taints[{t_index}].key", problems, "taint key")
        if taint.get("value") is not None:
            where = f"{at}.taints[{t_index}].value"
            apinames.check_label_value(taint["value"], where, problems)
        if taint.get("effect") not in _EFFECTS:
            raise fail(f"taints[{t_index}].effect", f"must be one of {', '.join(_EFFECTS)}")
        if set(taint) - {"key", "value", "effect"}:
            raise fail(f"taints[{t_index}]", "only key, value and effect are allowed")
    capacity = entry.get("capacity")
    if capacity is not None:
        if not isinstance(capacity, dict):
            raise fail("capacity", "must be a mapping of resource names to quantities")
        for resource, quantity in capacity.items():
            if not _QUANTITY.match(str(quantity)):
                raise fail(join("capacity", resource), f"{quote(quantity)} is not a quantity")
        apinames.check_keys(capacity, f"{at}.capacity", problems, "resource name")
        capacity = {**DEFAULT_CAPACITY, **{k: str(v) for k, v in capacity.items()}}
    unschedulable = entry.get("unschedulable", False)
    if not isinstance(unschedulable, bool):
        raise fail("unschedulable", "must be true or false")
    devices = entry.get("devices")
    if devices is not None:
        check_devices(devices, fail)  # the annotation keeps the file's form; slices check again
    if problems:  # what the API server would refuse once the lab is up
        raise SpecError.from_problems([p.moved(source=source) for p in problems], hint=_HINT)
    names = [name] if count == 1 else [f"{name}-{i}" for i in range(1, count + 1)]
    return [
        lab_node(
            n,
            labels=labels,
            taints=[dict(t) for t in taints],
            capacity=capacity,
            unschedulable=unschedulable,
            zone=None if "topology.kubernetes.io/zone" in labels else ZONES[i % len(ZONES)],
            devices=devices,
        )
        for i, n in enumerate(names)
    ]
