"""kschedctl create: the workspace, the flags, every refusal, and nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kschedctl.spec import builtin_image, load_spec

EXPECTED_FILES = {
    "scheduler.yaml",
    "scheduler.schema.json",
    "config.yaml",
    "my-scheduler.service",
    "host-config.yaml",
    "host-rbac.yaml",
    "pod.yaml",
    "deployment.yaml",
    "static-pod.yaml",
    "example-pod.yaml",
    "README.md",
}


def _entries(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def test_create_writes_the_workspace(run, tmp_path: Path) -> None:
    result = run("create", "my-scheduler")
    assert result.exit_code == 0, result.stderr
    ws = tmp_path / "my-scheduler"
    assert set(_entries(ws)) == EXPECTED_FILES
    assert result.stdout.splitlines() == [
        f"my-scheduler/{name}"
        for name in [
            "scheduler.yaml",
            "scheduler.schema.json",
            "config.yaml",
            "my-scheduler.service",
            "host-config.yaml",
            "host-rbac.yaml",
            "pod.yaml",
            "deployment.yaml",
            "static-pod.yaml",
            "example-pod.yaml",
            "README.md",
        ]
    ]
    assert "kschedctl deploy my-scheduler --as deployment" in result.stderr
    assert "kubectl apply -f my-scheduler/deployment.yaml" not in result.stderr
    assert "kschedctl render my-scheduler --as helm-chart ./charts/my-scheduler" in result.stderr
    assert "warning:" not in result.stderr  # registry.k8s.io has the image
    spec = load_spec(ws / "scheduler.yaml")
    assert spec.name == "my-scheduler"
    assert spec.kubernetes_version == "1.36"
    assert _entries(tmp_path) == ["my-scheduler"]  # no staging directory left over


def test_create_flags_fill_the_spec(run, tmp_path: Path) -> None:
    (tmp_path / "parent").mkdir()
    result = run(
        "create",
        "ha",
        "--dir",
        "parent",
        "--kubernetes-version",
        "1.33",
        "--namespace",
        "schedulers",
        "--replicas",
        "3",
        "--leader-elect",
        "--image",
        "registry.k8s.io/kube-scheduler:v1.33.2",
    )
    assert result.exit_code == 0, result.stderr
    spec = load_spec(tmp_path / "parent" / "ha" / "scheduler.yaml")
    assert (spec.kubernetes_version, spec.namespace, spec.replicas) == ("1.33", "schedulers", 3)
    assert spec.image == "registry.k8s.io/kube-scheduler:v1.33.2"
    assert spec.leader_election.resource_namespace == "schedulers"
    deployment = list(yaml.safe_load_all((tmp_path / "parent/ha/deployment.yaml").read_text()))
    assert deployment[-1]["spec"]["replicas"] == 3


def test_no_leader_elect(run, tmp_path: Path) -> None:
    assert run("create", "solo", "--no-leader-elect").exit_code == 0
    assert not load_spec(tmp_path / "solo" / "scheduler.yaml").leader_election.leader_elect
    assert not (tmp_path / "solo" / "host-rbac.yaml").exists()


def test_existing_directory_is_refused_without_force(run, tmp_path: Path) -> None:
    assert run("create", "my-scheduler").exit_code == 0
    (tmp_path / "my-scheduler" / "notes.txt").write_text("mine")
    result = run("create", "my-scheduler")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: my-scheduler already exists\nhint: pass --force")
    assert result.stdout == ""
    assert (tmp_path / "my-scheduler" / "notes.txt").exists()

    result = run("create", "my-scheduler", "--force", "--replicas", "2")
    assert result.exit_code == 0, result.stderr
    assert set(_entries(tmp_path / "my-scheduler")) == EXPECTED_FILES  # replaced as a whole
    assert load_spec(tmp_path / "my-scheduler" / "scheduler.yaml").replicas == 2
    assert _entries(tmp_path) == ["my-scheduler"]


def test_existing_file_is_refused_even_with_force(run, tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    result = run("create", "taken", "--force")
    assert result.exit_code == 1
    assert "exists and is not a directory" in result.stderr


def test_missing_parent_directory(run, tmp_path: Path) -> None:
    result = run("create", "s", "--dir", "nowhere")
    assert result.exit_code == 5
    assert "nowhere: no such directory" in result.stderr
    assert _entries(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["My-Scheduler"], 3, "metadata.name: scheduler name 'My-Scheduler' is not a DNS-1123"),
        (["my_scheduler"], 3, "is not a DNS-1123 label"),
        (["a" * 64], 3, "at most 63 characters"),
        ([""], 3, "scheduler name must not be empty"),
        (["default-scheduler"], 3, "'default-scheduler' is the cluster's own scheduler"),
        (["s", "--replicas", "3", "--no-leader-elect"], 3, "3 replicas need leader election"),
        (["s", "--replicas", "0"], 3, "spec.replicas: 0: must be at least 1"),
        (["s", "--namespace", "Bad_NS"], 3, "spec.namespace"),
        (["s", "--kubernetes-version", "1.24"], 2, "--kubernetes-version 1.24: Kubernetes 1.24"),
        (["s", "--kubernetes-version", "banana"], 2, "is not a Kubernetes version"),
        (["s", "--image", "k8s.gcr.io/kube-scheduler:v1.36.0"], 3, "k8s.gcr.io is frozen"),
        (["s", "--replicas", "many"], 2, "error: invalid value for '--replicas'"),
        (["s", "--no-such-flag"], 2, "error: unknown flag: --no-such-flag"),
    ],
)
def test_bad_input_is_refused_and_leaves_nothing(
    run, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    result = run("create", *args)
    assert result.exit_code == code, result.stderr
    assert message in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert _entries(tmp_path) == []


def test_help(run) -> None:
    result = run("create", "--help")
    assert result.exit_code == 0
    for flag in (
        "--dir",
        "--kubernetes-version",
        "--namespace",
        "--replicas",
        "--leader-elect",
        "--no-leader-elect",
        "--image",
        "--program",
        "--custom-plugin",
        "--force",
    ):
        assert flag in result.stdout


def test_create_program_custom_of_a_scheduler_plugins_release(run, tmp_path: Path) -> None:
    image = "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.33.5"
    result = run("create", "gang", "--program", "custom", "--image", image)
    assert result.exit_code == 0, result.stderr
    spec = load_spec(tmp_path / "gang" / "scheduler.yaml")
    assert (spec.program, spec.kubernetes_version) == ("custom", "1.33")  # follows the release
    assert spec.custom.distribution == "scheduler-plugins"
    pod = (tmp_path / "gang" / "pod.yaml").read_text()
    assert "- /bin/kube-scheduler\n" in pod


def test_create_program_custom_with_its_own_plugins(run, tmp_path: Path) -> None:
    result = run(
        "create", "lbl", "--program", "custom", "--image", "example.com/s:v1",
        "--custom-plugin", "NodeLabelMatch:Filter,Score", "--custom-plugin", "Gate:PreEnqueue",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    spec = load_spec(tmp_path / "lbl" / "scheduler.yaml")
    assert spec.custom.plugins == [
        {"name": "NodeLabelMatch", "extensionPoints": ["Filter", "Score"]},
        {"name": "Gate", "extensionPoints": ["PreEnqueue"]},
    ]
    assert spec.kubernetes_version == "1.36"  # an unknown image: the default version


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--custom-plugin", "A:Filter"], 2, "--custom-plugin needs --program custom"),
        (["--program", "custom", "--image", "e.io/s:1", "--custom-plugin", "A"], 2, "NAME:Point"),
        (["--program", "nope"], 2, 'invalid value "nope" for --program: one of kube-scheduler, builtin, custom'),
        (["--program", "custom", "--image", "e.io/s:1", "--custom-plugin", "A:Filtr"], 3,
         "spec.custom.plugins[0].extensionPoints[0]"),
        (["--program", "custom"], 3, "spec.image: is required"),
    ],
)  # fmt: skip
def test_create_program_custom_refusals(run, tmp_path: Path, args, code, words) -> None:
    result = run("create", "x", *args)
    assert result.exit_code == code
    assert words in result.stderr
    assert not (tmp_path / "x").exists()


def test_create_replaces_default(run, tmp_path: Path) -> None:
    result = run("create", "default-scheduler", "--program", "builtin", "--replaces-default")
    assert result.exit_code == 0, result.stderr
    assert "stop kube-scheduler first" in result.stderr
    spec = load_spec(tmp_path / "default-scheduler" / "scheduler.yaml")
    assert spec.replaces_default and spec.scheduler_names == ["default-scheduler"]
    le = spec.leader_election
    assert (le.resource_namespace, le.resource_name) == ("kube-system", "kube-scheduler")
    for form in ("static-pod.yaml", "default-scheduler.service", "deployment.yaml"):
        text = (tmp_path / "default-scheduler" / form).read_text()
        assert "It REPLACES the default scheduler" in text
        assert "--lease-name=kube-scheduler" in text
    rbac = list(
        yaml.safe_load_all((tmp_path / "default-scheduler" / "deployment.yaml").read_text())
    )
    role = next(d for d in rbac if d and d["kind"] == "Role")
    assert role["metadata"]["namespace"] == "kube-system"
    assert ["kube-scheduler"] in [r.get("resourceNames") for r in role["rules"]]
    cluster_role = next(d for d in rbac if d and d["kind"] == "ClusterRole")
    assert {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]} in (
        cluster_role["rules"]
    )


def test_create_replaces_default_only_as_default_scheduler(run, tmp_path: Path) -> None:
    result = run("create", "mine", "--program", "builtin", "--replaces-default")
    assert result.exit_code == 3
    assert "no profile serves 'default-scheduler'" in result.stderr
    assert not (tmp_path / "mine").exists()
    refused = run("create", "default-scheduler", "--program", "builtin")
    assert refused.exit_code == 3 and "spec.replacesDefault" in refused.stderr


def test_create_program_builtin_warns_its_default_image_must_be_built(run, tmp_path: Path) -> None:
    result = run("create", "own", "--program", "builtin")
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    image = builtin_image()
    assert f"warning: the image {image} (kschedctl's own scheduler, program builtin)" in said
    assert "Dockerfile" in said and f"docker build -t REGISTRY/{image} ." in said
    assert f"--image REGISTRY/{image}" in said
    assert "kschedctl render own --as kustomize ./deploy/own" in said  # no chart for builtin
    assert result.stdout.splitlines()[0] == "own/scheduler.yaml"  # stdout stays the paths


def test_create_program_builtin_with_an_image_of_ones_own_does_not_warn(
    run, tmp_path: Path
) -> None:
    result = run("create", "own", "--program", "builtin", "--image", "reg.example/ks:1")
    assert result.exit_code == 0, result.stderr
    assert "warning:" not in result.stderr


def test_create_route_flags_start_a_routing(run, tmp_path: Path) -> None:
    result = run(
        "create", "binpack", "--route-namespace-label", "team=ml",
        "--route-namespace-label", "tier=batch", "--route-pod-label", "app=train",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    spec = load_spec(tmp_path / "binpack" / "scheduler.yaml")
    assert spec.routing is not None
    assert spec.routing.namespace_selector == {"matchLabels": {"team": "ml", "tier": "batch"}}
    assert spec.routing.pod_selector == {"matchLabels": {"app": "train"}}
    assert "binpack/routing.yaml" in result.stdout.splitlines()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["--route-namespace-label", "team"],
            2,
            "--route-namespace-label team: expected KEY=VALUE",
        ),
        (["--route-pod-label", "a=1", "--route-pod-label", "a=2"], 2, "a given twice"),
        (["--route-namespace-label", "bad key=x"], 3, "spec.routing.namespaceSelector.matchLabels"),
        (
            ["--route-namespace-label", "team=ml", "--kubernetes-version", "1.33"],
            3,
            "Kubernetes 1.33 has no MutatingAdmissionPolicy",
        ),
    ],
)
def test_create_route_flags_refused(
    run, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    result = run("create", "binpack", *args)
    assert result.exit_code == code
    assert message in result.stderr and result.stdout == ""
    assert not (tmp_path / "binpack").exists()
