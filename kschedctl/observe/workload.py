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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kschedctl.base import limits
from kschedctl.base.errors import NotFoundError, Problem, SpecError, missing_file, printable, quote
from kschedctl.base.userfile import read_user_file
from kschedctl.model.config import apinames
from kschedctl.model.config.schema import YamlError, parse_yaml

CONTROLLERS = ("Deployment", "ReplicaSet", "StatefulSet", "Job")
KINDS = ("Pod", *CONTROLLERS)
# Containers run nowhere in the lab: every container gets this image, so no image of the
# cluster is ever pulled and the lab runner never mistakes a pod for a scheduler to run.
PLACEHOLDER_IMAGE = "registry.k8s.io/pause:3.10"
_HINT = "a workload file holds Pods, Deployments, ReplicaSets, StatefulSets or Jobs"


def _fail(source: str, path: str, message: str) -> SpecError:
    return SpecError(path, message, hint=_HINT, source=source)


def load_workload(
    path: str | Path, default_namespace: str = "default", budget: limits.Budget | None = None
) -> list[dict[str, Any]]:
    """The pods of a workload file, in file order; every problem names its document.

    Every object's pod count is added to ``budget`` (default: :data:`limits.MAX_PODS`) before
    any pod is built, so ``replicas: 1000000000`` is refused at once."""
    source = str(path)
    try:
        docs = parse_yaml(read_user_file(path, max_bytes=64 * 1024 * 1024))
    except NotFoundError as err:
        raise missing_file(f"workload file {printable(source)} does not exist") from err
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
    budget = budget or limits.pod_budget()
    checked = []
    for at, obj in objects:
        one = _checked(obj, at, source, default_namespace)
        budget.take(one.count, one.count_path, source, hint=_LIMIT_HINT)
        checked.append(one)
    pods = [pod for one in checked for pod in one.pods()]
    names = set()
    for pod in pods:
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        if key in names:
            raise _fail(source, "", f"two pods named {quote('/'.join(key))}")
        names.add(key)
    return pods


_LIMIT_HINT = "simulate a smaller workload: fewer replicas, or a sample of the pods"


def _count(spec: Mapping[str, Any], key: str, at: str, source: str) -> int:
    value = spec.get(key, 1)
    if value is None:
        return 1
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _fail(
            source, f"{at}.spec.{key}", f"must be a non-negative integer, not {quote(value)}"
        )
    return value


@dataclass(frozen=True)
class _Object:
    """One workload object, checked, not yet expanded: what its pods are made of."""

    name: str
    namespace: str
    meta: Mapping[str, Any]  # the pod template's (a Pod's own)
    spec: Mapping[str, Any]
    count: int
    count_path: str  # the field the count comes from
    controller: bool

    def pods(self) -> list[dict[str, Any]]:
        if not self.controller:
            return [_pod(self.name, self.namespace, self.meta, self.spec)]
        return [
            _pod(f"{self.name}-{i}", self.namespace, self.meta, self.spec)
            for i in range(self.count)
        ]


def _checked(obj: Any, at: str, source: str, default_namespace: str) -> _Object:
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
        _check_names(meta["name"], namespace, at, source)
        _check_pod(meta, spec, at, source)
        return _Object(meta["name"], namespace, meta, spec, 1, at, controller=False)
    template = spec.get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        raise _fail(source, f"{at}.spec.template.spec", "is required")
    key = "parallelism" if kind == "Job" else "replicas"
    count = _count(spec, key, at, source)
    if kind == "Job" and spec.get("completions") is not None:
        completions = _count(spec, "completions", at, source)
        if completions < count:
            key, count = "completions", completions
    tmeta = template.get("metadata") or {}
    if not isinstance(tmeta, dict):
        raise _fail(source, f"{at}.spec.template.metadata", "must be a mapping")
    # its pods are NAME-0 … NAME-<count-1>: the longest must still be a pod name
    _check_names(f"{meta['name']}-{max(count - 1, 0)}", namespace, at, source)
    _check_pod(tmeta, template["spec"], f"{at}.spec.template", source)
    return _Object(
        meta["name"], namespace, tmeta, template["spec"], count, f"{at}.spec.{key}", True
    )


def _check_names(pod_name: str, namespace: Any, at: str, source: str) -> None:
    out: list[Problem] = []
    apinames.check_name(pod_name, f"{at}.metadata.name", out)
    apinames.check_name(namespace, f"{at}.metadata.namespace", out, "label")
    if out:
        raise SpecError.from_problems([p.moved(source=source) for p in out], hint=_HINT)


def _check_pod(meta: Mapping[str, Any], spec: Mapping[str, Any], at: str, source: str) -> None:
    """What the API server would refuse in the lab, refused before it starts."""
    if not isinstance(spec.get("containers"), list) or not spec["containers"]:
        raise _fail(source, f"{at}.spec.containers", "must list at least one container")
    out: list[Problem] = []
    apinames.check_labels(meta.get("labels") or {}, f"{at}.metadata.labels", out)
    apinames.check_keys(meta.get("annotations") or {}, f"{at}.metadata.annotations", out)
    if out:
        raise SpecError.from_problems([p.moved(source=source) for p in out], hint=_HINT)


def _pod(
    name: str, namespace: str, meta: Mapping[str, Any], spec: Mapping[str, Any]
) -> dict[str, Any]:
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
    "schedulingGates", "runtimeClassName", "os", "nodeName", "resourceClaims",
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
    """The object the simulation creates for ``pod``: its scheduling fields only (of its
    volumes, the claims), containers on a placeholder image, ``schedulerName`` set to
    ``scheduler_name`` (None: kept, for pinned pods with ``spec.nodeName``). ``priority`` is
    dropped when a ``priorityClassName`` names it (the API server's Priority admission refuses
    a pod that gives both and disagrees)."""
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
    # the volumes scheduling reads: claims (VolumeBinding, ReadWriteOncePod, zones, limits)
    claims = [copy.deepcopy(v) for v in spec.get("volumes") or [] if isinstance(v, dict)
              and ("persistentVolumeClaim" in v or "ephemeral" in v)]  # fmt: skip
    if claims:
        kept["volumes"] = claims
    kept["automountServiceAccountToken"] = False
    kept["terminationGracePeriodSeconds"] = 0
    kept["enableServiceLinks"] = False
    if scheduler_name is not None:
        kept["schedulerName"] = scheduler_name
        kept.pop("nodeName", None)
    elif spec.get("schedulerName"):
        kept["schedulerName"] = spec["schedulerName"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": kept}
