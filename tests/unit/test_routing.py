"""spec.routing: loading and its checks, and the MutatingAdmissionPolicy + binding it renders
(what the policy matches, at which apiVersion), in its own form and the in-cluster forms.

What the policy does on a real API server: tests/e2e/test_routing_policy.py.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kschedctl.base.errors import SpecError
from kschedctl.k8s.resources import object_path, resource_of
from kschedctl.observe.schedulers import SCHEDULER_LABEL
from kschedctl.render import kinds
from kschedctl.render.forms import by_name, render, render_workspace
from kschedctl.render.objects import check_objects
from kschedctl.render.routing import ROUTED_BY_ANNOTATION, cel
from kschedctl.spec import Spec, spec_from_dict
from kschedctl.spec.routing import ROUTING_MIN_MINOR

TEAM = {"matchLabels": {"team": "ml"}}


def _doc(routing: Any, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": "binpack"},
        "spec": {**spec, "routing": routing},
    }


def _load(routing: Any, **spec: Any) -> tuple[Spec | None, list[str]]:
    loaded, problems = spec_from_dict(_doc(routing, **spec))
    return loaded, [f"{p.path}: {p.message}" for p in problems]


def _spec(routing: Any, **spec: Any) -> Spec:
    loaded, problems = _load(routing, **spec)
    assert not problems and loaded is not None
    return loaded


def _objects(spec: Spec, form: str = "routing") -> dict[str, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(render(spec, form)) if d]
    return {d["kind"]: d for d in docs if d["kind"].startswith("MutatingAdmissionPolicy")}


def _policy(routing: Any, **spec: Any) -> dict[str, Any]:
    return _objects(_spec(routing, **spec))["MutatingAdmissionPolicy"]["spec"]


def _conditions(policy: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["expression"] for c in policy["matchConditions"]}


# --- the spec ---------------------------------------------------------------------------


def test_absent_routing_is_none_and_stays_out_of_the_written_spec() -> None:
    loaded, problems = spec_from_dict(
        {"apiVersion": "kschedctl.io/v1alpha1", "kind": "Scheduler", "metadata": {"name": "s"}}
    )
    assert not problems and loaded is not None and loaded.routing is None
    assert "routing" not in loaded.to_dict()["spec"]


def test_routing_loads_into_the_model_and_round_trips() -> None:
    routing = {
        "namespaceSelector": {},
        "podSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
        "priorityClassNames": ["batch"],
        "includeNamedPods": True,
    }
    spec = _spec(routing)
    assert spec.routing is not None
    assert spec.routing.namespace_selector == {}  # explicit: every namespace
    assert spec.routing.pod_selector == routing["podSelector"]
    assert spec.routing.priority_class_names == ["batch"]
    assert spec.routing.include_named_pods is True
    assert spec.routing.allow_kube_system is False
    assert spec.to_dict()["spec"]["routing"] == routing
    assert _spec(spec.to_dict()["spec"]["routing"]) == spec


@pytest.mark.parametrize(
    ("routing", "problem"),
    [
        pytest.param({}, "spec.routing: would route every new pod of the cluster", id="empty"),
        pytest.param(
            {"podSelector": {}}, "spec.routing: would route every new pod", id="empty-pod-selector"
        ),
        pytest.param(
            {"namespaceSelector": {"matchLabels": {"bad key": "x"}}},
            "spec.routing.namespaceSelector.matchLabels: 'bad key': name part must consist",
            id="label-key",
        ),
        pytest.param(
            {"podSelector": {"matchLabels": {"app": "not ok"}}},
            "spec.routing.podSelector.matchLabels.app: 'not ok': a valid label must",
            id="label-value",
        ),
        pytest.param(
            {
                "namespaceSelector": {
                    "matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]
                }
            },
            "spec.routing.namespaceSelector.matchExpressions[0].operator: Unsupported value: 'Gt'",
            id="operator",
        ),
        pytest.param(
            {"podSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}},
            "spec.routing.podSelector.matchExpressions[0].values: for 'in', 'notin' operators, "
            "values set can't be empty",
            id="in-without-values",
        ),
        pytest.param(
            {
                "podSelector": {
                    "matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]
                }
            },
            "spec.routing.podSelector.matchExpressions[0].values: values set must be empty",
            id="exists-with-values",
        ),
        pytest.param(
            {"podSelector": {"matchLabel": {"a": "b"}}},
            "spec.routing.podSelector.matchLabel: unknown field",
            id="selector-unknown-field",
        ),
        pytest.param(
            {"priorityClassNames": ["Not_A_Name"]},
            "spec.routing.priorityClassNames[0]: priority class name 'Not_A_Name' is not a "
            "DNS-1123 subdomain",
            id="priority-class",
        ),
        pytest.param(
            {"namespaceSelector": TEAM, "selector": {}},
            "spec.routing.selector: unknown field",
            id="unknown-field",
        ),
        pytest.param(
            {"namespaceSelector": TEAM, "includeNamedPods": "yes"},
            "spec.routing.includeNamedPods: must be a boolean",
            id="type",
        ),
        pytest.param(["team"], "spec.routing: must be a mapping", id="not-a-mapping"),
        pytest.param(
            {"namespaceSelector": TEAM, "allowKubeSystem": True},
            "spec.routing.allowKubeSystem: routes kube-system's pods only for a scheduler that "
            "lives there itself (spec.namespace is scheduling)",
            id="kube-system-from-elsewhere",
        ),
    ],
)
def test_routing_problems_name_the_field(routing: Any, problem: str) -> None:
    _, problems = _load(routing, namespace="scheduling")
    assert any(p.startswith(problem) for p in problems), problems


def test_each_restriction_alone_is_enough_and_an_explicit_catch_all_is_allowed() -> None:
    for routing in (
        {"namespaceSelector": TEAM},
        {"namespaceSelector": {}},  # every namespace, written on purpose
        {"podSelector": {"matchLabels": {"app": "x"}}},
        {"priorityClassNames": ["batch"]},
    ):
        assert _load(routing)[1] == [], routing


@pytest.mark.parametrize("version", ["1.25", "1.33"])
def test_routing_needs_a_kubernetes_that_serves_the_policy(version: str) -> None:
    _, problems = _load({"namespaceSelector": TEAM}, kubernetesVersion=version)
    assert problems == [
        f"spec.routing: Kubernetes {version} has no MutatingAdmissionPolicy (beta since 1.34 "
        "behind the MutatingAdmissionPolicy feature gate, GA since 1.36): target 1.34 or later, "
        "or leave routing out and let pods name the scheduler in spec.schedulerName"
    ]


def test_the_spec_check_and_the_kind_table_agree_on_the_first_version() -> None:
    kind = kinds.MUTATING_ADMISSION_POLICY
    assert min(first for first, _ in kind.older) == ROUTING_MIN_MINOR
    assert kind.for_minor(ROUTING_MIN_MINOR - 1) is None


# --- the rendered policy ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "api_version"),
    [
        ("1.34", "admissionregistration.k8s.io/v1beta1"),
        ("1.35", "admissionregistration.k8s.io/v1beta1"),
        ("1.36", "admissionregistration.k8s.io/v1"),
        ("1.37", "admissionregistration.k8s.io/v1"),
    ],
)
def test_api_version_follows_the_target(version: str, api_version: str) -> None:
    spec = _spec({"namespaceSelector": TEAM}, kubernetesVersion=version)
    text = render(spec, "routing")
    objects = _objects(spec)
    assert {o["apiVersion"] for o in objects.values()} == {api_version}
    gate = "--feature-gates=MutatingAdmissionPolicy=true" in text
    runtime = "--runtime-config=admissionregistration.k8s.io/v1beta1=true" in text
    assert gate == runtime == api_version.endswith("v1beta1")


def test_objects_are_cluster_scoped_and_named_after_the_scheduler() -> None:
    objects = _objects(_spec({"namespaceSelector": TEAM}))
    for obj in objects.values():
        assert obj["metadata"]["name"] == "kschedctl-route-binpack"
        assert "namespace" not in obj["metadata"]
        assert obj["metadata"]["labels"][SCHEDULER_LABEL] == "binpack"
    binding = objects["MutatingAdmissionPolicyBinding"]["spec"]
    assert binding == {"policyName": "kschedctl-route-binpack"}


def test_only_create_of_core_v1_pods() -> None:
    policy = _policy({"namespaceSelector": TEAM})
    assert policy["matchConstraints"]["resourceRules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
    ]
    assert "paramKind" not in policy


def test_namespaces_selected_and_never_kube_system() -> None:
    policy = _policy({"namespaceSelector": {**TEAM, "matchExpressions": [
        {"key": "env", "operator": "NotIn", "values": ["prod"]}]}})  # fmt: skip
    assert policy["matchConstraints"]["namespaceSelector"] == {
        "matchLabels": {"team": "ml"},
        "matchExpressions": [
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]},
        ],
    }


@pytest.mark.parametrize(
    ("namespace", "allow", "excluded"),
    [("kube-system", False, True), ("kube-system", True, False), ("scheduling", False, True)],
)
def test_kube_system_only_when_the_scheduler_lives_there_and_allows_it(
    namespace: str, allow: bool, excluded: bool
) -> None:
    routing = {"namespaceSelector": {}, "allowKubeSystem": allow}
    selector = _policy(routing, namespace=namespace)["matchConstraints"]["namespaceSelector"]
    kube_system = {"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                   "values": ["kube-system"]}  # fmt: skip
    assert (kube_system in selector.get("matchExpressions", [])) == excluded
    if not excluded:
        assert selector == {}  # every namespace, kube-system included


def test_pods_selected_but_never_a_kschedctl_schedulers_own() -> None:
    policy = _policy({"podSelector": {"matchLabels": {"app": "train"}}})
    assert policy["matchConstraints"]["objectSelector"] == {
        "matchLabels": {"app": "train"},
        "matchExpressions": [{"key": SCHEDULER_LABEL, "operator": "DoesNotExist"}],
    }
    # the scheduler's own pods carry that label in every in-cluster form
    spec = _spec({"podSelector": {"matchLabels": {"app": "train"}}})
    for form, kind in (("deployment", "Deployment"), ("pod", "Pod")):
        (workload,) = [d for d in yaml.safe_load_all(render(spec, form)) if d and d["kind"] == kind]
        template = workload["spec"]["template"] if kind == "Deployment" else workload
        assert SCHEDULER_LABEL in template["metadata"]["labels"]


def test_never_mirror_pods_bound_pods_nor_pods_naming_another_scheduler() -> None:
    policy = _policy({"namespaceSelector": TEAM})
    assert _conditions(policy) == {
        "not-a-mirror-pod": "!has(object.metadata.annotations) || "
        '!("kubernetes.io/config.mirror" in object.metadata.annotations)',
        "not-bound-yet": '!has(object.spec.nodeName) || object.spec.nodeName == ""',
        # the API server defaults an unset schedulerName before admission (e2e shows it)
        "asks-for-default-scheduler": 'object.spec.schedulerName == "default-scheduler"',
    }


def test_include_named_pods_routes_any_name_but_its_own() -> None:
    conditions = _conditions(_policy({"namespaceSelector": TEAM, "includeNamedPods": True}))
    assert "asks-for-default-scheduler" not in conditions
    assert conditions["not-named-here"] == 'object.spec.schedulerName != "binpack"'


def test_priority_classes_are_a_condition() -> None:
    conditions = _conditions(_policy({"priorityClassNames": ["batch", "batch-low"]}))
    assert conditions["priority-class"] == (
        "has(object.spec.priorityClassName) && object.spec.priorityClassName in "
        '["batch", "batch-low"]'
    )
    assert "priority-class" not in _conditions(_policy({"namespaceSelector": TEAM}))


def test_failure_and_reinvocation_policies_are_chosen_and_explained() -> None:
    text = render(_spec({"namespaceSelector": TEAM}), "routing")
    policy = _policy({"namespaceSelector": TEAM})
    assert policy["failurePolicy"] == "Ignore"
    assert policy["reinvocationPolicy"] == "IfNeeded"
    assert "# Ignore: a policy that fails" in text and "default-scheduler places it" in text
    assert "# IfNeeded: when a later admission plugin changes the pod" in text


def test_the_patch_sets_the_scheduler_and_the_routed_by_annotation() -> None:
    policy = _policy({"namespaceSelector": TEAM}, namespace="scheduling")
    assert policy["mutations"] == [
        {
            "patchType": "ApplyConfiguration",
            "applyConfiguration": {
                "expression": "Object{metadata: Object.metadata{annotations: "
                f'{{"{ROUTED_BY_ANNOTATION}": "scheduling/binpack"}}}}, '
                'spec: Object.spec{schedulerName: "binpack"}}'
            },
        }
    ]
    assert ROUTED_BY_ANNOTATION == "kschedctl.io/routed-by"


def test_cel_strings_escape_quotes_backslashes_and_control_characters() -> None:
    assert cel('a"b\\c\n\u2028') == '"a\\"b\\\\c\\n\\u2028"'


def test_user_strings_reach_the_yaml_escaped() -> None:
    """A label value YAML would read otherwise (a number, a boolean) stays a string."""
    spec = _spec({"namespaceSelector": {"matchLabels": {"team": "true", "tier": "1.30"}}})
    selector = _objects(spec)["MutatingAdmissionPolicy"]["spec"]["matchConstraints"][
        "namespaceSelector"
    ]
    assert selector["matchLabels"] == {"team": "true", "tier": "1.30"}


# --- forms, objects and kinds -----------------------------------------------------------


def test_the_in_cluster_forms_hold_the_routing_after_the_scheduler() -> None:
    spec = _spec({"namespaceSelector": TEAM})
    for form in ("deployment", "pod"):
        kinds_in_order = [d["kind"] for d in yaml.safe_load_all(render(spec, form)) if d]
        assert kinds_in_order[-2:] == ["MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"]
        docs = list(yaml.safe_load_all(render(spec, form)))
        assert check_objects(spec, form, by_name(form).objects, docs)  # deploy accepts them
    plain = _spec(None)
    for form in ("deployment", "pod"):
        assert "MutatingAdmissionPolicy" not in render(plain, form)


def test_the_routing_form_without_routing_says_so_and_is_not_written() -> None:
    text = render(_spec(None), "routing")
    assert [d for d in yaml.safe_load_all(text) if d] == []
    assert text.startswith("# Scheduler binpack has no spec.routing")
    assert "routing.yaml" not in render_workspace(_spec(None))
    assert "routing.yaml" in render_workspace(_spec({"namespaceSelector": TEAM}))


def test_a_stray_policy_is_refused_by_the_allow_list() -> None:
    spec = _spec({"namespaceSelector": TEAM})
    docs = list(yaml.safe_load_all(render(spec, "routing")))
    docs[-2]["metadata"]["name"] = "kschedctl-route-other"
    with pytest.raises(SpecError, match="is not an object kschedctl renders here"):
        check_objects(spec, "routing", by_name("routing").objects, docs)


def test_a_binding_of_another_policy_is_refused() -> None:
    spec = _spec({"namespaceSelector": TEAM})
    docs = list(yaml.safe_load_all(render(spec, "routing")))
    docs[-1]["spec"]["policyName"] = "someone-elses-policy"
    with pytest.raises(SpecError, match="its spec must be policyName kschedctl-route-binpack"):
        check_objects(spec, "routing", by_name("routing").objects, docs)


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_rest_paths_at_either_version(version: str) -> None:
    for kind, plural in (
        ("MutatingAdmissionPolicy", "mutatingadmissionpolicies"),
        ("MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings"),
    ):
        obj = {
            "apiVersion": f"admissionregistration.k8s.io/{version}",
            "kind": kind,
            "metadata": {"name": "kschedctl-route-s"},
        }
        assert resource_of(obj).api_version == obj["apiVersion"]
        assert object_path(obj) == (
            f"/apis/admissionregistration.k8s.io/{version}/{plural}/kschedctl-route-s"
        )
    with pytest.raises(ValueError, match="does not manage"):
        resource_of({**obj, "apiVersion": "admissionregistration.k8s.io/v1alpha1"})
