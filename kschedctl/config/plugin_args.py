"""Rules for in-tree plugin args (``pluginConfig[].args``), as kube-scheduler checks them.

Pure. Paraphrases ``pkg/scheduler/apis/config/validation/validation_pluginargs.go``; the
NodeResourcesFit rules run when the framework is built rather than in validation.go, but they
stop the scheduler all the same, so they are checked here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedctl.config.schema import check_fields, check_list
from kschedctl.config.versions import CONFIG_API_VERSION
from kschedctl.errors import Problem, quote

SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
SPREAD_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_args(
    plugin: str,
    args: dict[str, Any],
    fields: Mapping[str, Any] | None,
    path: str,
    out: list[Problem],
) -> None:
    kind = args.get("kind")
    if kind is not None and kind != f"{plugin}Args":
        out.append(
            Problem(f"{path}.kind", f"{quote(kind)} has to match plugin args ({plugin}Args)")
        )
    api_version = args.get("apiVersion")
    if api_version is not None and api_version != CONFIG_API_VERSION:
        out.append(Problem(f"{path}.apiVersion", f"must be {CONFIG_API_VERSION}"))
    if fields is None:
        return
    check_fields(args, {"apiVersion": str, "kind": str, **fields}, path, out)
    rules = _RULES.get(plugin)
    if rules:
        rules(args, path, out)


def _default_preemption(args: dict[str, Any], path: str, out: list[Problem]) -> None:
    pct = _int(args.get("minCandidateNodesPercentage"))
    absolute = _int(args.get("minCandidateNodesAbsolute"))
    if pct is not None and not 0 <= pct <= 100:
        out.append(Problem(f"{path}.minCandidateNodesPercentage", "not in valid range [0, 100]"))
    if absolute is not None and absolute < 0:
        out.append(Problem(f"{path}.minCandidateNodesAbsolute", "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        out.append(
            Problem(
                path,
                "both minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be zero",
            )
        )


def _inter_pod_affinity(args: dict[str, Any], path: str, out: list[Problem]) -> None:
    weight = _int(args.get("hardPodAffinityWeight"))
    if weight is not None and not 0 <= weight <= 100:
        out.append(Problem(f"{path}.hardPodAffinityWeight", "not in valid range [0, 100]"))


def _balanced_allocation(args: dict[str, Any], path: str, out: list[Problem]) -> None:
    seen: set[str] = set()
    for i, res in enumerate(check_list(args.get("resources"), f"{path}.resources", out)):
        rpath = f"{path}.resources[{i}]"
        res = check_fields(res, {"name": str, "weight": int}, rpath, out)
        name = res.get("name")
        if name in seen:
            out.append(Problem(f"{rpath}.name", f"Duplicate value: {quote(name)}"))
        if isinstance(name, str):
            seen.add(name)
        weight = _int(res.get("weight"))
        if weight is not None and weight != 1:
            out.append(Problem(f"{rpath}.weight", f"{weight}: must be 1"))


def _node_resources_fit(args: dict[str, Any], path: str, out: list[Problem]) -> None:
    spath = f"{path}.scoringStrategy"
    strategy = check_fields(
        args.get("scoringStrategy"),
        {"type": str, "resources": list, "requestedToCapacityRatio": dict},
        spath,
        out,
    )
    kind = strategy.get("type")
    if kind is not None and kind not in SCORING_STRATEGIES:
        out.append(
            Problem(
                f"{spath}.type", f"{quote(kind)}: must be one of {', '.join(SCORING_STRATEGIES)}"
            )
        )
    for i, res in enumerate(check_list(strategy.get("resources"), f"{spath}.resources", out)):
        rpath = f"{spath}.resources[{i}]"
        res = check_fields(res, {"name": str, "weight": int}, rpath, out)
        weight = _int(res.get("weight"))
        if weight is not None and not 1 <= weight <= 100:
            out.append(
                Problem(f"{rpath}.weight", f"resource weight {weight} not in range [1, 100]")
            )
    ratio = check_fields(
        strategy.get("requestedToCapacityRatio"),
        {"shape": list},
        f"{spath}.requestedToCapacityRatio",
        out,
    )
    shape = check_list(ratio.get("shape"), f"{spath}.requestedToCapacityRatio.shape", out)
    if kind == "RequestedToCapacityRatio" and not shape:
        out.append(Problem(f"{spath}.requestedToCapacityRatio.shape", "must not be empty"))
    previous = -1
    for i, point in enumerate(shape):
        ppath = f"{spath}.requestedToCapacityRatio.shape[{i}]"
        point = check_fields(point, {"utilization": int, "score": int}, ppath, out)
        util, score = _int(point.get("utilization")), _int(point.get("score"))
        if util is not None and not 0 <= util <= 100:
            out.append(Problem(f"{ppath}.utilization", "not in valid range [0, 100]"))
        elif util is not None and util <= previous:
            out.append(Problem(f"{ppath}.utilization", "values must be sorted in increasing order"))
        if util is not None:
            previous = util
        if score is not None and not 0 <= score <= 10:
            out.append(Problem(f"{ppath}.score", "not in valid range [0, 10]"))


def _pod_topology_spread(args: dict[str, Any], path: str, out: list[Problem]) -> None:
    defaulting = args.get("defaultingType")
    if defaulting is not None and defaulting not in ("System", "List"):
        out.append(
            Problem(f"{path}.defaultingType", f"{quote(defaulting)}: must be System or List")
        )
    cpath = f"{path}.defaultConstraints"
    constraints = check_list(args.get("defaultConstraints"), cpath, out)
    if constraints and defaulting in (None, "System"):
        out.append(
            Problem(cpath, 'when .defaultingType is "System", .defaultConstraints must be empty')
        )
    seen: set[tuple[Any, Any]] = set()
    schema = {
        "maxSkew": int,
        "topologyKey": str,
        "whenUnsatisfiable": str,
        "labelSelector": dict,
        "minDomains": int,
        "nodeAffinityPolicy": str,
        "nodeTaintsPolicy": str,
        "matchLabelKeys": list,
    }
    for i, raw in enumerate(constraints):
        ipath = f"{cpath}[{i}]"
        c = check_fields(raw, schema, ipath, out)
        skew = _int(c.get("maxSkew"))
        if skew is None or skew <= 0:
            out.append(Problem(f"{ipath}.maxSkew", "must be greater than zero"))
        if not c.get("topologyKey"):
            out.append(Problem(f"{ipath}.topologyKey", "can not be empty"))
        action = c.get("whenUnsatisfiable")
        if action not in SPREAD_ACTIONS:
            out.append(
                Problem(
                    f"{ipath}.whenUnsatisfiable",
                    f"{quote(action)}: must be DoNotSchedule or ScheduleAnyway",
                )
            )
        if c.get("labelSelector") is not None:
            out.append(
                Problem(
                    f"{ipath}.labelSelector",
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        key = (c.get("topologyKey"), action)
        if key in seen:
            out.append(Problem(ipath, f"Duplicate value: {key[0]}/{key[1]}"))
        seen.add(key)


def _volume_binding(args: dict[str, Any], path: str, out: list[Problem]) -> None:
    timeout = _int(args.get("bindTimeoutSeconds"))
    if timeout is not None and timeout < 0:
        out.append(
            Problem(
                f"{path}.bindTimeoutSeconds",
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        )


_RULES = {
    "DefaultPreemption": _default_preemption,
    "InterPodAffinity": _inter_pod_affinity,
    "NodeResourcesBalancedAllocation": _balanced_allocation,
    "NodeResourcesFit": _node_resources_fit,
    "PodTopologySpread": _pod_topology_spread,
    "VolumeBinding": _volume_binding,
}
