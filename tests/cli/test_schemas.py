"""The JSON Schemas of scheduler.yaml and of a fallback policy: shipped, current, and right."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.render import schemas
from kschedctl.render.forms import WORKSPACE_SCHEMA, render_workspace
from kschedctl.spec import default_spec, spec_problems

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
GOLDEN_SPECS = sorted(GOLDEN.glob("*/scheduler.yaml"))


def _validator(name: str) -> jsonschema.Draft202012Validator:
    document = schemas.schema(name)
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(document)


@pytest.mark.parametrize("name", schemas.SCHEMAS)
def test_shipped_schema_is_the_generated_one(name: str) -> None:
    # Regenerate after a spec change: python -m kschedctl.render.schemas (or tools/regen.py)
    assert schemas.shipped_path(name).read_text(encoding="utf-8") == schemas.schema_text(name)
    assert json.loads(schemas.schema_text(name))["$schema"].endswith("/draft/2020-12/schema")


def test_the_workspace_copy_is_the_spec_schema() -> None:
    assert schemas.SCHEMA_FILES["spec"] == WORKSPACE_SCHEMA
    assert render_workspace(default_spec("s"))[WORKSPACE_SCHEMA] == schemas.schema_text("spec")


def test_every_spec_field_is_in_the_schema() -> None:
    properties = schemas.schema("spec")["properties"]["spec"]["properties"]
    assert set(default_spec("s").to_dict()["spec"]) <= set(properties)
    assert properties["pod"]["additionalProperties"] is False


@pytest.mark.parametrize("path", GOLDEN_SPECS, ids=lambda p: p.parent.name)
def test_golden_specs_validate(path: Path) -> None:
    assert GOLDEN_SPECS, "no golden specs found"
    _validator("spec").validate(yaml.safe_load(path.read_text()))


REFUSED_SPECS = {
    "unknown field": {"spec": {"replica": 2}},
    "version as a number": {"spec": {"kubernetesVersion": 1.3}},
    "unknown program": {"spec": {"program": "nope"}},
    "unknown rbac mode": {"spec": {"rbac": "everything"}},
    "replicas as text": {"spec": {"replicas": "two"}},
    "null image": {"spec": {"image": None}},
    "no name": {"metadata": {}},
    "wrong kind": {"kind": "Deployment"},
    "unknown pod field": {"spec": {"pod": {"cpu": "1"}}},
}


@pytest.mark.parametrize("change", REFUSED_SPECS.values(), ids=list(REFUSED_SPECS))
def test_refused_specs_fail_the_schema_and_the_loader(change: dict) -> None:
    doc = default_spec("s").to_dict()
    for key, value in change.items():
        doc[key] = {**doc[key], **value} if isinstance(value, dict) and key != "metadata" else value
    assert list(_validator("spec").iter_errors(doc)), change
    _, problems = spec_problems(yaml.safe_dump(doc))
    assert problems, change


POLICY = {
    "apiVersion": "kschedctl.io/v1alpha1",
    "kind": "FallbackPolicy",
    "strictPreferences": True,
    "fallbacks": [
        {
            "name": "spare",
            "nodePool": {"pool": "spare"},
            "tolerate": [{"key": "pool", "operator": "Exists"}],
        },
        {"name": "bunch-up", "relax": ["topologySpread"]},
    ],
}


def test_a_valid_policy_validates_and_loads() -> None:
    _validator("policy").validate(POLICY)
    assert len(parse_policy(POLICY, "policy.yaml").steps) == 2


@pytest.mark.parametrize(
    "change",
    [
        {"fallbacks": [{"name": "x", "resources": {}}]},
        {"fallbacks": [{"name": "x", "relax": ["resources"]}]},
        {"fallbacks": [{"nodePool": {"a": "b"}}]},
        {"strictPreferences": "yes"},
        {"kind": "Policy"},
        {"extra": 1},
    ],
    ids=[
        "never-relaxed field",
        "unknown relaxation",
        "no step name",
        "bool as text",
        "kind",
        "unknown field",
    ],
)
def test_refused_policies_fail_the_schema_and_the_loader(change: dict) -> None:
    doc = {**POLICY, **change}
    assert list(_validator("policy").iter_errors(doc))
    from kschedctl.base.errors import KschedError

    with pytest.raises(KschedError):
        parse_policy(doc, "policy.yaml")


def test_schema_command_prints_the_shipped_schema(run) -> None:
    for name in schemas.SCHEMAS:
        result = run("schema", name)
        assert result.exit_code == 0, result.stderr
        assert result.stdout == schemas.shipped_path(name).read_text()
    assert run("schema", "other").exit_code == 2
