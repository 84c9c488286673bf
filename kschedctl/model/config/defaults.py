"""kube-scheduler's defaulting of a decoded KubeSchedulerConfiguration, on plain dicts.

Pure. kube-scheduler validates the DEFAULTED config, so ``retryPeriod: 0s``, an empty
``resourceName`` or a resource ``weight: 0`` are valid: defaulting fills them first. Mirrors
``pkg/scheduler/apis/config/v1/defaults.go`` (SetDefaults_KubeSchedulerConfiguration and the
SetDefaults_*Args) and component-base's ``config/v1alpha1/defaults.go``
(RecommendedDefaultLeaderElectionConfiguration). These functions are the same in 1.25–1.37
for everything defaulted here (checked against each version's defaults.go); the default
plugin set (mergePlugins) belongs to the framework step, not here.

Only values of the right type are defaulted: a wrong type is left for the strict-decoding
checks to report. The input is never modified.
"""

from __future__ import annotations

import copy
from typing import Any

from kschedctl.model.config.durations import parse_go_duration
from kschedctl.model.config.versions import DEFAULT_LEASE_NAME, DEFAULT_SCHEDULER_NAME

__all__ = ["default_args", "default_config"]

LEASE_NAMESPACE = "kube-system"  # configv1.SchedulerDefaultLockObjectNamespace
_DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
# metav1.Duration zero values are replaced (RecommendedDefaultLeaderElectionConfiguration).
_LEASE_DURATIONS = {"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"}


def _zero(value: Any) -> bool:
    """Whether ``value`` decodes to Go's zero value (null, "", 0, false, 0s)."""
    return value is None or value == "" or value is False or value == 0


def _zero_duration(value: Any) -> bool:
    """A zero Go duration ("0s", "0"). A null one is not: metav1.Duration's UnmarshalJSON
    parses it as "", which kube-scheduler refuses (validation reports it)."""
    try:
        return isinstance(value, str) and parse_go_duration(value) == 0
    except ValueError:
        return False  # reported by validation


def _fill(obj: dict[str, Any], key: str, value: Any, *, zero: bool = True) -> None:
    """Default ``obj[key]``: when absent or null, and with ``zero`` also when Go's zero value
    (the field is a plain value, not a pointer, upstream)."""
    current = obj.get(key)
    if current is None or (zero and _zero(current) and not isinstance(current, (dict, list))):
        obj[key] = copy.deepcopy(value)


def default_config(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` with SetDefaults_KubeSchedulerConfiguration applied."""
    out = copy.deepcopy(doc)
    _fill(out, "parallelism", 16, zero=False)
    profiles = out.get("profiles")
    if profiles is None or profiles == []:
        out["profiles"] = profiles = [{}]
    if isinstance(profiles, list):
        # A null item decodes into the zero KubeSchedulerProfile, like an empty mapping.
        profiles[:] = [{} if p is None else p for p in profiles]
        # Only a single profile gets a default name: an absent or null one, never "".
        if len(profiles) == 1 and isinstance(profiles[0], dict):
            _fill(profiles[0], "schedulerName", DEFAULT_SCHEDULER_NAME, zero=False)
        for profile in profiles:
            configs = profile.get("pluginConfig") if isinstance(profile, dict) else None
            for entry in configs if isinstance(configs, list) else []:
                if isinstance(entry, dict) and isinstance(entry.get("args"), dict):
                    entry["args"] = default_args(str(entry.get("name")), entry["args"])
    _fill(out, "percentageOfNodesToScore", 0, zero=False)
    le = _section(out, "leaderElection")
    if isinstance(le, dict):
        for key, value in (
            ("resourceLock", "leases"),
            ("resourceNamespace", LEASE_NAMESPACE),
            ("resourceName", DEFAULT_LEASE_NAME),
        ):
            if le.get(key) in (None, ""):
                le[key] = value
        for key, value in _LEASE_DURATIONS.items():
            if key not in le or _zero_duration(le[key]):
                le[key] = value
        _fill(le, "leaderElect", True, zero=False)
    cc = _section(out, "clientConnection")
    if isinstance(cc, dict):
        if cc.get("contentType") in (None, ""):
            cc["contentType"] = "application/vnd.kubernetes.protobuf"
        defaults: dict[str, float | int] = {"qps": 50.0, "burst": 100}
        for key, number in defaults.items():
            if cc.get(key) is None or (cc[key] == 0 and not isinstance(cc[key], bool)):
                cc[key] = number
    _fill(out, "podInitialBackoffSeconds", 1, zero=False)
    _fill(out, "podMaxBackoffSeconds", 10, zero=False)
    _fill(out, "enableProfiling", True, zero=False)
    if out["enableProfiling"] is True:
        _fill(out, "enableContentionProfiling", True, zero=False)
    return out


def default_args(plugin: str, args: dict[str, Any]) -> dict[str, Any]:
    """A copy of one plugin's ``args`` with its SetDefaults_<Plugin>Args applied."""
    out = copy.deepcopy(args)
    if plugin == "DefaultPreemption":
        _fill(out, "minCandidateNodesPercentage", 10, zero=False)
        _fill(out, "minCandidateNodesAbsolute", 100, zero=False)
    elif plugin == "InterPodAffinity":
        _fill(out, "hardPodAffinityWeight", 1, zero=False)
    elif plugin == "VolumeBinding":
        # The default shape needs the StorageCapacityScoring gate, off by default in 1.25–1.37.
        _fill(out, "bindTimeoutSeconds", 600, zero=False)
    elif plugin == "PodTopologySpread":
        if out.get("defaultingType") in (None, ""):
            out["defaultingType"] = "System"
    elif plugin == "NodeResourcesBalancedAllocation":
        if out.get("resources") in (None, []):
            out["resources"] = list(copy.deepcopy(_DEFAULT_RESOURCES))
        _weights_zero_to_one(out.get("resources"))
    elif plugin == "NodeResourcesFit":
        if out.get("scoringStrategy") is None:
            out["scoringStrategy"] = {"type": "LeastAllocated"}
        strategy = out["scoringStrategy"]
        if isinstance(strategy, dict):
            if strategy.get("resources") in (None, []):
                strategy["resources"] = list(copy.deepcopy(_DEFAULT_RESOURCES))
            _weights_zero_to_one(strategy.get("resources"))
    return out


def _weights_zero_to_one(resources: Any) -> None:
    for res in resources if isinstance(resources, list) else []:
        if isinstance(res, dict) and (res.get("weight") is None or res.get("weight") == 0):
            if not isinstance(res.get("weight"), bool):
                res["weight"] = 1


def _section(doc: dict[str, Any], key: str) -> Any:
    """The struct at ``key``, an absent or null one as {}: Go decodes null into a struct's zero
    value, which defaulting then fills (``leaderElection:`` alone is a default Lease)."""
    if doc.get(key) is None:
        doc[key] = {}
    return doc[key]
