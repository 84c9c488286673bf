"""Build each profile's plugin lists as kube-scheduler does, and report what it would refuse.

Pure. After decoding, defaulting and validation, kube-scheduler merges each profile's plugins
with the version's default plugins (``pkg/scheduler/apis/config/v1/default_plugins.go``
mergePlugins), then builds one framework per profile
(``pkg/scheduler/framework/runtime/framework.go`` NewFramework: updatePluginList for each
extension point, then expandMultiPointPlugins) and checks the profiles against each other
(``pkg/scheduler/profile/profile.go`` cfgValidator). Each of those refusals is reported here in
kube-scheduler's own words (read from v1.36.3; the same strings in every release since 1.25),
naming the field it comes from. The plugin facts come from :mod:`registry_data`, generated from
the Kubernetes source of each version by ``tools/gen_plugin_registry.py``.

kube-scheduler stops at the first refusal; this reports each one it would reach in turn (the
checks on the built lists, which make sense only once every plugin resolved, only then).

The score-weight check (framework.go getValidScoreWeights) is reproduced with Go's int64
wrap-around: weights are int32, so only a negative weight followed by another score plugin
trips it ("total score of Score plugins could overflow").

Not checked here, because nothing in a config can trip them: a plugin constructor's own
errors (each in-tree
``New`` either re-runs the args validation that validation.go already does, or fails on an
args type that decoding fixes, or on a missing informer/lister that kube-scheduler wires).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kschedctl._generated import registry_data
from kschedctl.base.errors import QUOTE_LIMIT, Problem
from kschedctl.model.config.distributions import unknown_plugin_hint
from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME, KubeVersion

__all__ = [
    "build_profiles",
    "default_plugins",
    "in_tree_plugins",
    "invalid_plugins",
    "missing_plugin_hint",
]

# In-tree plugins removed before 1.25 (the oldest source registry_data reads), with what replaced
# them: the names a config written for an old release still carries.
_REPLACED_BEFORE_DATA: dict[str, str] = {
    "NodeLabel": "use NodeAffinity",
    "ServiceAffinity": "use InterPodAffinity",
    "NodePreferAvoidPods": "no replacement: drop it",
    "NodeResourcesLeastAllocated": "use NodeResourcesFit with scoringStrategy LeastAllocated",
    "NodeResourcesMostAllocated": "use NodeResourcesFit with scoringStrategy MostAllocated",
    "RequestedToCapacityRatio": (
        "use NodeResourcesFit with scoringStrategy RequestedToCapacityRatio"
    ),
}
# What replaced the in-tree plugins removed within the versions registry_data covers.
_REPLACEMENTS: dict[str, str] = {
    "SelectorSpread": "use PodTopologySpread",
    "AzureDiskLimits": "NodeVolumeLimits covers it",
    "CinderLimits": "NodeVolumeLimits covers it",
    "EBSLimits": "NodeVolumeLimits covers it",
    "GCEPDLimits": "NodeVolumeLimits covers it",
}


@dataclass(frozen=True)
class _Entry:
    name: str
    weight: int | None
    path: str | None  # the config field it came from; None for a default plugin


@dataclass
class _Set:
    enabled: list[_Entry]
    disabled: list[str]


def _minor(version: KubeVersion) -> str:
    return version.minor_version


def in_tree_plugins(version: KubeVersion) -> dict[str, frozenset[str]]:
    """kube-scheduler's in-tree registry: plugin → extension points (``Filter``, ``Score``…)."""
    return {
        name: frozenset(points) for name, points in registry_data.PLUGINS[_minor(version)].items()
    }


def default_plugins(version: KubeVersion) -> tuple[tuple[str, int | None], ...]:
    """The default multiPoint plugins (name, weight or None) with the default feature gates."""
    return registry_data.DEFAULT_PLUGINS[_minor(version)]


def invalid_plugins(version: KubeVersion) -> tuple[str, ...]:
    """Plugins validation refuses by name in a v1 config (validation.go invalidPluginsByVersion)."""
    return registry_data.INVALID_PLUGINS[_minor(version)]


def _go_quote(text: str) -> str:
    """Go's ``%q`` of a plugin or scheduler name, bounded like every user value in a message."""
    if len(text) > QUOTE_LIMIT:
        text = text[:QUOTE_LIMIT] + "…"
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _field(point: str) -> str:
    """``PreFilter`` → ``preFilter``: the config field of a framework extension point."""
    return point[0].lower() + point[1:]


def missing_plugin_hint(name: str, version: KubeVersion) -> str:
    """Why ``name`` is not in this version's registry, from the other versions' registries."""
    minors = sorted(registry_data.PLUGINS, key=lambda m: int(m.split(".")[1]))
    having = [m for m in minors if name in registry_data.PLUGINS[m]]
    current = version.minor
    older = [m for m in having if int(m.split(".")[1]) < current]
    newer = [m for m in having if int(m.split(".")[1]) > current]
    if older:
        last = older[-1]
        gone = minors[minors.index(last) + 1]
        instead = _REPLACEMENTS.get(name)
        return f"removed in Kubernetes {gone}" + (f": {instead}" if instead else "")
    if newer:
        return f"in-tree from Kubernetes {newer[0]} on: target that version or newer"
    if name in _REPLACED_BEFORE_DATA:
        return f"removed before Kubernetes 1.25: {_REPLACED_BEFORE_DATA[name]}"
    elsewhere = unknown_plugin_hint(name, version.minor)  # e.g. scheduler-plugins' Coscheduling
    return f"not an in-tree plugin of kube-scheduler {version.minor_version}: " + (
        elsewhere or "an out-of-tree plugin needs a scheduler image built with it"
    )


def _normalized_extra(extra: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    known = {p for points in registry_data.EXTENSION_POINTS.values() for p in points}
    out: dict[str, frozenset[str]] = {}
    for name, points in extra.items():
        normalized = set()
        for point in points:
            canonical = point[:1].upper() + point[1:]
            if canonical.endswith("Plugin"):
                canonical = canonical[: -len("Plugin")]
            if canonical in known:  # anything else is the caller's to report (spec.custom)
                normalized.add(canonical)
        out[name] = frozenset(normalized)
    return out


def _read_set(raw: Any, path: str) -> _Set:
    """A user's PluginSet, leaving out what validation reports (wrong types, missing names)."""
    enabled: list[_Entry] = []
    disabled: list[str] = []
    if not isinstance(raw, dict):
        return _Set(enabled, disabled)
    items = raw.get("enabled")
    for j, entry in enumerate(items if isinstance(items, list) else []):
        if entry is None:
            entry = {}  # a null item decodes into the zero Plugin
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(entry, dict) and name is None:
            name = ""  # an absent or null name is Go's "": "FilterPlugin \"\" does not exist"
        if isinstance(name, str):
            weight = entry.get("weight")
            ok = isinstance(weight, int) and not isinstance(weight, bool)
            enabled.append(_Entry(name, weight if ok else None, f"{path}.enabled[{j}].name"))
    items = raw.get("disabled")
    for entry in items if isinstance(items, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and name:
            disabled.append(name)
    return _Set(enabled, disabled)


def _merge_set(default: _Set, custom: _Set) -> _Set:
    """default_plugins.go mergePluginSet, step for step."""
    disabled = list(custom.disabled) + list(default.disabled)
    disabled_set = set(disabled)
    custom_by_name = {e.name: (i, e) for i, e in enumerate(custom.enabled)}  # the last one wins
    replaced: set[int] = set()
    enabled: list[_Entry] = []
    if "*" not in disabled_set:
        for entry in default.enabled:
            if entry.name in disabled_set:
                continue
            if entry.name in custom_by_name:
                index, entry = custom_by_name[entry.name]
                replaced.add(index)
            enabled.append(entry)
    # Custom plugins that replaced no default one, duplicates included (NewFramework refuses them).
    enabled += [e for i, e in enumerate(custom.enabled) if i not in replaced]
    return _Set(enabled, disabled)


def _merged_plugins(raw: Any, version: KubeVersion, path: str) -> dict[str, _Set]:
    """The profile's plugins after v1 defaulting: field (``filter``…) → merged set."""
    plugins = raw if isinstance(raw, dict) else {}
    defaults = _Set([_Entry(n, w, None) for n, w in default_plugins(version)], [])
    merged = {
        "multiPoint": _merge_set(
            defaults, _read_set(plugins.get("multiPoint"), path + ".multiPoint")
        )
    }
    for point in registry_data.EXTENSION_POINTS[_minor(version)]:
        field = _field(point)
        merged[field] = _merge_set(_Set([], []), _read_set(plugins.get(field), f"{path}.{field}"))
    return merged


class _Builder:
    """One profile's NewFramework: the plugin lists it builds and the problems it meets."""

    def __init__(
        self,
        registry: Mapping[str, frozenset[str]],
        version: KubeVersion,
        plugins_path: str,
        out: list[Problem],
    ) -> None:
        self.registry = registry
        self.version = version
        self.plugins_path = plugins_path
        self.out = out
        self.lists: dict[str, list[str]] = {}

    def _report(self, entry: _Entry, message: str) -> None:
        self.out.append(Problem(entry.path or f"{self.plugins_path}.multiPoint", message))

    def _missing(self, entry: _Entry, point: str, multi: bool = False) -> None:
        if not multi and entry.name in invalid_plugins(self.version):
            # validation.go refuses it by name first ("was invalid in version …"); it reads
            # every extension point but multiPoint.
            return
        hint = missing_plugin_hint(entry.name, self.version)
        self._report(entry, f"{point}Plugin {_go_quote(entry.name)} does not exist ({hint})")

    def update_plugin_lists(self, merged: dict[str, _Set]) -> None:
        """updatePluginList for every extension point, in the framework's order."""
        for point in registry_data.EXTENSION_POINTS[_minor(self.version)]:
            iface = f"{point}Plugin"
            names: list[str] = []
            for entry in merged[_field(point)].enabled:
                if entry.name not in self.registry:
                    self._missing(entry, point)
                elif point not in self.registry[entry.name]:
                    self._report(
                        entry, f"plugin {_go_quote(entry.name)} does not extend {iface} plugin"
                    )
                elif entry.name in names:
                    self._report(
                        entry,
                        f"plugin {_go_quote(entry.name)} already registered as {_go_quote(iface)}",
                    )
                else:
                    names.append(entry.name)
            self.lists[point] = names

    def expand_multi_point(self, merged: dict[str, _Set]) -> None:
        """expandMultiPointPlugins: each multiPoint plugin at every point it implements."""
        multi = merged["multiPoint"].enabled
        if not multi:
            return
        reported: set[int] = set()  # an entry is refused once, at the first point that does
        for point in registry_data.EXTENSION_POINTS[_minor(self.version)]:
            pset = merged[_field(point)]
            if "*" in pset.disabled:
                continue  # the point takes no multiPoint plugin at all
            enabled = [e.name for e in pset.enabled]
            disabled = set(pset.disabled)
            overrides: list[str] = []
            expanded: list[str] = []
            for index, entry in enumerate(multi):
                if entry.name not in self.registry:
                    if index not in reported:
                        reported.add(index)
                        self._missing(entry, point, multi=True)
                    continue
                if point not in self.registry[entry.name] or entry.name in disabled:
                    continue
                if entry.name in enabled:
                    # Set at the point itself too: that setting wins (an override, no error).
                    if entry.name not in overrides:
                        overrides.append(entry.name)
                    continue
                if entry.name in expanded:
                    if index not in reported:
                        reported.add(index)
                        self._report(
                            entry,
                            f"plugin {_go_quote(entry.name)} already registered as "
                            f"{_go_quote(point + 'Plugin')}",
                        )
                    continue
                expanded.append(entry.name)
            own = [n for n in self.lists.get(point, []) if n not in overrides]
            listed = [n for n in self.lists.get(point, []) if n in overrides]
            self.lists[point] = listed + expanded + own


def _scheduler_name(profile: dict[str, Any], count: int) -> str:
    name = profile.get("schedulerName")
    if isinstance(name, str):
        return name
    # v1 defaulting names a lone profile; with several, an unnamed one stays "" (and
    # validation refuses it).
    return DEFAULT_SCHEDULER_NAME if count == 1 else ""


def _queue_sort_args(profile: dict[str, Any], name: str) -> Any:
    configs = profile.get("pluginConfig")
    for cfg in configs if isinstance(configs, list) else []:
        if isinstance(cfg, dict) and cfg.get("name") == name:
            return cfg.get("args")
    return None


def build_profiles(
    config: Any,
    version: KubeVersion,
    *,
    extra_plugins: Mapping[str, frozenset[str]] | None = None,
    prefix: str = "",
    source: str = "",
) -> list[Problem]:
    """What kube-scheduler ``version`` refuses when it builds the profiles of ``config``.

    ``config`` is a decoded KubeSchedulerConfiguration (wrong shapes are left to validation);
    ``extra_plugins`` adds out-of-tree plugins (name → extension points such as ``"Filter"``)
    that a custom scheduler image registers next to the in-tree ones; ``prefix`` is prepended
    to field paths.
    """
    if not isinstance(config, dict):
        return []
    registry: dict[str, frozenset[str]] = in_tree_plugins(version)
    if extra_plugins:
        registry.update(_normalized_extra(extra_plugins))
    profiles = config.get("profiles")
    if profiles is None or profiles == []:
        profiles = [{}]  # v1 defaulting adds one profile with the default plugins
    if not isinstance(profiles, list):
        return []
    out: list[Problem] = []
    first: tuple[str, Any, Any] | None = None  # (queue sort plugin, its args, raw queueSort)
    for i, profile in enumerate(profiles):
        if profile is None:
            profile = {}  # a null item decodes into the zero profile
        if not isinstance(profile, dict):
            continue
        ppath = f"{prefix}profiles[{i}]"
        name = _scheduler_name(profile, len(profiles))
        raw_plugins = profile.get("plugins")
        merged = _merged_plugins(raw_plugins, version, f"{ppath}.plugins")
        problems: list[Problem] = []
        builder = _Builder(registry, version, f"{ppath}.plugins", problems)
        builder.update_plugin_lists(merged)
        builder.expand_multi_point(merged)
        if not problems:
            _check_counts(builder.lists, name, f"{ppath}.plugins", problems)
        if not problems:
            _check_score_weights(merged, registry, version, f"{ppath}.plugins", problems)
        out += problems
        if problems:
            continue
        queue_sort = builder.lists["QueueSort"][0]
        args = _queue_sort_args(profile, queue_sort)
        raw_sort = raw_plugins.get("queueSort") if isinstance(raw_plugins, dict) else None
        if first is None:
            first = (queue_sort, args, raw_sort)
        elif raw_sort == first[2]:
            # Different raw queueSort sets are validation.go's refusal already; this is
            # profile.go's, on the plugin the framework ended up with (e.g. via multiPoint).
            if queue_sort != first[0]:
                out.append(
                    Problem(
                        f"{ppath}.plugins",
                        f"different queue sort plugins for profile {_go_quote(name)}: "
                        f"{_go_quote(queue_sort)}, first: {_go_quote(first[0])}",
                    )
                )
            elif args != first[1]:
                out.append(
                    Problem(
                        f"{ppath}.pluginConfig",
                        f"different queue sort plugin args for profile {_go_quote(name)}",
                    )
                )
    return [Problem(p.path, p.message, source) for p in out]


def _check_counts(lists: dict[str, list[str]], name: str, path: str, out: list[Problem]) -> None:
    """NewFramework's checks on the built lists."""
    quoted = _go_quote(name)
    count = len(lists["QueueSort"])
    if count != 1:
        out.append(
            Problem(
                f"{path}.queueSort",
                f"only one queue sort plugin required for profile with scheduler name {quoted}, "
                f"but got {count}",
            )
        )
    if not lists["Bind"]:
        out.append(
            Problem(
                f"{path}.bind",
                f"at least one bind plugin is needed for profile with scheduler name {quoted}",
            )
        )
    if len(lists.get("PlacementGenerate", [])) > 1:
        out.append(
            Problem(
                f"{path}.placementGenerate",
                "at most one placement generate plugin is allowed for profile with scheduler "
                f"name {quoted}",
            )
        )


# k8s.io/kube-scheduler/framework interface.go: MaxNodeScore, MaxTotalScore (math.MaxInt64).
_MAX_NODE_SCORE = 100
_INT64_MAX = 2**63 - 1


def _wrap64(value: int) -> int:
    """``value`` as Go's int64 arithmetic leaves it (two's complement wrap-around)."""
    return (value + 2**63) % 2**64 - 2**63


def _check_score_weights(
    merged: dict[str, _Set],
    registry: Mapping[str, frozenset[str]],
    version: KubeVersion,
    path: str,
    out: list[Problem],
) -> None:
    """framework.go getValidScoreWeights, for Score and (where it exists) PlacementScore: the
    point's own enabled plugins, then multiPoint's, first setting wins, 0 counts as 1."""
    points = registry_data.EXTENSION_POINTS[_minor(version)]
    for point, label in (("Score", "score"), ("PlacementScore", "placement score")):
        if point not in points:
            continue
        seen: set[str] = set()
        total = 0
        negative: _Entry | None = None  # the cause when the sum "overflows"
        for entry in merged[_field(point)].enabled + merged["multiPoint"].enabled:
            if point not in registry.get(entry.name, frozenset()) or entry.name in seen:
                continue
            seen.add(entry.name)
            score = (entry.weight or 1) * _MAX_NODE_SCORE
            if score > _wrap64(_INT64_MAX - total):
                cause = negative or entry
                out.append(
                    Problem(
                        cause.path or f"{path}.{_field(point)}",
                        f"{label} plugins: total score of Score plugins could overflow "
                        f"(weight {cause.weight} of {_go_quote(cause.name)}: a negative weight "
                        "followed by another scoring plugin overflows kube-scheduler's sum; "
                        "use 0 or more, or disable the plugin)",
                    )
                )
                return
            if score < 0 and negative is None:
                negative = entry
            total = _wrap64(total + score)
