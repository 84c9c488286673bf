"""KubeSchedulerConfiguration rules, version-aware, plus the multi-scheduler traps.

Pure. Mirrors what kube-scheduler checks at start-up (strict decoding, then
``pkg/scheduler/apis/config/validation/validation.go`` and component-base's
``config/validation/validation.go``) and adds the traps kube-scheduler happily accepts when it
is not the only scheduler: a profile or lease that collides with
the default scheduler. Every rule reports a :class:`~kschedctl.errors.Problem` naming the
field; nothing stops at the first one, like kube-scheduler's own aggregate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from kschedctl.config.distributions import out_of_tree_problems
from kschedctl.config.durations import parse_go_duration
from kschedctl.config.framework import build_profiles
from kschedctl.config.plugin_args import check_args
from kschedctl.config.schema import NUMBER, check_fields, check_list, join, type_ok
from kschedctl.config.shapes import (
    INT32_MAX,
    dns_subdomain_problem,
    flag_problem,
    hostile_problems,
    int_range_problem,
    plain,
    shown,
)
from kschedctl.config.versions import (
    CONFIG_API_VERSION,
    CONFIG_GROUP,
    DEFAULT_LEASE_NAME,
    DEFAULT_SCHEDULER_NAME,
    IGNORED_WITH_CONFIG,
    MANAGED_FLAGS,
    REMOVED_CONFIG_VERSIONS,
    REMOVED_FLAGS,
    KubeVersion,
    config_fields,
    extension_points,
    removed_plugins,
)
from kschedctl.errors import Problem, quote

__all__ = ["check_config", "check_extra_args"]

# client-go's leader election adds up to 20% jitter to retryPeriod and refuses a renewDeadline
# that does not leave room for it ("renewDeadline must be greater than retryPeriod*JitterFactor").
_JITTER_FACTOR = 1.2
# client-go's rest.Config.QPS is a float32.
_FLOAT32_MAX = 3.4028234663852886e38


# ---------------------------------------------------------------------------------------------
# Shapes for strict decoding: kube-scheduler rejects unknown fields and wrong types.

LEADER_ELECTION = {
    "leaderElect": bool,
    "leaseDuration": str,
    "renewDeadline": str,
    "retryPeriod": str,
    "resourceLock": str,
    "resourceName": str,
    "resourceNamespace": str,
}
CLIENT_CONNECTION = {
    "kubeconfig": str,
    "acceptContentTypes": str,
    "contentType": str,
    "qps": NUMBER,
    "burst": int,
}
PROFILE = {"schedulerName": str, "percentageOfNodesToScore": int, "plugins": dict}
PROFILE["pluginConfig"] = list
PLUGIN_SET = {"enabled": list, "disabled": list}
PLUGIN = {"name": str, "weight": int}
PLUGIN_CONFIG = {"name": str, "args": dict}
EXTENDER = {
    "urlPrefix": str,
    "filterVerb": str,
    "preemptVerb": str,
    "prioritizeVerb": str,
    "weight": int,
    "bindVerb": str,
    "enableHTTPS": bool,
    "tlsConfig": dict,
    "httpTimeout": str,
    "nodeCacheCapable": bool,
    "managedResources": list,
    "ignorable": bool,
}
TLS_CONFIG: dict[str, Any] = {"insecure": bool}
TLS_CONFIG.update(
    dict.fromkeys(("serverName", "certFile", "keyFile", "caFile", "certData", "keyData"), str),
    caData=str,
)
MANAGED_RESOURCE = {"name": str, "ignoredByScheduler": bool}

# Known fields of in-tree plugin args (kubescheduler.config.k8s.io/v1); None = not checked.
ARGS_FIELDS: dict[str, dict[str, Any] | None] = {
    "DefaultPreemption": {"minCandidateNodesPercentage": int, "minCandidateNodesAbsolute": int},
    "InterPodAffinity": {"hardPodAffinityWeight": int, "ignorePreferredTermsOfExistingPods": bool},
    "NodeAffinity": {"addedAffinity": dict},
    "NodeResourcesBalancedAllocation": {"resources": list},
    "NodeResourcesFit": {
        "ignoredResources": list,
        "ignoredResourceGroups": list,
        "scoringStrategy": dict,
    },
    "PodTopologySpread": {"defaultConstraints": list, "defaultingType": str},
    "VolumeBinding": {"bindTimeoutSeconds": int, "shape": list},
    "DynamicResources": None,
}


# ---------------------------------------------------------------------------------------------


def check_config(
    doc: Any,
    version: KubeVersion,
    *,
    replaces_default: bool = False,
    prefix: str = "",
    source: str = "",
    type_meta: bool = True,
    extra_plugins: Mapping[str, frozenset[str]] | None = None,
) -> list[Problem]:
    """Every problem kube-scheduler (for ``version``) would refuse, plus multi-scheduler traps.

    ``extra_plugins``: the out-of-tree plugins (name → extension points) of the image that
    reads the config (``program: custom``; kschedctl.config.distributions.plugins_for).

    ``prefix`` is prepended to field paths (``spec.`` when the config was derived from a spec,
    whose apiVersion/kind kschedctl sets itself: ``type_meta=False``);
    ``replaces_default`` allows ``default-scheduler`` and the ``kube-scheduler`` lease;
    ``extra_plugins``: out-of-tree plugins of a custom image (see framework.build_profiles).
    """
    out: list[Problem] = []
    if not isinstance(doc, dict):
        return [
            Problem(prefix.rstrip("."), "a KubeSchedulerConfiguration must be a mapping", source)
        ]
    hostile = hostile_problems(doc, prefix.rstrip("."))
    if hostile:  # nothing below (nor any renderer) reads such a value
        return [Problem(p.path, p.message, source) for p in hostile]
    top = {name: None for name in config_fields(version)}
    check_fields(doc, top, prefix.rstrip("."), out)
    if type_meta:
        _check_type_meta(doc, version, out, prefix)
    _check_top(doc, out, prefix)
    _check_leader_election(doc.get("leaderElection"), replaces_default, out, prefix)
    _check_profiles(doc, version, replaces_default, out, prefix)
    out.extend(out_of_tree_problems(doc, version, extra_plugins or {}, prefix))
    _check_extenders(doc.get("extenders"), out, join(prefix.rstrip("."), "extenders"))
    # What kube-scheduler refuses when it builds each profile's framework (after validation).
    out += build_profiles(doc, version, extra_plugins=extra_plugins, prefix=prefix)
    return [Problem(p.path, p.message, source) for p in out]


def _check_type_meta(
    doc: dict[str, Any], version: KubeVersion, out: list[Problem], prefix: str
) -> None:
    api_version = doc.get("apiVersion")
    if not api_version:
        out.append(Problem(prefix + "apiVersion", f"is required: {CONFIG_API_VERSION}"))
    elif api_version != CONFIG_API_VERSION:
        group, _, ver = str(api_version).partition("/")
        removed = REMOVED_CONFIG_VERSIONS.get(ver) if group == CONFIG_GROUP else None
        if removed is not None and version.minor >= removed:
            why = (
                f"was removed in Kubernetes 1.{removed}; "
                f"kube-scheduler {version.minor_version} refuses it"
            )
        elif removed is not None:
            why = f"is deprecated (removed in 1.{removed}); kschedctl checks v1 configs only"
        else:
            why = "is not a kube-scheduler config API version"
        out.append(
            Problem(prefix + "apiVersion", f"{plain(api_version)} {why}: use {CONFIG_API_VERSION}")
        )
    if doc.get("kind") != "KubeSchedulerConfiguration":
        out.append(
            Problem(
                prefix + "kind", f"must be KubeSchedulerConfiguration, not {shown(doc.get('kind'))}"
            )
        )


def _check_top(doc: dict[str, Any], out: list[Problem], prefix: str) -> None:
    p = prefix
    cc = check_fields(doc.get("clientConnection"), CLIENT_CONNECTION, p + "clientConnection", out)
    burst = cc.get("burst")
    if isinstance(burst, int) and not isinstance(burst, bool):
        if burst < 0:
            out.append(Problem(p + "clientConnection.burst", "must be greater than or equal to 0"))
        elif burst > INT32_MAX:
            out.append(Problem(p + "clientConnection.burst", str(int_range_problem(burst, 0))))
    qps = cc.get("qps")
    if isinstance(qps, NUMBER) and not isinstance(qps, bool) and not abs(qps) <= _FLOAT32_MAX:
        out.append(Problem(p + "clientConnection.qps", f"{shown(qps)} is out of range (float32)"))
    for key in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
        if key in doc and not type_ok(doc[key], bool):
            out.append(Problem(p + key, f"must be a boolean, not {quote(doc[key])}"))
    for key in (
        "parallelism",
        "percentageOfNodesToScore",
        "percentageOfPlacementsToScore",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
    ):
        if key in doc and not type_ok(doc[key], int):
            out.append(Problem(p + key, f"must be an integer, not {quote(doc[key])}"))
    value = doc.get("parallelism")
    if isinstance(value, int) and value <= 0:
        out.append(Problem(p + "parallelism", "should be an integer value greater than zero"))
    for key in ("parallelism", "podInitialBackoffSeconds", "podMaxBackoffSeconds"):
        # parallelism is an int32 upstream; the backoffs are int64 there, but a backoff past
        # 68 years is a typo: int32 for them too.
        value = doc.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > INT32_MAX:
            out.append(Problem(p + key, str(int_range_problem(value, 1))))
    for key in ("percentageOfNodesToScore", "percentageOfPlacementsToScore"):
        value = doc.get(key)
        if isinstance(value, int) and not 0 <= value <= 100:
            out.append(Problem(p + key, f"{value} not in valid range [0-100]"))
    initial = doc.get("podInitialBackoffSeconds")
    initial = initial if isinstance(initial, int) and not isinstance(initial, bool) else 1
    maximum = doc.get("podMaxBackoffSeconds")
    maximum = maximum if isinstance(maximum, int) and not isinstance(maximum, bool) else 10
    if initial <= 0:
        out.append(Problem(p + "podInitialBackoffSeconds", "must be greater than 0"))
    if maximum < initial:
        out.append(
            Problem(
                p + "podMaxBackoffSeconds",
                f"{maximum} must be greater than or equal to podInitialBackoffSeconds ({initial})",
            )
        )


def _duration(
    le: dict[str, Any], key: str, default: float, path: str, out: list[Problem]
) -> float | None:
    if le.get(key) is None:
        return default
    try:
        return parse_go_duration(le[key])
    except ValueError as err:
        out.append(Problem(f"{path}.{key}", str(err)))
        return None


def _check_leader_election(
    raw: Any, replaces_default: bool, out: list[Problem], prefix: str
) -> None:
    path = prefix + "leaderElection"
    le = check_fields(raw, LEADER_ELECTION, path, out)
    lease = _duration(le, "leaseDuration", 15.0, path, out)
    renew = _duration(le, "renewDeadline", 10.0, path, out)
    retry = _duration(le, "retryPeriod", 2.0, path, out)
    if le.get("leaderElect") is False:
        return  # kube-scheduler skips every leader-election rule then
    for key, value in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
        if value is not None and value <= 0:
            out.append(Problem(f"{path}.{key}", "must be greater than zero"))
    if lease is not None and renew is not None and 0 < lease <= renew:
        out.append(
            Problem(
                f"{path}.leaseDuration",
                f"{le.get('leaseDuration', '15s')} must be greater than renewDeadline "
                f"({le.get('renewDeadline', '10s')})",
            )
        )
    if (
        renew is not None
        and retry is not None
        and 0 < renew <= retry * _JITTER_FACTOR
        and retry > 0
    ):
        out.append(
            Problem(
                f"{path}.renewDeadline",
                f"{le.get('renewDeadline', '10s')} must be greater than retryPeriod "
                f"({le.get('retryPeriod', '2s')}) × 1.2: client-go's leader election refuses it",
            )
        )
    lock = le.get("resourceLock") or "leases"
    if lock != "leases":
        out.append(Problem(f"{path}.resourceLock", 'resourceLock value must be "leases"'))
    for key in ("resourceName", "resourceNamespace"):
        if key in le and le[key] == "":
            out.append(Problem(f"{path}.{key}", "must not be empty when leaderElect is true"))
    name = le.get("resourceName") or DEFAULT_LEASE_NAME
    if name == DEFAULT_LEASE_NAME and not replaces_default:
        where = "is" if "resourceName" in le else "defaults to"
        out.append(
            Problem(
                f"{path}.resourceName",
                f"{where} {DEFAULT_LEASE_NAME!r}, the default scheduler's lock: an additional "
                "scheduler holding it only waits as a standby. Use a Lease of its own "
                "(e.g. the scheduler name)",
            )
        )


def _check_profiles(
    doc: dict[str, Any],
    version: KubeVersion,
    replaces_default: bool,
    out: list[Problem],
    prefix: str,
) -> None:
    path = prefix + "profiles"
    profiles = check_list(doc.get("profiles"), path, out)
    if not profiles:
        if not replaces_default:
            out.append(
                Problem(
                    path,
                    f"no profiles: kube-scheduler adds one named {DEFAULT_SCHEDULER_NAME!r}, "
                    "which collides with the cluster's scheduler; add a profile with an "
                    "explicit schedulerName",
                )
            )
        return
    seen: set[str] = set()
    first_queue_sort: tuple[Any, Any] | None = None
    for i, raw in enumerate(profiles):
        ppath = f"{path}[{i}]"
        profile = check_fields(raw, PROFILE, ppath, out)
        if not isinstance(raw, dict):
            continue
        name = profile.get("schedulerName")
        if name is not None and not isinstance(name, str):
            pass  # the wrong type is reported already (check_fields)
        elif not name:
            if len(profiles) > 1:
                out.append(Problem(f"{ppath}.schedulerName", "is required"))
            elif not replaces_default:
                out.append(
                    Problem(
                        f"{ppath}.schedulerName",
                        f"is missing, so it defaults to {DEFAULT_SCHEDULER_NAME!r} and collides "
                        "with the cluster's scheduler: name the profile explicitly",
                    )
                )
        elif name in seen:
            out.append(Problem(f"{ppath}.schedulerName", f"Duplicate value: {quote(name)}"))
        elif name == DEFAULT_SCHEDULER_NAME and not replaces_default:
            out.append(
                Problem(
                    f"{ppath}.schedulerName",
                    f"{DEFAULT_SCHEDULER_NAME!r} is the cluster's own scheduler; an additional "
                    "scheduler needs a name of its own (set replacesDefault only when you "
                    "replace the default scheduler)",
                )
            )
        if isinstance(name, str) and name:
            seen.add(name)
            problem = dns_subdomain_problem(name)
            if problem:
                # Pods name their scheduler in spec.schedulerName, a DNS-1123 subdomain.
                out.append(Problem(f"{ppath}.schedulerName", f"scheduler name {problem}"))
        pct = profile.get("percentageOfNodesToScore")
        if isinstance(pct, int) and not 0 <= pct <= 100:
            out.append(
                Problem(f"{ppath}.percentageOfNodesToScore", f"{pct} not in valid range [0-100]")
            )
        plugins = _check_plugins(profile.get("plugins"), version, f"{ppath}.plugins", out)
        configs = _check_plugin_config(
            profile.get("pluginConfig"), version, f"{ppath}.pluginConfig", out
        )
        queue_sort = plugins.get("queueSort") or {}
        sort_names = [
            p.get("name") for p in (queue_sort.get("enabled") or []) if isinstance(p, dict)
        ]
        sort_args = [c.get("args") for c in configs if c.get("name") in sort_names]
        if first_queue_sort is None:
            first_queue_sort = (queue_sort, sort_args)
            if len(sort_names) > 1:
                out.append(
                    Problem(
                        f"{ppath}.plugins.queueSort", "only one queue sort plugin can be enabled"
                    )
                )
        else:
            if queue_sort != first_queue_sort[0]:
                out.append(
                    Problem(
                        f"{ppath}.plugins.queueSort",
                        "queueSort must be the same for all profiles (one kube-scheduler "
                        "has one queue)",
                    )
                )
            elif sort_args != first_queue_sort[1]:
                out.append(
                    Problem(
                        f"{ppath}.pluginConfig",
                        "queueSort plugin args must be the same for all profiles",
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


def _check_plugins(raw: Any, version: KubeVersion, path: str, out: list[Problem]) -> dict[str, Any]:
    points = extension_points(version)
    plugins = check_fields(raw, dict.fromkeys(points, dict), path, out)
    removed = removed_plugins(version)
    for point in points:
        pset = check_fields(plugins.get(point), PLUGIN_SET, f"{path}.{point}", out)
        for kind in ("enabled", "disabled"):
            for j, entry in enumerate(check_list(pset.get(kind), f"{path}.{point}.{kind}", out)):
                epath = f"{path}.{point}.{kind}[{j}]"
                plugin = check_fields(entry, PLUGIN, epath, out)
                if isinstance(entry, dict) and not plugin.get("name"):
                    out.append(Problem(f"{epath}.name", "is required"))
                # validation.go reads every point but multiPoint (build_profiles reports that).
                if kind == "enabled" and point != "multiPoint" and plugin.get("name") in removed:
                    out.append(Problem(f"{epath}.name", _removed_message(plugin["name"], version)))
                weight = plugin.get("weight")
                if isinstance(weight, int) and weight < 0:
                    out.append(Problem(f"{epath}.weight", "must not be negative"))
                elif isinstance(weight, int) and weight > INT32_MAX:
                    out.append(Problem(f"{epath}.weight", str(int_range_problem(weight, 0))))
    return plugins


def _check_plugin_config(
    raw: Any, version: KubeVersion, path: str, out: list[Problem]
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
            out.append(Problem(f"{epath}.name", "is required"))
            continue
        if name in seen:
            out.append(Problem(f"{epath}.name", f"Duplicate value: {quote(name)}"))
        seen.add(name)
        if name in removed:
            out.append(Problem(f"{epath}.name", _removed_message(name, version)))
        if isinstance(cfg.get("args"), dict) and name in ARGS_FIELDS:
            check_args(name, cfg["args"], ARGS_FIELDS[name], f"{epath}.args", out)
    return entries


def _check_extenders(raw: Any, out: list[Problem], path: str) -> None:
    binders = 0
    managed: set[str] = set()
    for i, entry in enumerate(check_list(raw, path, out)):
        epath = f"{path}[{i}]"
        ext = check_fields(entry, EXTENDER, epath, out)
        check_fields(ext.get("tlsConfig"), TLS_CONFIG, f"{epath}.tlsConfig", out)
        weight = ext.get("weight")
        if ext.get("prioritizeVerb") and (not isinstance(weight, int) or weight <= 0):
            out.append(Problem(f"{epath}.weight", "must have a positive weight applied to it"))
        if ext.get("bindVerb"):
            binders += 1
            if binders > 1:
                out.append(Problem(f"{epath}.bindVerb", "only one extender can implement bind"))
        if ext.get("httpTimeout") is not None:
            try:
                parse_go_duration(ext["httpTimeout"])
            except ValueError as err:
                out.append(Problem(f"{epath}.httpTimeout", str(err)))
        for j, res in enumerate(
            check_list(ext.get("managedResources"), f"{epath}.managedResources", out)
        ):
            rpath = f"{epath}.managedResources[{j}]"
            resource = check_fields(res, MANAGED_RESOURCE, rpath, out)
            name = resource.get("name")
            if not _is_extended_resource(name):
                out.append(
                    Problem(
                        f"{rpath}.name",
                        f"{quote(name)} is an invalid extended resource name (expected "
                        "domain/name, not in kubernetes.io)",
                    )
                )
            elif name in managed:
                out.append(
                    Problem(
                        f"{rpath}.name", f"{quote(name)}: duplicate extender managed resource name"
                    )
                )
            else:
                managed.add(str(name))


_QUALIFIED = re.compile(
    r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)


def _is_extended_resource(name: Any) -> bool:
    # A qualified name with a domain prefix outside kubernetes.io, not "requests.*".
    if not isinstance(name, str) or not _QUALIFIED.match(name) or len(name) > 316:
        return False
    domain = name.split("/", 1)[0]
    native = domain == "kubernetes.io" or domain.endswith(".kubernetes.io")
    return not native and not name.startswith("requests.")


def check_extra_args(args: Sequence[Any], path: str) -> list[Problem]:
    """Extra kube-scheduler flags: removed, ignored or kschedctl-managed ones are refused."""
    out: list[Problem] = []
    for i, arg in enumerate(args):
        apath = f"{path}[{i}]"
        problem = flag_problem(arg)
        if problem:
            out.append(Problem(apath, problem))
            continue
        flag, _, value = arg.partition("=")
        if flag in REMOVED_FLAGS:
            out.append(Problem(apath, f"{flag} no longer exists: {REMOVED_FLAGS[flag]}"))
        elif flag in IGNORED_WITH_CONFIG:
            out.append(Problem(apath, f"{flag} is {IGNORED_WITH_CONFIG[flag]}"))
        elif flag in MANAGED_FLAGS:
            out.append(Problem(apath, f"{flag}: {MANAGED_FLAGS[flag]}"))
        elif value == "10251":
            out.append(Problem(apath, "10251 was the insecure port, gone since 1.23"))
    return out
