"""The lab's DRA "driver": ResourceSlices (resource.k8s.io/v1) for kwok nodes, from the
``devices`` field of a nodes file.

A real DRA driver's kubelet plugin publishes one pool of devices per node; the lab has no
kubelet, so it publishes them itself when it creates the node. kube-scheduler allocates claims
from them and writes the allocation into the claim; kwok runs the pod like any other (the
devices are never prepared: nothing in the lab reads them).

Nodes file::

    devices:                      # per node of the entry
    - driver: gpu.example.com     # required: a DNS subdomain, the driver (and attribute domain)
      count: 4                    # devices of this kind: gpu-0 … gpu-3 (name: the prefix)
      name: gpu                   # optional device name prefix (default: "dev")
      attributes: {model: a100, cores: 8, ecc: true}   # string, int, bool; {version: 1.2.3}
      capacity: {memory: 40Gi}
      taints: [{key: gpu.example.com/health, value: broken, effect: NoSchedule}]
      consumesCounters: {gpu-0: {memory: 40Gi}}       # partitions of a shared counter set
      allowMultipleAllocations: true                  # shared by claims (consumable capacity)
    - driver: gpu.example.com     # an entry of counter sets only (partitionable devices)
      sharedCounters: {gpu-0: {memory: 80Gi}}

A driver with counter sets gets two slices in its pool (counters, devices: the API keeps them
apart); a device may consume only counters its driver's sets declare.

The node carries the list as the annotation ``lab.kschedctl.io/devices`` (JSON): the slices
are made from it, so a test can add such a node and its slices the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kschedctl.base.errors import Problem, SpecError, quote
from kschedctl.model.config import apinames
from kschedctl.model.filters.quantity import QuantityError, parse_quantity

__all__ = ["DEVICES_ANNOTATION", "check_devices", "node_resource_slices"]

DEVICES_ANNOTATION = "lab.kschedctl.io/devices"
MAX_DEVICES = 128  # resourceapi.ResourceSliceMaxDevices
MAX_ADVANCED = 64  # ResourceSliceMaxDevicesWithAdvancedFeatures: with taints or counters
_EFFECTS = ("NoSchedule", "NoExecute", "None")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_ATTRIBUTE = re.compile(r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-_A-Za-z0-9]{0,30}[A-Za-z0-9])?$")
_KEYS = {
    "driver",
    "count",
    "name",
    "attributes",
    "capacity",
    "taints",
    "consumesCounters",
    "allowMultipleAllocations",
}


def check_devices(devices: Any, fail: Any) -> list[dict[str, Any]]:
    """The ``devices`` field, checked (``fail(field, message)`` makes the SpecError)."""
    if not isinstance(devices, list):
        raise fail(
            "devices",
            "must be a list of {driver, count, name, attributes, capacity, taints, "
            "consumesCounters, allowMultipleAllocations} or {driver, sharedCounters}",
        )
    out: list[dict[str, Any]] = []
    total = 0
    counter_sets: dict[tuple[str, str], set[str]] = {}  # (driver, set) -> its counters
    for i, d in enumerate(devices):
        at = f"devices[{i}]"
        if not isinstance(d, dict):
            raise fail(at, "must be a mapping with at least a driver")
        keys = {"driver", "sharedCounters"} if "sharedCounters" in d else _KEYS
        unknown = sorted(set(d) - keys)
        if unknown:
            also = " beside sharedCounters" if "sharedCounters" in d else ""
            raise fail(f"{at}.{unknown[0]}", f"unknown field{also}")
        driver = d.get("driver")
        if not isinstance(driver, str) or not _SUBDOMAIN.match(driver) or len(driver) > 63:
            raise fail(f"{at}.driver", f"{quote(driver)} is not a driver name (DNS subdomain)")
        if "sharedCounters" in d:
            sets = _counters(d["sharedCounters"], f"{at}.sharedCounters", fail)
            for name, counters in sets.items():
                if (driver, name) in counter_sets:
                    raise fail(f"{at}.sharedCounters.{name}", "counter set declared twice")
                counter_sets[(driver, name)] = set(counters)
            out.append({"driver": driver, "sharedCounters": sets})
            continue
        count = d.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise fail(f"{at}.count", f"must be a positive integer, not {quote(count)}")
        total += count
        if total > MAX_DEVICES:
            raise fail(f"{at}.count", f"a node has at most {MAX_DEVICES} devices in the lab")
        prefix = d.get("name", "dev")
        if not isinstance(prefix, str) or not _LABEL.match(prefix) or len(prefix) > 50:
            raise fail(f"{at}.name", f"{quote(prefix)} is not a device name prefix (DNS label)")
        attributes = _attributes(d.get("attributes") or {}, f"{at}.attributes", fail)
        capacity = _capacity(d.get("capacity") or {}, f"{at}.capacity", fail)
        entry = {"driver": driver, "count": count, "name": prefix,
                 "attributes": attributes, "capacity": capacity}  # fmt: skip
        if d.get("taints"):
            entry["taints"] = _taints(d["taints"], f"{at}.taints", fail)
        if "allowMultipleAllocations" in d:
            if not isinstance(d["allowMultipleAllocations"], bool):
                raise fail(f"{at}.allowMultipleAllocations", "must be true or false")
            entry["allowMultipleAllocations"] = d["allowMultipleAllocations"]
        if d.get("consumesCounters"):
            at_use = f"{at}.consumesCounters"
            entry["consumesCounters"] = uses = _counters(d["consumesCounters"], at_use, fail)
            for name, counters in uses.items():
                known = counter_sets.get((driver, name))
                if known is None or set(counters) - known:
                    raise fail(
                        f"{at_use}.{name}",
                        f"names counters no earlier sharedCounters entry of {driver} declares",
                    )
        out.append(entry)
    advanced = sum(e.get("count", 0) for e in out if e.get("taints") or e.get("consumesCounters"))
    if advanced and total > MAX_ADVANCED:
        raise fail(
            "devices", f"a node with device taints or counters has at most {MAX_ADVANCED} devices"
        )
    return out


def _taints(raw: Any, at: str, fail: Any) -> list[dict[str, str]]:
    if not isinstance(raw, list) or len(raw) > 16:
        raise fail(at, "must be a list of at most 16 {key, value, effect}")
    out = []
    for i, t in enumerate(raw):
        where = f"{at}[{i}]"
        if not isinstance(t, dict) or set(t) - {"key", "value", "effect"}:
            raise fail(where, "must be a mapping of key, value (optional) and effect")
        key, value, effect = t.get("key"), t.get("value", ""), t.get("effect")
        problems: list[Problem] = []  # the API server's rules for node taints hold here too
        apinames.check_key(key, "key", problems, "taint key")
        apinames.check_label_value(value, "value", problems)
        if problems:
            raise fail(f"{where}.{problems[0].path}", problems[0].message)
        if effect not in _EFFECTS:
            raise fail(f"{where}.effect", f"{quote(effect)} is not one of {', '.join(_EFFECTS)}")
        out.append({"key": key, **({"value": value} if value else {}), "effect": effect})
    return out


def _counters(raw: Any, at: str, fail: Any) -> dict[str, dict[str, Any]]:
    """Counter set name -> counters ({name: quantity}), as the API's counter maps."""
    if not isinstance(raw, dict) or not raw:
        raise fail(at, "must map counter set names to {counter: quantity}")
    out: dict[str, dict[str, Any]] = {}
    for name, counters in raw.items():
        if not isinstance(name, str) or not _LABEL.match(name) or len(name) > 63:
            raise fail(f"{at}.{name}", "is not a counter set name (DNS label)")
        if not isinstance(counters, dict) or not counters:
            raise fail(f"{at}.{name}", "must map counter names to quantities")
        out[name] = _capacity(counters, f"{at}.{name}", fail)
    return out


def _attributes(raw: Any, at: str, fail: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise fail(at, "must be a mapping of attribute names to values")
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not _ATTRIBUTE.match(name):
            raise fail(f"{at}.{name}", "is not an attribute name (C identifier, optional domain)")
        if isinstance(value, bool):
            out[name] = {"bool": value}
        elif isinstance(value, int):
            out[name] = {"int": value}
        elif isinstance(value, str):
            out[name] = {"string": value}
        elif isinstance(value, dict) and set(value) == {"version"}:
            out[name] = {"version": str(value["version"])}
        else:
            raise fail(f"{at}.{name}", "must be a string, integer, boolean or {version: X.Y.Z}")
    return out


def _capacity(raw: Any, at: str, fail: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise fail(at, "must be a mapping of capacity names to quantities")
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not _ATTRIBUTE.match(name):
            raise fail(f"{at}.{name}", "is not a capacity name (C identifier, optional domain)")
        try:
            parse_quantity(str(value))
        except QuantityError as err:
            raise fail(f"{at}.{name}", f"{quote(value)} is not a quantity") from err
        out[name] = {"value": str(value)}
    return out


def node_resource_slices(node: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One ResourceSlice per driver for a node with the devices annotation, owned by the node
    (the garbage collector removes them with it). ``node`` is the created Node (its uid)."""
    md = node.get("metadata") or {}
    raw = (md.get("annotations") or {}).get(DEVICES_ANNOTATION)
    if not raw:
        return []
    try:
        devices = check_devices(json.loads(raw), _annotation_error)
    except json.JSONDecodeError as err:
        raise _annotation_error("", f"not JSON: {err}") from err
    by_driver: dict[str, list[dict[str, Any]]] = {}
    shared: dict[str, list[dict[str, Any]]] = {}
    for d in devices:
        if "sharedCounters" in d:
            sets = shared.setdefault(d["driver"], [])
            sets += [{"name": n, "counters": c} for n, c in d["sharedCounters"].items()]
            by_driver.setdefault(d["driver"], [])
            continue
        listed = by_driver.setdefault(d["driver"], [])
        for _ in range(d["count"]):
            index = sum(1 for x in listed if x["name"].startswith(f"{d['name']}-"))
            device: dict[str, Any] = {"name": f"{d['name']}-{index}"}
            if d["attributes"]:
                device["attributes"] = dict(d["attributes"])
            if d["capacity"]:
                device["capacity"] = dict(d["capacity"])
            if d.get("taints"):
                device["taints"] = [dict(t) for t in d["taints"]]
            if d.get("allowMultipleAllocations"):
                device["allowMultipleAllocations"] = True
            if d.get("consumesCounters"):
                device["consumesCounters"] = [
                    {"counterSet": n, "counters": dict(c)} for n, c in d["consumesCounters"].items()
                ]
            listed.append(device)
    name = md.get("name") or ""
    owner = {"apiVersion": "v1", "kind": "Node", "name": name, "uid": md.get("uid")}

    def one(slice_name: str, driver: str, count: int, content: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {
                "name": slice_name[:253],
                "ownerReferences": [owner] if md.get("uid") else [],
            },
            "spec": {
                "driver": driver,
                "nodeName": name,
                "pool": {"name": name, "generation": 1, "resourceSliceCount": count},
                **content,
            },
        }

    out = []
    for driver, listed in sorted(by_driver.items()):
        counter_sets = shared.get(driver)
        count = 2 if counter_sets else 1
        if counter_sets:
            content = {"sharedCounters": counter_sets}
            out.append(one(f"{name}-{driver}-counters", driver, count, content))
        out.append(one(f"{name}-{driver}", driver, count, {"devices": listed}))
    return out


def _annotation_error(field: str, message: str) -> SpecError:
    where = f"{DEVICES_ANNOTATION}" + (f".{field}" if field else "")
    return SpecError(where, message)


def devices_annotation(devices: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps(list(devices), sort_keys=True, separators=(",", ":"))
