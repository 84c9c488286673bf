"""build_profiles: what kube-scheduler refuses when it builds each profile's framework.

Every 1.36 case marked ``real`` was run against kube-scheduler v1.36.3 (``--config`` with a
kubeconfig pointing at https://127.0.0.1:1: it builds the frameworks before it needs the API
server, so a refused config exits at once with ``initializing profiles: creating profile for
scheduler name a: <message>`` and an accepted one keeps running); the expected message is the
one it printed. Other versions follow the generated tables (registry_data) for their source.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from kschedctl._generated import registry_data
from kschedctl.model.config import framework
from kschedctl.model.config.distributions import unknown_plugin_hint
from kschedctl.model.config.framework import (
    build_profiles,
    default_plugins,
    in_tree_plugins,
    missing_plugin_hint,
)
from kschedctl.model.config.validation import check_config
from kschedctl.model.config.versions import parse_version, supported_minors

ROOT = Path(__file__).resolve().parents[2]
PINNED_SOURCE = Path.home() / "go/pkg/mod/k8s.io/kubernetes@v1.36.3"


def _profile(plugins: dict[str, Any], name: str = "a", **extra: Any) -> dict[str, Any]:
    return {"schedulerName": name, "plugins": plugins, **extra}


def _on(*names: str) -> dict[str, Any]:
    return {"enabled": [{"name": n} for n in names]}


def _off(*names: str) -> dict[str, Any]:
    return {"disabled": [{"name": n} for n in names]}


def _problems(profiles: list[Any], minor: str = "1.36", **kw: Any) -> list[str]:
    return [str(p) for p in build_profiles({"profiles": profiles}, parse_version(minor), **kw)]


NOT_IN_TREE = "not an in-tree plugin of kube-scheduler 1.36: an out-of-tree plugin needs a "
NOT_IN_TREE += "scheduler image built with it"
# A plugin of a known distribution: the hint names the release that has it.
COSCHEDULING = "not an in-tree plugin of kube-scheduler 1.36: " + unknown_plugin_hint(
    "Coscheduling", 36
)

# (name, profiles, expected problems) for 1.36; every one checked against the real binary.
REAL_136: list[tuple[str, list[Any], list[str]]] = [
    (
        "removed before 1.25",
        [_profile({"filter": _on("NodeLabel")})],
        [
            'profiles[0].plugins.filter.enabled[0].name: FilterPlugin "NodeLabel" does not '
            "exist (removed before Kubernetes 1.25: use NodeAffinity)"
        ],
    ),
    (
        "out-of-tree at multiPoint: named by the first point the framework builds",
        [_profile({"multiPoint": _on("Coscheduling")})],
        [
            'profiles[0].plugins.multiPoint.enabled[0].name: PreFilterPlugin "Coscheduling" '
            f"does not exist ({COSCHEDULING})"
        ],
    ),
    (
        "multiPoint skips a point disabled with *",
        [_profile({"filter": _off("*"), "preFilter": _off("*"), "multiPoint": _on("Bar")})],
        [
            'profiles[0].plugins.multiPoint.enabled[0].name: PostFilterPlugin "Bar" does not '
            f"exist ({NOT_IN_TREE})"
        ],
    ),
    (
        "does not extend",
        [_profile({"filter": _on("ImageLocality")})],
        [
            'profiles[0].plugins.filter.enabled[0].name: plugin "ImageLocality" does not '
            "extend FilterPlugin plugin"
        ],
    ),
    (
        "does not extend PostBind",
        [_profile({"postBind": _on("DefaultBinder")})],
        [
            'profiles[0].plugins.postBind.enabled[0].name: plugin "DefaultBinder" does not '
            "extend PostBindPlugin plugin"
        ],
    ),
    (
        "does not extend PreEnqueue",
        [_profile({"preEnqueue": _on("NodeName")})],
        [
            'profiles[0].plugins.preEnqueue.enabled[0].name: plugin "NodeName" does not '
            "extend PreEnqueuePlugin plugin"
        ],
    ),
    (
        "twice at one point",
        [_profile({"filter": _on("NodeName", "NodeName")})],
        [
            'profiles[0].plugins.filter.enabled[1].name: plugin "NodeName" already registered '
            'as "FilterPlugin"'
        ],
    ),
    (
        "twice at bind",
        [_profile({"bind": _on("DefaultBinder", "DefaultBinder")})],
        [
            'profiles[0].plugins.bind.enabled[1].name: plugin "DefaultBinder" already '
            'registered as "BindPlugin"'
        ],
    ),
    (
        "twice at multiPoint",
        [_profile({"multiPoint": _on("NodeName", "NodeName")})],
        [
            'profiles[0].plugins.multiPoint.enabled[0].name: plugin "NodeName" already '
            'registered as "FilterPlugin"'
        ],
    ),
    (
        "a default plugin twice at multiPoint: its first point names it",
        [_profile({"multiPoint": _on("NodeResourcesFit", "NodeResourcesFit")})],
        [
            'profiles[0].plugins.multiPoint.enabled[0].name: plugin "NodeResourcesFit" already '
            'registered as "PreFilterPlugin"'
        ],
    ),
    (
        "the point's own setting of a multiPoint plugin is an override",
        [_profile({"multiPoint": _on("NodeName", "NodeName"), "filter": _on("NodeName")})],
        [],
    ),
    (
        "a multiPoint twice where its only point disables it",
        [_profile({"multiPoint": _on("NodeName", "NodeName"), "filter": _off("NodeName")})],
        [],
    ),
    (
        "no queue sort",
        [_profile({"queueSort": _off("*"), "multiPoint": _off("PrioritySort")})],
        [
            "profiles[0].plugins.queueSort: only one queue sort plugin required for profile "
            'with scheduler name "a", but got 0'
        ],
    ),
    (
        "no bind with bind disabled *",
        [_profile({"bind": _off("*")})],
        [
            "profiles[0].plugins.bind: at least one bind plugin is needed for profile with "
            'scheduler name "a"'
        ],
    ),
    (
        "no bind with the binder disabled at multiPoint",
        [_profile({"multiPoint": _off("DefaultBinder")})],
        [
            "profiles[0].plugins.bind: at least one bind plugin is needed for profile with "
            'scheduler name "a"'
        ],
    ),
    (
        "multiPoint disabled *: both (kube-scheduler names the queue sort first)",
        [_profile({"multiPoint": _off("*")})],
        [
            "profiles[0].plugins.queueSort: only one queue sort plugin required for profile "
            'with scheduler name "a", but got 0',
            "profiles[0].plugins.bind: at least one bind plugin is needed for profile with "
            'scheduler name "a"',
        ],
    ),
    (
        "a lone unnamed profile is default-scheduler",
        [{"plugins": {"bind": _off("*")}}],
        [
            "profiles[0].plugins.bind: at least one bind plugin is needed for profile with "
            'scheduler name "default-scheduler"'
        ],
    ),
    (
        "the second profile",
        [_profile({}, "a"), _profile({"multiPoint": _off("DefaultBinder")}, "b")],
        [
            "profiles[1].plugins.bind: at least one bind plugin is needed for profile with "
            'scheduler name "b"'
        ],
    ),
    (
        "SelectorSpread is gone from the registry",
        [_profile({"score": _on("SelectorSpread")})],
        [
            'profiles[0].plugins.score.enabled[0].name: ScorePlugin "SelectorSpread" does not '
            "exist (removed in Kubernetes 1.29: use PodTopologySpread)"
        ],
    ),
    (
        "validation.go does not read multiPoint for invalid plugins: the framework refuses",
        [_profile({"multiPoint": _on("EBSLimits")})],
        [
            'profiles[0].plugins.multiPoint.enabled[0].name: PreFilterPlugin "EBSLimits" does '
            "not exist (removed in Kubernetes 1.32: NodeVolumeLimits covers it)"
        ],
    ),
    ("queue sort re-enabled", [_profile({"queueSort": _on("PrioritySort")})], []),
    (
        "queue sort disabled * and enabled",
        [
            _profile(
                {"queueSort": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}]}}
            )
        ],
        [],
    ),
    (
        "a default plugin re-configured at multiPoint",
        [_profile({"multiPoint": _on("DefaultBinder")})],
        [],
    ),
    (
        "score weight override",
        [_profile({"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}})],
        [],
    ),
    (
        "filter disabled * then one enabled",
        [_profile({"filter": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeName"}]}})],
        [],
    ),
    ("gated-off plugins still build", [_profile({"permit": _on("GangScheduling")})], []),
    ("placementScore", [_profile({"placementScore": _on("PodGroupPodsCount")})], []),
    (
        "placementGenerate set at the point and at multiPoint: an override",
        [
            _profile(
                {
                    "placementGenerate": _on("TopologyPlacementGenerator"),
                    "multiPoint": _on("TopologyPlacementGenerator"),
                }
            )
        ],
        [],
    ),
    ("two profiles", [_profile({}, "a"), _profile({"filter": _off("NodeName")}, "b")], []),
    ("no profiles: the default one", [], []),
]


@pytest.mark.parametrize(
    ("profiles", "expected"), [c[1:] for c in REAL_136], ids=[c[0] for c in REAL_136]
)
def test_v1_36_as_the_real_kube_scheduler(profiles: list[Any], expected: list[str]) -> None:
    assert _problems(profiles) == expected


def test_every_refusal_is_reported_not_only_the_first() -> None:
    # kube-scheduler stops at the filter one (updatePluginList runs before multiPoint
    # expansion); fixing it would show the next.
    problems = _problems([_profile({"filter": _on("Foo"), "multiPoint": _on("Bar")})])
    assert [p.split(": ", 1)[1].split(" (")[0] for p in problems] == [
        'FilterPlugin "Foo" does not exist',
        'PreFilterPlugin "Bar" does not exist',
    ]


def test_invalid_plugins_are_left_to_validation_outside_multi_point() -> None:
    # validation.go refuses EBSLimits by name at every point but multiPoint (real binary:
    # 'Invalid value: "EBSLimits": was invalid in version "v1"'); no second problem here.
    assert _problems([_profile({"filter": _on("EBSLimits")})]) == []
    # 1.30 still has it in the registry and does not refuse it at all.
    assert _problems([_profile({"filter": _on("EBSLimits")})], "1.30") == []


def test_v1_25_has_no_pre_enqueue_and_no_scheduling_gates() -> None:
    assert "PreEnqueue" not in registry_data.EXTENSION_POINTS["1.25"]
    assert _problems([_profile({"multiPoint": _on("SchedulingGates")})], "1.25") == [
        'profiles[0].plugins.multiPoint.enabled[0].name: PreFilterPlugin "SchedulingGates" '
        "does not exist (in-tree from Kubernetes 1.26 on: target that version or newer)"
    ]
    # SelectorSpread is in the 1.25 registry (validation.go refuses it by name in v1).
    assert _problems([_profile({"multiPoint": _on("SelectorSpread")})], "1.25") == []
    assert _problems([_profile({"filter": _on("VolumeZone")})], "1.25") == []
    assert _problems([_profile({"preFilter": _on("VolumeZone")})], "1.25") == [
        'profiles[0].plugins.preFilter.enabled[0].name: plugin "VolumeZone" does not extend '
        "PreFilterPlugin plugin"
    ]


def test_v1_30_volume_limits_and_selector_spread() -> None:
    assert _problems([_profile({"filter": _on("EBSLimits", "AzureDiskLimits")})], "1.30") == []
    assert _problems([_profile({"preScore": _on("SelectorSpread")})], "1.30") == [
        'profiles[0].plugins.preScore.enabled[0].name: PreScorePlugin "SelectorSpread" does '
        "not exist (removed in Kubernetes 1.29: use PodTopologySpread)"
    ]
    assert _problems([_profile({"placementScore": _on("NodeResourcesFit")})], "1.30") == []


def test_v1_37_pod_group_post_filter() -> None:
    assert "PodGroupPostFilter" in registry_data.EXTENSION_POINTS["1.37"]
    assert _problems([_profile({"podGroupPostFilter": _on("DynamicResources")})], "1.37") == []
    assert _problems([_profile({"podGroupPostFilter": _on("NodeName")})], "1.37") == [
        'profiles[0].plugins.podGroupPostFilter.enabled[0].name: plugin "NodeName" does not '
        "extend PodGroupPostFilterPlugin plugin"
    ]
    assert _problems([_profile({"multiPoint": _off("*")})], "1.37") == [
        "profiles[0].plugins.queueSort: only one queue sort plugin required for profile with "
        'scheduler name "a", but got 0',
        "profiles[0].plugins.bind: at least one bind plugin is needed for profile with "
        'scheduler name "a"',
    ]


def test_placement_generate_at_most_one_with_an_out_of_tree_generator() -> None:
    extra = {"OtherGenerator": frozenset({"PlacementGenerate"})}
    profiles = [
        _profile({"placementGenerate": _on("TopologyPlacementGenerator", "OtherGenerator")})
    ]
    assert _problems(profiles, extra_plugins=extra) == [
        "profiles[0].plugins.placementGenerate: at most one placement generate plugin is "
        'allowed for profile with scheduler name "a"'
    ]


def test_extra_plugins_are_accepted_where_they_extend() -> None:
    extra = {
        "Coscheduling": frozenset({"QueueSort", "PreFilter", "PostFilter", "Permit", "Reserve"})
    }
    coscheduling = {
        "multiPoint": _on("Coscheduling"),
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
    }
    assert _problems([_profile(coscheduling)], extra_plugins=extra) == []
    assert _problems([_profile({"filter": _on("Coscheduling")})], extra_plugins=extra) == [
        'profiles[0].plugins.filter.enabled[0].name: plugin "Coscheduling" does not extend '
        "FilterPlugin plugin"
    ]
    # Lower-case points and the interface name are taken too.
    assert (
        _problems(
            [_profile({"filter": _on("Sample")})], extra_plugins={"Sample": frozenset({"filter"})}
        )
        == []
    )
    assert (
        _problems(
            [_profile({"filter": _on("Sample")})],
            extra_plugins={"Sample": frozenset({"FilterPlugin"})},
        )
        == []
    )
    # A name that is no extension point is the caller's to report (spec.custom): ignored here.
    assert (
        _problems(
            [_profile({"filter": _on("X")})],
            extra_plugins={"X": frozenset({"Frobnicate", "Filter"})},
        )
        == []
    )


def test_cross_profile_queue_sort_resolved_through_multi_point() -> None:
    # Both profiles leave queueSort alone (validation.go compares those sets: equal), but the
    # second one swaps the queue sort at multiPoint: profile.go's cfgValidator refuses it.
    extra = {"CustomSort": frozenset({"QueueSort"})}
    second = _profile(
        {
            "multiPoint": {
                "enabled": [{"name": "CustomSort"}],
                "disabled": [{"name": "PrioritySort"}],
            }
        },
        "b",
    )
    assert _problems([_profile({}, "a"), second], extra_plugins=extra) == [
        'profiles[1].plugins: different queue sort plugins for profile "b": "CustomSort", '
        'first: "PrioritySort"'
    ]
    # Different queueSort sets are validation.go's refusal: not repeated here.
    second = _profile(
        {"queueSort": {"enabled": [{"name": "CustomSort"}], "disabled": [{"name": "*"}]}}, "b"
    )
    assert _problems([_profile({}, "a"), second], extra_plugins=extra) == []
    args_a = [{"name": "CustomSort", "args": {"x": 1}}]
    args_b = [{"name": "CustomSort", "args": {"x": 2}}]
    plugins = {"queueSort": {"enabled": [{"name": "CustomSort"}], "disabled": [{"name": "*"}]}}
    assert _problems(
        [_profile(plugins, "a", pluginConfig=args_a), _profile(plugins, "b", pluginConfig=args_b)],
        extra_plugins=extra,
    ) == ['profiles[1].pluginConfig: different queue sort plugin args for profile "b"']
    assert (
        _problems(
            [
                _profile(plugins, "a", pluginConfig=args_a),
                _profile(plugins, "b", pluginConfig=args_a),
            ],
            extra_plugins=extra,
        )
        == []
    )


def test_malformed_values_are_left_to_validation() -> None:
    for profiles in (
        [_profile({"filter": {"enabled": "NodeName"}})],
        [_profile({"filter": {"enabled": ["x", {"name": 3}]}})],
        [_profile("nope")],  # type: ignore[arg-type]
        ["nope"],
    ):
        assert _problems(profiles) == []
    assert build_profiles("nope", parse_version("1.36")) == []
    assert build_profiles({"profiles": "x"}, parse_version("1.36")) == []


def test_a_nameless_or_null_plugin_is_named_empty_like_go() -> None:
    # Go decodes a null item, or one without name, into Plugin{Name: ""}: a plugin that
    # does not exist (kube-scheduler: FilterPlugin "" does not exist).
    for entry in (None, {"weight": 1}, {"name": None}):
        [problem] = _problems([_profile({"filter": {"enabled": [entry]}})])
        assert 'FilterPlugin "" does not exist' in problem, entry
    assert _problems([_profile({"filter": {"disabled": [None, {"name": ""}]}})]) == []


def _score_only(*entries: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _profile(
            {
                "multiPoint": {
                    "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                    "disabled": [{"name": "*"}],
                },
                "score": {"enabled": list(entries)},
            }
        )
    ]


def test_score_weights_overflow_as_go_sums_them() -> None:
    # framework.go getValidScoreWeights: int64 arithmetic that wraps, so a negative weight is
    # refused only when another scoring plugin follows it.
    overflow = "score plugins: total score of Score plugins could overflow"
    problems = _problems(
        _score_only({"name": "ImageLocality", "weight": -1}, {"name": "TaintToleration"})
    )
    assert len(problems) == 1 and overflow in problems[0]
    assert problems[0].startswith("profiles[0].plugins.score.enabled[0].name")
    assert _problems(_score_only({"name": "ImageLocality", "weight": -1})) == []
    big = {"weight": 2**31 - 1}
    assert (
        _problems(_score_only({"name": "ImageLocality", **big}, {"name": "TaintToleration", **big}))
        == []
    )
    # the default multiPoint plugins follow a score-point plugin: they overflow it too
    [problem] = _problems(
        [_profile({"score": {"enabled": [{"name": "ImageLocality", "weight": -5}]}})]
    )
    assert overflow in problem
    # a multiPoint weight replaces the default one in place (mergePluginSet): ImageLocality is
    # the last default scoring plugin, TaintToleration is followed by others
    assert (
        _problems(
            [_profile({"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": -5}]}})]
        )
        == []
    )
    [problem] = _problems(
        [_profile({"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": -5}]}})]
    )
    assert overflow in problem and "multiPoint.enabled[0]" in problem


def test_names_are_bounded_and_escaped_like_go() -> None:
    [problem] = _problems([_profile({"filter": _on('a"b' + "x" * 200)})])
    assert 'FilterPlugin "a\\"bxxx' in problem
    assert "…" in problem and len(problem) < 400


def test_prefix_and_source() -> None:
    [problem] = build_profiles(
        {"profiles": [_profile({"bind": _off("*")})]},
        parse_version("1.36"),
        prefix="spec.",
        source="s.yaml",
    )
    assert str(problem) == (
        "s.yaml: spec.profiles[0].plugins.bind: at least one bind plugin is needed for profile "
        'with scheduler name "a"'
    )


def test_check_config_reports_the_framework_refusals() -> None:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [_profile({"multiPoint": _on("Coscheduling")}, "my-scheduler")],
    }
    problems = [str(p) for p in check_config(doc, parse_version("1.36"), source="c.yaml")]
    assert problems == [
        'c.yaml: profiles[0].plugins.multiPoint.enabled[0].name: PreFilterPlugin "Coscheduling" '
        f"does not exist ({COSCHEDULING})"
    ]
    extra = {"Coscheduling": frozenset({"PreFilter", "Permit"})}
    assert check_config(doc, parse_version("1.36"), extra_plugins=extra) == []


@pytest.mark.parametrize("minor", supported_minors())
def test_every_supported_minor_has_data_and_builds_its_defaults(minor: str) -> None:
    version = parse_version(minor)
    registry = in_tree_plugins(version)
    assert registry_data.SOURCE_VERSIONS[minor].startswith(f"v{minor}.")
    for name, _ in default_plugins(version):
        assert name in registry
    assert _problems([_profile({})], minor) == []
    assert _problems([_profile({"multiPoint": _on("DefaultBinder", "PrioritySort")})], minor) == []


def test_missing_plugin_hints() -> None:
    v136 = parse_version("1.36")
    assert missing_plugin_hint("NodeResourcesLeastAllocated", v136) == (
        "removed before Kubernetes 1.25: use NodeResourcesFit with scoringStrategy LeastAllocated"
    )
    assert missing_plugin_hint("GCEPDLimits", v136) == (
        "removed in Kubernetes 1.32: NodeVolumeLimits covers it"
    )
    assert missing_plugin_hint("DeferredPodScheduling", v136) == (
        "in-tree from Kubernetes 1.37 on: target that version or newer"
    )


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "gen_plugin_registry", ROOT / "tools" / "gen_plugin_registry.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_plugin_registry"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _committed(minor: str) -> dict[str, Any]:
    return {
        "version": registry_data.SOURCE_VERSIONS[minor].lstrip("v"),
        "extension_points": registry_data.EXTENSION_POINTS[minor],
        "plugins": registry_data.PLUGINS[minor],
        "default_plugins": registry_data.DEFAULT_PLUGINS[minor],
        "gates": registry_data.DEFAULT_GATES[minor],
        "invalid": registry_data.INVALID_PLUGINS[minor],
        "config_points": registry_data.CONFIG_POINTS[minor],
    }


@pytest.mark.skipif(
    not PINNED_SOURCE.is_dir(),
    reason=f"no k8s.io/kubernetes v1.36.3 source at {PINNED_SOURCE} (go mod download it)",
)
def test_generator_reproduces_the_committed_1_36_table() -> None:
    data = _generator().extract(str(PINNED_SOURCE))
    assert vars(data) == _committed("1.36")


def test_generator_reads_a_module_zip_like_a_directory(tmp_path: Path) -> None:
    gen = _generator()
    zip_path = Path.home() / "go/pkg/mod/cache/download/k8s.io/kubernetes/@v/v1.36.3.zip"
    if not zip_path.is_file():
        pytest.skip(f"no module zip at {zip_path}")
    assert vars(gen.extract(str(zip_path))) == _committed("1.36")
    rendered = gen.render([gen.extract(str(zip_path))])
    assert rendered.startswith('"""Generated by tools/gen_plugin_registry.py; do not edit.')
    assert "v1.36.3" in rendered


def test_generator_refuses_an_unknown_source(tmp_path: Path) -> None:
    gen = _generator()
    with pytest.raises(gen.SourceError, match="cannot tell the version"):
        gen.extract(str(tmp_path))
    empty = tmp_path / "kubernetes@v1.36.3"
    empty.mkdir()
    with pytest.raises(gen.SourceError, match="no pkg/scheduler"):
        gen.extract(str(empty))


def test_built_lists_follow_kube_schedulers_order() -> None:
    # The lists kube-scheduler v1.36.3 logged ("the scheduler starts to work with those
    # plugins", --v=2) for this profile: point overrides first, then multiPoint, then the rest.
    version = parse_version("1.36")
    plugins = {
        "multiPoint": {
            "enabled": [{"name": "GangScheduling"}, {"name": "NodeName"}],
            "disabled": [{"name": "TaintToleration"}],
        },
        "preFilter": _off("*"),
        "filter": _on("NodePorts", "NodeName"),
    }
    merged = framework._merged_plugins(plugins, version, "p")
    builder = framework._Builder(in_tree_plugins(version), version, "p", [])
    builder.update_plugin_lists(merged)
    builder.expand_multi_point(merged)
    fits = ["NodeAffinity", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits"]
    fits += ["VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"]
    scores = ["NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread"]
    assert builder.lists == {
        "PreFilter": [],
        "Filter": ["NodePorts", "NodeName", "NodeUnschedulable", *fits]
        + ["DynamicResources", "NodeDeclaredFeatures"],
        "PostFilter": ["DynamicResources", "DefaultPreemption"],
        "Reserve": ["VolumeBinding", "DynamicResources"],
        "PreScore": [*scores, "InterPodAffinity", "NodeResourcesBalancedAllocation"],
        "Score": [*scores, "InterPodAffinity", "DynamicResources"]
        + ["NodeResourcesBalancedAllocation", "ImageLocality"],
        "PreBind": ["VolumeBinding", "DynamicResources"],
        "Bind": ["DefaultBinder"],
        "PostBind": [],
        "Permit": ["GangScheduling"],
        "PreEnqueue": [
            "SchedulingGates",
            "DynamicResources",
            "DefaultPreemption",
            "GangScheduling",
        ],
        "QueueSort": ["PrioritySort"],
        "PlacementGenerate": [],
        "PlacementScore": ["NodeResourcesFit"],
    }
