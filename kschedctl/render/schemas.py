"""JSON Schemas (draft 2020-12) of kschedctl's own files: ``scheduler.yaml``, a FallbackPolicy
and a cluster snapshot.

Generated from the shapes the loaders check, so they cannot drift: the spec's from the
:class:`kschedctl.spec.Spec` dataclasses (their fields and types, as
:func:`kschedctl.spec.spec_from_dict` reads them), the policy's from the field tables of
:mod:`kschedctl.model.scheduling.policy`, the snapshot's from the dataclasses of
:mod:`kschedctl.clustersnapshot.model`. The schemas state shapes (names, types, enums); the
loaders check more (values, combinations), so a file the schema accepts may still be refused
with a message, never the other way round.

The wheel ships the generated files (``kschedctl/_generated/schemas/*.schema.json``, package
data, for editors and CI jobs without kschedctl); a test keeps them equal to :func:`schema`.
Offline and pure: no template, no kubernetes client.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

from kschedctl.base import limits
from kschedctl.clustersnapshot import model as snapshot_model
from kschedctl.model.config import apinames
from kschedctl.model.config.rbac import RBAC_MODES
from kschedctl.model.scheduling import policy
from kschedctl.model.scheduling.strategies import STRATEGIES
from kschedctl.spec import API_VERSION, KIND, PROGRAMS, SPEC_FILE, Spec
from kschedctl.spec.fielddocs import FIELD_DOCS
from kschedctl.spec.model import camel, part_type

__all__ = ["SCHEMAS", "SCHEMA_FILES", "schema", "schema_text", "shipped_path"]

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMAS = ("spec", "policy", "snapshot")
SCHEMA_FILES = {
    "spec": "scheduler.schema.json",
    "policy": "policy.schema.json",
    "snapshot": "snapshot.schema.json",
}
SHIPPED_DIR = Path(__file__).resolve().parents[1] / "_generated" / "schemas"
REGENERATE = "python -m kschedctl.render.schemas"

# Values the loaders accept for these fields (spec.check_spec says so with a message).
_ENUMS: dict[str, list[str]] = {
    "program": list(PROGRAMS),
    "rbac": list(RBAC_MODES),
    "strategy": list(STRATEGIES),
}
_JSON_TYPES = {bool: "boolean", int: "integer", str: "string", dict: "object", list: "array"}


def shipped_path(name: str) -> Path:
    """The file the wheel ships for schema ``name``."""
    return SHIPPED_DIR / SCHEMA_FILES[name]


def schema(name: str) -> dict[str, Any]:
    """Schema ``name`` (one of :data:`SCHEMAS`) as a JSON document."""
    if name == "spec":
        return _spec_schema()
    if name == "policy":
        return _policy_schema()
    if name == "snapshot":
        return _snapshot_schema()
    raise ValueError(f"unknown schema {name!r}; expected one of {', '.join(SCHEMAS)}")


def schema_text(name: str) -> str:
    """Schema ``name`` as the text shipped and printed (stable: sorted keys, 2 spaces)."""
    return json.dumps(schema(name), indent=2, sort_keys=True) + "\n"


def _field_schema(name: str, hint: Any) -> dict[str, Any]:
    nullable = type(None) in typing.get_args(hint)
    part = part_type(hint)
    if part is not None:
        section = _object_schema(part)
        if nullable:  # an optional section (spec.routing): null or absent means none
            section["type"] = ["object", "null"]
        return section
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    base = (args[0] if args else hint) if nullable else hint
    origin = typing.get_origin(base) or base
    json_type = _JSON_TYPES[origin]
    out: dict[str, Any] = {"type": [json_type, "null"] if nullable else json_type}
    if name in _ENUMS:
        out["enum"] = list(_ENUMS[name])
    return out


# Items of list fields whose entries have one shape (per class: custom.plugins differ).
_ITEMS: dict[tuple[str, str], dict[str, Any]] = {
    ("BuiltinSettings", "plugins"): {
        "type": "string",
        "pattern": r"^([A-Za-z0-9_][A-Za-z0-9._-]*/)*[A-Za-z_][A-Za-z0-9_]*\.py$",
        "description": "A Python plugin file, relative to the directory of scheduler.yaml.",
    },
}


def _object_schema(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties = {
        camel(f.name): _field_schema(f.name, hints[f.name])
        for f in dataclasses.fields(cls)
        if f.metadata.get("yaml", True)
    }
    for (owner, name), items in _ITEMS.items():
        if owner == cls.__name__:
            properties[name]["items"] = items
    out: dict[str, Any] = {"type": "object", "properties": properties}
    out["additionalProperties"] = False  # the loader refuses unknown fields
    if cls.__doc__:
        out["description"] = " ".join(cls.__doc__.split())
    return out


def _spec_schema() -> dict[str, Any]:
    spec = _object_schema(Spec)
    out = {
        "$schema": DRAFT,
        "$id": SCHEMA_FILES["spec"],
        "title": f"kschedctl scheduler spec ({SPEC_FILE})",
        "type": "object",
        "required": ["apiVersion", "kind", "metadata"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": API_VERSION},
            "kind": {"const": KIND},
            "metadata": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                },
            },
            "spec": spec,
        },
    }
    _describe(out, "")
    return out


def _describe(node: dict[str, Any], path: str) -> None:
    """Each field's ``description`` from :data:`FIELD_DOCS` (what it means, for people)."""
    for key, child in node.get("properties", {}).items():
        here = f"{path}.{key}" if path else key
        child["description"] = FIELD_DOCS[here]
        _describe(child, here)


def _table_schema(table: dict[str, Any]) -> dict[str, Any]:
    # null is the zero value there, as in Go (kschedctl.model.config.schema.type_ok)
    return {key: {"type": [_JSON_TYPES[kind], "null"]} for key, kind in table.items()}


def _policy_schema() -> dict[str, Any]:
    step: dict[str, Any] = {
        "type": "object",
        "required": ["name"],
        "additionalProperties": False,
        "properties": _table_schema(policy.STEP_FIELDS),
    }
    step["properties"]["name"] = {"type": "string", "minLength": 1}
    step["properties"]["relax"]["items"] = {"enum": list(policy.RELAXABLE)}
    properties = _table_schema(policy.POLICY_FIELDS)
    properties["apiVersion"] = {"const": policy.API_VERSION}
    properties["kind"] = {"const": policy.KIND}
    properties["fallbacks"]["items"] = step
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_FILES["policy"],
        "title": "kschedctl fallback policy (kschedctl scheduler run --policy FILE, "
        "spec.builtin.policy)",
        "type": "object",
        "required": ["apiVersion", "kind"],
        "additionalProperties": False,
        "properties": properties,
    }


def _snapshot_type(hint: Any) -> dict[str, Any]:
    """A snapshot field's schema from its annotation (the types the loader checks). null is
    allowed everywhere: the loader reads it as the field's empty value."""
    options, _ = snapshot_model.union_members(hint)
    if len(options) > 1:  # an IntOrString
        return {"type": [*(_JSON_TYPES[o] for o in options), "null"]}
    (base,) = options
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        return _snapshot_object(base)
    origin = typing.get_origin(base) or base
    out: dict[str, Any] = {"type": [_JSON_TYPES[origin], "null"]}
    args = typing.get_args(base)
    if origin is list:
        out["items"] = _snapshot_type(args[0])
    elif origin is dict and args[1] is not Any:
        out["additionalProperties"] = _snapshot_type(args[1])
    return out


def _snapshot_object(cls: type) -> dict[str, Any]:
    fields = snapshot_model.yaml_fields(cls)
    out: dict[str, Any] = {
        "type": ["object", "null"],
        "properties": {key: _snapshot_type(tp) for _, key, tp in fields},
        "additionalProperties": False,  # the loader refuses unknown fields
    }
    required = [key for f, key, _ in fields if f.metadata.get("required")]
    if required:
        out["required"] = required
        for key in required:
            out["properties"][key]["minLength"] = 1
    for f, key, _ in fields:
        if f.metadata.get("name"):  # the API server's rule for the name (validate checks it)
            out["properties"][key].update(apinames.name_schema(f.metadata["name"]))
    if cls.__doc__:
        out["description"] = " ".join(cls.__doc__.split())
    return out


def _snapshot_schema() -> dict[str, Any]:
    spec = _snapshot_object(snapshot_model.ClusterSnapshot)
    metadata = spec["properties"].pop("metadata")
    # the limits the loader checks before decoding (kschedctl.base.limits)
    spec["properties"]["nodes"]["maxItems"] = limits.MAX_NODES
    for key in ("pods", "pendingPods"):
        spec["properties"][key]["maxItems"] = limits.MAX_PODS
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_FILES["snapshot"],
        "title": "kschedctl cluster snapshot (kschedctl snapshot -f FILE)",
        "type": "object",
        "required": ["apiVersion", "kind"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": snapshot_model.API_VERSION},
            "kind": {"const": snapshot_model.KIND},
            "metadata": metadata,
            "spec": spec,
        },
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m kschedctl.render.schemas [--check]``: write the shipped schemas (or, with
    ``--check``, exit 1 when one differs from :func:`schema_text`)."""
    import sys  # on use: only the generator's entry point needs it

    from kschedctl.base.generated import write_or_check

    check = "--check" in (sys.argv[1:] if argv is None else argv)
    outputs = [(shipped_path(n), lambda n=n: schema_text(n)) for n in SCHEMAS]
    return write_or_check(outputs, check=check, what="schemas", regenerate=REGENERATE)


if __name__ == "__main__":
    raise SystemExit(main())
