"""The checks of the programs' own sections: ``program: custom`` (a known release or the plugins
the image adds) and ``program: builtin`` (kschedctl's own scheduler and its plugin files).
"""

from __future__ import annotations

import re
from typing import Any

from kschedctl.base.errors import Problem, quote
from kschedctl.model.config import distributions, shapes, versions
from kschedctl.model.config.schema import (
    check_fields,
)
from kschedctl.spec.model import (
    Spec,
    plugin_file,
)

_PLUGIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,62}")
_RULE_FIELDS = {"apiGroups": list, "resources": list, "verbs": list, "resourceNames": list}
_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
_RESOURCE = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[a-z0-9]([-a-z0-9]*[a-z0-9])?)?")


def check_custom(spec: Spec, version: versions.KubeVersion | None) -> list[Problem]:
    """``program: custom``: a known distribution release, or the plugins the image adds, and
    the args of the release's plugins (kschedctl.model.config.distributions)."""
    out: list[Problem] = []
    custom, path = spec.custom, "spec.custom"
    if custom.binary:
        problem = shapes.absolute_path_problem(custom.binary)
        if problem:
            out.append(Problem(f"{path}.binary", problem))
    release = spec.release
    if custom.distribution and custom.distribution not in distributions.DISTRIBUTIONS:
        out.append(
            Problem(
                f"{path}.distribution",
                f"{shapes.shown(custom.distribution)} is not a distribution kschedctl knows "
                f"({', '.join(distributions.DISTRIBUTIONS)}): leave it out and list the "
                "plugins the image adds in spec.custom.plugins",
            )
        )
    elif custom.distribution and release is None and spec.image:
        tag = shapes.image_tag(spec.image)
        known = list(distributions.RELEASES)
        out.append(
            Problem(
                "spec.image",
                f"{shapes.shown(tag or '(no tag)')} is not a {custom.distribution} release "
                f"kschedctl knows ({known[0]} … {known[-1]}): tag the image with its release, "
                "or leave spec.custom.distribution out and list its plugins in "
                "spec.custom.plugins",
            )
        )
    if release is not None and version is not None:
        if release.minor > version.minor or release.minor < version.minor - 1:
            out.append(
                Problem(
                    "spec.image",
                    f"{release.distribution} {release.tag} is built on Kubernetes "
                    f"{release.kubernetes}, which does not fit kubernetesVersion "
                    f"{spec.kubernetes_version}: the scheduler may be at most one minor older "
                    "than the API server, never newer (remove spec.kubernetesVersion to follow "
                    "the image)",
                )
            )
    out.extend(_check_custom_plugins(custom.plugins, f"{path}.plugins"))
    if release is not None:
        for i, profile in enumerate(spec.profiles):
            configs = profile.get("pluginConfig") if isinstance(profile, dict) else None
            for j, entry in enumerate(configs if isinstance(configs, list) else []):
                name = entry.get("name") if isinstance(entry, dict) else None
                plugin = release.plugins.get(name) if isinstance(name, str) else None
                if plugin is not None:
                    out.extend(
                        distributions.check_plugin_args(
                            plugin, entry.get("args"), f"spec.profiles[{i}].pluginConfig[{j}].args"
                        )
                    )
    return out


def _check_custom_plugins(plugins: list[Any], path: str) -> list[Problem]:
    out: list[Problem] = []
    seen: set[str] = set()
    for i, entry in enumerate(plugins):
        epath = f"{path}[{i}]"
        fields = check_fields(
            entry, {"name": str, "extensionPoints": list, "rbac": list}, epath, out
        )
        if not isinstance(entry, dict):
            continue
        name = fields.get("name")
        if not isinstance(name, str) or not _PLUGIN_NAME.fullmatch(name):
            said = "is required" if name in (None, "") else f"{quote(name)} is not a plugin name"
            out.append(
                Problem(
                    f"{epath}.name",
                    f"{said}: the plugin's registered name (a letter, then letters, digits, "
                    "'.', '_' or '-', at most 63)",
                )
            )
        elif name in seen:
            out.append(Problem(f"{epath}.name", f"{name} is listed twice"))
        else:
            seen.add(name)
        points = fields.get("extensionPoints")
        if not points:
            out.append(
                Problem(
                    f"{epath}.extensionPoints",
                    "is required: the extension points the plugin implements "
                    f"({', '.join(distributions.EXTENSION_POINTS)})",
                )
            )
        for j, point in enumerate(points or []):
            if point not in distributions.EXTENSION_POINTS:
                out.append(
                    Problem(
                        f"{epath}.extensionPoints[{j}]",
                        f"{shapes.shown(point)}: must be one of "
                        f"{', '.join(distributions.EXTENSION_POINTS)}",
                    )
                )
        for j, rule in enumerate(fields.get("rbac") or []):
            out.extend(_check_rule(rule, f"{epath}.rbac[{j}]"))
    return out


def _check_rule(rule: Any, path: str) -> list[Problem]:
    """A PolicyRule a custom plugin needs: named groups, resources and verbs, no wildcard."""
    out: list[Problem] = []
    fields = check_fields(rule, _RULE_FIELDS, path, out)
    for key in ("apiGroups", "resources", "verbs"):
        if not fields.get(key) and isinstance(rule, dict):
            out.append(Problem(f"{path}.{key}", "is required (wildcards are not granted)"))
    for key, values in fields.items():
        for k, value in enumerate(values if isinstance(values, list) else []):
            vpath = f"{path}.{key}[{k}]"
            if not isinstance(value, str):
                out.append(Problem(vpath, f"must be a string, not {shapes.shown(value)}"))
            elif key == "verbs" and value not in _VERBS:
                out.append(
                    Problem(vpath, f"{shapes.shown(value)}: must be one of {', '.join(_VERBS)}")
                )
            elif key == "resources" and not _RESOURCE.fullmatch(value):
                out.append(
                    Problem(
                        vpath,
                        f"{shapes.shown(value)} is not a resource (e.g. podgroups/status)",
                    )
                )
            elif key == "apiGroups" and value and (problem := shapes.dns_subdomain_problem(value)):
                out.append(Problem(vpath, f"API group {problem}"))
            elif key == "resourceNames" and (problem := shapes.dns_subdomain_problem(value)):
                out.append(Problem(vpath, f"resource name {problem}"))
    return out


def check_builtin(spec: Spec) -> list[Problem]:
    """kschedctl's own scheduler: one name, its own algorithm, a valid fallback policy."""
    # scheduling loads the filters: only for program: builtin specs
    from kschedctl.base.errors import PolicyError
    from kschedctl.model.scheduling.policyload import parse_policy
    from kschedctl.model.scheduling.strategies import STRATEGIES

    out: list[Problem] = []
    b, path = spec.builtin, "spec.builtin"
    if b.strategy not in STRATEGIES:
        out.append(
            Problem(f"{path}.strategy", f"{b.strategy!r}: must be {' or '.join(STRATEGIES)}")
        )
    if spec.image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0] == "kube-scheduler":
        out.append(
            Problem(
                "spec.image",
                f"{spec.image} is kube-scheduler; program builtin runs kschedctl's image "
                "(built from the repository's Dockerfile)",
            )
        )
    if not 1 <= b.metrics_port <= 65535:
        out.append(Problem(f"{path}.metricsPort", f"{b.metrics_port} is not a port number"))
    try:
        parse_policy(b.policy, "", type_meta=False)
    except PolicyError as err:
        out.extend(p.moved(f"{path}.policy.{p.path}".rstrip("."), "") for p in err.problems)
    out.extend(_check_plugins(b.plugins, f"{path}.plugins"))
    profiles = [p for p in spec.profiles if isinstance(p, dict)]
    if len(profiles) != 1:
        out.append(
            Problem(
                "spec.profiles",
                "program builtin serves exactly one scheduler name (metadata.name); "
                "use one profile, or kube-scheduler for several",
            )
        )
    for i, profile in enumerate(profiles):
        for key in ("plugins", "pluginConfig"):
            if profile.get(key):
                out.append(
                    Problem(
                        f"spec.profiles[{i}].{key}",
                        "kube-scheduler plugins do not apply to program builtin: it filters "
                        "like kube-scheduler's defaults and scores with spec.builtin.strategy",
                    )
                )
    for key, value in (("parallelism", spec.parallelism), ("extenders", spec.extenders)):
        if value:
            out.append(Problem(f"spec.{key}", "does not apply to program builtin"))
    return out


def _check_plugins(plugins: list[Any], path: str) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(plugins):
        problem = shapes.plugin_path_problem(entry)
        if problem:
            out.append(Problem(f"{path}[{i}]", problem))
            continue
        file = plugin_file(entry)
        if file in seen:
            out.append(
                Problem(
                    f"{path}[{i}]",
                    f"{shapes.shown(entry)}: the file name {file} is taken by {path}"
                    f"[{seen[file]}]; plugins are installed side by side under their file "
                    "names (and imported as modules of that name): rename one",
                )
            )
        else:
            seen[file] = i
    return out
