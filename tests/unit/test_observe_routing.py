"""kschedctl's routing as the cluster holds it (observe.routing), on rendered policies."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kschedctl.observe import routing
from kschedctl.observe.routing import Route
from kschedctl.render import routing as rendered
from kschedctl.render.forms import render
from kschedctl.spec import apply_defaults, ensure_valid, spec_from_dict

PREFIX = rendered.ROUTE_PREFIX


def policy(name: str, routing_spec: dict[str, Any]) -> dict[str, Any]:
    """The MutatingAdmissionPolicy kschedctl renders for a scheduler with ``routing_spec``."""
    doc = {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": name},
        "spec": {"routing": routing_spec},
    }
    loaded, problems = spec_from_dict(doc)
    assert loaded is not None and not problems, problems
    spec = ensure_valid(apply_defaults(loaded))
    docs = yaml.safe_load_all(render(spec, "routing"))
    return next(d for d in docs if d and d["kind"] == "MutatingAdmissionPolicy")


def route(name: str, routing_spec: dict[str, Any]) -> Route:
    found = routing.route_of(policy(name, routing_spec), PREFIX)
    assert found is not None
    return found


def ns(name: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/metadata.name": name, **labels},
        }
    }


NAMESPACES = [ns("team-a", team="ml"), ns("team-b", team="web"), ns("kube-system", team="ml")]
ML = {"namespaceSelector": {"matchLabels": {"team": "ml"}}}


def test_the_annotation_is_the_one_the_policy_sets() -> None:
    assert routing.ROUTED_BY_ANNOTATION == rendered.ROUTED_BY_ANNOTATION


@pytest.mark.parametrize(
    ("spec", "rule"),
    [
        (ML, "ns:team=ml"),
        ({**ML, "podSelector": {"matchLabels": {"tier": "batch"}}}, "ns:team=ml pod:tier=batch"),
        ({**ML, "priorityClassNames": ["low", "lower"]}, "ns:team=ml pc:low,lower"),
        ({"namespaceSelector": {}}, "ns:*"),
    ],
    ids=["namespace", "pods", "priority-classes", "every-namespace"],
)
def test_rule_shows_what_the_user_wrote(spec: dict[str, Any], rule: str) -> None:
    assert route("binpack", spec).rule == rule


def test_only_kschedctl_policies_named_after_their_scheduler_are_routes() -> None:
    mine = policy("binpack", ML)
    assert routing.route_of(mine, PREFIX) is not None
    renamed = {**mine, "metadata": {**mine["metadata"], "name": "kschedctl-route-other"}}
    unlabelled = {**mine, "metadata": {"name": mine["metadata"]["name"]}}
    binding = {**mine, "kind": "MutatingAdmissionPolicyBinding"}
    assert [routing.route_of(p, PREFIX) for p in (renamed, unlabelled, binding)] == [None] * 3


def test_matched_namespaces_never_kube_system() -> None:
    assert routing.matched_namespaces(route("binpack", ML), NAMESPACES) == ["team-a"]


@pytest.mark.parametrize(
    ("theirs", "where"),
    [
        (ML, "team-a"),
        ({"namespaceSelector": {"matchLabels": {"team": "web"}}}, None),
        ({**ML, "podSelector": {"matchLabels": {"tier": "batch"}}}, "team-a"),
        ({"podSelector": {"matchLabels": {"tier": "batch"}}}, "team-a"),
        ({**ML, "priorityClassNames": ["high"]}, "team-a"),
    ],
    ids=["same-namespaces", "other-namespaces", "narrower-pods", "any-namespace", "one-class"],
)
def test_overlap_is_conservative(theirs: dict[str, Any], where: str | None) -> None:
    assert routing.overlap(route("a", ML), route("b", theirs), NAMESPACES) == where


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"matchLabels": {"tier": "batch"}}, {"matchLabels": {"tier": "web"}}),
        (
            {"matchLabels": {"tier": "batch"}},
            {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["batch"]}]},
        ),
        (
            {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
            {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
        ),
    ],
    ids=["different-values", "in-notin", "exists-doesnotexist"],
)
def test_exclusive_pod_selectors_or_classes_do_not_overlap(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    assert (
        routing.overlap(
            route("a", {**ML, "podSelector": a}), route("b", {**ML, "podSelector": b}), NAMESPACES
        )
        is None
    )
    assert (
        routing.overlap(
            route("a", {**ML, "priorityClassNames": ["low"]}),
            route("b", {**ML, "priorityClassNames": ["high"]}),
            NAMESPACES,
        )
        is None
    )


def test_probe_is_a_pod_the_routing_would_rewrite() -> None:
    spec = {
        **ML,
        "podSelector": {
            "matchLabels": {"tier": "batch"},
            "matchExpressions": [{"key": "job", "operator": "Exists"}],
        },
        "priorityClassNames": ["low"],
    }
    probe = routing.probe(route("binpack", spec), NAMESPACES)
    assert probe == routing.Probe("team-a", {"tier": "batch", "job": "probe"}, "low")
    assert routing.probe(route("binpack", ML), [ns("team-b", team="web")]) is None


def routed_pod(by: str = "kube-system/binpack", asks: str = "binpack") -> dict[str, Any]:
    return {
        "metadata": {
            "name": "p",
            "namespace": "team-a",
            "annotations": {"kschedctl.io/routed-by": by},
        },
        "spec": {"schedulerName": asks},
    }


def test_why_names_the_routing_first_when_its_scheduler_is_down() -> None:
    routes = [route("binpack", ML)]
    down = routing.routed_finding(routed_pod(), NAMESPACES[0], routes, serving=False)
    assert down is not None and (down.code, down.severity) == ("routed-to-down-scheduler", "error")
    assert down.message.startswith(
        "routed to binpack by kschedctl routing of binpack: namespace team-a matches team=ml"
    )
    up = routing.routed_finding(routed_pod(), NAMESPACES[0], routes, serving=True)
    assert up is not None and (up.code, up.severity) == ("routed", "info")


def test_why_does_not_trust_the_annotation_alone() -> None:
    routes = [route("binpack", ML)]
    forged = routing.routed_finding(routed_pod("x/other", "other"), NAMESPACES[0], routes, False)
    assert forged is not None and forged.code == "routed-by-unknown"
    assert routing.routed_finding({"metadata": {}}, NAMESPACES[0], routes, False) is None
    # the namespace lost its label since: the rule is named, not claimed to match
    moved = routing.routed_finding(routed_pod(), ns("team-a"), routes, serving=True)
    assert moved is not None and "no longer matches" in moved.message
