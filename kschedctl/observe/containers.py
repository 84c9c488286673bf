"""Scheduler containers (pure): recognising them in a pod spec and reading what they run.

A container runs a scheduler when it runs a kube-scheduler build (by image, command or
kschedctl's container name with ``--config``) or ``kschedctl scheduler run``. Its flags (with
``$(VAR)`` expanded as the kubelet does) and the ``--config`` file of a ConfigMap name the
profiles it serves and the Lease it holds (:class:`ConfigFacts`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kschedctl.model.config.schema import YamlError, parse_yaml
from kschedctl.model.config.versions import DEFAULT_LEASE_NAME, DEFAULT_SCHEDULER_NAME
from kschedctl.observe.schedulers import LEASE_SYSTEM_NAMESPACE, MIRROR_ANNOTATION


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


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


def container_argv(container: dict[str, Any]) -> list[str]:
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

    return [
        _VAR_REF.sub(expand, arg) if isinstance(arg, str) else arg
        for arg in container_argv(container)
    ]


def _flag(argv: list[str], name: str) -> str | None:
    for index, arg in enumerate(argv):
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
        if arg == f"--{name}" and index + 1 < len(argv):
            return argv[index + 1]
    return None


def config_source(pod_spec: dict[str, Any], container: dict[str, Any]) -> tuple[str, str] | None:
    """(ConfigMap name, key) holding the file ``--config`` points at, if it is a ConfigMap."""
    path = _flag(container_argv(container), "config")
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
