"""Helpers for the hostile-input tests: an independent systemd unit parser, the objects a
rendered form holds, and the fields of the spec (derived from its dataclasses)."""

from __future__ import annotations

import dataclasses
import functools
import re
import shlex
import typing
from typing import Any

import yaml

from kschedctl.render.context import form_context
from kschedctl.render.export import chart_values
from kschedctl.render.forms import FORMS, render, render_directory
from kschedctl.render.objects import host_rbac
from kschedctl.spec import Spec, default_spec
from kschedctl.spec import model as spec_module

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
YAML_FORMS = [f.name for f in FORMS if f.name != "service" and not f.directory]
DIRECTORY_FORMS = [f.name for f in FORMS if f.directory]


REFERENCE_CUSTOM_IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.33.5"


def spec_fields(cls: type = Spec, prefix: tuple[str, ...] = ("spec",)) -> list[tuple[str, ...]]:
    """Every YAML field path of the spec, from its dataclasses (new fields follow)."""
    out: list[tuple[str, ...]] = [("metadata", "name")] if cls is Spec else []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if not f.metadata.get("yaml", True):
            continue
        key = spec_module.camel(f.name)
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            out += spec_fields(hint, (*prefix, key))
        else:
            out.append((*prefix, key))
    return out


def parse_unit(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) of a systemd unit, following systemd.syntax(7).

    Lines are separated by \\n only; empty lines and lines starting with # or ; are comments;
    a line ending in an unescaped backslash continues on the next one (asserted never to
    happen in kschedctl's units, comments included: that is how a comment swallows a line);
    ``[Section]`` headers; ``Key=Value`` entries, whitespace around both stripped.
    """
    entries: list[tuple[str, str, str]] = []
    section = ""
    for number, line in enumerate(text.split("\n"), 1):
        trailing = len(line) - len(line.rstrip("\\"))
        assert trailing % 2 == 0, f"line {number} continues onto the next: {line!r}"
        stripped = line.strip(" \t")
        assert "\r" not in line, f"line {number} holds a carriage return"
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("["):
            assert stripped.endswith("]"), f"line {number}: bad section header {line!r}"
            section = stripped[1:-1]
            continue
        assert "=" in stripped, f"line {number} is neither a comment nor an entry: {line!r}"
        key, _, value = stripped.partition("=")
        entries.append((section, key.strip(), value.strip()))
    return entries


def unquote_exec_start(value: str) -> list[str]:
    """ExecStart's words: systemd's quoting (double quotes, \\\\ and \\" inside them — what the
    POSIX shell also does), then %% → % and $$ → $; a lone % or $ would be expanded."""
    words = shlex.split(value, comments=False, posix=True)
    out = []
    for word in words:
        assert re.fullmatch(r"(?:[^%$]|%%|\$\$)*", word, re.DOTALL), f"expanded: {word!r}"
        out.append(word.replace("%%", "%").replace("$$", "$"))
    return out


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a SafeLoader


def objects(text: str) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of every document; every document must be an object."""
    out = []
    for doc in yaml.load_all(text, Loader=_LOADER):
        if doc is None:
            continue
        assert isinstance(doc, dict), doc
        meta = doc["metadata"]
        out.append((doc["kind"], meta.get("namespace", ""), meta["name"]))
    return sorted(out)


@functools.lru_cache(maxsize=512)
def _reference_objects(identity: tuple[Any, ...], form: str) -> list[tuple[str, str, str]]:
    name, namespace, program, leader_elect, lease_ns, lease_name, replaces, port = identity[:8]
    plugin_rbac = identity[8]
    ref = default_spec(
        name,
        namespace=namespace,
        program=program,
        leader_elect=leader_elect,
        replaces_default=replaces or None,
        image=REFERENCE_CUSTOM_IMAGE if program == "custom" else None,
    )
    if plugin_rbac:  # program custom: a plugin that needs RBAC of its own (ElasticQuotas)
        ref.profiles = [
            {
                "schedulerName": name,
                "plugins": {"multiPoint": {"enabled": [{"name": "CapacityScheduling"}]}},
            }
        ]
    ref.leader_election.resource_namespace = lease_ns
    ref.leader_election.resource_name = lease_name
    if replaces:
        ref.service.secure_port = port
    return objects(render(ref, form))


def check_rendered(spec: Spec) -> int:
    """Every form of an accepted ``spec`` parses into exactly the expected objects; the unit
    has one [Service] and one ExecStart whose argv is the intended one. Returns forms checked."""
    le = spec.leader_election
    identity = (
        spec.name,
        spec.namespace,
        spec.program,
        le.leader_elect,
        le.resource_namespace,
        le.resource_name,
        spec.replaces_default,
        spec.service.secure_port,
        bool(spec.plugin_rules()),
    )
    checked = 0
    for form in YAML_FORMS:
        if form == "host-rbac" and not host_rbac(spec):
            continue
        text = render(spec, form)
        if form in ("config", "host-config"):
            doc = _load(text)
            assert isinstance(doc, dict)
            if spec.program in ("kube-scheduler", "custom"):
                kubeconfig = spec.service.kubeconfig if form == "host-config" else ""
                assert doc == spec.scheduler_config(kubeconfig)
        else:
            assert objects(text) == _reference_objects(identity, form), form
            _check_values(spec, form, text)
        checked += 1
    checked += _check_exports(spec)
    unit = render(spec, "service")
    entries = parse_unit(unit)
    sections = [line.strip() for line in unit.split("\n") if line.strip() == "[Service]"]
    assert len(sections) == 1
    exec_starts = [v for s, k, v in entries if k == "ExecStart"]
    assert len(exec_starts) == 1
    assert [s for s, k, _ in entries if k == "ExecStart"] == ["Service"]
    assert {s for s, _, _ in entries} == {"Unit", "Service", "Install"}
    argv = unquote_exec_start(exec_starts[0])
    host_command = form_context(spec)["host_command"]
    skip = 3 if spec.program == "builtin" else 1  # "kschedctl scheduler run" / "kube-scheduler"
    intended = [spec.service.binary, *host_command[1:]]
    assert argv == intended, (argv, intended)
    assert argv[skip - 1 :][1:] == host_command[skip:]
    return checked + 1


def _check_exports(spec: Spec) -> int:
    """The directory forms: every YAML file parses; the kustomize base holds exactly the
    deployment form's objects, the chart's values.yaml exactly the spec's values."""
    checked = 0
    for form in DIRECTORY_FORMS:
        if form == "helm-chart" and spec.program != "kube-scheduler":
            continue  # refused with a SpecError (test_export.py)
        files = render_directory(spec, form)
        docs: list[Any] = []
        for path, text in files.items():
            if path.endswith(".yaml") and not path.startswith("templates/"):
                docs.append((path, [d for d in yaml.load_all(text, Loader=_LOADER) if d]))
        if form == "helm-chart":
            (values,) = dict(docs)["values.yaml"]
            assert values == chart_values(spec)
        else:
            found = [
                d
                for path, ds in docs
                if path.count("/") == 1 and not path.endswith("/kustomization.yaml")
                for d in ds
            ]
            assert sorted(map(_key, found)) == sorted(objects(render(spec, "deployment"))), form
        checked += 1
    return checked


def _key(doc: dict[str, Any]) -> tuple[str, str, str]:
    meta = doc["metadata"]
    return (doc["kind"], meta.get("namespace", ""), meta["name"])


def _check_values(spec: Spec, form: str, text: str) -> None:
    docs = [d for d in yaml.load_all(text, Loader=_LOADER) if d]
    context = form_context(spec)
    for doc in docs:
        if doc["kind"] == "RoleBinding" and form == "host-rbac":
            assert doc["subjects"][0]["name"] == spec.service.user
        if doc["kind"] == "ConfigMap":
            (data,) = doc["data"].values()
            assert _load(data) == _load(context["config_text"])
        if doc["kind"] in ("Pod", "Deployment") and form != "example-pod":
            pod = doc["spec"]["template"]["spec"] if doc["kind"] == "Deployment" else doc["spec"]
            container = pod["containers"][0]
            assert container["image"] == spec.image
            key = "host_command" if form == "static-pod" else "command"
            assert container["command"] == context[key]
