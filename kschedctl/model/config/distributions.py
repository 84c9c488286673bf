"""Custom kube-scheduler images (``spec.program: custom``): known distributions and their plugins.

Pure. A custom image is a kube-scheduler built with ``app.NewSchedulerCommand(app.WithPlugin(…))``
(k8s.io/kubernetes cmd/kube-scheduler/app): it reads the same KubeSchedulerConfiguration and
adds out-of-tree plugins. kschedctl knows one distribution, scheduler-plugins
(https://github.com/kubernetes-sigs/scheduler-plugins), release by release
(:mod:`kschedctl._generated.scheduler_plugins`, generated from its source by
``tools/gen_scheduler_plugins.py``); any other image names the plugins it adds in the spec.

What this module answers: which plugins (and extension points) an image adds
(:func:`plugins_for`), which releases register a plugin (:func:`distributions_with`, for the
hint when the vanilla image is asked for one), the extra RBAC the enabled plugins need
(:func:`plugin_rules`), and the args checks of a known release (:func:`check_plugin_args`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kschedctl._generated.scheduler_plugins import RELEASES as _SCHEDULER_PLUGINS_TABLE
from kschedctl.base.errors import Problem
from kschedctl.model.config.schema import NUMBER, type_name, type_ok, unknown_field_message
from kschedctl.model.config.shapes import image_repository, image_tag, shown

SCHEDULER_PLUGINS = "scheduler-plugins"
DISTRIBUTIONS = (SCHEDULER_PLUGINS,)
# Where the project publishes its scheduler image (its README and the Helm chart's values.yaml).
SCHEDULER_PLUGINS_IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler"
# An image of it under another registry (a mirror) keeps this path ending.
_SCHEDULER_PLUGINS_PATH = "scheduler-plugins/kube-scheduler"

# The extension points of a plugin, as kube-scheduler's framework names them (and as
# KubeSchedulerConfiguration's plugins.<point> fields do, lower camel case).
EXTENSION_POINTS = (
    "PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "PreScore", "Score",
    "Reserve", "Permit", "PreBind", "Bind", "PostBind",
)  # fmt: skip
POINT_FIELDS = {point[0].lower() + point[1:]: point for point in EXTENSION_POINTS}

# A release tag v0.X.Y of scheduler-plugins is built on Kubernetes 1.X (its go.mod requires
# k8s.io/kubernetes v1.X.*: checked for every release of the table by the unit tests).
_RELEASE_TAG = re.compile(r"v0\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class OutOfTreePlugin:
    """One out-of-tree plugin of a release."""

    name: str
    points: frozenset[str]
    args_kind: str | None = None
    args_fields: Mapping[str, str] | None = None
    """JSON field → kind ("int", "number", "str", "bool", "list", "dict", "any"); None when
    kschedctl cannot tell (the args are then not checked)."""
    non_negative: Mapping[str, str] = field(default_factory=dict)
    """Fields its args validation refuses below 0 → that validation's message."""
    rbac: tuple[Mapping[str, Any], ...] = ()
    """PolicyRules it needs beyond kube-scheduler's own (the custom resources it reads)."""


@dataclass(frozen=True)
class Release:
    """One release of a distribution: its image tag, Kubernetes release and plugins."""

    distribution: str
    tag: str
    kubernetes: str  # "1.33.5"
    binary: str  # the scheduler's path inside the image
    plugins: Mapping[str, OutOfTreePlugin]

    @property
    def minor(self) -> int:
        return int(self.kubernetes.split(".")[1])

    @property
    def image(self) -> str:
        return f"{SCHEDULER_PLUGINS_IMAGE}:{self.tag}"


def _release(tag: str, row: Mapping[str, Any]) -> Release:
    plugins = {
        name: OutOfTreePlugin(
            name=name,
            points=frozenset(facts["points"]),
            args_kind=facts["args"],
            args_fields=None
            if facts["argsFields"] is None
            else MappingProxyType(dict(facts["argsFields"])),
            non_negative=MappingProxyType(dict(facts["nonNegative"])),
            rbac=tuple(MappingProxyType(rule) for rule in facts["rbac"]),
        )
        for name, facts in row["plugins"].items()
    }
    return Release(
        distribution=SCHEDULER_PLUGINS,
        tag=tag,
        kubernetes=str(row["kubernetes"]).removeprefix("v"),
        binary=str(row["binary"]),
        plugins=MappingProxyType(plugins),
    )


RELEASES: Mapping[str, Release] = MappingProxyType(
    {tag: _release(tag, row) for tag, row in _SCHEDULER_PLUGINS_TABLE.items()}
)


def distribution_of_image(image: str) -> str:
    """The known distribution an image is (by its repository path), else ""."""
    repository = image_repository(image)
    if repository == _SCHEDULER_PLUGINS_PATH or repository.endswith("/" + _SCHEDULER_PLUGINS_PATH):
        return SCHEDULER_PLUGINS
    return ""


def release_kubernetes_minor(tag: str) -> int | None:
    """Kubernetes 1.X of a scheduler-plugins tag ``v0.X.Y`` (suffixes allowed), else None."""
    match = _RELEASE_TAG.match(tag)
    return int(match.group(1)) if match else None


def release_of(image: str, distribution: str = "") -> Release | None:
    """The known release ``image`` runs (``distribution`` "" → read from the image), or None."""
    if (distribution or distribution_of_image(image)) != SCHEDULER_PLUGINS:
        return None
    return RELEASES.get(image_tag(image))


def plugins_for(
    image: str, distribution: str = "", plugins: Sequence[Any] = ()
) -> Mapping[str, frozenset[str]]:
    """Plugin name → extension points of every out-of-tree plugin ``image`` adds: its known
    release's, and ``plugins`` (``spec.custom.plugins`` entries: name, extensionPoints)."""
    out: dict[str, frozenset[str]] = {}
    release = release_of(image, distribution)
    if release is not None:
        out.update((name, plugin.points) for name, plugin in release.plugins.items())
    for entry in plugins:
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            points = entry.get("extensionPoints") or []
            out[entry["name"]] = frozenset(p for p in points if isinstance(p, str))
    return MappingProxyType(out)


def distributions_with(plugin: str) -> list[str]:
    """The releases that register ``plugin``, oldest first (``scheduler-plugins v0.33.5``)."""
    return [
        f"{release.distribution} {release.tag}"
        for release in RELEASES.values()
        if plugin in release.plugins
    ]


def newest_release_with(plugin: str, minor: int | None = None) -> Release | None:
    """The newest release registering ``plugin`` (for Kubernetes 1.``minor`` if one does)."""
    having = [r for r in RELEASES.values() if plugin in r.plugins]
    fitting = [r for r in having if r.minor == minor] or having
    return fitting[-1] if fitting else None


def unknown_plugin_hint(plugin: str, minor: int | None = None) -> str:
    """What to say when the vanilla kube-scheduler is asked for ``plugin``: the distribution
    (and release) that registers it, or "" when no known one does."""
    release = newest_release_with(plugin, minor)
    if release is None:
        return ""
    return (
        f"{plugin} is an out-of-tree plugin of {release.distribution} (releases "
        f"{distributions_with(plugin)[0].split()[-1]}–{distributions_with(plugin)[-1].split()[-1]}"
        f"): use spec.program: custom, spec.image: {release.image}"
    )


def enabled_plugins(profiles: Iterable[Any]) -> set[str]:
    """The plugin names enabled at any extension point (or multiPoint) of ``profiles``."""
    names: set[str] = set()
    for profile in profiles:
        plugins = profile.get("plugins") if isinstance(profile, Mapping) else None
        if not isinstance(plugins, Mapping):
            continue
        for pset in plugins.values():
            enabled = pset.get("enabled") if isinstance(pset, Mapping) else None
            for entry in enabled if isinstance(enabled, list) else []:
                if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                    names.add(entry["name"])
    return names


def plugin_rules(
    enabled: Iterable[str], release: Release | None, plugins: Sequence[Any] = ()
) -> list[dict[str, Any]]:
    """The extra PolicyRules the ``enabled`` out-of-tree plugins need, each rule once, in a
    stable order: the known release's, then ``spec.custom.plugins``' own ``rbac``."""
    wanted = set(enabled)
    rules: list[dict[str, Any]] = []

    def add(rule: Mapping[str, Any]) -> None:
        plain = {key: list(value) for key, value in rule.items()}
        if plain not in rules:
            rules.append(plain)

    if release is not None:
        for name in sorted(wanted & set(release.plugins)):
            for rule in release.plugins[name].rbac:
                add(rule)
    for entry in plugins:
        if isinstance(entry, Mapping) and entry.get("name") in wanted:
            for rule in entry.get("rbac") or []:
                if isinstance(rule, Mapping):
                    add(rule)
    return rules


_KINDS: dict[str, Any] = {"int": int, "number": NUMBER, "str": str, "bool": bool, "list": list}
_KINDS["dict"] = dict


def check_plugin_args(plugin: OutOfTreePlugin, args: Any, path: str) -> list[Problem]:
    """The args of ``plugin`` as its release decodes (strictly) and validates them."""
    if not isinstance(args, Mapping) or plugin.args_fields is None:
        return []
    out: list[Problem] = []
    for key, value in args.items():
        if key in ("apiVersion", "kind"):
            continue
        fpath = f"{path}.{key}"
        kind = plugin.args_fields.get(str(key))
        if kind is None:
            message = unknown_field_message(str(key), list(plugin.args_fields))
            out.append(Problem(fpath, f"{message} of {plugin.args_kind}"))
            continue
        expected = _KINDS.get(kind)
        if expected is not None and value is not None and not type_ok(value, expected):
            out.append(Problem(fpath, f"must be {type_name(expected)}, not {shown(value)}"))
            continue
        if str(key) in plugin.non_negative and isinstance(value, int) and value < 0:
            out.append(
                Problem(
                    fpath,
                    f"{value}: {plugin.non_negative[str(key)]} "
                    f"({plugin.name} refuses a negative value)",
                )
            )
    return out
