"""``program: builtin``: the four forms run ``kschedctl scheduler run`` with RBAC of its own."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kschedctl.base.errors import SpecError
from kschedctl.render.added_profile import add_profile
from kschedctl.render.builtin import RBAC_RULES
from kschedctl.render.forms import render, render_workspace
from kschedctl.spec import check_spec, default_spec, spec_from_dict, with_program


def builtin(**overrides: Any) -> Any:
    return default_spec("fb", program="builtin", **overrides)


def docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_defaults_follow_the_program() -> None:
    spec = builtin()
    assert spec.image.startswith("kschedctl:") and spec.service.binary == "/usr/local/bin/kschedctl"
    back = with_program(spec, "kube-scheduler")
    assert back.image.startswith("registry.k8s.io/kube-scheduler:")
    assert back.service.binary == "/usr/local/bin/kube-scheduler"
    assert (
        "builtin" not in default_spec("k").to_dict()["spec"]
    )  # kube-scheduler specs stay as they were
    custom = with_program(builtin(image="example.com/mine:1"), "kube-scheduler")
    assert custom.image == "example.com/mine:1"  # an image the user chose is kept


@pytest.mark.parametrize("form", ["pod", "deployment"])
def test_in_cluster_forms_have_least_privilege_rbac(form: str) -> None:
    objects = docs(render(builtin(), form))
    (role,) = by_kind(objects, "ClusterRole")
    assert role["rules"] == RBAC_RULES
    verbs = {(res, v) for r in role["rules"] for res in r["resources"] for v in r["verbs"]}
    assert verbs == {
        ("nodes", "list"), ("nodes", "watch"), ("pods", "list"), ("pods", "watch"),
        ("pods/binding", "create"), ("pods/status", "patch"), ("events", "create"),
        # volume binding: read claims and classes, write a PersistentVolume's claimRef
        ("persistentvolumeclaims", "list"), ("persistentvolumeclaims", "watch"),
        ("persistentvolumes", "get"), ("persistentvolumes", "list"),
        ("persistentvolumes", "watch"), ("persistentvolumes", "update"),
        ("storageclasses", "list"), ("storageclasses", "watch"),
        ("csidrivers", "list"), ("csidrivers", "watch"),
        ("csistoragecapacities", "list"), ("csistoragecapacities", "watch"),
        ("csinodes", "list"), ("csinodes", "watch"),
        # the selectors of the system-default topology spreading (scoring)
        ("services", "list"), ("services", "watch"), ("replicationcontrollers", "list"),
        ("replicationcontrollers", "watch"), ("replicasets", "list"), ("replicasets", "watch"),
        ("statefulsets", "list"), ("statefulsets", "watch"),
        ("pods", "delete"), ("poddisruptionbudgets", "list"), ("poddisruptionbudgets", "watch"),
        # the namespaceSelector of pod affinity terms
        ("namespaces", "list"), ("namespaces", "watch"),
        # DRA: read classes, slices and claims; PreBind writes a claim's finalizer and status
        ("deviceclasses", "list"), ("deviceclasses", "watch"), ("resourceslices", "list"),
        ("resourceslices", "watch"), ("resourceclaims", "get"), ("resourceclaims", "list"),
        ("resourceclaims", "watch"), ("resourceclaims", "update"),
        ("resourceclaims/status", "update"), ("resourceclaims/status", "patch"),
        # the special claim of DRA-backed extended resources: created, deleted on failure
        ("resourceclaims", "create"), ("resourceclaims", "delete"),
    }  # fmt: skip
    (binding,) = by_kind(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    bound_roles = {
        b["roleRef"]["name"]
        for b in by_kind(objects, "ClusterRoleBinding") + by_kind(objects, "RoleBinding")
    }
    assert (
        "system:kube-scheduler" not in bound_roles and "system:volume-scheduler" not in bound_roles
    )
    (lease_role,) = by_kind(objects, "Role")
    assert lease_role["rules"][1]["resourceNames"] == ["fb"]
    assert lease_role["rules"][1]["verbs"] == ["get", "update"]


def test_the_container_runs_the_scheduler_with_every_spec_field() -> None:
    spec = builtin(replicas=2, percentage_of_nodes_to_score=30, pod_initial_backoff_seconds=2)
    spec.builtin.strategy = "binpack"
    spec.leader_election.lease_duration = "30s"
    spec.leader_election.renew_deadline = "20s"
    spec.leader_election.retry_period = "1500ms"
    spec.client_connection = {"qps": 200, "burst": 300}
    spec.extra_args = ["--verbosity-extra"]
    (deployment,) = by_kind(docs(render(spec, "deployment")), "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "kschedctl"
    assert container["command"] == [
        "kschedctl", "scheduler", "run", "--name=fb", "--policy=/etc/kubernetes/fb/policy.yaml",
        "--strategy=binpack", "--leader-elect", "--lease-namespace=kube-system", "--lease-name=fb",
        "--lease-duration=30", "--renew-deadline=20", "--retry-period=1.5", "--qps=200",
        "--burst=300", "--percentage-of-nodes-to-score=30", "--pod-initial-backoff=2",
        "--metrics-port=10259", "--v=2", "--verbosity-extra",
    ]  # fmt: skip
    assert container["ports"] == [{"name": "metrics", "containerPort": 10259, "protocol": "TCP"}]
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        assert container[probe]["httpGet"] == {"path": path, "port": "metrics", "scheme": "HTTP"}


def test_without_leader_election() -> None:
    (pod,) = by_kind(docs(render(builtin(leader_elect=False), "pod")), "Pod")
    assert "--no-leader-elect" in pod["spec"]["containers"][0]["command"]
    assert not by_kind(docs(render(builtin(leader_elect=False), "pod")), "Role")


def test_the_config_is_the_fallback_policy_and_it_is_mounted() -> None:
    spec = builtin()
    spec.builtin.policy = {
        "strictPreferences": True,
        "fallbacks": [{"name": "any", "dropPreferred": True}],
    }
    objects = docs(render(spec, "deployment"))
    (cm,) = by_kind(objects, "ConfigMap")
    policy = yaml.safe_load(cm["data"]["policy.yaml"])
    assert policy == {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "FallbackPolicy",
        "strictPreferences": True,
        "fallbacks": [{"name": "any", "dropPreferred": True}],
    }
    assert yaml.safe_load(render(spec, "config")) == policy
    assert yaml.safe_load(render(builtin(), "config"))["fallbacks"] == []


def test_host_forms_read_the_host_kubeconfig_and_serve_on_the_host_port() -> None:
    spec = builtin()
    unit = render(spec, "service")
    exec_start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    assert exec_start.startswith("ExecStart=/usr/local/bin/kschedctl scheduler run --name=fb ")
    assert "--kubeconfig=/etc/kubernetes/scheduler.conf" in exec_start
    assert "--metrics-address=127.0.0.1 --metrics-port=10260" in exec_start
    assert "--policy=/etc/kubernetes/config/fb.yaml" in exec_start
    (static,) = docs(render(spec, "static-pod"))
    command = static["spec"]["containers"][0]["command"]
    assert command[:3] == ["kschedctl", "scheduler", "run"] and "--metrics-port=10260" in command
    assert yaml.safe_load(render(spec, "host-config"))["kind"] == "FallbackPolicy"


def test_workspace_renders_every_file_twice_the_same() -> None:
    first, second = render_workspace(builtin()), render_workspace(builtin())
    assert first == second
    for name, text in first.items():
        if name.endswith(".yaml"):
            assert docs(text), name


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (lambda s: setattr(s.builtin, "strategy", "random"), "spec.builtin.strategy", "must be spread or binpack"),
        (lambda s: setattr(s.builtin, "policy", {"fallbacks": [{"name": "x"}]}), "spec.builtin.policy.fallbacks[0]", "relaxes nothing"),
        (lambda s: setattr(s.builtin, "policy", {"fallbacks": [{"name": "x", "tolerate": [{"operator": "Exists"}]}]}), "spec.builtin.policy.fallbacks[0].tolerate[0].key", "is required"),
        (lambda s: setattr(s.builtin, "metrics_port", 0), "spec.builtin.metricsPort", "not a port number"),
        (lambda s: setattr(s, "image", "registry.k8s.io/kube-scheduler:v1.36.3"), "spec.image", "program builtin runs kschedctl's image"),
        (lambda s: s.profiles.append({"schedulerName": "second"}), "spec.profiles", "exactly one scheduler name"),
        (lambda s: s.profiles[0].update(plugins={"score": {"disabled": [{"name": "*"}]}}), "spec.profiles[0].plugins", "do not apply to program builtin"),
        (lambda s: setattr(s, "parallelism", 8), "spec.parallelism", "does not apply to program builtin"),
    ],
)  # fmt: skip
def test_builtin_spec_problems_name_the_field(change: Any, path: str, message: str) -> None:
    spec = builtin()
    change(spec)
    problems = check_spec(spec)
    assert any(p.path == path and message in p.message for p in problems), problems


def test_builtin_section_is_refused_for_kube_scheduler() -> None:
    doc = {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": "k"},
        "spec": {"builtin": {"strategy": "binpack"}},
    }
    _spec, problems = spec_from_dict(doc)
    assert [(p.path, p.message) for p in problems] == [
        ("spec.builtin", "applies to program builtin only")
    ]


def test_builtin_section_loads_from_yaml() -> None:
    doc = {"apiVersion": "kschedctl.io/v1alpha1", "kind": "Scheduler", "metadata": {"name": "b"},
           "spec": {"program": "builtin", "builtin": {"strategy": "binpack", "metricsPort": 9000, "policy": {"fallbacks": [{"name": "a", "relax": ["podAffinity"]}]}}}}  # fmt: skip
    spec, problems = spec_from_dict(doc)
    assert problems == [] and spec is not None
    assert (spec.builtin.strategy, spec.builtin.metrics_port) == ("binpack", 9000)
    doc["spec"]["builtin"]["stratgy"] = "x"
    _spec, problems = spec_from_dict(doc)
    assert (
        problems[0].path == "spec.builtin.stratgy"
        and "did you mean 'strategy'" in problems[0].message
    )


def test_builtin_cannot_be_added_as_a_kube_scheduler_profile() -> None:
    with pytest.raises(SpecError, match="only kube-scheduler profiles"):
        add_profile(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
            builtin(),
        )


def test_status_checks_exactly_what_the_builtin_role_grants() -> None:
    from kschedctl.observe.permissions import scheduler_access

    granted = {
        (rule["apiGroups"][0], resource, verb)
        for rule in RBAC_RULES
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    checked = {
        (a.group, f"{a.resource}/{a.subresource}" if a.subresource else a.resource, a.verb)
        for a in scheduler_access(None, None, builtin=True)
    }
    assert checked == granted
    assert len(scheduler_access("kube-system", "fb", builtin=True)) == len(granted) + 3
