"""What a kubelet computes before it starts a container, as pure functions.

Environment (``envFrom`` then ``env``, with ``$(VAR)`` references), the hostname, and the
mapping of container paths to the lab directory where volumes were materialised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

# (kind, namespace, name) -> the object's data as str -> str, or None if it does not exist.
Lookup = Callable[[str, str, str], "dict[str, str] | None"]


class ContainerConfigError(Exception):
    """What a kubelet reports as CreateContainerConfigError (missing ConfigMap key, …)."""


def pod_hostname(pod: Mapping[str, Any]) -> str:
    """The hostname the pod's processes see, as on a real node.

    A hostNetwork pod shares the node's UTS namespace: the node's name (so a static
    kube-scheduler's leader identity is ``<node>_<uuid>``). Others get ``spec.hostname`` or
    the pod name, cut to 63 characters the way kubelet does.
    """
    spec = pod.get("spec") or {}
    if spec.get("hostNetwork") and spec.get("nodeName"):
        return str(spec["nodeName"])
    name = spec.get("hostname") or pod["metadata"]["name"]
    return str(name)[:63].rstrip("-.")


def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion: known names are replaced, ``$$`` escapes, rest kept."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end != -1:
                    name = text[i + 2 : end]
                    out.append(env[name] if name in env else text[i : end + 1])
                    i = end + 1
                    continue
        out.append(text[i])
        i += 1
    return "".join(out)


def field_value(pod: Mapping[str, Any], path: str) -> str:
    """The value of a downward-API ``fieldRef.fieldPath``."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    for prefix, source in (("metadata.labels", "labels"), ("metadata.annotations", "annotations")):
        if path == prefix:
            items = sorted((meta.get(source) or {}).items())
            return "\n".join(f'{k}="{v}"' for k, v in items)
        if path.startswith(prefix + "['") and path.endswith("']"):
            return str((meta.get(source) or {}).get(path[len(prefix) + 2 : -2], ""))
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.hostIP": status.get("hostIP"),
        "status.podIP": status.get("podIP"),
        "status.hostIPs": ",".join(i["ip"] for i in status.get("hostIPs") or []),
        "status.podIPs": ",".join(i["ip"] for i in status.get("podIPs") or []),
    }
    if path not in simple:
        raise ContainerConfigError(f"unsupported fieldRef {path!r}")
    return str(simple[path] or "")


def _source(lookup: Lookup, kind: str, namespace: str, name: str, optional: bool) -> dict[str, str]:
    data = lookup(kind, namespace, name)
    if data is None:
        if optional:
            return {}
        raise ContainerConfigError(f'{kind.lower()} "{name}" not found')
    return data


def container_env(
    pod: Mapping[str, Any],
    container: Mapping[str, Any],
    lookup: Lookup,
    base: Mapping[str, str],
) -> dict[str, str]:
    """The container's environment: ``base`` (service variables), ``envFrom``, then ``env``."""
    namespace = pod["metadata"]["namespace"]
    env = dict(base)
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix", "")
        for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            ref = source.get(key)
            if ref:
                data = _source(lookup, kind, namespace, ref["name"], ref.get("optional", False))
                env.update({prefix + k: v for k, v in data.items()})
    for var in container.get("env") or []:
        name = var["name"]
        if "valueFrom" not in var:
            env[name] = expand(var.get("value", ""), env)
            continue
        value_from = var["valueFrom"]
        if "fieldRef" in value_from:
            env[name] = field_value(pod, value_from["fieldRef"]["fieldPath"])
            continue
        for kind, key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            ref = value_from.get(key)
            if not ref:
                continue
            optional = ref.get("optional", False)
            data = _source(lookup, kind, namespace, ref["name"], optional)
            if ref["key"] in data:
                env[name] = data[ref["key"]]
            elif not optional:
                raise ContainerConfigError(
                    f"couldn't find key {ref['key']} in {kind} {namespace}/{ref['name']}"
                )
            break
        else:
            raise ContainerConfigError(f"env {name}: unsupported valueFrom {sorted(value_from)}")
    return env


# -- paths --------------------------------------------------------------------------------------


def rewrite_path(value: str, mounts: Sequence[tuple[str, str]]) -> str:
    """``value`` with a leading container mount path replaced by its lab directory.

    ``mounts`` are (mountPath, host path) pairs; the longest mount path that is the value or a
    parent directory of it wins, as it would in the container's mount table.
    """
    for mount_path, host_path in sorted(mounts, key=lambda m: len(m[0]), reverse=True):
        base = mount_path.rstrip("/")
        if not base:
            continue  # a mount over "/" would capture every path; the lab never maps it
        if value == base:
            return host_path
        if value.startswith(base + "/"):
            return host_path + value[len(base) :]
    return value


def rewrite_arg(arg: str, mounts: Sequence[tuple[str, str]]) -> str:
    """An argument with its path rewritten: the value of ``--flag=PATH``, or the whole ``PATH``."""
    if arg.startswith("-") and "=" in arg:
        flag, value = arg.split("=", 1)
        return f"{flag}={rewrite_path(value, mounts)}"
    return rewrite_path(arg, mounts)


def flag_values(argv: Sequence[str], name: str) -> list[str]:
    """Values given to ``--name`` (``--name=V`` or ``--name V``), in order; pflag keeps the last."""
    values: list[str] = []
    flag = f"--{name}"
    for i, arg in enumerate(argv):
        if arg.startswith(flag + "="):
            values.append(arg[len(flag) + 1 :])
        elif arg == flag and i + 1 < len(argv):
            values.append(argv[i + 1])
    return values


def replace_flag(argv: Sequence[str], name: str, value: str) -> list[str]:
    """``argv`` with every value of ``--name`` replaced by ``value`` (both spellings)."""
    flag = f"--{name}"
    out: list[str] = []
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg.startswith(flag + "="):
            out.append(f"{flag}={value}")
        elif arg == flag and i + 1 < len(argv):
            out.append(f"{flag}={value}")
            skip = True
        else:
            out.append(arg)
    return out
