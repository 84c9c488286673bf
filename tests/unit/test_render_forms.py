"""What each rendered form must contain (golden files cover the exact text)."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.base.errors import SpecError
from kschedctl.base.yamltext import to_yaml
from kschedctl.model.config.distributions import RELEASES
from kschedctl.render.added_profile import add_profile
from kschedctl.render.forms import (
    DIRECTORY_FORMS,
    FORMS,
    RENDER_FORMS,
    render,
    render_directory,
    render_workspace,
)
from kschedctl.render.templates import templates_dir
from kschedctl.spec import default_spec, load_spec, thawed

SPECS = Path(__file__).resolve().parent.parent / "golden" / "specs"
SPEC_FILES = sorted(p for p in SPECS.glob("*.yaml") if p.name != "existing-config.yaml")
LABELS = {"app.kubernetes.io/managed-by": "kschedctl"}


def _docs(text: str) -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for d in yaml.load_all(text, Loader=loader) if d is not None]


def _by_kind(text: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in _docs(text)}


@pytest.mark.parametrize("spec_file", SPEC_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("version", ["1.25", "1.31", "1.32", "1.34", "1.36", "1.37"])
def test_every_form_parses_and_renders_identically_twice(spec_file: Path, version: str) -> None:
    spec = thawed(load_spec(spec_file))
    spec.kubernetes_version = version
    if spec.release is not None:  # program custom of a known release: that minor's release
        fitting = [r for r in RELEASES.values() if r.minor == spec.version.minor]
        if not fitting:
            pytest.skip(f"no scheduler-plugins release for Kubernetes {version}")
        spec.image = fitting[-1].image
    elif spec.program != "custom":  # a custom image is the user's: it stays
        spec.image = ""
    from kschedctl.spec import apply_defaults

    if not spec.version.at_least(34):
        spec.routing = None  # no MutatingAdmissionPolicy yet (test_routing.py)
    apply_defaults(spec)
    for form in RENDER_FORMS:
        if form in DIRECTORY_FORMS:
            if form == "helm-chart" and spec.program != "kube-scheduler":
                continue  # refused (tests/unit/test_export.py)
            assert render_directory(spec, form) == render_directory(spec, form), form
            continue
        first, second = render(spec, form), render(spec, form)
        assert first == second, form
        assert first.endswith("\n") and not first.endswith("\n\n"), form
        if form != "service":
            for doc in _docs(first):
                assert isinstance(doc, dict), form
    assert render_workspace(spec) == render_workspace(spec)


def test_every_object_is_labelled_and_named_after_the_scheduler() -> None:
    spec = default_spec("my-scheduler")
    for form in ("pod", "deployment", "static-pod", "host-rbac"):
        for doc in _docs(render(spec, form)):
            labels = doc["metadata"]["labels"]
            assert labels["app.kubernetes.io/managed-by"] == "kschedctl", (form, doc["kind"])
            assert labels["app.kubernetes.io/instance"] == "my-scheduler"
            assert doc["metadata"]["name"].startswith("my-scheduler")


RBAC_OBJECTS = {
    "leastPrivilege": {
        ("ClusterRole", "my-scheduler-scheduler"): "",
        ("ClusterRoleBinding", "my-scheduler-scheduler"): "my-scheduler-scheduler",
    },
    "builtinRoles": {
        ("ClusterRoleBinding", "my-scheduler-as-kube-scheduler"): "system:kube-scheduler",
        ("ClusterRoleBinding", "my-scheduler-as-volume-scheduler"): "system:volume-scheduler",
    },
}


METRICS_READER = {
    ("ServiceAccount", "my-scheduler-metrics-reader"),
    ("ClusterRole", "my-scheduler-metrics-reader"),
    ("ClusterRoleBinding", "my-scheduler-metrics-reader-status"),
}


@pytest.mark.parametrize("rbac", list(RBAC_OBJECTS))
def test_deployment_bundle(rbac: str) -> None:
    spec = default_spec("my-scheduler", replicas=3, rbac=rbac)
    objects = _by_kind(render(spec, "deployment"))
    assert set(objects) == {
        ("ServiceAccount", "my-scheduler"),
        *RBAC_OBJECTS[rbac],
        ("RoleBinding", "my-scheduler-extension-apiserver-authentication-reader"),
        ("Role", "my-scheduler-leader-election"),
        ("RoleBinding", "my-scheduler-leader-election"),
        *METRICS_READER,
        ("ConfigMap", "my-scheduler-config"),
        ("Deployment", "my-scheduler"),
    }
    # `status --metrics` mints tokens of this ServiceAccount: it may get /metrics, nothing else.
    assert objects[("ClusterRole", "my-scheduler-metrics-reader")]["rules"] == [
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
    ]
    assert objects[("ClusterRoleBinding", "my-scheduler-metrics-reader-status")]["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": "my-scheduler-metrics-reader",
            "namespace": "kube-system",
        }
    ]
    for key, role in RBAC_OBJECTS[rbac].items():
        if key[0] == "ClusterRoleBinding":
            crb = objects[key]
            assert crb["roleRef"] == {
                "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role
            }  # fmt: skip
            assert crb["subjects"] == [
                {"kind": "ServiceAccount", "name": "my-scheduler", "namespace": "kube-system"}
            ]
    reader = objects[("RoleBinding", "my-scheduler-extension-apiserver-authentication-reader")]
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    role = objects[("Role", "my-scheduler-leader-election")]
    assert role["rules"][0] == {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "verbs": ["create"],
    }
    assert role["rules"][1]["resourceNames"] == ["my-scheduler"]
    assert set(role["rules"][1]["verbs"]) >= {"get", "update"}

    config_text = objects[("ConfigMap", "my-scheduler-config")]["data"]["config.yaml"]
    assert config_text == render(spec, "config")
    config = yaml.safe_load(config_text)
    assert config["leaderElection"]["resourceName"] == "my-scheduler"
    assert "kubeconfig" not in config.get("clientConnection", {})  # in-cluster credentials

    deployment = objects[("Deployment", "my-scheduler")]
    assert deployment["spec"]["replicas"] == 3
    template = deployment["spec"]["template"]
    assert template["metadata"]["annotations"]["kschedctl.io/config-hash"] == (
        hashlib.sha256(config_text.encode()).hexdigest()
    )
    pod = template["spec"]
    assert pod["schedulerName"] == "default-scheduler"
    assert pod["serviceAccountName"] == "my-scheduler"
    assert "podAntiAffinity" in pod["affinity"]
    container = pod["containers"][0]
    assert container["image"] == "registry.k8s.io/kube-scheduler:v1.36.3"
    assert container["command"][:2] == [
        "kube-scheduler",
        "--config=/etc/kubernetes/my-scheduler/config.yaml",
    ]
    assert container["ports"] == [{"name": "probe-port", "containerPort": 10259, "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {
        "path": "/livez",
        "port": "probe-port",
        "scheme": "HTTPS",
    }
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert pod["volumes"][0]["configMap"]["name"] == "my-scheduler-config"


def test_a_changed_config_changes_the_hash() -> None:
    def digest(**overrides: Any) -> str:
        objects = _by_kind(render(default_spec("s", **overrides), "deployment"))
        return objects[("Deployment", "s")]["spec"]["template"]["metadata"]["annotations"][
            "kschedctl.io/config-hash"
        ]

    assert digest() != digest(parallelism=8)


def test_probes_follow_the_version() -> None:
    objects = _by_kind(render(default_spec("s", kubernetes_version="1.30"), "deployment"))
    container = objects[("Deployment", "s")]["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"] == {
        "path": "/healthz",
        "port": 10259,
        "scheme": "HTTPS",
    }
    assert "ports" not in container
    assert objects[("Role", "s-leader-election")]["rules"][1]["verbs"] == ["get", "update"]


def test_single_replica_without_leader_election_has_no_lease_rbac() -> None:
    spec = default_spec("s", leader_elect=False)
    kinds = {kind for kind, _ in _by_kind(render(spec, "deployment"))}
    assert "Role" not in kinds
    pod = _by_kind(render(spec, "deployment"))[("Deployment", "s")]["spec"]["template"]["spec"]
    assert "affinity" not in pod
    assert yaml.safe_load(render(spec, "config"))["leaderElection"] == {"leaderElect": False}
    assert _docs(render(spec, "host-rbac")) == []
    assert "host-rbac.yaml" not in render_workspace(spec)


def test_pod_form_is_a_bare_pod_with_its_credentials() -> None:
    objects = _by_kind(render(default_spec("s"), "pod"))
    pod = objects[("Pod", "s")]
    assert pod["metadata"]["namespace"] == "kube-system"
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert ("ConfigMap", "s-config") in objects
    assert ("ServiceAccount", "s") in objects
    assert "kschedctl.io/config-hash" in pod["metadata"]["annotations"]


def _exec_start(unit: str) -> list[str]:
    lines = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert len(lines) == 1
    return shlex.split(lines[0].removeprefix("ExecStart="))


def test_service_unit_takes_every_path_from_the_spec(tmp_path: Path) -> None:
    spec = default_spec("s", extra_args=["--feature-gates=A=true"])
    spec.service.binary = str(tmp_path / "bin" / "kube-scheduler")
    spec.service.config_dir = str(tmp_path / "etc")
    spec.service.kubeconfig = str(tmp_path / "kubeconfig")
    spec.service.secure_port = 10270
    argv = _exec_start(render(spec, "service"))
    assert argv == [
        str(tmp_path / "bin" / "kube-scheduler"),
        f"--config={tmp_path}/etc/s.yaml",
        f"--authentication-kubeconfig={tmp_path}/kubeconfig",
        f"--authorization-kubeconfig={tmp_path}/kubeconfig",
        "--bind-address=127.0.0.1",
        "--secure-port=10270",
        "--v=2",
        "--feature-gates=A=true",
    ]
    host_config = yaml.safe_load(render(spec, "host-config"))
    assert host_config["clientConnection"]["kubeconfig"] == str(tmp_path / "kubeconfig")
    assert spec.host_config_path == f"{tmp_path}/etc/s.yaml"


def test_service_defaults_avoid_the_default_schedulers_port() -> None:
    argv = _exec_start(render(default_spec("s"), "service"))
    assert "--secure-port=10260" in argv
    assert not any("10259" in a or "10251" in a for a in argv)


def test_static_pod_reads_host_files() -> None:
    spec = default_spec("s")
    pod = _docs(render(spec, "static-pod"))[0]
    assert pod["spec"]["hostNetwork"] is True
    container = pod["spec"]["containers"][0]
    assert "--config=/etc/kubernetes/config/s.yaml" in container["command"]
    assert "--secure-port=10260" in container["command"]
    assert container["ports"][0]["containerPort"] == 10260
    assert container["livenessProbe"]["httpGet"]["host"] == "127.0.0.1"
    paths = {v["hostPath"]["path"] for v in pod["spec"]["volumes"]}
    assert paths == {"/etc/kubernetes/scheduler.conf", "/etc/kubernetes/config/s.yaml"}


def test_host_rbac_binds_the_kubeconfig_user() -> None:
    objects = _by_kind(render(default_spec("s"), "host-rbac"))
    binding = objects[("RoleBinding", "s-host-leader-election")]
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-scheduler"}
    ]


def test_example_pod_uses_the_scheduler() -> None:
    pod = _docs(render(default_spec("s"), "example-pod"))[0]
    assert pod["spec"]["schedulerName"] == "s"


def test_workspace_files() -> None:
    files = render_workspace(default_spec("s"))
    assert list(files) == [
        "scheduler.yaml",
        "scheduler.schema.json",
        "config.yaml",
        "s.service",
        "host-config.yaml",
        "host-rbac.yaml",
        "pod.yaml",
        "deployment.yaml",
        "static-pod.yaml",
        "example-pod.yaml",
        "README.md",
    ]
    assert yaml.safe_load(files["scheduler.yaml"]) == default_spec("s").to_dict()
    # Editors find the schema beside the spec, offline (yaml-language-server's modeline).
    assert files["scheduler.yaml"].startswith(
        "# yaml-language-server: $schema=scheduler.schema.json\n"
    )
    assert json.loads(files["scheduler.schema.json"])["$id"] == "scheduler.schema.json"


def test_forms_contract() -> None:
    assert [f.name for f in FORMS if not f.host_helper] == [
        "config", "service", "pod", "deployment", "routing", "static-pod", "example-pod",
        "helm-chart", "kustomize",
    ]  # fmt: skip
    assert [f.name for f in FORMS if f.directory] == ["helm-chart", "kustomize"]
    with pytest.raises(ValueError, match="unknown form"):
        render(default_spec("s"), "helm")


def test_a_custom_image_without_plugins_renders_like_kube_scheduler() -> None:
    spec = default_spec("s", program="custom", image="example.com/s:1")
    plain = default_spec("s", image="example.com/s:1")
    assert render(spec, "deployment") == render(plain, "deployment")


def test_render_refuses_an_invalid_spec() -> None:
    with pytest.raises(SpecError, match="metadata.name"):
        render(default_spec("Bad"), "config")


EXISTING = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
"""


def test_add_profile() -> None:
    result = yaml.safe_load(add_profile(EXISTING, default_spec("s")))
    assert [p["schedulerName"] for p in result["profiles"]] == ["default-scheduler", "s"]


def test_add_profile_to_a_config_without_profiles_keeps_the_default() -> None:
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    result = yaml.safe_load(add_profile(text, default_spec("s")))
    assert [p["schedulerName"] for p in result["profiles"]] == ["default-scheduler", "s"]


def test_add_profile_refusals() -> None:
    with pytest.raises(SpecError, match="already has a profile named 's'"):
        add_profile(EXISTING.replace("default-scheduler", "s"), default_spec("s"))
    with pytest.raises(SpecError, match="malformed YAML"):
        add_profile("profiles: [", default_spec("s"))
    bad = EXISTING + "parallelism: 0\n"
    with pytest.raises(SpecError, match="parallelism") as info:
        add_profile(bad, default_spec("s"), source="cfg.yaml")
    assert info.value.source == "cfg.yaml"
    sort = EXISTING.replace(
        "- schedulerName: default-scheduler",
        "- schedulerName: default-scheduler\n  plugins:\n    queueSort:\n"
        "      enabled:\n      - name: Other",
    )
    with pytest.raises(SpecError, match="plugins.queueSort: must be the same for all profiles"):
        add_profile(sort, default_spec("s"))


def test_to_yaml_filter() -> None:
    assert to_yaml("1.36") == "'1.36'"
    assert to_yaml("plain") == "plain"
    assert to_yaml(10259) == "10259"
    assert to_yaml({}) == "{}"
    assert to_yaml({"a": [1]}) == "a:\n- 1"


def test_templates_are_found_in_the_source_tree() -> None:
    assert (templates_dir() / "deployment.yaml.j2").is_file()
