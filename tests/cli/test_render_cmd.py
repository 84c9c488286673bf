"""kschedctl render: every form from every kind of source, and every refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kschedctl.cli.render import Form
from kschedctl.render.forms import DIRECTORY_FORMS, RENDER_FORMS, render
from kschedctl.spec import default_spec

GOLDEN_SPECS = Path(__file__).resolve().parent.parent / "golden" / "specs"


def test_form_choices_match_the_renderer() -> None:
    assert tuple(f.value for f in Form) == RENDER_FORMS


@pytest.mark.parametrize("form", [f for f in RENDER_FORMS if f not in DIRECTORY_FORMS])
def test_bare_name_renders_defaults(run, form: str) -> None:
    result = run("render", "my-scheduler", "--as", form)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == render(default_spec("my-scheduler"), form)
    assert result.stderr == ""


def test_workspace_dir_and_spec_file(run, tmp_path: Path) -> None:
    assert run("create", "ws", "--replicas", "2").exit_code == 0
    from_dir = run("render", "ws", "--as", "deployment")
    from_file = run("render", "ws/scheduler.yaml", "--as", "deployment")
    assert from_dir.exit_code == from_file.exit_code == 0
    assert from_dir.stdout == from_file.stdout == (tmp_path / "ws" / "deployment.yaml").read_text()
    # A workspace directory wins over the bare-name reading of the same word.
    assert "replicas: 2" in from_dir.stdout


def test_multi_document_output_parses(run) -> None:
    result = run("render", "s", "--as", "deployment")
    kinds = [d["kind"] for d in yaml.safe_load_all(result.stdout) if d]
    assert kinds[-2:] == ["ConfigMap", "Deployment"]


def test_kubernetes_version_override(run) -> None:
    result = run("render", "s", "--as", "deployment", "--kubernetes-version", "1.31")
    assert result.exit_code == 0
    assert "registry.k8s.io/kube-scheduler:v1.31.13" in result.stdout
    assert "/healthz" in result.stdout


def test_add_to(run, tmp_path: Path) -> None:
    result = run(
        "render", "s", "--as", "config", "--add-to", str(GOLDEN_SPECS / "existing-config.yaml")
    )
    assert result.exit_code == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    assert [p["schedulerName"] for p in config["profiles"]] == ["default-scheduler", "s"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["s"], 2, "error: missing option '--as'"),
        (["s", "--as", "helm"], 2, 'error: invalid value "helm" for --as'),
        (["s", "--as", "pod", "--add-to", "x.yaml"], 2, "--add-to works with --as config only"),
        (["s", "--as", "config", "--add-to", "missing.yaml"], 5, "missing.yaml: no such file"),
        (["nope/scheduler.yaml", "--as", "config"], 5, "no such file or directory"),
        (["missing.yaml", "--as", "config"], 5, "no such file or directory"),
        (["Bad_Name", "--as", "config"], 3, "Bad_Name: metadata.name"),
        (["default-scheduler", "--as", "config"], 3, "the cluster's own scheduler"),
        (["s", "--as", "config", "--kubernetes-version", "1.22"], 2, "Kubernetes 1.22 has no"),
    ],
)
def test_refusals(run, args: list[str], code: int, message: str) -> None:
    result = run("render", *args)
    assert result.exit_code == code, result.stderr
    assert message in result.stderr
    assert result.stdout == ""


SPEC_HEADER = "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata:\n  name: s\n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("spec:\n  replicas: [\n", "malformed YAML"),
        ("spec:\n  colour: blue\n", "spec.colour: unknown field"),
        ("spec:\n  kubernetesVersion: '1.20'\n", "spec.kubernetesVersion: Kubernetes 1.20"),
        ("spec:\n  replicas: 2\n  leaderElection: {leaderElect: false}\n", "need leader election"),
        (
            "spec:\n  leaderElection: {resourceName: kube-scheduler}\n",
            "spec.leaderElection.resourceName",
        ),
        (
            "spec:\n  leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n",
            "leaseDuration: 5s must be greater than renewDeadline",
        ),
        (
            "spec:\n  leaderElection: {renewDeadline: 2s, retryPeriod: 3s}\n",
            "renewDeadline: 2s must be greater than retryPeriod",
        ),
        (
            "spec:\n  profiles: [{schedulerName: s}, {schedulerName: s}]\n",
            "spec.profiles[1].schedulerName: Duplicate value",
        ),
        ("spec:\n  profiles: [{plugins: {}}]\n", "spec.profiles[0].schedulerName"),
        ("spec:\n  extraArgs: [--scheduler-name=s]\n", "--scheduler-name no longer exists"),
        ("spec:\n  extraArgs: [--policy-config-file=/p]\n", "--policy-config-file no longer"),
        ("spec:\n  extraArgs: [--address=0.0.0.0]\n", "--address no longer exists"),
        ("spec:\n  extraArgs: ['--port=0']\n", "--port no longer exists"),
        ("spec:\n  extraArgs: [--lock-object-name=s]\n", "--lock-object-name no longer exists"),
    ],
)
def test_bad_spec_files(run, tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "s.yaml").write_text(SPEC_HEADER + body)
    result = run("render", "s.yaml", "--as", "deployment")
    assert result.exit_code == 3, result.stderr
    assert result.stderr.startswith("error: s.yaml")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_builtin_program_renders_kschedctls_scheduler(run, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        SPEC_HEADER + "spec:\n  program: builtin\n  image: example.com/s:1\n"
    )
    result = run("render", "s.yaml", "--as", "deployment")
    assert result.exit_code == 0, result.stderr
    assert "- kschedctl\n        - scheduler\n        - run\n" in result.stdout
    assert "image: example.com/s:1" in result.stdout


def test_custom_program_renders_the_image_binary(run, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        SPEC_HEADER + "spec:\n  program: custom\n"
        "  image: registry.k8s.io/scheduler-plugins/kube-scheduler:v0.33.5\n"
    )
    result = run("render", "s.yaml", "--as", "deployment")
    assert result.exit_code == 0, result.stderr
    assert "- /bin/kube-scheduler\n" in result.stdout


def test_custom_program_needs_an_image(run, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SPEC_HEADER + "spec:\n  program: custom\n")
    result = run("render", "s.yaml", "--as", "deployment")
    assert result.exit_code == 3
    assert "spec.image: is required when spec.program is not kube-scheduler" in result.stderr


def test_help(run) -> None:
    result = run("render", "--help")
    assert result.exit_code == 0
    for word in ("--as", "--add-to", "--kubernetes-version", "static-pod", "example-pod"):
        assert word in result.stdout


METRICS_SPEC = """\
apiVersion: kschedctl.io/v1alpha1
kind: Scheduler
metadata: {name: watched}
spec:
  leaderElection: {leaderElect: false}
  metrics: {service: true}
"""


@pytest.mark.parametrize(
    ("flag", "kinds", "note"),
    [
        ("--as-static-pod", ["Service", "ClusterRole", "ClusterRoleBinding"], False),
        ("--as-service", ["ClusterRole", "ClusterRoleBinding"], True),
    ],
    ids=["static-pod", "service"],
)
def test_host_forms_client_dry_run_shows_the_metrics_objects_they_apply(
    run, tmp_path: Path, flag: str, kinds: list[str], note: bool
) -> None:
    (tmp_path / "watched.yaml").write_text(METRICS_SPEC)
    result = run("deploy", "watched.yaml", flag, "--dry-run", "client", "--root", "root")
    assert result.exit_code == 0, result.stderr
    objects = result.stdout.split("---\n", 1)[1]
    assert [d["kind"] for d in yaml.safe_load_all(objects)] == kinds
    said = "# Service kube-system/watched-metrics (v1) not applied: only deploy --as-static-pod"
    assert (said in result.stdout) is note
    assert not (tmp_path / "root").exists()  # a client dry run writes nothing
