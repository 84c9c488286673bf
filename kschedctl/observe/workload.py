"""`kschedctl simulate --workload FILE` (pure): the pods a workload file stands for, and the
objects the simulation creates in its lab.

A workload file holds Pods, Deployments, ReplicaSets, StatefulSets and Jobs (YAML documents,
or a ``kind: List``). Each controller becomes the pods its controller would create, named
``<name>-<index>`` (no controller runs in the simulation: the scheduler sees the same pods
every run): ``replicas`` pods for Deployments, ReplicaSets and StatefulSets (default 1),
``parallelism`` pods for a Job (default 1, at most ``completions``) — the pods a Job runs at
once, as the Job controller creates them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kschedctl.config.schema import YamlError, parse_yaml
from kschedctl.config.userfile import read_user_file
from kschedctl.errors import NotFoundError, SpecError, printable, quote

CONTROLLERS = ("Deployment", "ReplicaSet", "StatefulSet", "Job")
KINDS = ("Pod", *CONTROLLERS)
MAX_PODS = 100_000  # pods one workload file may expand to
# Containers run nowhere in the lab: every container gets this image, so no image of the
# cluster is ever pulled and the lab runner never mistakes a pod for a scheduler to run.
PLACEHOLDER_IMAGE = "registry.k8s.io/pause:3.10"
_HINT = "a workload file holds Pods, Deployments, ReplicaSets, StatefulSets or Jobs"


def _fail(source: str, path: str, message: str) -> SpecError:
    return SpecError(path, message, hint=_HINT, source=source)


def load_workload(path: str | Path, default_namespace: str = "default") -> list[dict[str, Any]]:
    """The pods of a workload file, in file order; every problem names its document."""
    source = str(path)
    try:
        docs = parse_yaml(read_user_file(path, max_bytes=64 * 1024 * 1024))
    except NotFoundError as err:
        raise NotFoundError(f"workload file {printable(source)} does not exist") from err
    except YamlError as err:
        raise SpecError("", f"not valid YAML: {err}", source=source) from err
    objects: list[tuple[str, Any]] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        if isinstance(doc, dict) and doc.get("kind") == "List":
            items = doc.get("items")
            if not isinstance(items, list):
                raise _fail(source, f"[{i}].items", "a List must have a list of items")
            objects.extend((f"[{i}].items[{j}]", item) for j, item in enumerate(items))
        else:
            objects.append((f"[{i}]", doc))
    pods: list[dict[str, Any]] = []
    for at, obj in objects:
        pods.extend(expand(obj, at, source, default_namespace))
        if len(pods) > MAX_PODS:
            raise _fail(source, at, f"expands to more than {MAX_PODS} pods")
    names = set()
    for pod in pods:
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        if key in names:
            raise _fail(source, "", f"two pods named {quote('/'.join(key))}")
        names.add(key)
    return pods


def _count(spec: Mapping[str, Any], key: str, at: str, source: str) -> int:
    value = spec.get(key, 1)
    if value is None:
        return 1
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _fail(
            source, f"{at}.spec.{key}", f"must be a non-negative integer, not {quote(value)}"
        )
    return value


def expand(obj: Any, at: str, source: str, default_namespace: str) -> list[dict[str, Any]]:
    """The pods one workload object stands for."""
    if not isinstance(obj, dict):
        raise _fail(source, at, "must be a Kubernetes object (a mapping)")
    kind = obj.get("kind")
    if kind not in KINDS:
        raise _fail(source, f"{at}.kind", f"{quote(kind)} is not one of {', '.join(KINDS)}")
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise _fail(source, f"{at}.metadata.name", "is required")
    namespace = meta.get("namespace") or default_namespace
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        raise _fail(source, f"{at}.spec", "is required")
    if kind == "Pod":
        return [_pod(meta["name"], namespace, dict(meta), spec, at, source)]
    template = spec.get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        raise _fail(source, f"{at}.spec.template.spec", "is required")
    if kind == "Job":
        count = _count(spec, "parallelism", at, source)
        if spec.get("completions") is not None:
            count = min(count, _count(spec, "completions", at, source))
    else:
        count = _count(spec, "replicas", at, source)
    tmeta = dict(template.get("metadata") or {})
    return [
        _pod(
            f"{meta['name']}-{i}", namespace, tmeta, template["spec"], f"{at}.spec.template", source
        )
        for i in range(count)
    ]


def _pod(
    name: str,
    namespace: str,
    meta: Mapping[str, Any],
    spec: Mapping[str, Any],
    at: str,
    source: str,
) -> dict[str, Any]:
    if not isinstance(spec.get("containers"), list) or not spec["containers"]:
        raise _fail(source, f"{at}.spec.containers", "must list at least one container")
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    for key in ("labels", "annotations"):
        if meta.get(key):
            metadata[key] = copy.deepcopy(meta[key])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": copy.deepcopy(spec)}


# What of a pod spec reaches the lab: everything a scheduler reads, nothing that would make the
# API server refuse the pod in another cluster (volumes of missing objects, service accounts)
# or make the lab runner run it.
_SPEC_KEYS = (
    "nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "priority",
    "priorityClassName", "preemptionPolicy", "overhead", "resources", "hostNetwork",
    "schedulingGates", "runtimeClassName", "os", "nodeName",
)  # fmt: skip
_CONTAINER_KEYS = ("name", "resources", "ports", "restartPolicy")


def _containers(containers: Any) -> list[dict[str, Any]]:
    out = []
    for i, container in enumerate(containers or []):
        if not isinstance(container, dict):
            continue
        kept = {k: copy.deepcopy(container[k]) for k in _CONTAINER_KEYS if k in container}
        kept.setdefault("name", f"c{i}")
        kept["image"] = PLACEHOLDER_IMAGE
        out.append(kept)
    return out


def lab_pod(pod: Mapping[str, Any], scheduler_name: str | None) -> dict[str, Any]:
    """The object the simulation creates for ``pod``: its scheduling fields only, containers on
    a placeholder image, ``schedulerName`` set to ``scheduler_name`` (None: kept, for pinned
    pods with ``spec.nodeName``). ``priority`` is dropped when a ``priorityClassName`` names
    it (the API server's Priority admission refuses a pod that gives both and disagrees)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    metadata: dict[str, Any] = {
        "name": meta["name"],
        "namespace": meta.get("namespace") or "default",
    }
    for key in ("labels", "annotations"):
        if meta.get(key):
            metadata[key] = dict(meta[key])
    kept: dict[str, Any] = {k: copy.deepcopy(spec[k]) for k in _SPEC_KEYS if k in spec}
    if kept.get("priorityClassName"):
        kept.pop("priority", None)
    elif "priority" in kept:
        kept.pop("priority")  # the Priority admission sets it from the default class
    kept["containers"] = _containers(spec.get("containers")) or [
        {"name": "c0", "image": PLACEHOLDER_IMAGE}
    ]
    if spec.get("initContainers"):
        kept["initContainers"] = _containers(spec["initContainers"])
    kept["automountServiceAccountToken"] = False
    kept["terminationGracePeriodSeconds"] = 0
    kept["enableServiceLinks"] = False
    if scheduler_name is not None:
        kept["schedulerName"] = scheduler_name
        kept.pop("nodeName", None)
    elif spec.get("schedulerName"):
        kept["schedulerName"] = spec["schedulerName"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": kept}
