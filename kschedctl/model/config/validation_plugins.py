"""KubeSchedulerConfiguration rules for a profile's plugins (``validation.go``
validateKubeSchedulerProfile's plugin part and validateCommonQueueSort): removed plugins,
strict shapes of each extension point and pluginConfig entry, and each in-tree plugin's args
(:mod:`.plugin_args`). The entry point is :mod:`.validation`.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from kschedctl.base.errors import WARNING, Problem, quote
from kschedctl.model.config.plugin_args import PLUGIN_ARGS, check_args
from kschedctl.model.config.schema import GO_INT32, check_fields, check_list
from kschedctl.model.config.versions import (
    CONFIG_API_VERSION,
    KubeVersion,
    extension_points,
    removed_plugins,
)

__all__ = ["check_common_queue_sort", "check_plugin_config", "check_plugins", "not_built"]

PLUGIN_SET = {"enabled": list, "disabled": list}
PLUGIN = {"name": str, "weight": GO_INT32}
PLUGIN_CONFIG = {"name": str, "args": dict}


def _queue_sort(profile: Any) -> tuple[Any, Any]:
    """A profile's queueSort plugin set, and the args of its first enabled plugin."""
    plugins = profile.get("plugins") if isinstance(profile, dict) else None
    qs = plugins.get("queueSort") if isinstance(plugins, dict) else None
    qs = qs if isinstance(qs, dict) else {}
    enabled = qs.get("enabled") if isinstance(qs.get("enabled"), list) else []
    first = enabled[0].get("name") if enabled and isinstance(enabled[0], dict) else None
    configs = profile.get("pluginConfig") if isinstance(profile, dict) else None
    args = [
        c.get("args")
        for c in (configs if isinstance(configs, list) else [])
        if isinstance(c, dict) and first and c.get("name") == first
    ]
    # Compared as decoded Go structs (reflect.DeepEqual): an empty set and an absent one are
    # the same PluginSet, and a null item, a null name or weight are Plugin's zero values.
    canon = {
        k: [_plugin_value(e) for e in v] if isinstance(v, list) else v
        for k, v in qs.items()
        if v not in (None, [])
    }
    return canon, (args[0] if args else None)


def _plugin_value(entry: Any) -> Any:
    """A config.Plugin as Go holds it: name "" and weight 0 when null or absent."""
    if entry is None:
        entry = {}
    if not isinstance(entry, dict):
        return entry
    return {
        "name": entry.get("name") or "",
        "weight": entry.get("weight") or 0,
        **{k: v for k, v in entry.items() if k not in ("name", "weight")},
    }


def check_common_queue_sort(profiles: list[Any], path: str, out: list[Problem]) -> None:
    """validation.go validateCommonQueueSort: one queue, so one queueSort for all profiles."""
    if not profiles:
        return
    canon, canon_args = _queue_sort(profiles[0])
    enabled = canon.get("enabled") or []
    if len(enabled) > 1:
        out.append(
            Problem(
                f"{path}[0].plugins.queueSort.Enabled",
                f"{len(enabled)}: only one queue sort plugin can be enabled",
            )
        )
    first = enabled[0].get("name") if enabled and isinstance(enabled[0], dict) else None
    for i in range(1, len(profiles)):
        current, _ = _queue_sort(profiles[i])
        if current != canon:
            out.append(
                Problem(
                    f"{path}[{i}].plugins.queueSort",
                    "must be the same for all profiles (one kube-scheduler has one queue)",
                )
            )
        configs = profiles[i].get("pluginConfig") if isinstance(profiles[i], dict) else None
        for cfg in configs if isinstance(configs, list) else []:
            if isinstance(cfg, dict) and first and cfg.get("name") == first:
                if cfg.get("args") != canon_args:
                    out.append(
                        Problem(
                            f"{path}[{i}].pluginConfig.args",
                            "queueSort must be the same for all profiles",
                        )
                    )


def _removed_message(name: str, version: KubeVersion) -> str:
    if name == "SelectorSpread":
        return (
            f"plugin 'SelectorSpread' does not exist in {CONFIG_API_VERSION} (removed when v1 "
            "went GA in 1.25): use PodTopologySpread"
        )
    return (
        f"plugin {quote(name)} was invalid in version {CONFIG_API_VERSION} for Kubernetes "
        f"{version.minor_version} (removed; NodeVolumeLimits covers it)"
    )


def check_plugins(raw: Any, version: KubeVersion, path: str, out: list[Problem]) -> dict[str, Any]:
    points = extension_points(version)
    plugins = check_fields(raw, dict.fromkeys(points, dict), path, out)
    removed = removed_plugins(version)
    for point in points:
        pset = check_fields(plugins.get(point), PLUGIN_SET, f"{path}.{point}", out)
        for kind in ("enabled", "disabled"):
            for j, entry in enumerate(check_list(pset.get(kind), f"{path}.{point}.{kind}", out)):
                epath = f"{path}.{point}.{kind}[{j}]"
                plugin = check_fields(entry, PLUGIN, epath, out)
                # An empty name is no error of validation.go: an enabled one is a plugin that
                # does not exist (build_profiles), a disabled one disables nothing.
                # validation.go reads every point but multiPoint (build_profiles reports that).
                if kind == "enabled" and point != "multiPoint" and plugin.get("name") in removed:
                    out.append(Problem(f"{epath}.name", _removed_message(plugin["name"], version)))
    return plugins


def not_built(profile: dict[str, Any]) -> Container[str]:
    """Plugins this profile disables in multiPoint and enables nowhere: kube-scheduler never
    builds them (v1's defaults are all multiPoint ones, so this removes a default plugin)."""
    plugins = profile.get("plugins")
    plugins = plugins if isinstance(plugins, dict) else {}
    enabled: set[str] = set()
    for pset in plugins.values():
        entries = pset.get("enabled") if isinstance(pset, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                enabled.add(entry["name"])
    multi = plugins.get("multiPoint")
    entries = multi.get("disabled") if isinstance(multi, dict) else None
    disabled = {
        e["name"]
        for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    if "*" in disabled:
        return _AllBut(frozenset(enabled))
    return disabled - enabled


@dataclass(frozen=True)
class _AllBut:
    """Every plugin name except ``enabled`` (multiPoint disabled '*')."""

    enabled: frozenset[str]

    def __contains__(self, name: object) -> bool:
        return name not in self.enabled


# Plugins whose args kube-scheduler checks only when it builds the plugin (its New), not in
# validation.go: args of such a plugin that is not built are never checked.
_CHECKED_WHEN_BUILT = frozenset({"NodeResourcesFit"})


def check_plugin_config(
    raw: Any, version: KubeVersion, path: str, not_built: Container[str], out: list[Problem]
) -> list[dict[str, Any]]:
    entries = []
    seen: set[str] = set()
    removed = removed_plugins(version)
    for i, entry in enumerate(check_list(raw, path, out)):
        epath = f"{path}[{i}]"
        cfg = check_fields(entry, PLUGIN_CONFIG, epath, out)
        if not isinstance(entry, dict):
            continue
        entries.append(cfg)
        name = cfg.get("name")
        if not name:
            # kube-scheduler accepts it (nothing looks the entry up): it has no effect.
            out.append(
                Problem(
                    f"{epath}.name", "is empty: these args apply to no plugin", severity=WARNING
                )
            )
            continue
        if name in seen:
            out.append(Problem(f"{epath}.name", f"Duplicate value: {quote(name)}"))
        seen.add(name)
        if name in removed:
            out.append(Problem(f"{epath}.name", _removed_message(name, version)))
        if name in not_built:
            out.append(
                Problem(
                    f"{epath}.name",
                    f"{quote(name)} is disabled in this profile (plugins.multiPoint.disabled) and "
                    "enabled nowhere: kube-scheduler never builds it, so these args have no "
                    "effect",
                    severity=WARNING,
                )
            )
        if isinstance(cfg.get("args"), dict) and name in PLUGIN_ARGS:
            if name in not_built and name in _CHECKED_WHEN_BUILT:
                fields = PLUGIN_ARGS[name].fields or {}
                schema = {"apiVersion": str, "kind": str, **fields}
                check_fields(cfg["args"], schema, f"{epath}.args", out)
            else:
                check_args(name, cfg["args"], f"{epath}.args", out, version.minor)
    return entries
