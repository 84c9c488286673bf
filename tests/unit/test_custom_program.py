"""program: custom — the scheduler-plugins table, spec fields, rendering, validation, skew."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kschedctl.model.config import distributions, versions
from kschedctl.render import forms
from kschedctl.spec import CustomSettings, default_spec, spec_from_dict

IMAGE = distributions.SCHEDULER_PLUGINS_IMAGE
MIRROR = Path("/work/.mirror/kubernetes-sigs+scheduler-plugins/repo")


def test_every_release_tag_is_its_kubernetes_minor() -> None:
    assert len(distributions.RELEASES) >= 2
    for tag, release in distributions.RELEASES.items():
        assert distributions.release_kubernetes_minor(tag) == release.minor
        assert release.kubernetes.startswith(f"1.{release.minor}.")
        for plugin in release.plugins.values():
            assert plugin.points <= set(distributions.EXTENSION_POINTS)
            assert plugin.points, plugin.name


def test_v0_33_5_plugins_as_its_main_go_registers_them() -> None:
    # cmd/scheduler/main.go at v0.33.5 (crossnodepreemption is commented out there).
    release = distributions.RELEASES["v0.33.5"]
    assert release.binary == "/bin/kube-scheduler"  # build/scheduler/Dockerfile ENTRYPOINT
    assert set(release.plugins) == {
        "CapacityScheduling", "Coscheduling", "LoadVariationRiskBalancing", "NetworkOverhead",
        "TopologicalSort", "NodeResourcesAllocatable", "NodeResourceTopologyMatch",
        "PreemptionToleration", "TargetLoadPacking", "LowRiskOverCommitment", "SySched",
        "Peaks", "PodState", "QOSSort",
    }  # fmt: skip
    # pkg/coscheduling/coscheduling.go: var _ framework.QueueSortPlugin … PermitPlugin
    assert release.plugins["Coscheduling"].points == {
        "QueueSort", "PreFilter", "PostFilter", "Permit", "Reserve"
    }  # fmt: skip
    assert release.plugins["Coscheduling"].args_fields == {
        "permitWaitingTimeSeconds": "int",
        "podGroupBackoffSeconds": "int",
    }


def test_v0_25_7_plugins_and_rbac() -> None:
    release = distributions.RELEASES["v0.25.7"]
    assert release.kubernetes == "1.25.7"
    assert "SySched" not in release.plugins and "LowRiskOverCommitment" not in release.plugins
    assert len(release.plugins) == 11
    # pkg/coscheduling/core/core.go at v0.25.7 patches PodGroups (PatchPodGroup).
    assert release.plugins["Coscheduling"].rbac[0]["verbs"] == ["get", "list", "watch", "patch"]
    assert distributions.RELEASES["v0.29.7"].binary == "/kube-scheduler"  # its Dockerfile


@pytest.mark.parametrize(
    ("plugin", "resources"),
    [
        ("Coscheduling", ["podgroups"]),
        ("CapacityScheduling", ["elasticquotas"]),
        ("NodeResourceTopologyMatch", ["noderesourcetopologies"]),
        ("NetworkOverhead", ["appgroups", "networktopologies"]),
        ("TopologicalSort", ["appgroups"]),
        ("PreemptionToleration", ["priorityclasses"]),
        ("SySched", ["seccompprofiles"]),
        ("QOSSort", []),
    ],
)
def test_rbac_per_plugin(plugin: str, resources: list[str]) -> None:
    rules = distributions.plugin_rules([plugin], distributions.RELEASES["v0.33.5"])
    assert [r for rule in rules for r in rule["resources"]] == resources
    assert all(rule["verbs"] == ["get", "list", "watch"] for rule in rules)


def test_plugins_for_and_distributions_with() -> None:
    extra = distributions.plugins_for(f"{IMAGE}:v0.34.7")
    assert extra["QOSSort"] == frozenset({"QueueSort"})
    assert distributions.plugins_for("registry.k8s.io/kube-scheduler:v1.34.1") == {}
    mirrored = distributions.plugins_for("mirror.example/scheduler-plugins/kube-scheduler:v0.33.5")
    assert "Coscheduling" in mirrored
    own = distributions.plugins_for(
        "x.io/s:v1", plugins=[{"name": "A", "extensionPoints": ["Filter"]}]
    )
    assert own == {"A": frozenset({"Filter"})}
    assert distributions.distributions_with("SySched")[0] == "scheduler-plugins v0.28.8"
    assert distributions.distributions_with("NoSuchPlugin") == []


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no scheduler-plugins mirror on this machine")
@pytest.mark.skipif(shutil.which("ruff") is None, reason="the generator formats with ruff")
def test_generator_reproduces_the_table() -> None:
    tool = Path(__file__).parents[2] / "tools" / "gen_scheduler_plugins.py"
    done = subprocess.run([sys.executable, str(tool), str(MIRROR), "--check"], check=False)
    assert done.returncode == 0


def _custom_doc(image: str, **spec: object) -> dict[str, object]:
    profile = {
        "schedulerName": "gang",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            # As upstream's manifests/coscheduling/scheduler-config.yaml: multiPoint is not
            # expanded into a point disabled with "*", so queueSort names it again.
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        },
        "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}],
    }
    return {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": "gang"},
        "spec": {"program": "custom", "image": image, "profiles": [profile], **spec},
    }


@pytest.mark.parametrize("tag", ["v0.33.5", "v0.34.7"])
def test_custom_spec_follows_the_release_and_renders_all_forms(tag: str) -> None:
    spec, problems = spec_from_dict(_custom_doc(f"{IMAGE}:{tag}"))
    assert problems == [] and spec is not None
    assert spec.kubernetes_version == f"1.{tag.split('.')[1]}"
    assert spec.custom.distribution == "scheduler-plugins"
    for form in ("pod", "deployment", "static-pod", "service", "host-rbac", "config"):
        text = forms.render(spec, form)
        if form != "service":
            assert [d for d in yaml.safe_load_all(text) if d], form
    pod = [d for d in yaml.safe_load_all(forms.render(spec, "pod")) if d]
    role = next(d for d in pod if d["kind"] == "ClusterRole")
    assert {"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups"],
            "verbs": ["get", "list", "watch"]} in role["rules"]  # fmt: skip
    container = next(d for d in pod if d["kind"] == "Pod")["spec"]["containers"][0]
    assert container["command"][0] == "/bin/kube-scheduler"
    host = [d for d in yaml.safe_load_all(forms.render(spec, "host-rbac")) if d]
    assert {(d["kind"], d["metadata"]["name"]) for d in host} >= {
        ("ClusterRole", "gang-host-plugins"), ("ClusterRoleBinding", "gang-host-plugins")
    }  # fmt: skip
    # the service runs the host's binary (spec.service.binary), not the image's path
    assert "ExecStart=/usr/local/bin/kube-scheduler " in forms.render(spec, "service")


def test_builtin_roles_keep_a_role_of_the_plugin_rules() -> None:
    spec, problems = spec_from_dict(_custom_doc(f"{IMAGE}:v0.33.5", rbac="builtinRoles"))
    assert problems == [] and spec is not None
    docs = [d for d in yaml.safe_load_all(forms.render(spec, "deployment")) if d]
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    assert [r["resources"] for r in role["rules"]] == [["podgroups"]]


def test_vanilla_image_refuses_the_plugin_with_a_hint() -> None:
    doc = _custom_doc("registry.k8s.io/kube-scheduler:v1.33.5", kubernetesVersion="1.33")
    doc["spec"]["program"] = "kube-scheduler"  # type: ignore[index]
    _, problems = spec_from_dict(doc)
    messages = [p.message for p in problems]
    assert any(
        'Plugin "Coscheduling" does not exist' in m
        and "scheduler-plugins/kube-scheduler:v0.33.5" in m
        for m in messages
    ), messages


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        ({"kubernetesVersion": "1.36"}, "spec.image", "does not fit kubernetesVersion"),
        ({"image": f"{IMAGE}:v0.99.1"}, "spec.image", "is not a scheduler-plugins release"),
        ({"custom": {"distribution": "volcano"}}, "spec.custom.distribution", "not a distribution"),
        ({"custom": {"binary": "bin/x"}}, "spec.custom.binary", ""),
        (
            {"custom": {"plugins": [{"name": "A", "extensionPoints": ["Filtr"]}]}},
            "spec.custom.plugins[0].extensionPoints[0]",
            "must be one of",
        ),
        (
            {"custom": {"plugins": [{"name": "A", "extensionPoints": ["Filter"],
                                     "rbac": [{"apiGroups": ["*"], "resources": ["*"],
                                               "verbs": ["*"]}]}]}},
            "spec.custom.plugins[0].rbac[0].verbs[0]",
            "must be one of",
        ),
    ],
)  # fmt: skip
def test_custom_refusals(change: dict[str, object], path: str, words: str) -> None:
    doc = _custom_doc(f"{IMAGE}:v0.33.5")
    doc["spec"].update(change)  # type: ignore[attr-defined]
    _, problems = spec_from_dict(doc)
    assert any(p.path == path and words in p.message for p in problems), problems


def test_coscheduling_args_checked() -> None:
    doc = _custom_doc(f"{IMAGE}:v0.33.5")
    args = doc["spec"]["profiles"][0]["pluginConfig"][0]["args"]  # type: ignore[index]
    args.update({"permitWaitingTimeSeconds": -1, "nope": 1})
    _, problems = spec_from_dict(doc)
    paths = {p.path: p.message for p in problems}
    base = "spec.profiles[0].pluginConfig[0].args"
    assert "must be greater than 0" in paths[f"{base}.permitWaitingTimeSeconds"]
    assert "unknown field" in paths[f"{base}.nope"]


def test_custom_section_only_for_program_custom() -> None:
    spec = default_spec("x", custom=CustomSettings(binary="/bin/s"))
    from kschedctl.spec import check_spec

    assert any(p.path == "spec.custom" for p in check_spec(spec))


@pytest.mark.parametrize(
    ("image", "version"),
    [
        (f"{IMAGE}:v0.33.5", (1, 33)),
        ("registry.k8s.io/kube-scheduler:v1.36.3", (1, 36)),
        ("my.registry:5000/scheduler-plugins/kube-scheduler:v0.34.7@sha256:" + "a" * 64, (1, 34)),
        ("busybox", None),
    ],
)
def test_image_kubernetes_version(image: str, version: tuple[int, int] | None) -> None:
    assert versions.image_kubernetes_version(image) == version


def test_status_skew_reads_scheduler_plugins_tags() -> None:
    from kschedctl.ops.status import version_skew

    assert version_skew(f"{IMAGE}:v0.35.4", "v1.36.3") == "one minor older (supported)"
    assert version_skew(f"{IMAGE}:v0.37.1", "v1.36.3") == "NEWER than the API server (unsupported)"
    assert version_skew(f"{IMAGE}:v0.33.5", "v1.36.3").startswith("more than one minor older")


@pytest.mark.parametrize(
    ("name", "said"),
    [("Bad Name", "'Bad Name' is not a plugin name"), ("", "is required"), (None, "is required")],
)
def test_a_custom_plugin_name_is_checked_and_quoted(name: object, said: str) -> None:
    plugin = {"name": name, "extensionPoints": ["Filter"]}
    doc = _custom_doc("example.com/mine:v1", custom={"plugins": [plugin]})
    _, problems = spec_from_dict(doc)
    [problem] = [p for p in problems if p.path == "spec.custom.plugins[0].name"]
    assert problem.message.startswith(said + ": the plugin's registered name")
