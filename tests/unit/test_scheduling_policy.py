"""Fallback policies: the format, every refusal naming its field, and what each step relaxes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_filters_support import expr, node, node_affinity, pod

from kschedctl.base.errors import NotFoundError, PolicyError
from kschedctl.model.filters import NodeInfoSnapshot, feasible_nodes
from kschedctl.model.scheduling.policy import (
    POD_POLICY_ANNOTATION,
    FallbackPolicy,
    FallbackStep,
    strict_pod,
)
from kschedctl.model.scheduling.policyload import (
    load_policy,
    parse_policy,
    pod_policy,
    policy_from_text,
)

HEAD = {"apiVersion": "kschedctl.io/v1alpha1", "kind": "FallbackPolicy"}


def policy(*steps: dict[str, Any], **top: Any) -> FallbackPolicy:
    return parse_policy({**HEAD, **top, "fallbacks": list(steps)}, "test.yaml")


def problems(doc: Any, **kw: Any) -> list[str]:
    with pytest.raises(PolicyError) as info:
        parse_policy(doc, "policy.yaml", **kw)
    assert info.value.exit_code == 3
    return [f"{p.path}: {p.message}" for p in info.value.problems]


def test_a_full_policy_parses_in_order() -> None:
    p = policy(
        {
            "name": "spare-pool",
            "nodePool": {"pool": "spare"},
            "tolerate": [
                {"key": "pool", "operator": "Equal", "value": "spare", "effect": "NoSchedule"}
            ],
        },
        {"name": "any-ssd", "nodeSelector": {"disktype": "ssd"}},
        {
            "name": "terms",
            "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "a", "b")]}],
        },
        {"name": "bunch-up", "relax": ["topologySpread", "podAntiAffinity"]},
        {"name": "anywhere", "dropPreferred": True},
        strictPreferences=True,
    )
    assert [s.name for s in p.steps] == ["spare-pool", "any-ssd", "terms", "bunch-up", "anywhere"]
    assert p.strict_preferences and p.source == "test.yaml"
    assert p.steps[0].describe() == "node pool pool=spare; tolerate pool=spare:NoSchedule"
    assert p.steps[3].describe() == "topologySpread relaxed; podAntiAffinity relaxed"
    assert parse_policy(p.to_dict(), "again") == p  # to_dict round-trips


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({**HEAD, "fallbacks": [{"nodeSelector": {"a": "b"}}]}, "fallbacks[0].name: is required (it is recorded on the pod)"),
        ({**HEAD, "fallbacks": [{"name": "Bad_Name", "nodeSelector": {"a": "b"}}]}, "fallbacks[0].name: 'Bad_Name' must be a DNS-1123 label"),
        ({**HEAD, "fallbacks": [{"name": "x"}]}, "fallbacks[0]: relaxes nothing"),
        ({**HEAD, "fallbacks": [{"name": "x", "nodeSelecter": {"a": "b"}}]}, "fallbacks[0].nodeSelecter: unknown field (did you mean 'nodeSelector'?)"),
        ({**HEAD, "fallbacks": [{"name": "x", "resources": {"cpu": "1"}}]}, "fallbacks[0].resources: resource requests are never relaxed"),
        ({**HEAD, "fallbacks": [{"name": "x", "hostPorts": True}]}, "fallbacks[0].hostPorts: host ports are never relaxed"),
        ({**HEAD, "fallbacks": [{"name": "x", "tolerate": [{"operator": "Exists"}]}]}, "fallbacks[0].tolerate[0].key: is required: a toleration without a key tolerates every taint"),
        ({**HEAD, "fallbacks": [{"name": "x", "tolerate": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]}]}, "fallbacks[0].tolerate[0].key: node.kubernetes.io/unschedulable is never tolerated"),
        ({**HEAD, "fallbacks": [{"name": "x", "tolerate": [{"key": "k", "effect": "Sometimes"}]}]}, "fallbacks[0].tolerate[0].effect: 'Sometimes': must be NoSchedule"),
        ({**HEAD, "fallbacks": [{"name": "x", "tolerate": [{"key": "k", "operator": "Exists", "value": "v"}]}]}, "fallbacks[0].tolerate[0].value: must be empty with operator Exists"),
        ({**HEAD, "fallbacks": [{"name": "x", "dropPreferred": True}]}, "fallbacks[0].dropPreferred: has no effect unless strictPreferences is true"),
        ({**HEAD, "fallbacks": [{"name": "x", "relax": ["resources"]}]}, "fallbacks[0].relax[0]: 'resources': must be one of topologySpread, podAffinity, podAntiAffinity"),
        ({**HEAD, "fallbacks": [{"name": "x", "nodeSelector": {"disk": True}}]}, "fallbacks[0].nodeSelector.disk: must be a string, not True (quote it in YAML)"),
        ({**HEAD, "fallbacks": [{"name": "x", "nodeSelector": {"bad key!": "v"}}]}, "fallbacks[0].nodeSelector['bad key!']: label key 'bad key!' is not a valid label name"),
        ({**HEAD, "fallbacks": [{"name": "x", "nodeSelector": {}}]}, "fallbacks[0].nodeSelector: must not be empty"),
        ({**HEAD, "fallbacks": [{"name": "x", "nodeSelector": {"a": "b"}, "nodeSelectorTerms": [{"matchExpressions": [expr("a", "Exists")]}]}]}, "fallbacks[0].nodeSelectorTerms: give nodeSelector or nodeSelectorTerms, not both"),
        ({**HEAD, "fallbacks": [{"name": "x", "nodeSelectorTerms": [{}]}]}, "fallbacks[0].nodeSelectorTerms[0]: an empty term matches no node"),
        ({**HEAD, "fallbacks": [{"name": "x", "nodeSelectorTerms": [{"matchExpressions": [expr("a", "Gt", "x")]}]}]}, "fallbacks[0].nodeSelectorTerms[0]: a: Gt needs exactly one integer value"),
        ({**HEAD, "fallbacks": [{"name": "x", "relax": ["podAffinity"]}, {"name": "x", "relax": ["podAffinity"]}]}, "fallbacks[1].name: 'x' is used by an earlier step"),
        ({"apiVersion": "v1", "kind": "FallbackPolicy", "fallbacks": []}, "apiVersion: must be kschedctl.io/v1alpha1, not 'v1'"),
        ({**HEAD, "fallbacks": {"name": "x"}}, "fallbacks: must be a list, not {'name': 'x'}"),
        ({**HEAD, "strictPreference": True, "fallbacks": []}, "strictPreference: unknown field (did you mean 'strictPreferences'?)"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None,
)  # fmt: skip
def test_bad_policies_are_refused_naming_the_field(doc: Any, expected: str) -> None:
    found = problems(doc)
    assert any(p.startswith(expected) for p in found), found


def test_every_problem_is_reported_at_once_with_the_file() -> None:
    with pytest.raises(PolicyError) as info:
        parse_policy({**HEAD, "fallbacks": [{"name": "x"}, {"nodePool": {"a": "b"}}]}, "p.yaml")
    assert len(info.value.problems) == 2
    assert "p.yaml has 2 problems" in info.value.message
    assert all(p.source == "p.yaml" for p in info.value.problems)


def test_files_malformed_yaml_and_missing_files(tmp_path: Path) -> None:
    good = tmp_path / "policy.yaml"
    good.write_text(
        "apiVersion: kschedctl.io/v1alpha1\nkind: FallbackPolicy\nfallbacks:\n- name: a\n  nodePool: {pool: spare}\n"
    )
    assert load_policy(good).steps[0].node_pool == {"pool": "spare"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("fallbacks: [\n")
    with pytest.raises(PolicyError, match=r"bad.yaml: malformed YAML"):
        load_policy(bad)
    with pytest.raises(NotFoundError, match=r"missing.yaml: cannot read the policy") as info:
        load_policy(tmp_path / "missing.yaml")  # exit 5, as a missing file is everywhere
    assert info.value.hint


def test_pod_annotation_replaces_the_scheduler_policy() -> None:
    default = policy({"name": "spare", "nodePool": {"pool": "spare"}})
    plain = pod("p")
    assert pod_policy(plain, default) == (default, None)
    annotated = pod("p")
    annotated["metadata"]["annotations"] = {
        POD_POLICY_ANNOTATION: '{"fallbacks": [{"name": "mine", "relax": ["podAffinity"]}]}'
    }
    chosen, error = pod_policy(annotated, default)
    assert error is None and [s.name for s in chosen.steps] == ["mine"]
    assert chosen.source == f"annotation {POD_POLICY_ANNOTATION}" and chosen.from_pod
    assert chosen.origin == "the pod's annotation" and default.origin == "the scheduler's policy"
    annotated["metadata"]["annotations"] = {POD_POLICY_ANNOTATION: "fallbacks: [{name: x}]"}
    chosen, error = pod_policy(annotated, default)
    assert chosen.steps == () and error is not None and "relaxes nothing" in error.message


# -- what the steps do to a pod --------------------------------------------------------------


def fits(p: dict[str, Any], *nodes: dict[str, Any]) -> list[str]:
    return sorted(feasible_nodes(p, NodeInfoSnapshot(list(nodes), [])).names)


SSD = node("ssd", labels={"disktype": "ssd"})
SPARE = node(
    "spare",
    labels={"pool": "spare"},
    taints=[{"key": "pool", "value": "spare", "effect": "NoSchedule"}],
)
PLAIN = node("plain")


def test_node_selector_replaces_the_node_constraint_only() -> None:
    p = pod(
        "p",
        cpu="1",
        nodeSelector={"disktype": "hdd"},
        affinity=node_affinity({"matchExpressions": [expr("zone", "In", "z9")]}),
    )
    step = FallbackStep("ssd", node_selector={"disktype": "ssd"})
    relaxed = step.apply(p)
    assert fits(p, SSD, PLAIN) == []
    assert fits(relaxed, SSD, PLAIN) == ["ssd"]
    assert p["spec"]["nodeSelector"] == {"disktype": "hdd"}  # the original is untouched
    big = pod("big", cpu="64", nodeSelector={"disktype": "hdd"})
    assert fits(step.apply(big), SSD, PLAIN) == []  # resources stay hard


def test_node_pool_is_added_to_the_pods_own_nodes_and_taints_stay_hard() -> None:
    p = pod("p", cpu="1", nodeSelector={"disktype": "ssd"})
    pool_only = FallbackStep("pool", node_pool={"pool": "spare"})
    assert fits(pool_only.apply(p), SSD, SPARE, PLAIN) == ["ssd"]  # spare's taint is not named
    tolerating = FallbackStep(
        "pool",
        node_pool={"pool": "spare"},
        tolerate=({"key": "pool", "operator": "Equal", "value": "spare", "effect": "NoSchedule"},),
    )
    assert fits(tolerating.apply(p), SSD, SPARE, PLAIN) == ["spare", "ssd"]


def test_node_pool_keeps_every_required_term_or_the_pool() -> None:
    p = pod(
        "p",
        nodeSelector={"tier": "gold"},
        affinity=node_affinity(
            {"matchExpressions": [expr("disktype", "In", "ssd")]},
            {"matchExpressions": [expr("gpu", "Exists")]},
        ),
    )
    relaxed = FallbackStep("pool", node_pool={"pool": "spare"}).apply(p)
    terms = relaxed["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms == [
        {
            "matchExpressions": [
                expr("disktype", "In", "ssd"),
                {"key": "tier", "operator": "In", "values": ["gold"]},
            ]
        },
        {
            "matchExpressions": [
                expr("gpu", "Exists"),
                {"key": "tier", "operator": "In", "values": ["gold"]},
            ]
        },
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["spare"]}]},
    ]
    assert "nodeSelector" not in relaxed["spec"]
    gold_ssd = node("gold-ssd", labels={"tier": "gold", "disktype": "ssd"})
    ssd_only = node("ssd-only", labels={"disktype": "ssd"})
    spare = node("spare", labels={"pool": "spare"})
    assert fits(relaxed, gold_ssd, ssd_only, spare) == ["gold-ssd", "spare"]


def test_node_pool_on_an_unconstrained_pod_changes_nothing() -> None:
    p = pod("p", cpu="1")
    assert FallbackStep("pool", node_pool={"pool": "spare"}).apply(p)["spec"] == p["spec"]


def test_tolerate_adds_tolerations_for_the_named_taints_only() -> None:
    tainted = node(
        "t",
        taints=[
            {"key": "a", "value": "1", "effect": "NoSchedule"},
            {"key": "b", "effect": "NoExecute"},
        ],
    )
    p = pod("p", tolerations=[{"key": "x", "operator": "Exists"}])
    one = FallbackStep("a", tolerate=({"key": "a", "operator": "Exists"},))
    assert fits(one.apply(p), tainted) == []
    both = FallbackStep(
        "ab",
        tolerate=(
            {"key": "a", "operator": "Exists"},
            {"key": "b", "operator": "Exists", "effect": "NoExecute"},
        ),
    )
    assert fits(both.apply(p), tainted) == ["t"]
    assert both.apply(p)["spec"]["tolerations"][0] == {"key": "x", "operator": "Exists"}


def test_relax_topology_spread_and_pod_affinity() -> None:
    zone_a = [node(f"a{i}", labels={"zone": "a"}) for i in range(2)]
    web = pod("w", node_name="a0", labels={"app": "web"})
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}
            ]
        }
    }
    p = pod("p", labels={"app": "web"}, affinity=anti)
    snap = NodeInfoSnapshot([*zone_a, node("b0", labels={"zone": "b"}, pods="0")], [web])
    assert feasible_nodes(p, snap).names == ()
    relaxed = FallbackStep("x", relax=("podAntiAffinity",)).apply(p)
    assert sorted(feasible_nodes(relaxed, snap).names) == ["a0", "a1"]
    assert (
        "requiredDuringSchedulingIgnoredDuringExecution"
        not in relaxed["spec"]["affinity"]["podAntiAffinity"]
    )
    s = pod("s", labels={"app": "web"}, topologySpreadConstraints=[spread])
    assert (
        FallbackStep("x", relax=("topologySpread",)).apply(s)["spec"]["topologySpreadConstraints"][
            0
        ]["whenUnsatisfiable"]
        == "ScheduleAnyway"
    )


def test_strict_pod_makes_preferred_node_affinity_required() -> None:
    preferred = {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "preference": {"matchExpressions": [expr("disktype", "In", "ssd")]}},
        {"weight": 0, "preference": {"matchExpressions": [expr("ignored", "Exists")]}},
    ]}  # fmt: skip
    p = pod("p", affinity={"nodeAffinity": preferred})
    assert fits(strict_pod(p), SSD, PLAIN) == ["ssd"]
    assert fits(p, SSD, PLAIN) == ["plain", "ssd"]
    both = pod(
        "q",
        affinity={
            "nodeAffinity": {
                **preferred,
                **node_affinity(
                    {"matchExpressions": [expr("zone", "In", "a")]},
                    {"matchExpressions": [expr("disktype", "Exists")]},
                )["nodeAffinity"],
            }
        },
    )
    assert fits(
        strict_pod(both), SSD, PLAIN, node("a-hdd", labels={"zone": "a", "disktype": "hdd"})
    ) == ["ssd"]
    assert strict_pod(pod("r")) == pod("r")


def test_policy_text_needs_no_type_meta_in_annotations_only() -> None:
    text = "fallbacks:\n- name: a\n  relax: [podAffinity]\n"
    assert policy_from_text(text, "annotation", type_meta=False).steps[0].relax == ("podAffinity",)
    with pytest.raises(PolicyError, match="apiVersion: must be"):
        policy_from_text(text, "file.yaml")
