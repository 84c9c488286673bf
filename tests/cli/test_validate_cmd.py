"""kschedctl validate: FILE: field.path: message on stdout, summary on stderr, exit 0 or 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  resourceName: my-scheduler
profiles:
- schedulerName: my-scheduler
"""

# The shape of the old lecture notes (v1.11-era): every line of it is now wrong.
OLD_TUTORIAL = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: my-scheduler-config
  namespace: kube-system
data:
  my-scheduler-config.yaml: |
    apiVersion: kubescheduler.config.k8s.io/v1beta2
    kind: KubeSchedulerConfiguration
    profiles:
    - schedulerName: my-scheduler
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-scheduler
  namespace: kube-system
spec:
  replicas: 1
  selector: {matchLabels: {component: scheduler}}
  template:
    metadata: {labels: {component: scheduler}}
    spec:
      schedulerName: my-scheduler
      containers:
      - name: kube-second-scheduler
        image: k8s.gcr.io/kube-scheduler:v1.12.0
        command:
        - /usr/local/bin/kube-scheduler
        - --address=0.0.0.0
        - --leader-elect=false
        - --scheduler-name=my-scheduler
        livenessProbe:
          httpGet: {path: /healthz, port: 10251}
        readinessProbe:
          httpGet: {path: /healthz, port: 10259}
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    return name


def test_valid_files(run, tmp_path: Path) -> None:
    assert run("create", "ws").exit_code == 0
    _write(tmp_path, "config.yaml", CONFIG)
    result = run("validate", "config.yaml", "ws", *(str(p) for p in Path("ws").glob("*.yaml")))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout == ""
    assert "file(s) valid" in result.stderr
    assert "note: ws/example-pod.yaml: no scheduler configuration found" in result.stderr


def test_golden_specs_are_valid(run) -> None:
    files = [str(p) for p in (GOLDEN / "specs").glob("*.yaml") if p.name != "existing-config.yaml"]
    result = run("validate", *files)
    assert result.exit_code == 0, result.stdout


def test_problems_are_listed_one_per_line(run, tmp_path: Path) -> None:
    _write(
        tmp_path,
        "bad.yaml",
        CONFIG.replace("my-scheduler\nprofiles", "kube-scheduler\nprofiles") + "parallelism: 0\n",
    )
    _write(tmp_path, "good.yaml", CONFIG)
    result = run("validate", "bad.yaml", "good.yaml", "missing.yaml")
    assert result.exit_code == 5  # a missing file: not found, as in every command
    assert result.stdout.splitlines() == [
        "bad.yaml: parallelism: should be an integer value greater than zero",
        "bad.yaml: leaderElection.resourceName: is 'kube-scheduler', the default scheduler's "
        "lock: an additional scheduler holding it only waits as a standby. Use a Lease of its "
        "own (e.g. the scheduler name)",
        "missing.yaml: no such file",
    ]
    assert result.stderr.startswith(
        "error: 1 of 3 file(s) not found: missing.yaml; 1 other file(s) invalid\n"
        "hint: check the path"
    )
    result = run("validate", "bad.yaml", "good.yaml")
    assert result.exit_code == 3
    assert result.stderr.startswith("error: 1 of 2 file(s) invalid (2 problem(s)")


def test_old_tutorial_manifests_are_explained(run, tmp_path: Path) -> None:
    _write(tmp_path, "old.yaml", OLD_TUTORIAL)
    result = run("validate", "old.yaml")
    assert result.exit_code == 3
    out = result.stdout
    assert (
        "old.yaml: [0].ConfigMap/my-scheduler-config.data[my-scheduler-config.yaml].apiVersion: "
        "kubescheduler.config.k8s.io/v1beta2 was removed in Kubernetes 1.28" in out
    )
    base = "old.yaml: [1].Deployment/my-scheduler.spec.template.spec"
    assert f"{base}.schedulerName: 'my-scheduler': a scheduler's own pod" in out
    assert f"{base}.containers[0].image: k8s.gcr.io is frozen" in out
    assert f"{base}.containers[0].command[1]: --address no longer exists" in out
    assert f"{base}.containers[0].command[3]: --scheduler-name no longer exists" in out
    assert f"{base}.containers[0].livenessProbe.httpGet.port: 10251 was the insecure port" in out
    assert f"{base}.containers[0].readinessProbe.httpGet.scheme: kube-scheduler serves HTTPS" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [\n", "bad.yaml: malformed YAML (line 2, column 1)"),
        ("", "bad.yaml: empty: nothing to validate"),
        ("just a string\n", "not a KubeSchedulerConfiguration, a kschedctl spec"),
        (
            "kind: KubeSchedulerConfiguration\nprofiles: [{schedulerName: s}]\n"
            "leaderElection: {leaderElect: false}\n",
            "bad.yaml: apiVersion: is required",
        ),
        (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
            "bad.yaml: profiles: no profiles",
        ),
        (
            "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata: {name: Bad}\n",
            "bad.yaml: metadata.name",
        ),
        (
            "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata: {name: s}\n"
            "spec: {replicas: 2, leaderElection: {leaderElect: false}}\n",
            "bad.yaml: spec.replicas",
        ),
    ],
)
def test_bad_files(run, tmp_path: Path, text: str, message: str) -> None:
    _write(tmp_path, "bad.yaml", text)
    result = run("validate", "bad.yaml")
    assert result.exit_code == 3
    assert message in result.stdout
    assert "Traceback" not in result.stderr


def test_kubernetes_version_selects_the_rules(run, tmp_path: Path) -> None:
    _write(tmp_path, "c.yaml", CONFIG + "delayCacheUntilActive: true\n")
    assert run("validate", "c.yaml", "--kubernetes-version", "1.28").exit_code == 0
    result = run("validate", "c.yaml", "--kubernetes-version", "1.27")
    assert result.exit_code == 3
    assert "c.yaml: delayCacheUntilActive: unknown field" in result.stdout
    assert "Kubernetes 1.27 rules" in result.stderr

    ebs = CONFIG.replace(
        "- schedulerName: my-scheduler",
        "- schedulerName: my-scheduler\n  plugins: {filter: {enabled: [{name: EBSLimits}]}}",
    )
    _write(tmp_path, "e.yaml", ebs)
    # validation.go refuses the cloud volume-limit plugins in v1 from 1.31.0 on.
    assert run("validate", "e.yaml", "--kubernetes-version", "1.30").exit_code == 0
    assert run("validate", "e.yaml", "--kubernetes-version", "1.31").exit_code == 3


def test_kubernetes_version_applies_to_specs(run, tmp_path: Path) -> None:
    _write(
        tmp_path,
        "s.yaml",
        "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata: {name: s}\nspec:\n"
        "  profiles: [{schedulerName: s, plugins: {filter: {enabled: [{name: EBSLimits}]}}}]\n",
    )
    result = run("validate", "s.yaml")  # the spec's own version: 1.36
    assert result.exit_code == 3
    assert "s.yaml: spec.profiles[0].plugins.filter.enabled[0].name" in result.stdout
    assert run("validate", "s.yaml", "--kubernetes-version", "1.30").exit_code == 0
    result = run("validate", "s.yaml", "--kubernetes-version", "1.1")
    assert result.exit_code == 2
    assert "--kubernetes-version 1.1" in result.stderr


def test_replaces_default(run, tmp_path: Path) -> None:
    existing = str(GOLDEN / "specs" / "existing-config.yaml")
    assert run("validate", existing).exit_code == 3
    assert run("validate", "--replaces-default", existing).exit_code == 0


def test_json_output(run, tmp_path: Path) -> None:
    _write(tmp_path, "good.yaml", CONFIG)
    _write(tmp_path, "bad.yaml", CONFIG + "parallelism: -1\n")
    result = run("validate", "-o", "json", "good.yaml", "bad.yaml")
    assert result.exit_code == 3
    data = json.loads(result.stdout)
    assert data[0] == {
        "file": "good.yaml",
        "valid": True,
        "checked": ["KubeSchedulerConfiguration (1.36 rules)"],
        "problems": [],
    }
    assert data[1]["problems"] == [
        {
            "path": "parallelism",
            "message": "should be an integer value greater than zero",
            "severity": "error",
        }
    ]


def test_usage(run) -> None:
    assert run("validate").exit_code == 2
    result = run("validate", "--help")
    assert result.exit_code == 0
    assert "--kubernetes-version" in result.stdout


MULTI_DOC = CONFIG + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def test_warnings_are_marked_and_exit_0(run, tmp_path: Path) -> None:
    # kube-scheduler reads only the first document of its --config file (it runs this one).
    _write(tmp_path, "multi.yaml", MULTI_DOC)
    result = run("validate", "multi.yaml")
    assert result.exit_code == 0
    [line] = result.stdout.splitlines()
    assert line.startswith("multi.yaml: warning: 1 more YAML document (from line 8): ")
    assert "1 warning(s)" in result.stderr


def test_strict_fails_on_warnings(run, tmp_path: Path) -> None:
    _write(tmp_path, "multi.yaml", MULTI_DOC)
    result = run("validate", "--strict", "multi.yaml")
    assert result.exit_code == 3
    assert "1 warning(s) and --strict" in result.stderr
    _write(tmp_path, "good.yaml", CONFIG)
    assert run("validate", "--strict", "good.yaml").exit_code == 0


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_machine_output_carries_severity(run, tmp_path: Path, fmt: str) -> None:
    import yaml

    _write(tmp_path, "multi.yaml", MULTI_DOC)
    _write(tmp_path, "bad.yaml", CONFIG + "parallelism: 99999999999\n")
    result = run("validate", "-o", fmt, "multi.yaml", "bad.yaml")
    assert result.exit_code == 3
    data = json.loads(result.stdout) if fmt == "json" else yaml.safe_load(result.stdout)
    assert [r["valid"] for r in data] == [True, False]
    assert [p["severity"] for p in data[0]["problems"]] == ["warning"]
    [problem] = data[1]["problems"]
    assert list(problem) == ["path", "message", "severity"]
    assert problem["path"] == "parallelism"
    assert problem["severity"] == "error"
    assert "does not fit in an int32" in problem["message"]


def test_json_config_with_a_trailing_comma(run, tmp_path: Path) -> None:
    # kube-scheduler: couldn't get version/kind; json parse error: invalid character '}'
    # looking for beginning of object key string
    text = (
        '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
        ' "profiles": [{"schedulerName": "a"}],}\n'
    )
    _write(tmp_path, "c.json", text)
    result = run("validate", "c.json")
    assert result.exit_code == 3
    assert result.stdout.startswith("c.json: malformed JSON (line 1, column ")


def test_the_default_schedulers_own_file(run, tmp_path: Path) -> None:
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n"
    )
    _write(tmp_path, "own.yaml", text)
    result = run("validate", "own.yaml")
    assert result.exit_code == 3
    [line] = result.stdout.splitlines()
    assert "--replaces-default" in line
    assert run("validate", "--replaces-default", "own.yaml").exit_code == 0


def test_a_configmap_config_is_decoded_like_a_file(run, tmp_path: Path) -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data:
  config.yaml: |
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    leaderElection: {leaderElect: false}
    parallelism: 16.0
    profiles: [{schedulerName: a}]
    ---
    ignored: by kube-scheduler
"""
    _write(tmp_path, "cm.yaml", text)
    result = run("validate", "cm.yaml")
    assert result.exit_code == 0, result.stdout
    assert result.stdout.startswith("cm.yaml: ConfigMap/c.data[config.yaml]: warning: ")
