"""Loading a spec: strict like kube-scheduler's own decoder (unknown fields, wrong types and
malformed YAML are problems naming the field), then defaults, the checks and the plugin files.
"""

from __future__ import annotations

import dataclasses
import os
import typing
from pathlib import Path
from typing import Any

from kschedctl.base import userfile
from kschedctl.base.errors import (
    MISSING_FILE_HINT,
    NotFoundError,
    Problem,
    SpecError,
    errors_in,
    missing_file,
    printable,
    quote,
)
from kschedctl.model.config import shapes
from kschedctl.model.config.schema import (
    YamlError,
    check_fields,
    join,
    parse_yaml,
    unknown_field_message,
)
from kschedctl.spec.checks import CheckedSpec, check_spec, ensure_valid, proven
from kschedctl.spec.defaults import apply_defaults, default_spec
from kschedctl.spec.model import (
    API_VERSION,
    KIND,
    SPEC_FILE,
    Spec,
    expected_type,
    part_type,
    plugin_file,
    yaml_fields,
)


def _load_section(cls: type, data: Any, path: str, out: list[Problem]) -> Any:
    """Build dataclass ``cls`` from a mapping, reporting unknown fields and wrong types."""
    obj = cls() if cls is not Spec else None
    if data is None:
        return obj if cls is not Spec else {}
    if not isinstance(data, dict):
        out.append(Problem(path, f"must be a mapping, not {type(data).__name__}"))
        return obj if cls is not Spec else {}
    fields = yaml_fields(cls)
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, value in data.items():
        fpath = join(path, str(key))
        if key not in fields:
            out.append(Problem(fpath, unknown_field_message(key, list(fields))))
            continue
        f = fields[key]
        hint = hints[f.name]
        part = part_type(hint)
        if part is not None and (value is not None or part is hint):
            values[f.name] = _load_section(part, value, fpath, out)
            continue
        expected = expected_type(hint)
        if key == "kubernetesVersion" and isinstance(value, (int, float)):
            out.append(
                Problem(fpath, f'must be a string: quote it ("{value}"); YAML reads 1.30 as 1.3')
            )
            continue
        if value is None and type(None) in typing.get_args(hint):
            values[f.name] = None
            continue
        problems: list[Problem] = []
        check_fields({key: value}, {key: expected}, path, problems)
        if value is None or problems:
            out.extend(problems or [Problem(fpath, "must not be null")])
            continue
        values[f.name] = value
    if cls is Spec:
        return values
    return dataclasses.replace(obj, **values)  # type: ignore[type-var]


def spec_from_dict(
    doc: Any, source: str = "", base: str | Path | None = None
) -> tuple[Spec | None, list[Problem]]:
    """Strictly build a Spec from a parsed ``scheduler.yaml``; problems instead of exceptions.

    ``base``: the workspace directory (where scheduler.yaml is), which ``builtin.plugins``
    paths are relative to; their files are read here (None: a spec that lists plugins is
    refused, it has no workspace to read them from)."""
    out: list[Problem] = []
    if not isinstance(doc, dict):
        return None, [Problem("", "a scheduler spec must be a mapping", source)]
    # First what no field may hold (control characters, non-JSON types, huge numbers): no
    # later check, message or renderer ever sees such a value.
    hostile = shapes.hostile_problems(doc)
    if hostile:
        return None, [p.moved(source=source) for p in hostile]
    check_fields(doc, {"apiVersion": str, "kind": str, "metadata": dict, "spec": dict}, "", out)
    if doc.get("apiVersion") != API_VERSION:
        out.append(
            Problem(
                "apiVersion", f"must be {API_VERSION}, not {shapes.shown(doc.get('apiVersion'))}"
            )
        )
    if doc.get("kind") != KIND:
        out.append(Problem("kind", f"must be {KIND}, not {shapes.shown(doc.get('kind'))}"))
    raw_metadata = doc.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    check_fields(metadata, {"name": str}, "metadata", out)
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        out.append(Problem("metadata.name", "is required: the scheduler name"))
        name = ""
    values = _load_section(Spec, doc.get("spec"), "spec", out)  # absent: all defaults
    spec = Spec(name=name, **values)
    apply_defaults(
        spec,
        explicit_profiles="profiles" in values,
        explicit_version="kubernetes_version" in values,
    )
    out.extend(check_spec(spec))
    out.extend(read_plugins(spec, base))
    return spec, [p.moved(source=source) for p in out]


def read_plugins(spec: Spec, base: str | Path | None) -> list[Problem]:
    """Read ``spec.builtin.plugins`` from the workspace ``base`` into ``plugin_sources``;
    a problem for each file that is missing, not a regular UTF-8 file of at most 1 MiB, or
    that resolves outside the workspace (a symlink must not carry a file from elsewhere on
    this machine into the cluster)."""
    b, path = spec.builtin, "spec.builtin.plugins"
    b.plugin_sources = {}
    if spec.program != "builtin" or not b.plugins or not isinstance(b.plugins, list):
        return []  # a wrong type is check_spec's to report
    if base is None:
        return [
            Problem(
                path,
                "plugin files are read relative to the workspace: give the workspace "
                "directory or its scheduler.yaml",
            )
        ]
    root = Path(os.path.realpath(base))
    out: list[Problem] = []
    for i, rel in enumerate(b.plugins):
        where = f"{path}[{i}]"
        if not isinstance(rel, str) or shapes.plugin_path_problem(rel):
            continue  # reported by check_spec
        file = Path(base) / rel
        if not Path(os.path.realpath(file)).is_relative_to(root):
            out.append(
                Problem(where, f"{rel} resolves outside the workspace {printable(str(root))}")
            )
            continue
        try:
            b.plugin_sources[rel] = userfile.read_user_file(file)
        except NotFoundError:
            out.append(Problem(where, f"{rel}: no such file in {printable(str(base))}"))
        except SpecError as err:
            out.append(Problem(where, f"{rel}: {err.detail}"))
    return out


PLUGINS_DIR = "plugins"


def add_plugin_files(spec: Spec, files: list[str]) -> Spec:
    """``spec`` with plugin ``files`` (paths on this machine) as ``plugins/<file name>`` of
    its workspace, read now (``create --plugin``); SpecError naming each unreadable file."""
    problems: list[Problem] = []
    for given in files:
        rel = f"{PLUGINS_DIR}/{plugin_file(given)}"
        try:
            spec.builtin.plugin_sources[rel] = userfile.read_user_file(given)
        except SpecError as err:
            problems.append(Problem("", err.detail, given))
            continue
        spec.builtin.plugins.append(rel)
    if problems:
        raise SpecError.from_problems(problems)
    return spec


def spec_problems(
    text: str, source: str = "", base: str | Path | None = None
) -> tuple[Spec | None, list[Problem]]:
    try:
        docs = parse_yaml(text)
    except YamlError as err:
        return None, [Problem("", str(err), source)]
    if len(docs) != 1:
        return None, [Problem("", f"expected one YAML document, found {len(docs)}", source)]
    return spec_from_dict(docs[0], source, base)


def read_text(path: str | Path) -> str:
    """A user's file: regular, at most 1 MiB, UTF-8 (see config.userfile)."""
    return userfile.read_user_file(path)


def load_spec(path: str | Path) -> CheckedSpec:
    """Load and check a ``scheduler.yaml``; SpecError lists every problem."""
    path = Path(path)
    spec, problems = spec_problems(read_text(path), str(path), path.parent)
    problems = errors_in(problems)
    if problems or spec is None:
        raise SpecError.from_problems(problems)
    return proven(spec)  # spec_from_dict checked it


def spec_from_source(src: str) -> CheckedSpec:
    """A workspace directory, a spec file, or a bare scheduler name (all defaults)."""
    path = Path(src)
    kind = userfile.path_kind(path)
    if kind == "directory":
        if userfile.path_kind(path / SPEC_FILE) is None:
            raise NotFoundError(
                f"{printable(str(path))}: no {SPEC_FILE} in this directory",
                hint=f"create a workspace with: kschedctl create {quote(path.name)}",
            )
        return load_spec(path / SPEC_FILE)
    if kind is not None:  # a file, or something the reader refuses with its kind
        return load_spec(path)
    if "/" in src or src.endswith((".yaml", ".yml")) or src.startswith("."):
        raise missing_file(
            f"{printable(src)}: no such file or directory",
            hint=f"{MISSING_FILE_HINT}; a scheduler name alone (no / or .yaml) means the defaults",
        )
    return ensure_valid(default_spec(src), source=src)
