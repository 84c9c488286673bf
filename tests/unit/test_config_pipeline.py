"""kube-scheduler's own pipeline: decode → default → validate, checked on text and dict fixtures.

Each verdict here was checked against kube-scheduler v1.36.3 (``--config FILE --master
https://127.0.0.1:1``: a refused config exits at once with its error, an accepted one keeps
running); the comments quote kube-scheduler's message where it refuses.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kschedctl.base.errors import WARNING, Problem, errors_in
from kschedctl.model.config.decode import decode_config_text, holds_config, is_json, json_numbers
from kschedctl.model.config.defaults import default_args, default_config
from kschedctl.model.config.schema import YamlError, go_scalar, parse_yaml
from kschedctl.model.config.validation import check_config
from kschedctl.model.config.versions import parse_version

HEAD = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
"""
BASE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": False},
    "profiles": [{"schedulerName": "a"}],
}


def _judge(text: str, version: str = "1.36", **kwargs: Any) -> list[Problem]:
    """What validate finds in a config file's text (decode, then check)."""
    decoded = decode_config_text(text)
    return decoded.problems + check_config(decoded.doc, parse_version(version), **kwargs)


def _errors(text: str, version: str = "1.36", **kwargs: Any) -> list[str]:
    return [str(p) for p in errors_in(_judge(text, version, **kwargs))]


def _args(plugin: str, args: dict[str, Any], **profile: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc["profiles"][0].update(pluginConfig=[{"name": plugin, "args": args}], **profile)
    return doc


def _messages(doc: dict[str, Any], version: str = "1.36") -> list[str]:
    return [str(p) for p in check_config(doc, parse_version(version))]


# --- decode -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("y", True),  # go-yaml v2 only: PyYAML reads a string
        ("N", False),
        ("on", True),
        ("off", False),
        ("1e3", 1000.0),  # PyYAML: a string
        ("0o17", 15),  # PyYAML: a string
        ("017", 15),
        ("0x1F", 31),
        ("1_000", 1000),
        ("08", 8.0),  # not octal: ParseInt fails, ParseFloat does not
        ("1:30", "1:30"),  # no base 60 in go-yaml (PyYAML: 90)
        (".5", 0.5),
        ("~", None),
        ("2001-12-14", "2001-12-14"),
        ("+5", 5),
        ("-0b101", -5),
    ],
)
def test_go_yaml_scalars(text: str, value: Any) -> None:
    assert go_scalar(text) == value
    assert type(go_scalar(text)) is type(value)


def test_go_yaml_keys_become_json_strings() -> None:
    assert parse_yaml("n: 1\n1: 2\non: 3\n", go_yaml=True) == [{"false": 1, "1": 2, "true": 3}]


def test_only_the_first_document_is_read() -> None:
    decoded = decode_config_text(HEAD + "---\nkind: Other\n---\nfoo: [unclosed\n")
    assert decoded.doc["kind"] == "KubeSchedulerConfiguration"
    [warning] = decoded.problems
    assert warning.severity == WARNING
    assert "reads only the first YAML document" in warning.message


def test_empty_trailing_documents_are_not_worth_a_warning() -> None:
    assert decode_config_text(HEAD + "---\n---\n").problems == []


def test_a_file_starting_with_a_brace_is_json() -> None:
    assert is_json(' \n{"a": 1}')
    assert not is_json("# c\n{a: 1}")
    # kube-scheduler: couldn't get version/kind; json parse error: invalid character '}'
    # looking for beginning of object key string
    with pytest.raises(YamlError, match="malformed JSON"):
        decode_config_text('{"kind": "KubeSchedulerConfiguration",}')
    with pytest.raises(YamlError, match="malformed JSON"):  # a second value
        decode_config_text('{"a": 1}\n---\nfoo: 1\n')
    with pytest.raises(YamlError, match="duplicate field"):
        decode_config_text('{"a": 1, "a": 2}')


def test_integral_floats_become_integers_in_yaml_only() -> None:
    assert json_numbers({"a": [16.0, 16.5, 1e21]}) == {"a": [16, 16.5, 1e21]}
    yaml_text = HEAD + "parallelism: 16.0\nprofiles: [{schedulerName: a}]\n"
    assert _errors(yaml_text) == []
    # kube-scheduler: json: cannot unmarshal number 16.0 into Go struct field
    # KubeSchedulerConfiguration.parallelism of type int32
    json_text = (
        '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
        ' "leaderElection": {"leaderElect": false}, "parallelism": 16.0,'
        ' "profiles": [{"schedulerName": "a"}]}'
    )
    assert _errors(json_text) == ["parallelism: must be an integer (int32), not 16.0"]


@pytest.mark.parametrize(
    ("line", "accepted"),
    [
        ("parallelism: 1e3", True),
        ("parallelism: 0o17", True),
        ("parallelism: 16.5", False),  # cannot unmarshal number 16.5 … of type int32
        ("parallelism: 1:30", False),  # cannot unmarshal string … of type int32
        ("parallelism: 99999999999", False),  # cannot unmarshal number 99999999999 …
        ("enableProfiling: y", True),
        ("enableProfiling: yes", True),
    ],
)
def test_decoding_verdicts(line: str, accepted: bool) -> None:
    errors = _errors(HEAD + line + "\nprofiles: [{schedulerName: a}]\n")
    assert (errors == []) is accepted, errors


def test_int32_overflow_names_the_type() -> None:
    [message] = _errors(HEAD + "parallelism: 99999999999\nprofiles: [{schedulerName: a}]\n")
    assert message.startswith("parallelism: 99999999999 does not fit in an int32")


def test_a_go_yaml_boolean_where_a_string_belongs() -> None:
    # kube-scheduler: json: cannot unmarshal bool into Go struct field
    # KubeSchedulerProfile.profiles.schedulerName of type string
    assert _errors(HEAD + "profiles: [{schedulerName: y}]\n") == [
        "profiles[0].schedulerName: must be a string, not True"
    ]


# --- default ----------------------------------------------------------------------------------


KWOK = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  acceptContentTypes: ""
  burst: 0
  contentType: ""
  qps: 0
leaderElection:
  leaderElect: null
  leaseDuration: 0s
  renewDeadline: 0s
  resourceLock: ""
  resourceName: ""
  resourceNamespace: ""
  retryPeriod: 0s
"""


def test_kwok_generated_config_is_the_default_schedulers() -> None:
    # sigs.k8s.io/kwok test/kwokctl/scheduler-config.yaml: kube-scheduler runs it.
    assert _errors(KWOK, replaces_default=True) == []
    # As an additional scheduler it is the default's name and Lease (traps, not refusals).
    assert len(_errors(KWOK)) == 2


def test_defaults_fill_go_zero_values() -> None:
    out = default_config(yaml_doc(KWOK))
    assert out["leaderElection"] == {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
        "retryPeriod": "2s",
    }
    assert out["clientConnection"]["qps"] == 50.0
    assert out["clientConnection"]["burst"] == 100
    assert out["profiles"] == [{"schedulerName": "default-scheduler"}]
    assert out["parallelism"] == 16


def yaml_doc(text: str) -> dict[str, Any]:
    doc = decode_config_text(text).doc
    assert isinstance(doc, dict)
    return doc


def test_retry_period_zero_and_empty_lease_fields_default() -> None:
    doc = copy.deepcopy(BASE)
    doc["leaderElection"] = {"retryPeriod": "0s", "resourceName": "a", "resourceNamespace": ""}
    assert _messages(doc) == []


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        ({}, ["defaults to 'default-scheduler'"]),  # absent: defaulted (a trap)
        ({"schedulerName": None}, ["defaults to 'default-scheduler'"]),  # null = absent
        ({"schedulerName": ""}, ["profiles[0].schedulerName: is required"]),  # Required value
    ],
)
def test_only_an_absent_scheduler_name_defaults(
    profile: dict[str, Any], expected: list[str]
) -> None:
    doc = copy.deepcopy(BASE)
    doc["profiles"] = [profile]
    messages = _messages(doc)
    assert len(messages) == len(expected)
    assert all(e in m for e, m in zip(expected, messages, strict=True)), messages


def test_plugin_args_defaults() -> None:
    assert default_args("NodeResourcesFit", {}) == {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    }
    fit = {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}}
    assert default_args("NodeResourcesFit", fit)["scoringStrategy"]["resources"] == [
        {"name": "cpu", "weight": 1}
    ]
    assert default_args("DefaultPreemption", {}) == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 100,
    }
    assert default_args("PodTopologySpread", {"defaultingType": ""}) == {"defaultingType": "System"}


@pytest.mark.parametrize(
    ("plugin", "args"),
    [
        ("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 0}]}}),
        ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 0}]}),
        ("InterPodAffinity", {"hardPodAffinityWeight": None}),
        (
            "PodTopologySpread",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
        ),
    ],
)
def test_args_valid_once_defaulted(plugin: str, args: dict[str, Any]) -> None:
    if plugin == "NodeResourcesFit":
        args["scoringStrategy"]["type"] = "LeastAllocated"
    assert _messages(_args(plugin, args)) == []


# --- validate: the misses named in issue 11 -----------------------------------------------------


@pytest.mark.parametrize(
    ("plugin", "args", "expected"),
    [
        (
            # initializing plugin "NodeResourcesFit": ignoredResourceGroups[0]: Invalid value:
            # "example.com/foo": resource group name can't contain '/'
            "NodeResourcesFit",
            {"ignoredResourceGroups": ["example.com/foo"]},
            "args.ignoredResourceGroups[0]: 'example.com/foo': resource group name can't "
            "contain '/'",
        ),
        (
            "NodeResourcesFit",
            {"ignoredResources": ["bad/name/x"]},
            "args.ignoredResources[0]: 'bad/name/x': a qualified name must consist of",
        ),
        (
            # scoringStrategy.requestedToCapacityRatio: Required value: must be specified when
            # type is RequestedToCapacityRatio
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "requestedToCapacityRatio: Required value: must be specified when type is "
            "RequestedToCapacityRatio",
        ),
        (
            # …matchExpressions[0].operator: Unsupported value: "Equals": supported values: "In",
            # "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "Equals"}]}
                        ]
                    }
                }
            },
            "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: 'Equals': "
            'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        ),
        (
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "n", "operator": "Gt", "values": ["a"]}]}
                        ]
                    }
                }
            },
            "values[0]: for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            # …preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: Invalid
            # value: ["a","b"]: must have one element
            "NodeAffinity",
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}
                                ]
                            },
                        }
                    ]
                }
            },
            "preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: must have "
            "one element",
        ),
        (
            "VolumeBinding",
            {"shape": [{"utilization": 0, "score": 0}]},
            "turn on the feature gate StorageCapacityScoring",
        ),
        (
            "DefaultPreemption",
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "minCandidateNodesPercentage: cannot be zero at the same time as "
            "minCandidateNodesAbsolute",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None,
)
def test_plugin_args_rules(plugin: str, args: dict[str, Any], expected: str) -> None:
    messages = _messages(_args(plugin, args))
    assert any(expected in m for m in messages), messages


def test_args_of_a_plugin_never_built_are_a_warning() -> None:
    # kube-scheduler runs it: NodeResourcesFit's args are checked only when it is built.
    doc = _args(
        "NodeResourcesFit",
        {"ignoredResourceGroups": ["example.com/foo"]},
        plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
    )
    [problem] = check_config(doc, parse_version("1.36"))
    assert problem.severity == WARNING
    assert "never builds it" in problem.message
    # validation.go's plugins are checked all the same (kube-scheduler refuses).
    doc = _args(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
        plugins={"multiPoint": {"disabled": [{"name": "*"}]}},
    )
    problems = errors_in(check_config(doc, parse_version("1.36")))
    assert len([p for p in problems if ".args." in p.path]) == 2


def test_extender_tls_insecure_with_a_ca() -> None:
    # couldn't build extenders: specifying a root certificates file with the insecure flag is
    # not allowed (with or without enableHTTPS)
    doc = copy.deepcopy(BASE)
    doc["extenders"] = [
        {"urlPrefix": "http://x", "filterVerb": "f", "tlsConfig": {"insecure": True, "caFile": "c"}}
    ]
    assert _messages(doc) == [
        "extenders[0].tlsConfig.insecure: specifying a root certificates file (caFile/caData) "
        "with the insecure flag is not allowed: drop one of them"
    ]


def test_rules_of_older_versions() -> None:
    fit = _args("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}})
    assert _messages(fit, "1.35") == []  # required only since 1.36
    shape = _args("VolumeBinding", {"shape": [{"utilization": 0, "score": 0}]})
    assert "VolumeCapacityPriority" in _messages(shape, "1.32")[0]
    assert "StorageCapacityScoring" in _messages(shape, "1.33")[0]


# --- the default scheduler's own file --------------------------------------------------------


def test_an_explicit_default_scheduler_profile_is_one_finding() -> None:
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    text += "profiles:\n- schedulerName: default-scheduler\n"
    [message] = _errors(text)  # not one for the profile and one for the Lease
    assert "looks like the default scheduler's own configuration" in message
    assert "--replaces-default" in message
    assert _errors(text, replaces_default=True) == []


def test_the_own_file_finding_is_for_files_not_specs() -> None:
    doc = {
        "leaderElection": {"resourceName": "x"},
        "profiles": [{"schedulerName": "default-scheduler"}],
    }
    [problem] = check_config(doc, parse_version("1.36"), type_meta=False, prefix="spec.")
    assert "set replacesDefault only when" in problem.message


# --- severity ---------------------------------------------------------------------------------


def test_a_warning_prints_as_such() -> None:
    problem = Problem("a.b", "msg", "f.yaml", WARNING)
    assert str(problem) == "f.yaml: a.b: warning: msg"
    assert str(problem.moved("c", "g.yaml")) == "g.yaml: c: warning: msg"
    assert errors_in([problem]) == []


def test_specs_load_with_warnings(tmp_path: Path) -> None:
    from kschedctl.spec import load_spec, spec_from_dict

    text = """\
apiVersion: kschedctl.io/v1alpha1
kind: Scheduler
metadata: {name: my-scheduler}
spec:
  profiles:
  - schedulerName: my-scheduler
    plugins: {multiPoint: {disabled: [{name: ImageLocality}]}}
    pluginConfig:
    - name: ImageLocality
"""
    path = tmp_path / "scheduler.yaml"
    path.write_text(text)
    doc = parse_yaml(text)[0]
    spec, problems = spec_from_dict(doc, str(path))
    assert spec is not None
    assert [p.severity for p in problems] == [WARNING]
    assert load_spec(path).name == "my-scheduler"


def test_a_go_yaml_boolean_label_key_is_one_decoding_error() -> None:
    # kube-scheduler: decoding args for plugin NodeAffinity: json: cannot unmarshal bool into
    # Go struct field NodeSelectorRequirement…matchExpressions.key of type string
    text = (
        HEAD
        + """\
profiles:
- schedulerName: a
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: n, operator: Exists}]
"""
    )
    [message] = _errors(text)
    assert message.endswith("matchExpressions[0].key: must be a string, not False")


@pytest.mark.parametrize("section", ["leaderElection", "clientConnection"])
def test_a_null_section_is_defaulted_like_an_absent_one(section: str) -> None:
    # Go decodes `leaderElection:` (null) into the zero struct, then defaults it.
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"{section}:\nprofiles:\n- schedulerName: my-scheduler\n"
    )
    assert _errors(text, replaces_default=True) == []  # (kube-scheduler's own Lease, then)
    assert default_config({section: None})[section] == default_config({})[section]


@pytest.mark.parametrize(
    ("value", "meant"),
    [
        ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", True),
        ("profiles:\n- schedulerName: gpu\n", True),  # kube-scheduler: Object 'Kind' is missing
        ("log-level: 2\n", False),
    ],
)
def test_configmap_values_meant_as_a_config(value: str, meant: bool) -> None:
    assert holds_config(value) is meant


# --- classes found by probing against kube-scheduler v1.36.3 ----------------------------------


@pytest.mark.parametrize("version", ["1.2", "1.0", "2.0"])
def test_go_yaml_reads_yaml_1_1_only(version: str) -> None:
    # go-yaml v2: yaml: found incompatible YAML document (PyYAML reads 1.2)
    with pytest.raises(YamlError, match="found incompatible YAML document"):
        decode_config_text(f"%YAML {version}\n---\n" + HEAD)
    assert decode_config_text("%YAML 1.1\n---\n" + HEAD).doc["kind"] == (
        "KubeSchedulerConfiguration"
    )


def test_an_empty_first_document_is_the_one_read(tmp_path: Path) -> None:
    from kschedctl.ops.validate import check_path  # the file-level reading lives in ops

    for text in ("---\n---\n" + HEAD, "--- null\n---\n" + HEAD, "# c\n---\n---\n" + HEAD):
        path = tmp_path / "config.yaml"
        path.write_text(text, encoding="utf-8")
        [problem] = errors_in(check_path(str(path), replaces_default=True).problems)
        assert "the first YAML document is empty" in problem.message, text
    path.write_text("---\n" + HEAD, encoding="utf-8")  # a leading '---' starts the first one
    assert errors_in(check_path(str(path), replaces_default=True).problems) == []


@pytest.mark.parametrize(
    ("section", "key"),
    [("leaderElection", "leaseDuration"), ("leaderElection", "retryPeriod")],
)
def test_a_null_duration_is_refused_not_defaulted(section: str, key: str) -> None:
    doc = copy.deepcopy(BASE)
    doc[section] = {"leaderElect": False, key: None}
    [message] = _messages(doc)
    assert f"{section}.{key}" in message and 'time: invalid duration ""' in message
    doc[section] = {"leaderElect": False, key: "0s"}  # a zero one is defaulted
    assert _messages(doc) == []


def test_extender_duration_and_tls_data() -> None:
    doc = copy.deepcopy(BASE)
    ext: dict[str, Any] = {"urlPrefix": "http://x", "filterVerb": "f", "httpTimeout": None}
    doc["extenders"] = [ext]
    assert ['time: invalid duration ""' in m for m in _messages(doc)] == [True]
    del ext["httpTimeout"]
    ext["tlsConfig"] = {"caData": "not base64!"}
    assert ["illegal base64 data" in m for m in _messages(doc)] == [True]
    ext["tlsConfig"] = {"caData": "YWJj"}  # base64 of "abc": no PEM block
    assert ["unable to parse bytes as PEM block" in m for m in _messages(doc)] == [True]
    ext["tlsConfig"] = {"certData": "YWJj", "keyData": "YWJj"}
    assert ["failed to find any PEM data in certificate input" in m for m in _messages(doc)] == [
        True
    ]
    pem = "-----BEGIN CERTIFICATE-----\nYWJj\n-----END CERTIFICATE-----\n"
    import base64

    ext["tlsConfig"] = {"caData": base64.b64encode(pem.encode()).decode()}
    assert _messages(doc) == []  # the block's contents are not parsed here


def test_null_list_items_decode_into_zero_values() -> None:
    doc = copy.deepcopy(BASE)
    doc["profiles"] = [None, {"schedulerName": "b"}]
    assert ["profiles[0].schedulerName: is required" in m for m in _messages(doc)] == [True]
    doc = _args("NodeResourcesFit", {"ignoredResources": [None]})
    assert any(
        "ignoredResources[0]" in m and "name part must be non-empty" in m for m in _messages(doc)
    )
    affinity = {"key": "zone", "operator": "In", "values": [None]}
    terms = {"nodeSelectorTerms": [{"matchExpressions": [affinity]}]}
    doc = _args(
        "NodeAffinity", {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}}
    )
    assert _messages(doc) == []  # In [""]: "" is a valid label value


def test_gt_lt_values_are_int64() -> None:
    for value, ok in (("9223372036854775807", True), ("9223372036854775808", False)):
        req = {"key": "cores", "operator": "Gt", "values": [value]}
        terms = {"nodeSelectorTerms": [{"matchExpressions": [req]}]}
        doc = _args(
            "NodeAffinity",
            {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}},
        )
        assert (_messages(doc) == []) is ok, value


def test_queue_sort_sets_compare_as_go_structs() -> None:
    doc = copy.deepcopy(BASE)
    qs = {"enabled": [{"name": "PrioritySort", "weight": 0}]}
    doc["profiles"] = [
        {"schedulerName": "a", "plugins": {"queueSort": qs}},
        {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}},
    ]
    assert _messages(doc) == []
    qs["enabled"][0]["weight"] = 1
    assert any("must be the same for all profiles" in m for m in _messages(doc))


def test_a_key_a_merge_sets_too_is_refused_like_go_yaml_strict() -> None:
    # go-yaml v2 strict (decode.go setMapIndex): key "parallelism" already set in map
    for text in (
        "<<: {parallelism: 4}\nparallelism: 5\n",
        "parallelism: 5\n<<: {parallelism: 4}\n",
        "<<: [{parallelism: 4}, {parallelism: 5}]\n",
        "leaderElection:\n  <<: {<<: {leaderElect: false}, leaderElect: true}\n",
    ):
        head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        with pytest.raises(YamlError, match="'(parallelism|leaderElect)' already set in map"):
            decode_config_text(head + text)
    assert decode_config_text(HEAD + "<<: {parallelism: 4}\n").doc["parallelism"] == 4
    # a kschedctl spec keeps YAML's own merge semantics: the explicit key wins
    assert parse_yaml("<<: {a: 1}\na: 2\n") == [{"a": 2}]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("example.com/" + "a" * 64, "name part must be no more than 63"),
        ("notkubernetes.io/foo", "is an invalid extended resource name"),  # contains it
        ("a" * 250 + "/x", "is an invalid extended resource name"),  # requests.+name too long
        ("example.com/foo", None),
    ],
)
def test_extender_managed_resource_names(name: str, expected: str | None) -> None:
    doc = copy.deepcopy(BASE)
    doc["extenders"] = [{"urlPrefix": "http://x", "managedResources": [{"name": name}]}]
    messages = _messages(doc)
    assert (messages == []) if expected is None else any(expected in m for m in messages)


def test_a_config_after_another_document_is_not_the_one_read(tmp_path: Path) -> None:
    from kschedctl.ops.judge import targets
    from kschedctl.ops.validate import check_path  # the file-level reading lives in ops

    text = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\n" + HEAD
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    messages = [p.message for p in errors_in(check_path(str(path)).problems)]
    assert any("not the first YAML document" in m for m in messages)
    # the judge hands kube-scheduler the whole file, as --config would get it
    assert [t.where for t in targets(text, str(path))] == [""]
