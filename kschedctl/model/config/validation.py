"""KubeSchedulerConfiguration rules, version-aware, plus the multi-scheduler traps.

Pure. Mirrors what kube-scheduler checks at start-up (strict decoding, then
``pkg/scheduler/apis/config/validation/validation.go`` and component-base's
``config/validation/validation.go``) and adds the traps kube-scheduler happily accepts when it
is not the only scheduler: a profile or lease that collides with
the default scheduler. Every rule reports a :class:`~kschedctl.base.errors.Problem` naming the
field; nothing stops at the first one, like kube-scheduler's own aggregate.

This module holds the entry point, the type meta and the profiles; ``validation_plugins``
a profile's plugins and their args; ``validation_settings`` the process's own settings
(top-level numbers, clientConnection, leaderElection) and the extenders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kschedctl.base.errors import ERROR, WARNING, Problem, quote
from kschedctl.model.config.defaults import default_config
from kschedctl.model.config.framework import build_profiles
from kschedctl.model.config.schema import (
    GO_INT32,
    check_fields,
    check_list,
    join,
)
from kschedctl.model.config.shapes import (
    dns_subdomain_problem,
    flag_problem,
    hostile_problems,
    plain,
    shown,
)
from kschedctl.model.config.validation_plugins import (
    check_common_queue_sort,
    check_plugin_config,
    check_plugins,
    not_built,
)
from kschedctl.model.config.validation_settings import (
    DEFAULT_TRAP,
    as_int,
    check_extenders,
    check_leader_election,
    check_top,
)
from kschedctl.model.config.versions import (
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
)

__all__ = ["check_config", "check_extra_args"]


# ---------------------------------------------------------------------------------------------
# Shapes for strict decoding: kube-scheduler rejects unknown fields and wrong types.

PROFILE = {"schedulerName": str, "percentageOfNodesToScore": GO_INT32, "plugins": dict}
PROFILE["pluginConfig"] = list


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
    reads the config (``program: custom``; kschedctl.model.config.distributions.plugins_for).

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
    # kube-scheduler validates the defaulted config (decode → default → validate): what
    # defaulting fills in (retryPeriod: 0s, resourceName: "", weight: 0) is valid.
    defaulted = default_config(doc)
    check_top(defaulted, out, prefix)
    # (a spec, type_meta=False, has its own replacesDefault field and its own Lease name)
    own_file = _explicit_default_profile(doc) if type_meta and not replaces_default else None
    check_leader_election(
        defaulted.get("leaderElection"), doc.get("leaderElection"), replaces_default, out, prefix
    )
    if own_file is not None:
        # The default scheduler's own file, most likely: one finding, not one per trap.
        out[:] = [p for p in out if not _is_default_trap(p)]
        out.append(_own_file_problem(prefix, own_file))
    _check_profiles(defaulted, doc, version, replaces_default, own_file, type_meta, out, prefix)
    check_extenders(defaulted.get("extenders"), out, join(prefix.rstrip("."), "extenders"))
    # What kube-scheduler refuses when it builds each profile's framework (after validation);
    # it merges the default plugins itself, so it reads the plugins as written.
    out += build_profiles(doc, version, extra_plugins=extra_plugins, prefix=prefix)
    return [p.moved(source=source) for p in out]


def _is_default_trap(problem: Problem) -> bool:
    return DEFAULT_TRAP in problem.message


def _explicit_default_profile(doc: dict[str, Any]) -> int | None:
    """The index of a profile that names default-scheduler explicitly, or None."""
    profiles = doc.get("profiles")
    for i, profile in enumerate(profiles if isinstance(profiles, list) else []):
        if isinstance(profile, dict) and profile.get("schedulerName") == DEFAULT_SCHEDULER_NAME:
            return i
    return None


def _own_file_problem(prefix: str, index: int) -> Problem:
    return Problem(
        f"{prefix}profiles[{index}].schedulerName",
        f"{DEFAULT_SCHEDULER_NAME!r} is the cluster's own scheduler: this file looks like the "
        "default scheduler's own configuration. If it is, validate it with --replaces-default "
        f"(which also allows the {DEFAULT_LEASE_NAME!r} Lease); an additional scheduler needs "
        "a profile name and a Lease of its own",
    )


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


def _check_profiles(
    doc: dict[str, Any],
    raw: dict[str, Any],
    version: KubeVersion,
    replaces_default: bool,
    own_file: int | None,
    from_file: bool,
    out: list[Problem],
    prefix: str,
) -> None:
    """validation.go: each profile (validateKubeSchedulerProfile), duplicate names,
    validateCommonQueueSort; plus the default-scheduler trap. ``doc`` is defaulted, ``raw``
    as written (defaulting gives a lone profile without a name default-scheduler)."""
    path = prefix + "profiles"
    profiles = check_list(doc.get("profiles"), path, out)
    raw_profiles = raw.get("profiles")
    if not raw_profiles and not replaces_default and isinstance(profiles, list):
        out.append(
            Problem(
                path,
                f"no profiles: kube-scheduler adds one named {DEFAULT_SCHEDULER_NAME!r}, "
                "which collides with the cluster's scheduler; add a profile with an "
                "explicit schedulerName",
            )
        )
    seen: dict[str, int] = {}
    for i, rawp in enumerate(profiles):
        ppath = f"{path}[{i}]"
        profile = check_fields(rawp, PROFILE, ppath, out)
        if not isinstance(rawp, dict):
            continue
        name = profile.get("schedulerName")
        given = raw_profiles[i] if isinstance(raw_profiles, list) and i < len(raw_profiles) else {}
        named = isinstance(given, dict) and given.get("schedulerName") is not None
        if rawp.get("schedulerName") is not None and not isinstance(rawp["schedulerName"], str):
            name = None  # the wrong type is reported already (check_fields)
        elif not name:
            out.append(
                Problem(f"{ppath}.schedulerName", "is required (kube-scheduler: Required value)")
            )
        elif name in seen:
            out.append(
                Problem(
                    f"{ppath}.schedulerName",
                    f"Duplicate value: {quote(name)} (as {path}[{seen[name]}].schedulerName)",
                )
            )
        elif name == DEFAULT_SCHEDULER_NAME and not replaces_default and own_file is None:
            if named:  # in a spec (a file gets _own_file_problem instead)
                out.append(
                    Problem(
                        f"{ppath}.schedulerName",
                        f"{DEFAULT_SCHEDULER_NAME!r} is the cluster's own scheduler; an "
                        "additional scheduler needs a name of its own (set replacesDefault only "
                        "when you replace the default scheduler)",
                    )
                )
            elif raw_profiles:  # (no profiles at all is reported once, above)
                out.append(
                    Problem(
                        f"{ppath}.schedulerName",
                        f"is missing, so it defaults to {DEFAULT_SCHEDULER_NAME!r} and collides "
                        "with the cluster's scheduler: name the profile explicitly",
                    )
                )
        if isinstance(name, str) and name:
            seen.setdefault(name, i)
            problem = dns_subdomain_problem(name)
            if problem:
                # kube-scheduler runs it (a warning in a config file), but a pod's
                # spec.schedulerName must be a DNS-1123 subdomain: no pod can ever ask for this
                # profile, so a spec (kschedctl deploys it) refuses it.
                out.append(
                    Problem(
                        f"{ppath}.schedulerName",
                        f"scheduler name {problem}: no pod can name it in spec.schedulerName",
                        severity=WARNING if from_file else ERROR,
                    )
                )
        pct = as_int(profile.get("percentageOfNodesToScore"))
        if pct is not None and not 0 <= pct <= 100:
            out.append(
                Problem(
                    f"{ppath}.percentageOfNodesToScore", f"not in valid range [0-100] (got {pct})"
                )
            )
        check_plugins(profile.get("plugins"), version, f"{ppath}.plugins", out)
        check_plugin_config(
            profile.get("pluginConfig"), version, f"{ppath}.pluginConfig", not_built(rawp), out
        )
    check_common_queue_sort(profiles, path, out)


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
