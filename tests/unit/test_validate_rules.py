"""KubeSchedulerConfiguration rules (as kube-scheduler's pkg/scheduler/apis/config/validation/validation.go checks them) plus the multi-scheduler traps."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kschedctl.model.config.durations import parse_go_duration as parse_duration
from kschedctl.model.config.validation import check_config
from kschedctl.model.config.versions import parse_version

V136 = parse_version("1.36")
GOOD: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": True, "resourceName": "my-scheduler"},
    "profiles": [{"schedulerName": "my-scheduler"}],
}


def _with(path: str, value: Any) -> dict[str, Any]:
    """GOOD with one field set: path like 'profiles.0.plugins'."""
    doc = copy.deepcopy(GOOD)
    *parents, last = path.split(".")
    node: Any = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


def _messages(doc: Any, version: str = "1.36", **kwargs: Any) -> list[str]:
    return [str(p) for p in check_config(doc, parse_version(version), **kwargs)]


def test_good_config_is_valid() -> None:
    assert _messages(GOOD) == []


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("apiVersion", "kubescheduler.config.k8s.io/v1beta3", "was removed in Kubernetes 1.29"),
        ("apiVersion", "kubescheduler.config.k8s.io/v1beta2", "was removed in Kubernetes 1.28"),
        ("apiVersion", "v1", "is not a kube-scheduler config API version"),
        ("kind", "Policy", "kind: must be KubeSchedulerConfiguration"),
        ("extra", 1, "extra: unknown field"),
        ("profiles.0.schedulerNam", "x", "profiles[0].schedulerNam: unknown field"),
        ("parallelism", 0, "parallelism: should be an integer value greater than zero"),
        ("parallelism", "16", "parallelism: must be an integer"),
        ("percentageOfNodesToScore", -1, "not in valid range [0-100]"),
        ("podInitialBackoffSeconds", 0, "podInitialBackoffSeconds: must be greater than 0"),
        ("podMaxBackoffSeconds", 0, "must be greater than or equal to PodInitialBackoffSeconds"),
        ("clientConnection", {"burst": -1}, "clientConnection.burst: must be non-negative"),
        (
            "clientConnection",
            {"qpz": 1},
            "clientConnection.qpz: unknown field (did you mean 'qps'?)",
        ),
        ("leaderElection.resourceLock", "endpoints", 'resourceLock value must be "leases"'),
        ("leaderElection.leaseDuration", "-1s", "leaseDuration: must be greater than zero"),
        ("leaderElection.retryPeriod", "-1s", "retryPeriod: must be greater than zero"),
        (
            "leaderElection.renewDeadline",
            "15s",
            "leaseDuration: 15s must be greater than renewDeadline",
        ),
        ("leaderElection.resourceName", "kube-scheduler", "the default scheduler's lock"),
        ("leaderElection", {"leaderElect": True}, "defaults to 'kube-scheduler'"),
        ("profiles", [], "no profiles"),
        ("profiles.0", {}, "defaults to 'default-scheduler'"),
        ("profiles.0.schedulerName", "default-scheduler", "is the cluster's own scheduler"),
        ("profiles.0.percentageOfNodesToScore", 101, "profiles[0].percentageOfNodesToScore"),
        ("profiles.0.plugins", {"scores": {}}, "profiles[0].plugins.scores: unknown field"),
        (
            "profiles.0.plugins",
            {"filter": {"enabled": [{"name": "EBSLimits"}]}},
            "profiles[0].plugins.filter.enabled[0].name: plugin 'EBSLimits' was invalid",
        ),
        (
            "profiles.0.plugins",
            {"score": {"enabled": [{"name": "SelectorSpread"}]}},
            "use PodTopologySpread",
        ),
        (
            "profiles.0.plugins",
            {"queueSort": {"enabled": [{"name": "A"}, {"name": "B"}]}},
            "only one queue sort plugin can be enabled",
        ),
        (
            "profiles.0.plugins",
            {"score": {"enabled": [{}]}},
            'enabled[0].name: ScorePlugin "" does not exist',
        ),
        (
            "profiles.0.pluginConfig",
            [{"name": "X"}, {"name": "X"}],
            "profiles[0].pluginConfig[1].name: Duplicate value: 'X'",
        ),
        ("profiles.0.pluginConfig", [{"name": "GCEPDLimits"}], "'GCEPDLimits' was invalid"),
        (
            "profiles.0.pluginConfig",
            [{"name": "InterPodAffinity", "args": {"kind": "NodeAffinityArgs"}}],
            "has to match plugin args (InterPodAffinityArgs)",
        ),
        (
            "profiles.0.pluginConfig",
            [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}],
            "hardPodAffinityWeight: not in valid range [0, 100]",
        ),
        (
            "profiles.0.pluginConfig",
            [{"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 200}}],
            "minCandidateNodesPercentage: not in valid range [0, 100]",
        ),
        (
            "profiles.0.pluginConfig",
            [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Random"}}}],
            "scoringStrategy.type: Unsupported value: 'Random'",
        ),
        (
            "profiles.0.pluginConfig",
            [{"name": "NodeResourcesFit", "args": {"scoringStrategie": {}}}],
            "args.scoringStrategie: unknown field (did you mean 'scoringStrategy'?)",
        ),
        (
            "profiles.0.pluginConfig",
            [
                {
                    "name": "NodeResourcesBalancedAllocation",
                    "args": {"resources": [{"name": "cpu", "weight": 2}]},
                }
            ],
            "resources[0].weight: must be 1 (got 2)",
        ),
        (
            "profiles.0.pluginConfig",
            [{"name": "PodTopologySpread", "args": {"defaultConstraints": [{"maxSkew": 1}]}}],
            'defaultingType: "System" is invalid when .defaultConstraints are not empty',
        ),
        (
            "profiles.0.pluginConfig",
            [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": -1}}],
            "should not be a negative value",
        ),
        ("extenders", [{"urlPrefix": "u", "prioritizeVerb": "p"}], "must have a positive weight"),
        (
            "extenders",
            [{"urlPrefix": "a", "bindVerb": "b"}, {"urlPrefix": "c", "bindVerb": "b"}],
            "only one extender can implement bind",
        ),
        (
            "extenders",
            [{"urlPrefix": "a", "managedResources": [{"name": "gpu"}]}],
            "'gpu' is an invalid extended resource name",
        ),
        ("extenders", [{"urlPrefix": "a", "httpTimeout": "5"}], "is not a duration"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None,
)
def test_rules(path: str, value: Any, expected: str) -> None:
    messages = _messages(_with(path, value))
    assert any(expected in m for m in messages), messages


def test_queue_sort_must_match_across_profiles() -> None:
    doc = _with(
        "profiles",
        [
            {"schedulerName": "a"},
            {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "Other"}]}}},
        ],
    )
    assert any("plugins.queueSort: must be the same for all profiles" in m for m in _messages(doc))


def test_leader_election_rules_are_skipped_when_off() -> None:
    doc = _with(
        "leaderElection", {"leaderElect": False, "leaseDuration": "1s", "resourceLock": "x"}
    )
    assert _messages(doc) == []


def test_replacing_the_default_allows_its_name_and_lease() -> None:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{}],
    }
    assert _messages(doc, replaces_default=True) == []
    assert len(_messages(doc)) == 2


def test_version_aware_fields_and_plugins() -> None:
    doc = _with("delayCacheUntilActive", True)
    assert _messages(doc, "1.28") == []
    assert any("delayCacheUntilActive: unknown field" in m for m in _messages(doc, "1.27"))
    doc = _with("profiles.0.plugins", {"filter": {"enabled": [{"name": "EBSLimits"}]}})
    # validation.go lists the cloud volume-limit plugins as invalid in v1 from 1.31 on
    # (invalidPluginsByVersion); 1.30 still builds them.
    assert _messages(doc, "1.30") == []
    assert any("EBSLimits" in m for m in _messages(doc, "1.31"))
    doc = _with("profiles.0.plugins", {"preEnqueue": {}})
    assert _messages(doc, "1.26") == []
    assert any("preEnqueue: unknown field" in m for m in _messages(doc, "1.25"))


def test_prefix_and_source_name_the_field() -> None:
    problems = check_config(_with("parallelism", 0), V136, prefix="spec.", source="f.yaml")
    assert [str(p) for p in problems] == [
        "f.yaml: spec.parallelism: should be an integer value greater than zero"
    ]


def test_not_a_mapping() -> None:
    assert _messages(["x"]) == ["a KubeSchedulerConfiguration must be a mapping"]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15s", 15),
        ("1m30s", 90),
        ("500ms", 0.5),
        ("1h", 3600),
        ("0", 0),
        ("-2s", -2),
        ("1.5s", 1.5),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "15", "s", "1d", "15 s", 15])
def test_parse_duration_refuses(text: Any) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("renew", "retry", "refused"),
    [
        ("12s", "10s", True),
        # client-go: time.Duration(1.2 * 3e9) is exactly 3.6e9 ns, so 3600ms is refused
        # (in float seconds 3 x 1.2 is 3.5999…, which would let it pass)
        ("3600ms", "3s", True),
        ("3600000001ns", "3s", False),
        ("1200ms", "1s", True),
        ("1201ms", "1s", False),
    ],
)
def test_renew_deadline_against_retry_period_jitter(renew: str, retry: str, refused: bool) -> None:
    le = {**GOOD["leaderElection"], "leaseDuration": "15s", "renewDeadline": renew}
    messages = _messages(_with("leaderElection", {**le, "retryPeriod": retry}))
    hit = [m for m in messages if "retryPeriod*JitterFactor" in m]
    assert bool(hit) is refused, messages
