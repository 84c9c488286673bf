"""Rules for in-tree plugin args (``pluginConfig[].args``), as kube-scheduler checks them.

Pure. Paraphrases ``pkg/scheduler/apis/config/validation/validation_pluginargs.go``; the
NodeResourcesFit rules run when the framework is built rather than in validation.go, but they
stop the scheduler all the same, so they are checked here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kschedctl.base.errors import Problem, quote
from kschedctl.model.config.durations import parse_go_duration
from kschedctl.model.config.schema import GO_INT32, GO_INT64, check_fields, check_list
from kschedctl.model.config.shapes import label_value_problems, qualified_name_problems
from kschedctl.model.config.versions import CONFIG_API_VERSION

SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
SPREAD_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")
MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore

# Version differences in validation_pluginargs.go (1.25–1.37):
# - the feature gate VolumeBinding's `shape` needs (off by default in every version);
# - since 1.36 type RequestedToCapacityRatio requires requestedToCapacityRatio and other
#   types forbid it; before, only a given shape was checked (at scoringStrategy.shape);
# - before 1.33 the unsorted-shape message began "utilization values must be…".
SHAPE_GATE = {25: "VolumeCapacityPriority", 33: "StorageCapacityScoring"}
RTCR_REQUIRED_SINCE = 36
SHAPE_SORTED_WORDING_SINCE = 33

# DynamicResourcesArgs (types_pluginargs.go): its fields by version, and since when the feature
# gates bindingTimeout needs (DRADeviceBindingConditions, DRAResourceClaimDeviceStatus) are on
# by default. filterTimeout's gate (DRASchedulerFilterTimeout) is on since the field exists.
DRA_FIELDS = {34: ("filterTimeout",), 35: ("filterTimeout", "bindingTimeout")}
DRA_BINDING_TIMEOUT_SINCE = 36

_NODE_SELECTOR_REQUIREMENT = {"key": str, "operator": str, "values": list}
_NODE_SELECTOR_TERM = {"matchExpressions": list, "matchFields": list}


def _since(table: Mapping[int, str], minor: int) -> str:
    return table[max(k for k in table if k <= minor)]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _not_supported(value: Any, supported: tuple[str, ...]) -> str:
    listing = ", ".join(f'"{v}"' for v in supported)
    return f"Unsupported value: {quote(value)}: supported values: {listing}"


def check_args(
    plugin: str,
    args: dict[str, Any],
    path: str,
    out: list[Problem],
    minor: int = 36,
) -> None:
    """One pluginConfig entry's (defaulted) ``args`` of a plugin of :data:`PLUGIN_ARGS`: type
    meta, strict shape, then the plugin's ValidateXArgs (``minor``: the Kubernetes minor
    version's rules)."""
    kind = args.get("kind")
    if kind is not None and kind != f"{plugin}Args":
        out.append(
            Problem(f"{path}.kind", f"{quote(kind)} has to match plugin args ({plugin}Args)")
        )
    api_version = args.get("apiVersion")
    if api_version is not None and api_version != CONFIG_API_VERSION:
        out.append(Problem(f"{path}.apiVersion", f"must be {CONFIG_API_VERSION}"))
    fields = PLUGIN_ARGS[plugin].fields
    if plugin == "DynamicResources" and minor >= min(DRA_FIELDS):
        fields = dict.fromkeys(DRA_FIELDS[max(k for k in DRA_FIELDS if k <= minor)], str)
    if fields is None:
        return
    check_fields(args, {"apiVersion": str, "kind": str, **fields}, path, out)
    PLUGIN_ARGS[plugin].rules(args, path, out, minor)


def _default_preemption(args: dict[str, Any], path: str, out: list[Problem], minor: int) -> None:
    pct = _int(args.get("minCandidateNodesPercentage"))
    absolute = _int(args.get("minCandidateNodesAbsolute"))
    ppath, apath = f"{path}.minCandidateNodesPercentage", f"{path}.minCandidateNodesAbsolute"
    if pct is not None and not 0 <= pct <= 100:
        out.append(Problem(ppath, f"not in valid range [0, 100] (got {pct})"))
    if absolute is not None and absolute < 0:
        out.append(Problem(apath, f"not in valid range [0, inf) (got {absolute})"))
    if pct == 0 and absolute == 0:
        out.append(Problem(ppath, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        out.append(Problem(apath, "cannot be zero at the same time as minCandidateNodesPercentage"))


def _inter_pod_affinity(args: dict[str, Any], path: str, out: list[Problem], minor: int) -> None:
    weight = _int(args.get("hardPodAffinityWeight"))
    if weight is not None and not 0 <= weight <= 100:
        out.append(
            Problem(f"{path}.hardPodAffinityWeight", f"not in valid range [0, 100] (got {weight})")
        )


def _resources(raw: Any, path: str, out: list[Problem]) -> list[dict[str, Any]]:
    resources = []
    for i, res in enumerate(check_list(raw, path, out)):
        resources.append(check_fields(res, {"name": str, "weight": GO_INT64}, f"{path}[{i}]", out))
    return resources


def _balanced_allocation(args: dict[str, Any], path: str, out: list[Problem], minor: int) -> None:
    seen: set[str] = set()
    rpath = f"{path}.resources"
    for i, res in enumerate(_resources(args.get("resources"), rpath, out)):
        name = res.get("name")
        if isinstance(name, str) and name in seen:
            out.append(Problem(f"{rpath}[{i}].name", f"Duplicate value: {quote(name)}"))
        if isinstance(name, str):
            seen.add(name)
        weight = _int(res.get("weight"))
        if weight is not None and weight != 1:
            out.append(Problem(f"{rpath}[{i}].weight", f"must be 1 (got {weight})"))


def _function_shape(raw: Any, path: str, out: list[Problem], minor: int) -> None:
    """validateFunctionShape: at least one point, increasing utilization, ranges."""
    shape = check_list(raw, path, out)
    if not shape:
        out.append(Problem(path, "Required value: at least one point must be specified"))
        return
    points = [
        check_fields(p, {"utilization": GO_INT32, "score": GO_INT32}, f"{path}[{i}]", out)
        for i, p in enumerate(shape)
    ]
    utils = [_int(p.get("utilization")) or 0 for p in points]
    sorted_words = "values" if minor >= SHAPE_SORTED_WORDING_SINCE else "utilization values"
    for i in range(1, len(utils)):
        if utils[i - 1] >= utils[i]:
            out.append(
                Problem(
                    f"{path}[{i}].utilization",
                    f"{sorted_words} must be sorted in increasing order (got {utils[i]})",
                )
            )
            break
    for i, point in enumerate(points):
        util, score = utils[i], _int(point.get("score")) or 0
        if not 0 <= util <= 100:
            out.append(
                Problem(f"{path}[{i}].utilization", f"not in valid range [0, 100] (got {util})")
            )
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            out.append(
                Problem(
                    f"{path}[{i}].score",
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}] (got {score})",
                )
            )


def _node_resources_fit(args: dict[str, Any], path: str, out: list[Problem], minor: int) -> None:
    # Checked when the plugin is built (frameworkruntime.NewFramework → the plugin's New),
    # not in validation.go, which keys it as "NodeResourcesFitArgs" and never matches.
    for i, res in enumerate(
        check_list(args.get("ignoredResources"), f"{path}.ignoredResources", out)
    ):
        res = "" if res is None else res  # a null item of a []string decodes as ""
        if isinstance(res, str):
            for msg in qualified_name_problems(res):
                out.append(Problem(f"{path}.ignoredResources[{i}]", f"{quote(res)}: {msg}"))
    gpath = f"{path}.ignoredResourceGroups"
    for i, group in enumerate(check_list(args.get("ignoredResourceGroups"), gpath, out)):
        group = "" if group is None else group
        if not isinstance(group, str):
            continue
        if "/" in group:
            out.append(
                Problem(f"{gpath}[{i}]", f"{quote(group)}: resource group name can't contain '/'")
            )
        for msg in qualified_name_problems(group):
            out.append(Problem(f"{gpath}[{i}]", f"{quote(group)}: {msg}"))
    spath = f"{path}.scoringStrategy"
    if args.get("scoringStrategy") is None:
        out.append(Problem(spath, "Required value: ScoringStrategy field is required"))
        return
    strategy = check_fields(
        args.get("scoringStrategy"),
        {"type": str, "resources": list, "requestedToCapacityRatio": dict},
        spath,
        out,
    )
    kind = strategy.get("type") or ""
    if kind not in SCORING_STRATEGIES:
        out.append(Problem(f"{spath}.type", _not_supported(kind, SCORING_STRATEGIES)))
    for i, res in enumerate(_resources(strategy.get("resources"), f"{spath}.resources", out)):
        weight = _int(res.get("weight"))
        if weight is not None and not 0 < weight <= 100:
            out.append(
                Problem(
                    f"{spath}.resources[{i}].weight",
                    f"resource weight of {res.get('name', '')} not in valid range (0, 100] "
                    f"(got {weight})",
                )
            )
    ratio_path = f"{spath}.requestedToCapacityRatio"
    ratio = strategy.get("requestedToCapacityRatio")
    fields = check_fields(ratio, {"shape": list}, ratio_path, out)
    if minor < RTCR_REQUIRED_SINCE:
        if ratio is not None:
            _function_shape(fields.get("shape"), f"{spath}.shape", out, minor)
    elif kind == "RequestedToCapacityRatio":
        if ratio is None:
            out.append(
                Problem(
                    ratio_path,
                    "Required value: must be specified when type is RequestedToCapacityRatio",
                )
            )
        else:
            _function_shape(fields.get("shape"), f"{ratio_path}.shape", out, minor)
    elif ratio is not None:
        out.append(
            Problem(ratio_path, "Forbidden: must be nil when type is not RequestedToCapacityRatio")
        )


def _node_affinity(args: dict[str, Any], path: str, out: list[Problem], minor: int) -> None:
    """ValidateNodeAffinityArgs: the selectors as component-helpers' nodeaffinity parses them
    (NewNodeSelector, NewPreferredSchedulingTerms), plus the strict shape of v1.NodeAffinity."""
    apath = f"{path}.addedAffinity"
    affinity = check_fields(
        args.get("addedAffinity"),
        {
            "requiredDuringSchedulingIgnoredDuringExecution": dict,
            "preferredDuringSchedulingIgnoredDuringExecution": list,
        },
        apath,
        out,
    )
    rpath = f"{apath}.requiredDuringSchedulingIgnoredDuringExecution"
    required = check_fields(
        affinity.get("requiredDuringSchedulingIgnoredDuringExecution"),
        {"nodeSelectorTerms": list},
        rpath,
        out,
    )
    tpath = f"{rpath}.nodeSelectorTerms"
    for i, term in enumerate(check_list(required.get("nodeSelectorTerms"), tpath, out)):
        _node_selector_term(term, f"{tpath}[{i}]", out)
    ppath = f"{apath}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, raw in enumerate(
        check_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"), ppath, out)
    ):
        pref = check_fields(raw, {"weight": GO_INT32, "preference": dict}, f"{ppath}[{i}]", out)
        term = pref.get("preference")
        # NewPreferredSchedulingTerms skips a term of weight 0 or an empty preference.
        if not _int(pref.get("weight")) or not term:
            check_fields(term, _NODE_SELECTOR_TERM, f"{ppath}[{i}].preference", out)
            continue
        _node_selector_term(term, f"{ppath}[{i}]", out)


def _node_selector_term(raw: Any, path: str, out: list[Problem]) -> None:
    # (a preferred term's errors are at [i].matchX, as kube-scheduler reports them)
    where = path
    term = check_fields(raw, _NODE_SELECTOR_TERM, path, out)
    epath = f"{where}.matchExpressions"
    for i, raw_req in enumerate(check_list(term.get("matchExpressions"), epath, out)):
        before = len(out)
        req = check_fields(raw_req, _NODE_SELECTOR_REQUIREMENT, f"{epath}[{i}]", out)
        if len(out) == before:  # (a value that does not decode stops kube-scheduler there)
            _label_requirement(req, f"{epath}[{i}]", out)
    fpath = f"{where}.matchFields"
    for i, raw_req in enumerate(check_list(term.get("matchFields"), fpath, out)):
        req = check_fields(raw_req, _NODE_SELECTOR_REQUIREMENT, f"{fpath}[{i}]", out)
        op = req.get("operator") or ""
        values = req.get("values") or []
        if op not in FIELD_OPERATORS:
            out.append(Problem(f"{fpath}[{i}].operator", _not_supported(op, FIELD_OPERATORS)))
        elif len(values) != 1:
            out.append(Problem(f"{fpath}[{i}].values", "must have one element"))


def _go_int64(text: str) -> bool:
    """Whether strconv.ParseInt(text, 10, 64) reads ``text`` (sign, digits, within int64)."""
    return bool(re.fullmatch(r"[-+]?[0-9]+", text)) and -(2**63) <= int(text) < 2**63


def label_selector_problems(raw: Any, path: str) -> list[Problem]:
    """A metav1.LabelSelector's problems (matchLabels keys and values, matchExpressions with
    In/NotIn/Exists/DoesNotExist), as the API server's ValidateLabelSelector reports them."""
    out: list[Problem] = []
    selector = check_fields(raw, {"matchLabels": dict, "matchExpressions": list}, path, out)
    for key, value in (selector.get("matchLabels") or {}).items():
        kpath = f"{path}.matchLabels"
        for msg in qualified_name_problems(str(key)):
            out.append(Problem(kpath, f"{quote(key)}: {msg}"))
        if not isinstance(value, str):
            out.append(Problem(f"{kpath}.{key}", f"must be a string, not {quote(value)}"))
            continue
        for msg in label_value_problems(value):
            out.append(Problem(f"{kpath}.{key}", f"{quote(value)}: {msg}"))
    epath = f"{path}.matchExpressions"
    for i, raw_req in enumerate(check_list(selector.get("matchExpressions"), epath, out)):
        before = len(out)
        req = check_fields(raw_req, _NODE_SELECTOR_REQUIREMENT, f"{epath}[{i}]", out)
        if len(out) == before:
            _label_requirement(req, f"{epath}[{i}]", out, LABEL_OPERATORS)
    return out


LABEL_OPERATORS = NODE_OPERATORS[:4]  # a LabelSelector has no Gt/Lt


def _label_requirement(
    req: dict[str, Any], path: str, out: list[Problem], operators: tuple[str, ...] = NODE_OPERATORS
) -> None:
    """labels.NewRequirement's rules (apimachinery pkg/labels/selector.go)."""
    op = req.get("operator") or ""
    if op not in operators:
        out.append(Problem(f"{path}.operator", _not_supported(op, operators)))
        return
    key = req.get("key") or ""
    for msg in qualified_name_problems(key):
        out.append(Problem(f"{path}.key", f"{quote(key)}: {msg}"))
    # a null item of a []string decodes as ""; other types are strict decoding's to report
    values = ["" if v is None else v for v in req.get("values") or []]
    values = [v for v in values if isinstance(v, str)]
    if op in ("In", "NotIn") and not values:
        out.append(
            Problem(f"{path}.values", "for 'in', 'notin' operators, values set can't be empty")
        )
    elif op in ("Exists", "DoesNotExist") and values:
        out.append(
            Problem(f"{path}.values", "values set must be empty for exists and does not exist")
        )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            out.append(
                Problem(f"{path}.values", "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        elif not _go_int64(values[0]):
            out.append(
                Problem(
                    f"{path}.values[0]", "for 'Gt', 'Lt' operators, the value must be an integer"
                )
            )
    for i, value in enumerate(values):
        for msg in label_value_problems(value):
            out.append(Problem(f"{path}.values[{i}]", f"{quote(value)}: {msg}"))


def _pod_topology_spread(args: dict[str, Any], path: str, out: list[Problem], minor: int) -> None:
    defaulting = args.get("defaultingType") or ""
    cpath = f"{path}.defaultConstraints"
    constraints = check_list(args.get("defaultConstraints"), cpath, out)
    if defaulting not in ("System", "List"):
        out.append(
            Problem(f"{path}.defaultingType", _not_supported(defaulting, ("System", "List")))
        )
    elif defaulting == "System" and constraints:
        out.append(
            Problem(
                f"{path}.defaultingType",
                '"System" is invalid when .defaultConstraints are not empty (use "List")',
            )
        )
    schema = {
        "maxSkew": GO_INT32,
        "topologyKey": str,
        "whenUnsatisfiable": str,
        "labelSelector": dict,
        "minDomains": GO_INT32,
        "nodeAffinityPolicy": str,
        "nodeTaintsPolicy": str,
        "matchLabelKeys": list,
    }
    seen: set[tuple[Any, Any]] = set()
    for i, raw in enumerate(constraints):
        ipath = f"{cpath}[{i}]"
        c = check_fields(raw, schema, ipath, out)
        skew = _int(c.get("maxSkew")) or 0
        if skew <= 0:
            out.append(Problem(f"{ipath}.maxSkew", f"not in valid range (0, inf) (got {skew})"))
        key = c.get("topologyKey") or ""
        if not key:
            out.append(Problem(f"{ipath}.topologyKey", "Required value: can not be empty"))
        for msg in qualified_name_problems(key) if key else []:
            out.append(Problem(f"{ipath}.topologyKey", f"{quote(key)}: {msg}"))
        action = c.get("whenUnsatisfiable") or ""
        if not action:
            out.append(Problem(f"{ipath}.whenUnsatisfiable", "Required value: can not be empty"))
        elif action not in SPREAD_ACTIONS:
            out.append(
                Problem(f"{ipath}.whenUnsatisfiable", _not_supported(action, SPREAD_ACTIONS))
            )
        if c.get("labelSelector") is not None:
            out.append(
                Problem(
                    f"{ipath}.labelSelector",
                    "Forbidden: constraint must not define a selector, as they deduced for each "
                    "pod",
                )
            )
        if (key, action) in seen:
            out.append(Problem(ipath, f"Duplicate value: {{{key}, {action}}}"))
        seen.add((key, action))


def _volume_binding(args: dict[str, Any], path: str, out: list[Problem], minor: int) -> None:
    timeout = _int(args.get("bindTimeoutSeconds"))
    if timeout is not None and timeout < 0:
        out.append(
            Problem(
                f"{path}.bindTimeoutSeconds",
                f"invalid BindTimeoutSeconds, should not be a negative value (got {timeout})",
            )
        )
    if args.get("shape") is not None:  # its feature gate is off by default in 1.25–1.37
        out.append(
            Problem(
                f"{path}.shape",
                "unexpected field `shape`, remove it or turn on the feature gate "
                f"{_since(SHAPE_GATE, minor)}",
            )
        )


def _dynamic_resources(args: dict[str, Any], path: str, out: list[Problem], minor: int) -> None:
    """ValidateDynamicResourcesArgs with each version's default feature gates."""
    if minor < min(DRA_FIELDS):
        return
    timeouts: dict[str, float] = {}
    for key in ("filterTimeout", "bindingTimeout"):
        value = args.get(key)
        if isinstance(value, str):
            try:
                timeouts[key] = parse_go_duration(value)
            except ValueError as err:
                out.append(Problem(f"{path}.{key}", str(err)))
    if timeouts.get("filterTimeout", 0) < 0:
        out.append(Problem(f"{path}.filterTimeout", "must be zero or positive"))
    if "bindingTimeout" not in args or args["bindingTimeout"] is None:
        return
    if minor < DRA_BINDING_TIMEOUT_SINCE:
        out.append(
            Problem(
                f"{path}.bindingTimeout",
                "Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature "
                "gate is disabled",
            )
        )
    elif timeouts.get("bindingTimeout", 1) < 1:
        out.append(Problem(f"{path}.bindingTimeout", "must be at least 1 second"))


@dataclass(frozen=True)
class PluginArgs:
    """An in-tree plugin's args (kubescheduler.config.k8s.io/v1): the known fields (None:
    not checked) and the plugin's ValidateXArgs."""

    fields: Mapping[str, Any] | None
    rules: Callable[[dict[str, Any], str, list[Problem], int], None]


PLUGIN_ARGS = {
    "DefaultPreemption": PluginArgs(
        {"minCandidateNodesPercentage": GO_INT32, "minCandidateNodesAbsolute": GO_INT32},
        _default_preemption,
    ),
    "InterPodAffinity": PluginArgs(
        {"hardPodAffinityWeight": GO_INT32, "ignorePreferredTermsOfExistingPods": bool},
        _inter_pod_affinity,
    ),
    "NodeAffinity": PluginArgs({"addedAffinity": dict}, _node_affinity),
    "NodeResourcesBalancedAllocation": PluginArgs({"resources": list}, _balanced_allocation),
    "NodeResourcesFit": PluginArgs(
        {"ignoredResources": list, "ignoredResourceGroups": list, "scoringStrategy": dict},
        _node_resources_fit,
    ),
    "PodTopologySpread": PluginArgs(
        {"defaultConstraints": list, "defaultingType": str}, _pod_topology_spread
    ),
    "VolumeBinding": PluginArgs({"bindTimeoutSeconds": GO_INT64, "shape": list}, _volume_binding),
    "DynamicResources": PluginArgs(None, _dynamic_resources),
}
