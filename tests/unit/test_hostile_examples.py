"""The hostile inputs of issue 10, one test each: typed strings at the spec boundary, one
escaping function per output target, validate and render agreeing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hostile_support import check_rendered, parse_unit, unquote_exec_start

from kschedctl.base.errors import KschedError, SpecError
from kschedctl.hosts.systemd import exec_start
from kschedctl.model.config import shapes, versions
from kschedctl.ops.validate import validate_files
from kschedctl.render.added_profile import add_profile
from kschedctl.render.escape import (
    comment,
    exec_start_argv,
    exec_start_line,
    systemd_arg,
    unquote_command_line,
)
from kschedctl.render.forms import render
from kschedctl.render.templates import templates_dir
from kschedctl.spec import default_spec, spec_from_dict

LINE_BREAKS = ["\n", "\r", "\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1b", "\u202e", "\x00"]


def _doc(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": spec.pop("name", "s")},
        "spec": spec,
    }


def _problems(doc: dict[str, Any]) -> list[str]:
    _, problems = spec_from_dict(doc)
    return [f"{p.path}: {p.message}" for p in problems]


def _validate(tmp_path: Path, doc: dict[str, Any]) -> list[str]:
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return [
        f"{p.path}: {p.message}" for r in validate_files([str(path)]).reports for p in r.problems
    ]


CLUSTER_ROLE_BINDING = (
    "mallory\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
    "metadata: {name: pwn}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, "
    "name: cluster-admin}\nsubjects: [{kind: User, name: mallory}]"
)


def test_a_user_name_with_a_newline_and_a_cluster_role_binding_is_refused(tmp_path: Path) -> None:
    doc = _doc(service={"user": CLUSTER_ROLE_BINDING})
    problems = _problems(doc)
    assert len(problems) == 1 and problems[0].startswith("spec.service.user: "), problems
    assert "\\x0a" in problems[0] and "\n" not in problems[0]
    assert _validate(tmp_path, doc) == problems  # validate says what render would
    spec = default_spec("s")
    spec.service.user = CLUSTER_ROLE_BINDING  # built in code: the same check
    with pytest.raises(SpecError, match="spec.service.user"):
        render(spec, "host-rbac")


def test_a_user_name_with_quotes_and_specials_is_written_as_one_yaml_string() -> None:
    spec = default_spec("s")
    spec.service.user = 'o\'brien "x" #not-a-comment --- {a: b} $HOME %n \\'
    check_rendered(spec)  # the RoleBinding's subject is exactly that user
    unit = render(spec, "service")
    assert 'lets o\'brien "x" #not-a-comment --- {a: b} $HOME %n \\\\ hold' in unit


@pytest.mark.parametrize(
    "address",
    ["fe80::1%x\n[Service]\nExecStartPre=/bin/sh -c id", "fe80::1%eth0", "localhost", "1.2.3.4\n"],
    ids=["zone-newline", "zone", "hostname", "newline"],
)
def test_bind_addresses_are_ip_literals_without_zone(address: str) -> None:
    problems = _problems(_doc(service={"bindAddress": address}))
    assert [p.split(":")[0] for p in problems] == ["spec.service.bindAddress"], problems


@pytest.mark.parametrize("program", ["kube-scheduler", "builtin"])
def test_extra_args_with_systemd_specials_reach_the_program_unchanged(program: str) -> None:
    args = ['--x-a="q"', "--x-b=$HOME", "--x-c=${VAR}", "--x-d=50%", "--x-e=a\\b", "--x-f=;"]
    doc = _doc(program=program, extraArgs=args)
    if program == "builtin":
        doc["spec"]["image"] = "example.com/kschedctl:1"
    spec, problems = spec_from_dict(doc)
    assert problems == [] and spec is not None
    unit = render(spec, "service")
    (line,) = [v for s, k, v in parse_unit(unit) if k == "ExecStart"]
    assert '"--x-a=\\"q\\""' in line and '"--x-b=$$HOME"' in line
    assert '"--x-c=$${VAR}"' in line and '"--x-d=50%%"' in line and '"--x-e=a\\\\b"' in line
    argv = unquote_exec_start(line)
    assert argv[-len(args) :] == args
    assert exec_start(unit) == argv == exec_start_argv(unit)  # the lab's parser agrees
    check_rendered(spec)


@pytest.mark.parametrize("program", ["kube-scheduler", "builtin"])
@pytest.mark.parametrize(
    "arg", [1, None, ["--v=3"], {"a": 1}, "verbose", "-v", "--v 3", "--x=a\nb", "--x=\u2028"]
)
def test_extra_args_must_be_flags_for_every_program(tmp_path: Path, program: str, arg: Any) -> None:
    doc = _doc(program=program, extraArgs=[arg])
    if program == "builtin":
        doc["spec"]["image"] = "example.com/kschedctl:1"
    problems = _problems(doc)
    assert problems and all(p.startswith("spec.extraArgs") for p in problems), problems
    assert _validate(tmp_path, doc) == problems


@pytest.mark.parametrize("char", LINE_BREAKS, ids=repr)
@pytest.mark.parametrize(
    "path",
    [
        ("metadata", "name"),
        ("spec", "namespace"),
        ("spec", "image"),
        ("spec", "service", "user"),
        ("spec", "service", "binary"),
        ("spec", "service", "configDir"),
        ("spec", "leaderElection", "resourceName"),
        ("spec", "leaderElection", "leaseDuration"),
        ("spec", "pod", "priorityClassName"),
        ("spec", "pod", "nodeSelector", "disk"),
        ("spec", "pod", "resources", "requests", "cpu"),
        ("spec", "profiles", 0, "schedulerName"),
        ("spec", "profiles", 0, "pluginConfig", 0, "args", "x"),
        ("spec", "extenders", 0, "urlPrefix"),
    ],
    ids=lambda p: ".".join(map(str, p)),
)
def test_control_characters_and_line_breaks_are_refused_everywhere(
    char: str, path: tuple[Any, ...]
) -> None:
    doc = _doc(
        profiles=[{"schedulerName": "s", "pluginConfig": [{"name": "X", "args": {}}]}],
        extenders=[{"urlPrefix": "http://x"}],
        pod={"nodeSelector": {}, "resources": {"requests": {}}},
    )
    node: Any = doc
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    node[path[-1]] = f"x{char}y"
    problems = _problems(doc)
    assert problems, path
    assert any(shapes.shown(char)[1:-1] in p for p in problems), problems
    for problem in problems:
        assert char not in problem


def test_a_control_character_in_a_key_is_refused_with_its_path() -> None:
    problems = _problems(_doc(pod={"nodeSelector": {"a\u2028b": "c"}}))
    assert problems == [
        "spec.pod.nodeSelector: key 'a\\u2028b' holds \\u2028: control characters, line breaks "
        "and invisible format characters are not allowed in a spec"
    ]


def test_profile_names_are_dns_subdomains() -> None:
    problems = _problems(_doc(profiles=[{"schedulerName": "s"}, {"schedulerName": "Team A"}]))
    assert problems == [
        "spec.profiles[1].schedulerName: scheduler name 'Team A' is not a DNS-1123 subdomain "
        "(lowercase letters, digits, '-' and '.'): no pod can name it in spec.schedulerName"
    ]


def test_add_to_keeps_its_header_one_comment() -> None:
    spec = default_spec("team-b")
    existing = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    text = add_profile(existing, spec, source="evil\n---\nkind: ClusterRoleBinding\u2028#")
    header = text.split("\n")[0]
    assert header.startswith("# evil\\n---\\nkind: ClusterRoleBinding\\u2028#")
    assert "team-b added by kschedctl" in header
    docs = list(yaml.safe_load_all(text))
    assert len(docs) == 1 and docs[0]["kind"] == "KubeSchedulerConfiguration"


def test_add_to_refuses_a_hostile_existing_config() -> None:
    existing = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        'profiles: [{schedulerName: "a\\u2028b"}]\n'
    )
    with pytest.raises(SpecError, match="profiles\\[0\\].schedulerName"):
        add_profile(existing, default_spec("team-b"))


@pytest.mark.parametrize(
    "path",
    [
        "/../../../../tmp/x",
        "/etc/../tmp",
        "/etc/./x",
        "//etc/x",
        "/etc//x",
        "relative/x",
        "",
        "/a b",
    ],
)
def test_host_paths_are_absolute_and_clean(path: str) -> None:
    for key in ("binary", "configDir", "kubeconfig"):
        problems = _problems(_doc(service={key: path}))
        assert [p.split(":")[0] for p in problems] == [f"spec.service.{key}"], problems


@pytest.mark.parametrize(
    "version", ["١.٣٦", "１.３６", "1.36\n", " 1.36", "1.36 ", "1.3x", "v1.36"]
)
def test_kubernetes_versions_are_strict_ascii(version: str) -> None:
    problems = _problems(_doc(kubernetesVersion=version))
    assert [p.split(":")[0] for p in problems] == ["spec.kubernetesVersion"], problems


@pytest.mark.parametrize(
    "version", ["١.٣٦", "１.３６", "1.36\n", " 1.36", "1." + "9" * 5000], ids=shapes.shown
)
def test_parse_version_is_strict_ascii(version: str) -> None:
    with pytest.raises(ValueError, match="is not a Kubernetes version"):
        versions.parse_version(version)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (("replicas",), 2**31),
        (("replicas",), 10**5000),
        (("parallelism",), 2**31),
        (("podInitialBackoffSeconds",), 2**31),
        (("podMaxBackoffSeconds",), 2**63),  # an int64 upstream: 2**31 is accepted
        (("percentageOfNodesToScore",), 101),
        (("clientConnection", "burst"), 2**31),
        (("clientConnection", "qps"), 1e39),
        (("service", "securePort"), 65536),
        (("service", "verbosity"), 2**31),
        (("pod", "verbosity"), -1),
        (("builtin", "metricsPort"), 0),
    ],
    ids=lambda v: ".".join(v) if isinstance(v, tuple) else shapes.shown(v),
)
def test_numbers_are_range_checked(field: tuple[str, ...], value: Any) -> None:
    doc = _doc(program="builtin" if field[0] == "builtin" else "kube-scheduler")
    if field[0] == "builtin":
        doc["spec"]["image"] = "example.com/kschedctl:1"
    node = doc["spec"]
    for key in field[:-1]:
        node = node.setdefault(key, {})
    node[field[-1]] = value
    problems = _problems(doc)
    assert problems, field
    assert all(len(p) < 300 for p in problems)


@pytest.mark.parametrize(
    "image", ["foo[/bar]", "foo/Bar", "a b", "x:", "-x", "registry.k8s.io/kube-scheduler:v1.36.3\n"]
)
def test_images_follow_the_reference_grammar(image: str) -> None:
    problems = _problems(_doc(image=image))
    assert [p.split(":")[0] for p in problems] == ["spec.image"], problems


@pytest.mark.parametrize(
    "doc",
    [
        {"apiVersion": "kschedctl.io/v1alpha1", "kind": ["a"], "metadata": {"name": "s"}},
        {"apiVersion": "kschedctl.io/v1alpah1", "kind": "Scheduler", "metadata": {"name": "s"}},
        {"apiVersion": "kschedctl.io/v1alpha2", "kind": ["a"], "metadata": {"name": "s"}},
        {"apiVersion": "kschedtcl.io/v1alpha1", "kind": "Schedular", "metadata": {"name": "s"}},
    ],
    ids=["kind-list", "apiversion-typo", "both", "group-and-kind-typos"],
)
def test_validate_reports_what_render_refuses(tmp_path: Path, doc: dict[str, Any]) -> None:
    assert _problems(doc), doc
    assert _validate(tmp_path, doc), doc


@pytest.mark.parametrize("name", ["true", "null", "123", "1e3", "yes", "0x1f"])
def test_yaml_special_names_stay_strings_in_every_form(name: str) -> None:
    spec = default_spec(name, namespace=name)
    check_rendered(spec)
    deployment = list(yaml.safe_load_all(render(spec, "deployment")))
    # kube-system: the extension-apiserver-authentication-reader binding lives there.
    assert {d["metadata"].get("namespace", name) for d in deployment} == {name, "kube-system"}
    assert {d["metadata"]["name"] for d in deployment} >= {name, f"{name}-config"}


@pytest.mark.parametrize(
    "text", ["a\nb", "a\rb", "a\x85b", "a\u2028b", "a\u2029b", "a\\", "\x1b[31m", "\u202e"]
)
def test_comment_is_one_line_that_never_continues(text: str) -> None:
    line = comment(text)
    assert len(line.splitlines()) == 1 and "\x1b" not in line and "\u202e" not in line
    assert (len(line) - len(line.rstrip("\\"))) % 2 == 0


@pytest.mark.parametrize(
    "arg", ["plain", "a b", 'a"b', "a'b", "a\\b", "$HOME", "${X}", "%n", "%%", ";", "#", "ä"]
)
def test_systemd_arguments_round_trip(arg: str) -> None:
    line = exec_start_line(["/bin/x", arg])
    assert unquote_command_line(line) == ["/bin/x", arg]
    assert unquote_exec_start(line) == ["/bin/x", arg]


@pytest.mark.parametrize("arg", ["", "a\nb", "a\x00b", "\u2028"])
def test_systemd_arguments_that_cannot_be_written_are_refused(arg: str) -> None:
    with pytest.raises(SpecError):
        systemd_arg(arg)


@pytest.mark.parametrize(
    "line", ["/bin/x %n", "/bin/x $HOME", '/bin/x "a', "/bin/x ; /bin/y", "x", "/bin/x \\q"]
)
def test_the_lab_refuses_command_lines_kschedctl_never_writes(line: str) -> None:
    with pytest.raises(KschedError):
        unquote_command_line(line)


def test_a_unit_with_two_exec_starts_is_refused() -> None:
    unit = "[Service]\nExecStart=/bin/a\nExecStart=/bin/b\n"
    with pytest.raises(KschedError, match="2 ExecStart"):
        exec_start_argv(unit)


_FILTERS = ("to_yaml", "to_yaml_text", "comment", "unit_value")
# Slots whose values kschedctl builds itself: the escaped ExecStart line, the config text in a
# block scalar (a YAML document emitted by to_yaml, indented), and a literal choice.
_INTERNAL = ("exec_start", "config_text | trim | indent(4)", "'fallback policy", "'kschedctl\\'s")


def test_every_template_slot_goes_through_an_escaping_filter() -> None:
    for template in sorted(templates_dir().glob("*.j2")):
        for expr in re.findall(r"\{\{(.*?)\}\}", template.read_text()):
            expr = expr.strip()
            if expr.startswith(_INTERNAL):
                continue
            filters = [f.strip().split("(")[0] for f in expr.split("|")[1:]]
            assert any(f in _FILTERS for f in filters), f"{template.name}: {{{{ {expr} }}}}"


@pytest.mark.parametrize("replicas", [0, 2**31, 10**5000], ids=["zero", "int32+1", "huge"])
def test_deploy_replicas_are_int32_like_every_spec_field(replicas: int) -> None:
    from kschedctl.ops.deploy import load_target

    with pytest.raises(SpecError, match="spec.replicas"):
        load_target("s", replicas=replicas)
