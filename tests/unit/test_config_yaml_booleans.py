"""YAML 1.1 booleans as kube-scheduler's decoder reads them (issue 28).

kube-scheduler v1.36 reads its config with sigs.k8s.io/yaml v1.6.0 over go.yaml.in/yaml/v2
v2.4.3; resolve.go's resolveMapList makes exactly these plain scalars booleans. The lab's
kube-scheduler confirms the verdicts (tests/oracle/test_yaml_booleans_oracle.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.base.errors import errors_in
from kschedctl.model.config import plugin_args, validation_settings
from kschedctl.model.config.decode import decode_config_text
from kschedctl.model.config.schema import go_scalar, parse_yaml
from kschedctl.model.config.validation import check_config
from kschedctl.model.config.versions import parse_version

# Written out from resolve.go (v2.4.3), not derived from kschedctl's table.
TRUE = ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"]
FALSE = ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"]
# Other casings are strings (resolve.go looks the exact text up).
STRINGS = ["oN", "oFF", "yES", "tRUE", "fALSE", "nO", "ye", "onn", "O", "t", "f"]

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

# Every boolean field of a KubeSchedulerConfiguration (v1): the YAML that sets it to {v}, and
# where it lands in the decoded document.
EXTENDER = "extenders:\n- urlPrefix: http://127.0.0.1:1\n"
BOOL_FIELDS: dict[str, tuple[str, list[Any]]] = {
    "leaderElect": (
        "leaderElection:\n  leaderElect: {v}\n",
        ["leaderElection", "leaderElect"],
    ),
    "enableProfiling": ("enableProfiling: {v}\n", ["enableProfiling"]),
    "enableContentionProfiling": (
        "enableContentionProfiling: {v}\n",
        ["enableContentionProfiling"],
    ),
    "delayCacheUntilActive": ("delayCacheUntilActive: {v}\n", ["delayCacheUntilActive"]),
    "enableHTTPS": (EXTENDER + "  enableHTTPS: {v}\n", ["extenders", 0, "enableHTTPS"]),
    "nodeCacheCapable": (
        EXTENDER + "  nodeCacheCapable: {v}\n",
        ["extenders", 0, "nodeCacheCapable"],
    ),
    "ignorable": (EXTENDER + "  ignorable: {v}\n", ["extenders", 0, "ignorable"]),
    "insecure": (
        EXTENDER + "  tlsConfig:\n    insecure: {v}\n",
        ["extenders", 0, "tlsConfig", "insecure"],
    ),
    "ignoredByScheduler": (
        EXTENDER + "  managedResources:\n  - name: example.com/gpu\n    ignoredByScheduler: {v}\n",
        ["extenders", 0, "managedResources", 0, "ignoredByScheduler"],
    ),
    "ignorePreferredTermsOfExistingPods": (
        "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: InterPodAffinity\n"
        "    args:\n      ignorePreferredTermsOfExistingPods: {v}\n",
        ["profiles", 0, "pluginConfig", 0, "args", "ignorePreferredTermsOfExistingPods"],
    ),
}


def _bool_fields_in_schemas() -> set[str]:
    tables: list[dict[str, Any]] = [
        validation_settings.LEADER_ELECTION,
        validation_settings.CLIENT_CONNECTION,
        validation_settings.EXTENDER,
        validation_settings.TLS_CONFIG,
        validation_settings.MANAGED_RESOURCE,
    ]
    tables += [dict(a.fields) for a in plugin_args.PLUGIN_ARGS.values() if a.fields]
    names = {k for t in tables for k, kind in t.items() if kind is bool}
    return names | {"enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"}


def test_every_boolean_field_is_covered() -> None:
    assert set(BOOL_FIELDS) == _bool_fields_in_schemas()


def _decoded(text: str) -> Any:
    return decode_config_text(text).doc


def _at(doc: Any, path: list[Any]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


@pytest.mark.parametrize("text", TRUE + FALSE)
def test_every_go_yaml_boolean_spelling(text: str) -> None:
    assert go_scalar(text) is (text in TRUE)


@pytest.mark.parametrize("text", STRINGS)
def test_other_casings_are_strings(text: str) -> None:
    assert go_scalar(text) == text


@pytest.mark.parametrize("spelling", TRUE + FALSE)
@pytest.mark.parametrize("field", sorted(BOOL_FIELDS))
def test_each_boolean_field_reads_each_spelling(field: str, spelling: str) -> None:
    template, path = BOOL_FIELDS[field]
    text = HEAD + template.format(v=spelling)
    assert _at(_decoded(text), path) is (spelling in TRUE)
    problems = check_config(_decoded(text), parse_version("1.36"), replaces_default=True)
    assert not [p for p in problems if p.path.endswith(field)], problems


@pytest.mark.parametrize("spelling", ["ON", "On", "on", "YES", "y"])
def test_leader_election_on_is_judged_as_on(spelling: str) -> None:
    # kube-scheduler: leaderElection.leaseDuration: Invalid value: "10s": must be greater
    # than `RenewDeadline` (validated only when leader election is on).
    text = HEAD + f"leaderElection:\n  leaderElect: {spelling}\n  leaseDuration: 1s\n"
    doc = _decoded(text)
    errors = errors_in(check_config(doc, parse_version("1.36"), replaces_default=True))
    assert [e.path for e in errors] == ["leaderElection.leaseDuration"], errors


@pytest.mark.parametrize("spelling", ["ON", "OFF"])
def test_extender_insecure_on_with_a_ca_is_refused(spelling: str) -> None:
    # kube-scheduler: couldn't build extenders: specifying a root certificates file with the
    # insecure flag is not allowed
    text = HEAD + EXTENDER + f"  tlsConfig:\n    insecure: {spelling}\n    caData: Zm9v\n"
    errors = errors_in(check_config(_decoded(text), parse_version("1.36"), replaces_default=True))
    refused = [e for e in errors if e.path.endswith("tlsConfig.insecure")]
    assert bool(refused) is (spelling == "ON"), errors


@pytest.mark.parametrize("spelling", TRUE + FALSE)
def test_a_boolean_key_becomes_its_json_text(spelling: str) -> None:
    # sigs.k8s.io/yaml convertToJSONableObject: a bool key is "true"/"false"
    [doc] = parse_yaml(f"{spelling}: 1\n", go_yaml=True)
    assert doc == {"true" if spelling in TRUE else "false": 1}


def test_a_boolean_key_is_an_unknown_field() -> None:
    # kube-scheduler: strict decoding error: unknown field "true"
    problems = check_config(_decoded(HEAD + "ON: 1\n"), parse_version("1.36"))
    assert any(p.path == "true" and "unknown field" in p.message for p in errors_in(problems))


@pytest.mark.parametrize("quoted", ['"on"', "'ON'", '"yes"', '"off"'])
def test_a_quoted_spelling_in_a_boolean_field_is_a_string(quoted: str) -> None:
    # kube-scheduler: json: cannot unmarshal string into Go struct field
    # LeaderElectionConfiguration.leaderElection.leaderElect of type bool
    text = HEAD + f"leaderElection:\n  leaderElect: {quoted}\n"
    [error] = errors_in(check_config(_decoded(text), parse_version("1.36"), replaces_default=True))
    assert error.path == "leaderElection.leaderElect"
    assert "cannot unmarshal string into Go struct field of type bool" in error.message
    assert "unquoted" in error.message


def test_a_number_in_a_boolean_field() -> None:
    text = HEAD + "enableProfiling: 1\n"
    [error] = errors_in(check_config(_decoded(text), parse_version("1.36"), replaces_default=True))
    assert "cannot unmarshal number into Go struct field of type bool" in error.message
