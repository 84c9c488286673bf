"""``spec.builtin.plugins``: shapes and reading, the ConfigMap (size, keys, exact text), the
``--plugin`` flags and mounts of every form, the config hash, the host files, and how ``why``
lists the plugins of a deployed ConfigMap without running them, and runs them only when the
caller names their exact hash."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.base.errors import KschedError, NotFoundError, PluginError, SpecError
from kschedctl.hosts import systemd
from kschedctl.hosts.host import SystemdHost
from kschedctl.observe import plugin_files as observed
from kschedctl.observe.schedulers import Scheduler
from kschedctl.ops.deploy import cluster_objects
from kschedctl.ops.why_cluster import ClusterState
from kschedctl.ops.why_plugins import configmap_plugins, load_cluster_plugins
from kschedctl.render import builtin
from kschedctl.render.context import config_hash
from kschedctl.render.escape import yaml_text_map
from kschedctl.render.forms import render, render_workspace
from kschedctl.spec import Spec, load_spec, spec_from_dict

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # 1 MiB documents: libyaml's reader
RACK = 'def filter(pod, node, ctx):\n    return None if node else "no node"\n'
SCORE = "WEIGHT = 2\n\n\ndef score(pod, node, ctx):\n    return 50.0\n"


def _doc(plugins: Any, program: str = "builtin") -> dict[str, Any]:
    builtin_section = {"plugins": plugins} if program == "builtin" else {}
    spec: dict[str, Any] = {"program": program}
    if builtin_section:
        spec["builtin"] = builtin_section
    return {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": "racks"},
        "spec": spec,
    }


def _workspace(tmp_path: Path, files: dict[str, str], plugins: list[str] | None = None) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "scheduler.yaml").write_text(
        yaml.safe_dump(_doc(list(files) if plugins is None else plugins))
    )
    return tmp_path / "scheduler.yaml"


def _spec(tmp_path: Path, files: dict[str, str]) -> Spec:
    return load_spec(_workspace(tmp_path, files))


def _problems(tmp_path: Path, plugins: Any) -> list[str]:
    _, problems = spec_from_dict(_doc(plugins), "s.yaml", tmp_path)
    return [f"{p.path}: {p.message}" for p in problems]


# -- shapes and reading ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("/etc/passwd.py", "must be relative to the workspace"),
        ("../up.py", "clean path"),
        ("./here.py", "clean path"),
        ("a//b.py", "clean path"),
        (".hidden/x.py", "a directory name"),
        ("-x/y.py", "a directory name"),
        ("plugins/a-b.py", "Python module name"),
        ("plugins/1st.py", "Python module name"),
        ("plugins/rack.txt", "Python module name"),
        ("plugins/", "Python module name"),
        ("plugins/ra ck.py", "Python module name"),
        ("plugins/" + "x" * 98 + ".py", "at most 100"),
        ("d/" * 130 + "x.py", "longer than 255 bytes"),
        (7, "is not a path"),
        ("", "is not a path"),
    ],
    ids=repr,
)
def test_a_plugin_path_of_the_wrong_shape_is_refused(tmp_path: Path, entry: Any, said: str) -> None:
    problems = _problems(tmp_path, [entry])
    assert any(p.startswith("spec.builtin.plugins[0]: ") and said in p for p in problems), problems


def test_two_plugins_with_one_file_name_are_refused(tmp_path: Path) -> None:
    _workspace(tmp_path, {"a/rack.py": RACK, "b/rack.py": RACK})
    problems = _problems(tmp_path, ["a/rack.py", "b/rack.py"])
    assert problems == [
        "spec.builtin.plugins[1]: 'b/rack.py': the file name rack.py is taken by "
        "spec.builtin.plugins[0]; plugins are installed side by side under their file names "
        "(and imported as modules of that name): rename one"
    ]


def test_plugins_of_another_program_are_refused(tmp_path: Path) -> None:
    doc = _doc([], program="kube-scheduler")
    doc["spec"]["builtin"] = {"plugins": ["p.py"]}
    _, problems = spec_from_dict(doc, "s.yaml", tmp_path)
    assert [(p.path, p.message) for p in problems] == [
        ("spec.builtin", "applies to program builtin only")
    ]


def test_the_files_are_read_relative_to_the_workspace(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {"plugins/rack.py": RACK, "score.py": SCORE})
    assert spec.builtin.plugins == ["plugins/rack.py", "score.py"]
    assert spec.builtin.plugin_sources == {"plugins/rack.py": RACK, "score.py": SCORE}
    assert "pluginSources" not in yaml.safe_dump(spec.to_dict())


def test_unreadable_plugin_files_are_each_named(tmp_path: Path) -> None:
    (tmp_path / "dir.py").mkdir()
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\n")
    (tmp_path / "big.py").write_bytes(b"#" * (1024 * 1024 + 1))
    outside = tmp_path.parent / f"{tmp_path.name}-secret.py"
    outside.write_text("TOKEN = 1\n")
    os.symlink(outside, tmp_path / "link.py")
    problems = _problems(tmp_path, ["missing.py", "dir.py", "latin1.py", "big.py", "link.py"])
    assert problems[0] == f"spec.builtin.plugins[0]: missing.py: no such file in {tmp_path}"
    assert "dir.py: is a directory, not a regular file" in problems[1]
    assert "latin1.py: not UTF-8 text" in problems[2]
    assert "big.py: too large: 1,048,577 bytes" in problems[3]
    assert problems[4].startswith("spec.builtin.plugins[4]: link.py resolves outside the")
    assert len(problems) == 5


def test_a_spec_without_a_workspace_cannot_list_plugins() -> None:
    _, problems = spec_from_dict(_doc(["p.py"]), "s.yaml")
    assert [p.path for p in problems] == ["spec.builtin.plugins"]
    assert "relative to the workspace" in problems[0].message


# -- the ConfigMap -----------------------------------------------------------------------------


def _objects(spec: Spec, form: str) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in yaml.load_all(render(spec, form), Loader=LOADER) if d}


HOSTILE_TEXTS = {
    "document markers": "x = 1\n---\napiVersion: v1\nkind: Secret\n...\n",
    "no final newline": "x = 1",
    "blank lines at the end": "x = 1\n\n\n",
    "only newlines": "\n\n",
    "leading indentation": "    x = 1\n",
    "CRLF": "x = 1\r\ny = 2\r\n",
    "tabs": "if x:\n\tpass\n",
    "trailing spaces": "x = 1   \ny = 2\n",
    "non-ASCII": "NAME = 'café ✓'\n",
    "block indicators": "s = '''|\n>- key: value # not a comment\n'''\n",
    "empty": "",
}


@pytest.mark.parametrize("text", HOSTILE_TEXTS.values(), ids=HOSTILE_TEXTS)
@pytest.mark.parametrize("form", ["pod", "deployment"])
def test_the_configmap_carries_each_file_exactly(tmp_path: Path, text: str, form: str) -> None:
    spec = _spec(tmp_path, {"plugins/odd.py": text, "rack.py": RACK})
    objects = list(yaml.safe_load_all(render(spec, form)))
    configmap = next(o for o in objects if o and o["kind"] == "ConfigMap")
    assert configmap["data"]["plugin-odd.py"] == text
    assert configmap["data"]["plugin-rack.py"] == RACK
    assert list(configmap["data"]) == ["policy.yaml", "plugin-odd.py", "plugin-rack.py"]
    assert observed.plugin_files(configmap) == [("odd.py", text), ("rack.py", RACK)]
    # Nothing the text holds becomes an object of its own: deploy's allow-list still holds.
    kinds = [o["kind"] for o in cluster_objects(spec, form)]
    assert kinds.count("ConfigMap") == 1 and "Secret" not in kinds


def test_yaml_text_map_reads_back_exactly() -> None:
    files = {f"plugin-{i}.py": text for i, text in enumerate(HOSTILE_TEXTS.values())}
    assert yaml.safe_load(yaml_text_map(files) + "\n") == files
    assert yaml_text_map({"k": "a\nb\n"}) == "k: |\n  a\n  b"  # readable where it can be


@pytest.mark.parametrize("form", ["pod", "deployment"])
def test_the_pod_mounts_each_plugin_and_passes_it_in_order(tmp_path: Path, form: str) -> None:
    spec = _spec(tmp_path, {"plugins/rack.py": RACK, "score.py": SCORE})
    objects = _objects(spec, form)
    pod = (
        objects["Pod"]["spec"]
        if form == "pod"
        else objects["Deployment"]["spec"]["template"]["spec"]
    )
    container = pod["containers"][0]
    flags = [a for a in container["command"] if a.startswith("--plugin")]
    assert flags == [
        "--plugin=/etc/kschedctl/plugins/rack.py",
        "--plugin=/etc/kschedctl/plugins/score.py",
    ]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts == {"config": f"/etc/kubernetes/{spec.name}", "plugins": "/etc/kschedctl/plugins"}
    volumes = {v["name"]: v["configMap"] for v in pod["volumes"]}
    assert volumes["config"]["items"] == [{"key": "policy.yaml", "path": "policy.yaml"}]
    assert volumes["plugins"] == {
        "name": f"{spec.name}-config",
        "items": [
            {"key": "plugin-rack.py", "path": "rack.py"},
            {"key": "plugin-score.py", "path": "score.py"},
        ],
    }
    annotations = objects["ConfigMap"]["metadata"]["annotations"]
    assert annotations[builtin.PLUGIN_FILES_ANNOTATION] == "rack.py,score.py"


def test_without_plugins_nothing_changes(tmp_path: Path) -> None:
    spec = load_spec(_workspace(tmp_path, {}, plugins=[]))
    text = render(spec, "deployment")
    assert "plugin" not in text and "items" not in text
    assert "plugins" not in yaml.safe_dump(spec.to_dict())


def _sized(tmp_path: Path, extra: int) -> Spec:
    """A spec whose ConfigMap data is exactly 1 MiB plus ``extra`` bytes."""
    policy = len(builtin.policy_file(load_spec(_workspace(tmp_path, {}, plugins=[]))).encode())
    rest = builtin.CONFIGMAP_MAX_BYTES - policy - len(RACK) + extra
    half = rest // 2
    return _spec(tmp_path, {"rack.py": RACK, "a.py": "#" * half, "b.py": "#" * (rest - half)})


def test_a_configmap_of_exactly_one_mebibyte_renders(tmp_path: Path) -> None:
    spec = _sized(tmp_path, 0)
    configmap = _objects(spec, "pod")["ConfigMap"]
    assert sum(len(v.encode()) for v in configmap["data"].values()) == 1024 * 1024


def test_one_byte_past_the_configmap_limit_is_refused_naming_each_file(tmp_path: Path) -> None:
    spec = _sized(tmp_path, 1)
    for form in ("pod", "deployment", "service", "config"):
        with pytest.raises(SpecError) as caught:
            render(spec, form)
        assert caught.value.exit_code == 3
    message = caught.value.message
    assert message.startswith(
        "spec.builtin.plugins: the ConfigMap racks-config would hold 1,048,577 bytes "
        "(policy.yaml 178 bytes, rack.py 67 bytes, a.py 524,166 bytes, b.py 524,166 bytes)"
    ), message
    assert "Kubernetes refuses a ConfigMap over 1,048,576 bytes (1 MiB)" in message
    with pytest.raises(SpecError):
        render_workspace(spec)


def test_a_spec_built_in_code_without_its_files_is_refused(tmp_path: Path) -> None:
    spec = _spec(tmp_path, {"rack.py": RACK})
    spec.builtin.plugin_sources = {}
    with pytest.raises(SpecError, match=r"rack.py: not read"):
        render(spec, "pod")


# -- rolling ------------------------------------------------------------------------------------


def _hashes(spec: Spec) -> dict[str, str]:
    pod = _objects(spec, "pod")["Pod"]["metadata"]["annotations"]
    deployment = _objects(spec, "deployment")["Deployment"]["spec"]["template"]["metadata"]
    static = _objects(spec, "static-pod")["Pod"]["metadata"]["annotations"]
    return {
        "pod": pod["kschedctl.io/config-hash"],
        "deployment": deployment["annotations"]["kschedctl.io/config-hash"],
        "static-pod": static["kschedctl.io/config-hash"],
        "deploy waits for": config_hash(spec),
    }


def test_a_changed_plugin_file_changes_the_config_hash(tmp_path: Path) -> None:
    before = _hashes(_spec(tmp_path / "a", {"rack.py": RACK, "score.py": SCORE}))
    assert before["pod"] == before["deployment"] == before["deploy waits for"]
    edited = _hashes(_spec(tmp_path / "b", {"rack.py": RACK + "# edited\n", "score.py": SCORE}))
    reordered = _spec(tmp_path / "c", {"score.py": SCORE, "rack.py": RACK})
    assert reordered.builtin.plugins == ["score.py", "rack.py"]
    for form in before:
        assert edited[form] != before[form], form
        assert _hashes(reordered)[form] != before[form], form
    assert edited["pod"] == edited["deploy waits for"]


def test_without_plugins_the_hash_is_the_config_s(tmp_path: Path) -> None:
    spec = load_spec(_workspace(tmp_path, {}, plugins=[]))
    from kschedctl.render.templates import content_hash

    assert _hashes(spec)["pod"] == content_hash(render(spec, "config"))


# -- host forms ---------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["service", "static-pod"])
def test_the_host_forms_install_the_plugins_beside_the_config(tmp_path: Path, form: str) -> None:
    spec = _spec(tmp_path / "ws", {"plugins/rack.py": RACK, "score.py": "x = 1"})
    root = tmp_path / "root"
    host = SystemdHost(root, root / "etc/kubernetes/manifests")
    files = host.files(spec, form)
    plugin_dir = root / "etc/kubernetes/config/racks-plugins"
    trailer = "# plugin {} of scheduler racks, installed by kschedctl from scheduler.yaml\n"
    assert files[plugin_dir / "rack.py"] == RACK + trailer.format("rack.py")
    assert files[plugin_dir / "score.py"] == "x = 1\n" + trailer.format("score.py")
    text = render(spec, form)
    dir_on_host = "/etc/kubernetes/config/racks-plugins"
    assert f"--plugin={dir_on_host}/rack.py" in text
    assert text.index("rack.py --plugin") if form == "service" else True
    if form == "static-pod":
        pod = yaml.safe_load(text)
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "plugins")
        assert volume["hostPath"] == {"path": dir_on_host, "type": "Directory"}
    host.write_files(files)
    victim = plugin_dir / "notes.py"
    victim.write_text("# not installed by kschedctl\n")
    removed = host.remove_files(sorted(files) + [victim], "racks")
    assert sorted(removed) == sorted(files)
    assert victim.exists() and plugin_dir.is_dir()  # the stranger's file keeps its directory
    victim.unlink()
    host.write_files(files)
    host.remove_files(sorted(files), "racks")
    assert not plugin_dir.exists()


def test_a_file_named_like_a_plugin_but_not_installed_by_kschedctl_stays(tmp_path: Path) -> None:
    plugin_dir = tmp_path / "racks-plugins"
    plugin_dir.mkdir()
    forged = plugin_dir / "rack.py"
    forged.write_text(RACK + builtin.host_plugin_trailer("other", "rack.py") + "\n")
    elsewhere = tmp_path / "rack.py"
    elsewhere.write_text(RACK + builtin.host_plugin_trailer("racks", "rack.py") + "\n")
    assert systemd.remove_files([forged, elsewhere], "racks") == []
    assert not systemd.is_plugin_file(tmp_path / "racks-plugins" / "missing.py", "racks")


# -- why: the plugins from the deployed ConfigMap ------------------------------------------------


def test_observe_and_render_agree_on_the_configmap_names() -> None:
    assert observed.PLUGIN_FILES_ANNOTATION == builtin.PLUGIN_FILES_ANNOTATION
    assert observed.PLUGIN_KEY_PREFIX == builtin.PLUGIN_KEY_PREFIX
    assert builtin.plugin_key("plugins/rack.py") == "plugin-rack.py"


def test_a_configmap_that_names_a_file_it_lacks_is_an_error() -> None:
    configmap = {
        "metadata": {"name": "racks-config", "namespace": "kube-system",
                     "annotations": {builtin.PLUGIN_FILES_ANNOTATION: "rack.py,gone.py"}},
        "data": {"plugin-rack.py": RACK},
    }  # fmt: skip
    with pytest.raises(KschedError, match="holds no key plugin-gone.py"):
        observed.plugin_files(configmap)
    assert observed.plugin_files({"metadata": {}, "data": {"config.yaml": "x"}}) == []


class FakeCluster:
    def __init__(self, objects: dict[str, dict[str, Any]]) -> None:
        self.objects = objects
        self.asked: list[str] = []

    def get(self, path: str, **_query: Any) -> dict[str, Any]:
        self.asked.append(path)
        if path not in self.objects:
            raise NotFoundError(path)
        return self.objects[path]


def _deployed(spec: Spec) -> tuple[FakeCluster, list[dict[str, Any]], str]:
    """A cluster holding the rendered ConfigMap, the rendered pod (as running), its path."""
    objects = _objects(spec, "pod")
    path = "/api/v1/namespaces/kube-system/configmaps/racks-config"
    return FakeCluster({path: objects["ConfigMap"]}), [objects["Pod"]], path


# Imports a marker-writing module: running the plugin's text leaves MARKER_ENV's file behind.
MARKER_ENV = "KSCHEDCTL_TEST_PLUGIN_MARKER"
MARKING = (
    "import os\n"
    f"open(os.environ['{MARKER_ENV}'], 'w').write(repr(sorted(os.environ)))\n"
    "\n\ndef filter(pod, node, ctx):\n    return None\n"
)
ENTRY = Scheduler("racks", "pod", managed=True, namespace="kube-system", pods=["racks"])


def _ref(digest: str, configmap: str = "racks-config") -> observed.ClusterPluginsRef:
    return observed.ClusterPluginsRef("kube-system", configmap, digest)


def test_why_lists_the_plugins_of_the_deployed_configmap_with_the_flag_that_runs_them(
    tmp_path: Path,
) -> None:
    spec = _spec(tmp_path, {"plugins/rack.py": RACK, "score.py": SCORE})
    cluster, _pods, path = _deployed(spec)
    unrun = configmap_plugins(cluster, ENTRY)  # type: ignore[arg-type]
    digest = builtin.bundle_hash("", [("rack.py", RACK), ("score.py", SCORE)])
    assert unrun == observed.UnrunPlugins(
        "racks",
        "ConfigMap kube-system/racks-config",
        ("rack.py", "score.py"),
        digest,
        run_with=f"--run-cluster-plugins kube-system/racks-config@sha256:{digest}",
    )
    assert unrun.to_dict()["sha256"] == digest
    # Only kschedctl's own pod and deployment forms, and a ConfigMap labelled for it.
    for other in (
        Scheduler("racks", "deployment", managed=False, namespace="kube-system"),
        Scheduler("racks", "service", managed=True, namespace="kube-system"),
        Scheduler("other", "deployment", managed=True, namespace="kube-system"),
    ):
        assert configmap_plugins(cluster, other) is None  # type: ignore[arg-type]
    configmap = cluster.objects[path]
    foreign = {**configmap, "metadata": {**configmap["metadata"], "labels": {}}}
    assert configmap_plugins(FakeCluster({path: foreign}), ENTRY) is None  # type: ignore[arg-type]


def test_why_never_runs_the_code_of_a_configmap_it_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing reads the text and hashes it; nothing of it runs (even when it hashes to what
    the scheduler's pod says it runs: both are the namespace editor's to change)."""
    marker = tmp_path / "ran"
    monkeypatch.setenv(MARKER_ENV, str(marker))
    spec = _spec(tmp_path / "ws", {"rack.py": MARKING})
    cluster, _pods, _path = _deployed(spec)
    unrun = configmap_plugins(cluster, ENTRY)  # type: ignore[arg-type]
    assert unrun is not None and unrun.files == ("rack.py",)
    assert not marker.exists()


def test_the_named_hash_runs_exactly_that_configmap_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kschedctl.ops.reporter import Reporter

    spec = _spec(tmp_path, {"plugins/rack.py": RACK, "score.py": SCORE})
    cluster, _pods, path = _deployed(spec)
    digest = builtin.bundle_hash("", [("rack.py", RACK), ("score.py", SCORE)])
    said: list[str] = []
    loaded = load_cluster_plugins(cluster, [_ref(digest)], Reporter(warn=said.append))  # type: ignore[arg-type]
    assert list(loaded) == ["racks"]
    assert loaded["racks"].names() == ("rack", "score")
    assert loaded["racks"].reslim  # as the scheduler's cache slims objects
    assert [p.source for p in loaded["racks"].plugins] == [
        "ConfigMap kube-system/racks-config: rack.py",
        "ConfigMap kube-system/racks-config: score.py",
    ]
    assert said == [
        "running the Python plugins [rack.py, score.py] of ConfigMap kube-system/racks-config "
        f"(sha256:{digest}) in this process, as --run-cluster-plugins "
        f"kube-system/racks-config@sha256:{digest} asks"
    ]
    assert cluster.asked == [path]


def test_a_wrong_hash_refuses_every_named_configmap_before_any_code_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    monkeypatch.setenv(MARKER_ENV, str(marker))
    spec = _spec(tmp_path / "ws", {"rack.py": MARKING})
    cluster, _pods, _path = _deployed(spec)
    actual = builtin.bundle_hash("", [("rack.py", MARKING)])
    other = "0" * 64
    # The good one is named first: the bad one after it still stops both.
    cluster.objects["/api/v1/namespaces/kube-system/configmaps/more-config"] = cluster.objects[
        "/api/v1/namespaces/kube-system/configmaps/racks-config"
    ]
    with pytest.raises(PluginError) as caught:
        load_cluster_plugins(cluster, [_ref(actual), _ref(other, "more-config")])  # type: ignore[arg-type]
    assert caught.value.exit_code == 3
    assert caught.value.message == (
        f"ConfigMap kube-system/more-config: its plugin files hash to sha256:{actual}, not to "
        f"the sha256:{other} you named: they are not the code you approved, and nothing was run"
    )
    assert f"--run-cluster-plugins kube-system/more-config@sha256:{actual}" in str(
        caught.value.hint
    )
    assert not marker.exists()
    with pytest.raises(NotFoundError, match="ConfigMap kube-system/gone-config not found"):
        load_cluster_plugins(cluster, [_ref(actual, "gone-config")])  # type: ignore[arg-type]
    load_cluster_plugins(cluster, [_ref(actual)])  # type: ignore[arg-type]
    assert marker.exists()  # named with its hash: it runs


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("kube-system/racks-config", "expected --run-cluster-plugins NAMESPACE/NAME-config"),
        ("racks-config@sha256:" + "a" * 64, "expected --run-cluster-plugins"),
        ("kube-system/racks@sha256:" + "a" * 64, "is not a kschedctl scheduler's ConfigMap"),
        ("kube-system/racks-config@sha256:" + "A" * 64, "64 lowercase hex digits"),
        ("kube-system/racks-config@md5:" + "a" * 32, "64 lowercase hex digits"),
        ("Kube_System/racks-config@sha256:" + "a" * 64, "is not a DNS-1123 label"),
    ],
)
def test_the_opt_in_flag_is_checked_before_anything_is_asked(value: str, said: str) -> None:
    with pytest.raises(KschedError, match=said) as caught:
        observed.ClusterPluginsRef.parse(value)
    assert caught.value.exit_code == 2


def test_the_opt_in_flag_round_trips() -> None:
    text = "team-b/racks-config@sha256:" + "ab" * 32
    ref = observed.ClusterPluginsRef.parse(text)
    assert (ref.namespace, ref.configmap, ref.scheduler) == ("team-b", "racks-config", "racks")
    assert ref.flag() == f"--run-cluster-plugins {text}"


def test_two_configmaps_for_one_scheduler_are_refused_before_any_request() -> None:
    from kschedctl.ops.why import explain_pods

    cluster = FakeCluster({})
    refs = [_ref("a" * 64), observed.ClusterPluginsRef("team-b", "racks-config", "b" * 64)]
    with pytest.raises(KschedError, match="names the plugins of scheduler racks twice") as caught:
        explain_pods(cluster, "p", run_cluster_plugins=refs)  # type: ignore[arg-type]
    assert caught.value.exit_code == 2 and cluster.asked == []


def test_why_lists_the_deployed_plugins_once(tmp_path: Path) -> None:
    from kschedctl.model.filters import NodeInfoSnapshot
    from kschedctl.ops.why_plugins import unrun_plugins

    spec = _spec(tmp_path, {"plugins/rack.py": RACK, "score.py": SCORE})
    cluster, pods, path = _deployed(spec)
    state = ClusterState(NodeInfoSnapshot([]), [ENTRY], (1, 36), pods=pods)
    unrun = unrun_plugins(cluster, state, "racks", ENTRY)  # type: ignore[arg-type]
    assert unrun is not None and unrun.files == ("rack.py", "score.py")
    assert unrun_plugins(cluster, state, "racks", ENTRY) is unrun  # type: ignore[arg-type]
    assert cluster.asked == [path]


def test_a_plugin_dropped_from_the_spec_leaves_the_host(tmp_path: Path) -> None:
    root = tmp_path / "root"
    host = SystemdHost(root)
    both = _spec(tmp_path / "a", {"rack.py": RACK, "score.py": SCORE})
    host.write_files(host.files(both, "service"))
    one = _spec(tmp_path / "b", {"rack.py": RACK})
    files = host.files(one, "service")
    host.write_files(files)
    plugin_dir = root / "etc/kubernetes/config/racks-plugins"
    stranger = plugin_dir / "notes.py"
    stranger.write_text("# someone else's\n")
    assert host.prune_plugin_files(one, files) == [plugin_dir / "score.py"]
    assert sorted(p.name for p in plugin_dir.iterdir()) == ["notes.py", "rack.py"]


def test_the_kustomize_base_carries_the_plugins(tmp_path: Path) -> None:
    from kschedctl.render.forms import render_directory

    spec = _spec(tmp_path, {"plugins/rack.py": RACK, "odd.py": HOSTILE_TEXTS["CRLF"]})
    files = render_directory(spec, "kustomize")
    configmap = yaml.safe_load(files["scheduler/configmap-racks-config.yaml"])
    assert configmap["data"]["plugin-rack.py"] == RACK
    assert configmap["data"]["plugin-odd.py"] == HOSTILE_TEXTS["CRLF"]
    deployment = yaml.safe_load(files["scheduler/deployment-racks.yaml"])
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    assert [a for a in command if a.startswith("--plugin")] == [
        "--plugin=/etc/kschedctl/plugins/rack.py",
        "--plugin=/etc/kschedctl/plugins/odd.py",
    ]
