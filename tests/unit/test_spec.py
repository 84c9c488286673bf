"""The spec: strict loading, defaulting, validation with field paths, round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.base.errors import NotFoundError, SpecError
from kschedctl.render.forms import render
from kschedctl.spec import (
    Spec,
    check_spec,
    default_spec,
    load_spec,
    spec_from_dict,
    spec_from_source,
    spec_problems,
    with_version,
)


def _doc(**spec: object) -> dict:
    return {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": "my-scheduler"},
        "spec": spec,
    }


def _problems(**spec: object) -> list[str]:
    _, problems = spec_from_dict(_doc(**spec))
    return [f"{p.path}: {p.message}" for p in problems]


def test_defaults() -> None:
    spec = default_spec("my-scheduler")
    assert spec.kubernetes_version == "1.36"
    assert spec.image == "registry.k8s.io/kube-scheduler:v1.36.3"
    assert spec.namespace == "kube-system"
    assert spec.program == "kube-scheduler"
    assert spec.replicas == 1
    assert spec.leader_election.leader_elect is True
    assert spec.leader_election.resource_name == "my-scheduler"
    assert spec.leader_election.resource_namespace == "kube-system"
    assert spec.profiles == [{"schedulerName": "my-scheduler"}]
    assert spec.service.secure_port == 10260  # not the default scheduler's 10259
    assert check_spec(spec) == []


def test_overrides_flow_into_derived_defaults() -> None:
    spec = default_spec("s1", namespace="schedulers", kubernetes_version="1.30", replicas=3)
    assert spec.leader_election.resource_namespace == "schedulers"
    assert spec.image.endswith(":v1.30.14")
    spec = default_spec("s1", leader_elect=False, image="example.com/sched:1", replicas=None)
    assert spec.leader_election.leader_elect is False
    assert spec.image == "example.com/sched:1"
    with pytest.raises(TypeError):
        default_spec("s1", no_such_field=1)


def test_to_dict_round_trips_and_keeps_key_order() -> None:
    spec = default_spec("my-scheduler", extra_args=["--feature-gates=A=true"])
    data = spec.to_dict()
    assert list(data) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(data["spec"])[:5] == [
        "kubernetesVersion",
        "namespace",
        "image",
        "program",
        "replicas",
    ]
    assert "replacesDefault" not in data["spec"]
    again, problems = spec_from_dict(yaml.safe_load(yaml.safe_dump(data)))
    assert problems == []
    assert again == spec


def test_missing_fields_default_like_create() -> None:
    spec, problems = spec_from_dict(_doc())
    assert problems == []
    assert spec == default_spec("my-scheduler")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"replicaz": 2}, "spec.replicaz: unknown field (did you mean 'replicas'?)"),
        ({"service": {"port": 1}}, "spec.service.port: unknown field"),
        ({"leaderElection": {"leaderElect": "yes please"}}, "must be a boolean"),
        ({"replicas": "3"}, "spec.replicas: must be an integer"),
        ({"kubernetesVersion": 1.3}, 'quote it ("1.3")'),
        ({"kubernetesVersion": "1.20"}, "spec.kubernetesVersion: Kubernetes 1.20 has no"),
        ({"kubernetesVersion": "1.99"}, "newer than this kschedctl knows"),
        ({"replicas": 3, "leaderElection": {"leaderElect": False}}, "3 replicas need leader"),
        ({"replicas": 0}, "spec.replicas: 0: must be at least 1"),
        (
            {"leaderElection": {"resourceName": "kube-scheduler"}},
            "spec.leaderElection.resourceName: is 'kube-scheduler', the default scheduler's lock",
        ),
        (
            {"leaderElection": {"leaseDuration": "10s", "renewDeadline": "10s"}},
            "spec.leaderElection.leaseDuration: 10s must be greater than renewDeadline",
        ),
        (
            {"leaderElection": {"renewDeadline": "2s", "retryPeriod": "2s"}},
            "spec.leaderElection.renewDeadline: 2s must be greater than retryPeriod",
        ),
        ({"leaderElection": {"retryPeriod": "soon"}}, "is not a duration"),
        (
            {"profiles": [{"schedulerName": "my-scheduler"}, {"schedulerName": "my-scheduler"}]},
            "spec.profiles[1].schedulerName: Duplicate value: 'my-scheduler'",
        ),
        (
            {"profiles": [{"plugins": {}}]},
            "spec.profiles[0].schedulerName: is missing, so it defaults to 'default-scheduler'",
        ),
        (
            {"profiles": [{"schedulerName": "my-scheduler"}, {"plugins": {}}]},
            "spec.profiles[1].schedulerName: is required",
        ),
        ({"profiles": []}, "spec.profiles: no profiles"),
        (
            {"profiles": [{"schedulerName": "other"}]},
            "spec.profiles: no profile is named 'my-scheduler'",
        ),
        (
            {
                "profiles": [
                    {"schedulerName": "my-scheduler"},
                    {"schedulerName": "default-scheduler"},
                ]
            },
            "spec.profiles[1].schedulerName: 'default-scheduler' is the cluster's own scheduler",
        ),
        ({"extraArgs": ["--scheduler-name=x"]}, "spec.extraArgs[0]: --scheduler-name no longer"),
        ({"extraArgs": ["--policy-config-file=/p"]}, "--policy-config-file no longer exists"),
        ({"extraArgs": ["--address=0.0.0.0"]}, "--address no longer exists"),
        ({"extraArgs": ["--port=10251"]}, "--port no longer exists"),
        ({"extraArgs": ["--lock-object-name=x"]}, "--lock-object-name no longer exists"),
        ({"extraArgs": ["--kubeconfig=/k"]}, "--kubeconfig is ignored when --config is set"),
        ({"extraArgs": ["--secure-port=1"]}, "set spec.service.securePort"),
        ({"extraArgs": ["verbose"]}, "is not a flag"),
        ({"service": {"securePort": 10259}}, "10259 is the default scheduler's port"),
        ({"service": {"securePort": 10251}}, "10251 was the insecure port"),
        ({"service": {"configDir": "relative/dir"}}, "must be an absolute path"),
        ({"service": {"bindAddress": "localhost"}}, "is not an IP address"),
        ({"namespace": "Kube_System"}, "spec.namespace: namespace 'Kube_System' is not"),
        ({"program": "magic"}, "spec.program: 'magic': must be one of"),
        ({"image": "k8s.gcr.io/kube-scheduler:v1.36.0"}, "k8s.gcr.io is frozen"),
        ({"image": "registry.k8s.io/kube-scheduler:v1.37.0"}, "never newer"),
        ({"image": "registry.k8s.io/kube-scheduler:v1.34.0"}, "at most one minor older"),
        ({"image": "registry.k8s.io/kube-scheduler:1.36.3"}, "tags them vX.Y.Z, with the v"),
        ({"image": "registry.k8s.io/kube-scheduler:v1.36"}, "(e.g. v1.36.3)"),
        ({"image": "registry.k8s.io/kube-scheduler:latest"}, "'latest' is not a kube-scheduler"),
        ({"image": "registry.k8s.io/kube-scheduler:v1.20.0"}, "tag 'v1.20.0': Kubernetes 1.20"),
        ({"clientConnection": {"kubeconfig": "/k"}}, "set spec.service.kubeconfig instead"),
        ({"clientConnection": {"burst": -1}}, "clientConnection.burst: must be non-negative"),
        ({"parallelism": 0}, "spec.parallelism: should be an integer value greater than zero"),
        ({"percentageOfNodesToScore": 101}, "not in valid range [0-100]"),
        ({"podMaxBackoffSeconds": 1, "podInitialBackoffSeconds": 5}, "podMaxBackoffSeconds"),
    ],
    ids=lambda v: str(v)[:60] if isinstance(v, dict) else None,
)
def test_bad_specs_name_the_field(spec: dict, expected: str) -> None:
    problems = _problems(**spec)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("My-Scheduler", "not a DNS-1123 label"),
        ("my_scheduler", "not a DNS-1123 label"),
        ("a" * 64, "at most 63 characters"),
        ("", "must not be empty"),
        ("-x", "not a DNS-1123 label"),
        ("default-scheduler", "'default-scheduler' is the cluster's own scheduler"),
    ],
)
def test_bad_names(name: str, expected: str) -> None:
    problems = [f"{p.path}: {p.message}" for p in check_spec(default_spec(name))]
    assert any(p.startswith("metadata.name") and expected in p for p in problems), problems


def test_replacing_the_default_scheduler_is_explicit() -> None:
    spec = default_spec("default-scheduler", replaces_default=True)
    spec.leader_election.resource_name = "kube-scheduler"
    spec.service.secure_port = 10259
    assert check_spec(spec) == []
    assert spec.to_dict()["spec"]["replacesDefault"] is True


def test_builtin_and_custom_are_valid_and_custom_needs_an_image() -> None:
    assert check_spec(default_spec("x", program="builtin", image="example.com/x:1")) == []
    assert check_spec(default_spec("x", program="custom", image="example.com/x:1")) == []
    problems = check_spec(default_spec("x", program="custom"))
    assert [p.path for p in problems] == ["spec.image"]


def test_top_level_shape() -> None:
    _, problems = spec_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "extra": 1})
    paths = {p.path for p in problems}
    assert {"apiVersion", "kind", "metadata.name", "extra"} <= paths


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("spec: [\n", "malformed YAML (line 2, column 1)"),
        ("a: 1\na: 2\n", "duplicate key 'a' (line 2, column 1)"),
        ("a: 1\n---\nb: 2\n", "expected one YAML document, found 2"),
        ("", "expected one YAML document, found 0"),
    ],
)
def test_malformed_yaml(text: str, expected: str) -> None:
    spec, problems = spec_problems(text, "s.yaml")
    assert spec is None
    assert len(problems) == 1
    assert str(problems[0]).startswith(f"s.yaml: {expected}")


def test_load_spec_raises_with_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(_doc(replicaz=1, program="magic")))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    err = info.value
    assert err.exit_code == 3
    assert [p.path for p in err.problems] == ["spec.replicaz", "spec.program"]
    assert f"{path} has 2 problems" in err.message
    with pytest.raises(NotFoundError):
        load_spec(tmp_path / "missing.yaml")


def test_spec_from_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert spec_from_source("my-scheduler") == default_spec("my-scheduler")
    (tmp_path / "ws").mkdir()
    with pytest.raises(NotFoundError, match="no scheduler.yaml"):
        spec_from_source("ws")
    (tmp_path / "ws" / "scheduler.yaml").write_text(yaml.safe_dump(_doc(replicas=2)))
    assert spec_from_source("ws").replicas == 2
    assert spec_from_source("ws/scheduler.yaml").replicas == 2
    with pytest.raises(NotFoundError):
        spec_from_source("nope/scheduler.yaml")
    with pytest.raises(NotFoundError):
        spec_from_source("nope.yaml")
    with pytest.raises(SpecError, match="not a DNS-1123 label"):
        spec_from_source("Bad_Name")


def test_with_version_moves_a_default_image_only() -> None:
    spec = with_version(default_spec("s"), "1.33")
    assert spec.image.endswith(":v1.33.5")
    custom = with_version(default_spec("s", image="example.com/s:1"), "1.33")
    assert custom.image == "example.com/s:1"


def test_spec_is_a_plain_dataclass() -> None:
    assert Spec(name="x").name == "x"


def test_a_replacement_takes_over_the_default_scheduler_lease() -> None:
    for program in ("builtin", "kube-scheduler"):
        spec = default_spec("default-scheduler", program=program, replaces_default=True)
        le = spec.leader_election
        assert (le.resource_namespace, le.resource_name) == ("kube-system", "kube-scheduler")
        assert spec.scheduler_names == ["default-scheduler"]
        assert check_spec(spec) == []
    # Without replacesDefault neither the name nor kube-scheduler's Lease is accepted.
    plain = default_spec("default-scheduler", program="builtin")
    assert plain.leader_election.resource_name == "default-scheduler"
    assert "metadata.name" in [p.path for p in check_spec(plain)]
    plain = default_spec("mine", program="builtin")
    plain.leader_election.resource_name = "kube-scheduler"
    assert [p.path for p in check_spec(plain)] == ["spec.leaderElection.resourceName"]


@pytest.mark.parametrize(
    ("name", "change", "path", "words"),
    [
        ("mine", None, "spec.replacesDefault", "no profile serves 'default-scheduler'"),
        ("default-scheduler", ("namespace", "tools"), "spec.namespace", "runs in kube-system"),
        ("default-scheduler", ("lease", "mine"), "spec.leaderElection",
         "holds the Lease kube-system/kube-scheduler, not kube-system/mine"),
    ],
    ids=["other-name", "other-namespace", "own-lease"],
)  # fmt: skip
def test_replacement_refusals(name: str, change: Any, path: str, words: str) -> None:
    spec = default_spec(name, program="builtin", replaces_default=True)
    if change and change[0] == "namespace":
        spec.namespace = change[1]
        spec.leader_election.resource_namespace = "kube-system"
    elif change:
        spec.leader_election.resource_name = change[1]
    problems = [p for p in check_spec(spec) if p.path == path]
    assert problems and words in problems[0].message, check_spec(spec)


def test_a_replacement_without_leader_election_is_allowed_and_says_so() -> None:
    spec = default_spec(
        "default-scheduler", program="builtin", replaces_default=True, leader_elect=False
    )
    assert check_spec(spec) == []
    text = render(spec, "static-pod")
    assert "without leader election: stop kube-scheduler first" in text
