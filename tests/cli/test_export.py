"""render --as helm-chart|kustomize DIR: the GitOps exports, checked with the real helm and
kubectl kustomize (built by `kschedctl lab build`; skipped, saying so, when absent)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.base.errors import KschedError, SpecError
from kschedctl.lab import binaries
from kschedctl.observe.containers import expanded_argv
from kschedctl.observe.schedulers import FORM_ANNOTATION, LEASE_ANNOTATION, owner
from kschedctl.render import context
from kschedctl.render.export import LEASE_NAMESPACE_FLAG
from kschedctl.render.forms import render, render_directory
from kschedctl.render.schemas import schema as load_schema
from kschedctl.spec import default_spec, load_spec

pytestmark = pytest.mark.lab

GOLDEN_SPECS = Path(__file__).resolve().parent.parent / "golden" / "specs"
KUBE_SCHEDULER_CASES = [
    "single",
    "multi-profile",
    "ha",
    "custom-plugins",
    "host-service",
    "metrics",
    "routing",
    "routing-beta",
]
# program custom: scheduler-plugins releases (one with spec.rbac builtinRoles) and an own image
CUSTOM_CASES = ["custom-coscheduling", "custom-quota", "custom-image"]


def _tool(name: str) -> str:
    path = binaries.locate().get(name) if binaries.is_built(_module(name)) else None
    if path is None:
        pytest.skip(f"{name} is not built: run `kschedctl lab build` (needs Go) to test with it")
    return str(path)


def _module(name: str) -> binaries.GoModule:
    return next(m for m in binaries.MODULES if name in m.commands)


def _run(*argv: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _objects(text: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for doc in yaml.safe_load_all(text):
        if doc:
            meta = doc["metadata"]
            out[(doc["kind"], meta.get("namespace", ""), meta["name"])] = doc
    return out


def _write(files: dict[str, str], target: Path) -> Path:
    for name, text in files.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text(text)
    return target


# -- Helm ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", KUBE_SCHEDULER_CASES + CUSTOM_CASES)
def test_helm_template_with_default_values_is_the_deployment_form(
    case: str, tmp_path: Path
) -> None:
    helm = _tool("helm")
    spec = load_spec(GOLDEN_SPECS / f"{case}.yaml")
    chart = _write(render_directory(spec, "helm-chart"), tmp_path / "chart")
    rendered = _run(helm, "template", spec.name, str(chart), "-n", spec.namespace)
    assert _as_kschedctl_deploys(_objects(rendered)) == _objects(render(spec, "deployment"))
    if case == "routing-beta":
        # A 1.35 target's MutatingAdmissionPolicy is v1beta1, which helm lint calls deprecated
        # (in 1.37+); --strict makes that an error. Linted without it, nothing else is said.
        lint = _run(helm, "lint", str(chart))
        warnings = [line for line in lint.splitlines() if "[WARNING]" in line]
        assert all("v1beta1 MutatingAdmissionPolicy" in line for line in warnings), lint
        assert "0 chart(s) failed" in lint and "[ERROR]" not in lint
        return
    lint = _run(helm, "lint", "--strict", str(chart))
    assert "0 chart(s) failed" in lint and "[WARNING]" not in lint and "[ERROR]" not in lint


def _as_kschedctl_deploys(objects: dict[Any, dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Helm's labels as `kschedctl deploy` writes them, for a release named after the
    scheduler: no helm.sh/chart, managed-by kschedctl (Helm's is the release service)."""

    def relabel(value: Any) -> Any:
        if isinstance(value, list):
            return [relabel(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: relabel(v) for k, v in value.items() if k != "helm.sh/chart"}
        if "helm.sh/chart" in value:
            assert out.pop("app.kubernetes.io/managed-by") == "Helm"
            out["app.kubernetes.io/managed-by"] = "kschedctl"
        return out

    return relabel(objects)


def test_helm_metrics_values_give_the_metrics_objects_of_the_spec(tmp_path: Path) -> None:
    helm = _tool("helm")
    chart = _write(render_directory(default_spec("s"), "helm-chart"), tmp_path / "chart")
    rendered = _run(
        helm, "template", "s", str(chart), "-n", "kube-system",
        "--set", "metrics.service=true,metrics.serviceMonitor=true",
    )  # fmt: skip
    spec = default_spec("s")
    spec.metrics.service = spec.metrics.service_monitor = True
    assert _as_kschedctl_deploys(_objects(rendered)) == _objects(render(spec, "deployment"))
    assert ("ServiceMonitor", "kube-system", "s") in _objects(rendered)


def test_helm_template_puts_the_scheduler_in_the_release_namespace(tmp_path: Path) -> None:
    """`helm template rel -n team-a`: every namespaced object in team-a (the Lease too) but the
    delegated-authentication binding, which must stay in kube-system; Helm's recommended
    labels beside kschedctl's own mark, which list/status/remove recognise."""
    helm = _tool("helm")
    chart = _write(render_directory(default_spec("s"), "helm-chart"), tmp_path / "chart")
    objects = _objects(_run(helm, "template", "rel", str(chart), "-n", "team-a"))
    placed = {(kind, ns) for kind, ns, _ in objects if ns}
    assert placed == {
        ("ServiceAccount", "team-a"), ("ConfigMap", "team-a"), ("Role", "team-a"),
        ("RoleBinding", "team-a"), ("Deployment", "team-a"), ("RoleBinding", "kube-system"),
    }  # fmt: skip
    deployment = objects[("Deployment", "team-a", "s")]
    assert deployment["metadata"]["annotations"][LEASE_ANNOTATION] == "team-a/s"
    for obj in objects.values():
        labels = obj["metadata"]["labels"]
        assert labels["helm.sh/chart"] == "s-0.1.0"
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert labels["app.kubernetes.io/instance"] == "rel"
        assert owner(obj) == "s"
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector == {"app.kubernetes.io/name": "s", "app.kubernetes.io/instance": "rel"}
    assert selector.items() <= pod_labels.items() and owner(deployment["spec"]["template"]) == "s"
    # values.namespace still pins a namespace whatever -n says
    pinned = _objects(_run(helm, "template", "rel", str(chart), "-n", "team-a",
                           "--set", "namespace=sched"))  # fmt: skip
    assert ("Deployment", "sched", "s") in pinned


@pytest.mark.parametrize(
    ("setting", "complaint"),
    [
        ("replicas=two", "/replicas"),
        ("leaderElection.leaderElect=maybe", "/leaderElection/leaderElect"),
        ("rbac=everything", "/rbac"),
        ("replica=2", "'replica' not allowed"),
        ("pod.resource.cpu=1", "'resource' not allowed"),
    ],
)
def test_helm_refuses_values_the_spec_schema_refuses(
    setting: str, complaint: str, tmp_path: Path
) -> None:
    helm = _tool("helm")
    chart = _write(render_directory(default_spec("s"), "helm-chart"), tmp_path / "chart")
    for command in (["lint", "--strict"], ["template", "r"]):
        proc = subprocess.run(
            [helm, *command, str(chart), "--set", setting],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode != 0, proc.stdout
        assert complaint in proc.stdout + proc.stderr


def test_helm_install_prints_the_notes(tmp_path: Path) -> None:
    helm = _tool("helm")
    chart = _write(render_directory(default_spec("s"), "helm-chart"), tmp_path / "chart")
    notes = _run(
        helm, "install", "rel", str(chart), "-n", "team-a", "--dry-run=client",
        "--kubeconfig", str(tmp_path / "none"),
    )  # fmt: skip
    notes = " ".join(notes.partition("NOTES:")[2].split())
    assert (
        "Scheduler s (registry.k8s.io/kube-scheduler:v1.36.3) is installed as release rel" in notes
    )
    assert "in namespace team-a, its Lease is team-a/s." in notes
    assert "schedulerName: s" in notes
    assert "kschedctl status s" in notes and "helm uninstall rel -n team-a" in notes


def test_helm_values_override_the_spec_fields(tmp_path: Path) -> None:
    helm = _tool("helm")
    chart = _write(render_directory(default_spec("s"), "helm-chart"), tmp_path / "chart")
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(
        yaml.safe_dump(
            {
                "namespace": "",  # the release namespace
                "replicas": 3,
                "image": "registry.example/kube-scheduler:v1.36.3",
                "pod": {"resources": {"requests": {"cpu": "250m"}}},
                "leaderElection": {"resourceName": "s-lease"},
                "profiles": [{"schedulerName": "s"}, {"schedulerName": "s-batch"}],
            }
        )
    )
    objects = _objects(_run(helm, "template", "r", str(chart), "-n", "sched", "-f", str(overrides)))
    deployment = objects[("Deployment", "sched", "s")]
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 3
    assert "affinity" in pod  # several replicas spread over nodes
    assert pod["containers"][0]["image"] == "registry.example/kube-scheduler:v1.36.3"
    assert pod["containers"][0]["resources"] == {"requests": {"cpu": "250m"}}
    config = yaml.safe_load(objects[("ConfigMap", "sched", "s-config")]["data"]["config.yaml"])
    assert [p["schedulerName"] for p in config["profiles"]] == ["s", "s-batch"]
    assert config["leaderElection"]["resourceNamespace"] == "sched"
    assert config["leaderElection"]["resourceName"] == "s-lease"
    role = objects[("Role", "sched", "s-leader-election")]
    assert role["rules"][1]["resourceNames"] == ["s-lease"]
    # The delegated-authentication binding stays in kube-system, bound to the moved account.
    binding = objects[("RoleBinding", "kube-system", "s-extension-apiserver-authentication-reader")]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "s", "namespace": "sched"}]
    assert deployment["metadata"]["annotations"][LEASE_ANNOTATION] == "sched/s-lease"
    # A changed config rolls the pods.
    default = _objects(_run(helm, "template", "r", str(chart), "-n", "kube-system"))[
        ("Deployment", "kube-system", "s")
    ]
    hash_key = "kschedctl.io/config-hash"
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations[hash_key] != default["spec"]["template"]["metadata"]["annotations"][hash_key]

    off = _objects(
        _run(
            helm,
            "template",
            "r",
            str(chart),
            "-n",
            "kube-system",
            "--set",
            "leaderElection.leaderElect=false",
        )  # fmt: skip
    )
    assert not [key for key in off if key[2] == "s-leader-election"]
    config = yaml.safe_load(off[("ConfigMap", "kube-system", "s-config")]["data"]["config.yaml"])
    assert config["leaderElection"] == {"leaderElect": False}


HOSTILE = 'x"\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: injected}\n'


@pytest.mark.parametrize("field", ["name", "image", "namespace", "pod.priorityClassName"])
def test_hostile_values_cannot_inject_objects(field: str, tmp_path: Path) -> None:
    helm = _tool("helm")
    chart = _write(render_directory(default_spec("s"), "helm-chart"), tmp_path / "chart")
    values: dict[str, Any] = {}
    head, _, tail = field.partition(".")
    values[head] = {tail: HOSTILE} if tail else HOSTILE
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(yaml.safe_dump(values))
    proc = subprocess.run(
        [helm, "template", "r", str(chart), "-f", str(hostile)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    assert "Secret" not in {d["kind"] for d in docs}
    assert len(docs) == len(_objects(render(default_spec("s"), "deployment")))
    assert HOSTILE in _strings(docs)  # the value arrived whole, as one string


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return set().union(*map(_strings, items)) if items else set()


def test_helm_chart_refuses_kschedctls_own_scheduler() -> None:
    with pytest.raises(SpecError, match="kube-scheduler images only"):
        render_directory(default_spec("s", program="builtin"), "helm-chart")


def test_chart_files(tmp_path: Path) -> None:
    files = render_directory(default_spec("s"), "helm-chart")
    chart = yaml.safe_load(files["Chart.yaml"])
    assert chart["apiVersion"] == "v2" and chart["name"] == "s"
    values = yaml.safe_load(files["values.yaml"])
    assert values["name"] == "s" and values["replicas"] == 1
    assert values["leaderElection"]["resourceNamespace"] == ""  # follows namespace
    assert values["namespace"] == ""  # the release namespace
    assert sorted(f for f in files if f.startswith("templates/")) == [
        "templates/NOTES.txt", "templates/_helpers.tpl", "templates/configmap.yaml",
        "templates/deployment.yaml", "templates/metrics.yaml", "templates/rbac.yaml",
        "templates/routing.yaml",
    ]  # fmt: skip
    schema = json.loads(files["values.schema.json"])
    assert set(schema["properties"]) == set(values)  # every value, nothing else
    spec_fields = load_schema("spec")["properties"]["spec"]["properties"]
    assert schema["properties"]["replicas"] == spec_fields["replicas"]
    assert schema["properties"]["leaderElection"] == spec_fields["leaderElection"]


# -- kustomize -------------------------------------------------------------------------------------


def _kubectl() -> str:
    return _tool("kubectl")


@pytest.mark.parametrize("case", KUBE_SCHEDULER_CASES + ["builtin"])
def test_kustomize_base_holds_the_deployment_form(case: str, tmp_path: Path) -> None:
    kubectl = _kubectl()
    spec = load_spec(GOLDEN_SPECS / f"{case}.yaml")
    base = _write(render_directory(spec, "kustomize"), tmp_path / "base")
    built = _objects(_run(kubectl, "kustomize", str(base)))
    expected = _objects(render(spec, "deployment"))
    assert set(built) == set(expected)
    for key, obj in expected.items():
        if key[0] == "Deployment" and LEASE_NAMESPACE_FLAG in str(built[key]):
            container = built[key]["spec"]["template"]["spec"]["containers"][0]
            container["command"].remove(LEASE_NAMESPACE_FLAG)
            del container["env"]
        assert built[key] == obj, key


def test_an_overlay_moves_the_scheduler_but_not_the_kube_system_binding(tmp_path: Path) -> None:
    kubectl = _kubectl()
    _write(render_directory(default_spec("s"), "kustomize"), tmp_path / "base")
    # The layout the base's README shows.
    (tmp_path / "overlay" / "scheduler").mkdir(parents=True)
    (tmp_path / "overlay" / "scheduler" / "kustomization.yaml").write_text(
        "namespace: other\nresources: [../../base/scheduler]\n"
    )
    (tmp_path / "overlay" / "kustomization.yaml").write_text(
        "resources: [scheduler]\ncomponents: [../base/kube-system]\n"
    )
    objects = _objects(_run(kubectl, "kustomize", str(tmp_path / "overlay")))
    binding = objects[("RoleBinding", "kube-system", "s-extension-apiserver-authentication-reader")]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "s", "namespace": "other"}]
    assert ("ServiceAccount", "other", "s") in objects
    assert ("Role", "other", "s-leader-election") in objects
    lease_binding = objects[("RoleBinding", "other", "s-leader-election")]
    assert lease_binding["subjects"][0]["namespace"] == "other"
    crb = objects[("ClusterRoleBinding", "", "s-scheduler")]
    assert crb["subjects"][0]["namespace"] == "other"
    # The Lease follows: kube-scheduler takes its namespace from the pod's (the flag overrides
    # the config's resourceNamespace), and kschedctl reads it the same way.
    deployment = objects[("Deployment", "other", "s")]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert LEASE_NAMESPACE_FLAG in container["command"]
    argv = expanded_argv(container, "other")
    assert "--leader-elect-resource-namespace=other" in argv


def test_kustomize_keeps_a_lease_in_its_own_namespace_fixed(tmp_path: Path) -> None:
    spec = default_spec("s", namespace="sched")
    spec.leader_election.resource_namespace = "kube-system"
    files = render_directory(spec, "kustomize")
    assert "kube-system/role-s-leader-election.yaml" in files
    assert "kube-system/rolebinding-s-leader-election.yaml" in files
    assert LEASE_NAMESPACE_FLAG not in files["scheduler/deployment-s.yaml"]


# -- the CLI ---------------------------------------------------------------------------------------


def test_render_writes_the_directory(run, tmp_path: Path) -> None:
    result = run("render", "s", "--as", "kustomize", "out")
    assert result.exit_code == 0, result.stderr
    assert "out/kustomization.yaml" in result.stdout
    assert (tmp_path / "out" / "kube-system" / "kustomization.yaml").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--as", "helm-chart"], "writes a directory"),
        (["--as", "deployment", "out"], "prints to stdout"),
    ],
)
def test_directory_usage_errors(run, args: list[str], message: str) -> None:
    result = run("render", "s", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_missing_parent_directories_are_made(run, tmp_path: Path) -> None:
    result = run("render", "s", "--as", "helm-chart", "charts/team/s")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "charts" / "team" / "s" / "Chart.yaml").is_file()


def test_a_failed_export_removes_the_parents_it_made(tmp_path: Path) -> None:
    from kschedctl.render.workspace import write_export

    # "a" written as a file, then "a/b" under it: the export fails half-way.
    with pytest.raises(KschedError, match="writing the workspace"):
        write_export(tmp_path / "charts" / "team" / "s", {"a": "x", "a/b": "y"})
    assert list(tmp_path.iterdir()) == []


def test_a_parent_that_is_a_file_is_a_usage_error(run, tmp_path: Path) -> None:
    (tmp_path / "charts").write_text("x")
    result = run("render", "s", "--as", "kustomize", "charts/s")
    assert result.exit_code == 2
    assert "charts is not a directory" in result.stderr
    assert (tmp_path / "charts").read_text() == "x"


def test_an_existing_directory_is_not_overwritten(run, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("x")
    result = run("render", "s", "--as", "helm-chart", "out")
    assert result.exit_code == 1
    assert "not an empty directory" in result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["mine.txt"]
    (tmp_path / "empty").mkdir()
    assert run("render", "s", "--as", "helm-chart", "empty").exit_code == 0


# -- recognisable objects --------------------------------------------------------------------------


def test_render_and_observe_name_the_same_annotations() -> None:
    assert context.FORM_ANNOTATION == FORM_ANNOTATION
    assert context.LEASE_ANNOTATION == LEASE_ANNOTATION


@pytest.mark.parametrize("form", ["pod", "deployment"])
def test_every_object_carries_what_deploy_records(form: str) -> None:
    from kschedctl.ops.deploy import cluster_objects

    spec = default_spec("s")
    rendered = _objects(render(spec, form))
    deployed = _objects(yaml.safe_dump_all(cluster_objects(spec, form)))
    assert rendered == deployed
    for obj in rendered.values():
        assert obj["metadata"]["annotations"][FORM_ANNOTATION] == form
        assert obj["metadata"]["annotations"][LEASE_ANNOTATION] == "kube-system/s"
