"""Property test: hostile values in every spec field give a clear refusal or safe output.

For each generated case, one to three fields of a valid spec (every field of the Spec
dataclasses, plus nested passthrough fields) get a random or hostile value. Then:

- loading it raises nothing but a kschedctl error (problems, never a traceback);
- ``validate`` and ``render`` agree: a spec the loader accepts renders every form;
- every YAML form parses into exactly the objects (kinds, namespaces, names) of the default
  spec with the same identity, the configs parse into the spec's config, the host-rbac
  subject is the spec's user, the pod commands are the intended argv;
- the systemd unit, parsed with the small systemd.syntax(7) parser of hostile_support, has
  exactly one [Service] and one ExecStart, whose argv after systemd's unquoting is the
  intended one.

Derandomized; MAX_EXAMPLES cases (the report states the number).
"""

from __future__ import annotations

import copy
from typing import Any

from hostile_support import check_rendered, spec_fields
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedctl.base.errors import KschedError
from kschedctl.model.config.schema import AliasBudget
from kschedctl.ops.validate import FileReport, _check_document
from kschedctl.spec import default_spec, spec_from_dict

MAX_EXAMPLES = 600

HOSTILE_CHARS = (
    "\n\r\t\x00\x1b\x7f\x85\u2028\u2029\u200b\u202e\ufeff\"'`$%\\{}[]#:&*!|>@,;= -—.ä١１𝟙"
)
SPECIAL_STRINGS = [
    "",
    " ",
    "---",
    "...",
    "# x",
    "true",
    "null",
    "~",
    "123",
    "0x1F",
    "1e3",
    ".inf",
    "yes",
    "{a: b}",
    "[a]",
    "*alias",
    "&anchor x",
    "!!python/object:os.system",
    "%x\n[Service]\nExecStartPre=/bin/sh -c id",
    "x\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding",
    "mallory\nkind: ClusterRoleBinding",
    "${HOME}",
    "$HOME",
    "%n%%",
    'a"b',
    "a\\",
    "\\",
    "fe80::1%x",
    "/../../../../tmp/x",
    "/etc//kubernetes",
    "١.٣٦",
    "１.３６",
    "1.36\n",
    "v1.36",
    "1.36",
    "1.37.0",
    "kube-scheduler",
    "default-scheduler",
    "s",
    "127.0.0.1",
    "::1",
    "system:kube-scheduler",
    "registry.k8s.io/kube-scheduler:v1.36.3",
    "foo[/bar]",
    "--v=3",
    '--x=$y%z"w\\v',
    "--feature-gates=A=true",
]

hostile_text = st.text(alphabet=st.sampled_from(HOSTILE_CHARS) | st.characters(), max_size=40)
flag_text = st.builds(
    lambda name, value: f"--{name}={value}",
    st.from_regex(r"x[a-z-]{0,15}", fullmatch=True),  # x…: not one of kschedctl's own flags
    st.text(
        alphabet=st.sampled_from("\"'`$%\\{}[]#:&*!|>@,;=-.äx{}") | st.characters(), max_size=20
    ),
)
scalars = st.one_of(
    st.sampled_from(SPECIAL_STRINGS),
    hostile_text,
    flag_text,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**31, 2**31 - 1, 2**63, 0, -1, 65536, 10260]),
    st.sampled_from([1, -1]).map(lambda sign: sign * 10**5000),  # built lazily: no repr
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.one_of(hostile_text, st.integers(), st.booleans()), children, max_size=3
        )
    ),
    max_leaves=6,
)
# Values that pass the shape checks but are hostile to a naive renderer: YAML-special names,
# quotes, $, %, \\, #, ---, { in flag values and user names.
printable = st.text(
    alphabet=st.sampled_from("\"'`$%\\{}[]#:&*!|>@,;=-.ä١１ ~")
    | st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs")),
    min_size=1,
    max_size=30,
)
yaml_special_names = st.sampled_from(
    ["true", "false", "null", "yes", "no", "on", "off", "123", "1e3", "0x1f", "0o17", "1-2", "y"]
)
accepted_changes = st.one_of(
    st.tuples(st.just(("spec", "extraArgs")), st.lists(flag_text, min_size=1, max_size=4)),
    st.tuples(st.just(("spec", "service", "user")), printable),
    st.tuples(st.just(("spec", "namespace")), yaml_special_names),
    st.tuples(st.just(("spec", "leaderElection", "resourceNamespace")), yaml_special_names),
    st.tuples(st.just(("spec", "leaderElection", "resourceName")), yaml_special_names),
    st.tuples(st.just(("spec", "pod", "priorityClassName")), yaml_special_names),
    st.tuples(st.just(("spec", "pod", "nodeSelector")), st.dictionaries(printable, printable)),
    st.tuples(st.just(("spec", "service", "bindAddress")), st.ip_addresses().map(str)),
    st.tuples(st.just(("spec", "service", "securePort")), st.integers(1, 65535)),
    st.tuples(st.just(("spec", "replicas")), st.integers(1, 2**31 + 5)),
    st.tuples(
        st.just(("spec", "service", "configDir")),
        st.from_regex(r"(/[a-z0-9._+@:,=~-]{1,8}){1,4}/?", fullmatch=True),
    ),
    st.tuples(
        st.just(("spec", "custom", "plugins", 0, "name")),
        st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,20}", fullmatch=True),
    ),
    st.tuples(
        st.just(("spec", "custom", "binary")),
        st.from_regex(r"(/[a-z0-9._+@:,=~-]{1,8}){1,4}", fullmatch=True),
    ),
    st.tuples(
        st.just(("spec", "custom", "plugins", 0, "rbac", 0, "resources", 0)),
        st.from_regex(r"[a-z0-9]{1,8}(/status)?", fullmatch=True),
    ),
    st.tuples(
        st.just(("spec", "image")),
        st.from_regex(r"[a-z0-9]{1,5}(/[a-z]{1,5}){0,2}(:[A-Za-z0-9_.-]{1,8})?", fullmatch=True),
    ),
)
FIELDS = spec_fields()
NESTED = [
    ("spec", "profiles", 0, "schedulerName"),
    ("spec", "profiles", 0, "pluginConfig", 0, "args", "hardPodAffinityWeight"),
    ("spec", "profiles", 0, "pluginConfig", 0, "name"),
    ("spec", "profiles", 1, "schedulerName"),
    ("spec", "pod", "nodeSelector", "node-role"),
    ("spec", "pod", "tolerations", 0, "key"),
    ("spec", "pod", "resources", "requests", "cpu"),
    ("spec", "extraArgs", 0),
    ("spec", "extraArgs", 1),
    ("spec", "extenders", 0, "urlPrefix"),
    ("spec", "clientConnection", "qps"),
    ("spec", "clientConnection", "burst"),
    ("spec", "builtin", "policy", "fallbacks"),
    ("spec", "custom", "plugins", 0, "name"),
    ("spec", "custom", "plugins", 0, "extensionPoints", 0),
    ("spec", "custom", "plugins", 0, "rbac", 0, "apiGroups", 0),
    ("spec", "custom", "plugins", 0, "rbac", 0, "resources", 0),
    ("spec", "custom", "plugins", 0, "rbac", 0, "verbs", 0),
    ("spec", "custom", "plugins", 0, "rbac", 0, "resourceNames"),
    ("spec", "profiles", 0, "plugins", "multiPoint", "enabled", 0, "name"),
    ("spec", "profiles", 0, "pluginConfig", 1, "args", "permitWaitingTimeSeconds"),
]
PATHS: list[tuple[Any, ...]] = [*FIELDS, *NESTED]


CUSTOM_IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.33.5"


def _base(program: str) -> dict[str, Any]:
    spec = default_spec("s", program=program, image=CUSTOM_IMAGE if program == "custom" else None)
    doc = spec.to_dict()
    doc["spec"]["profiles"] = [
        {
            "schedulerName": "s",
            "pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1}}],
        }
    ]
    doc["spec"]["pod"]["nodeSelector"] = {"node-role": "control-plane"}
    doc["spec"]["pod"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    doc["spec"]["extraArgs"] = ["--v=3"]
    if program == "builtin":
        doc["spec"]["profiles"] = [{"schedulerName": "s"}]
        doc["spec"].pop("image", None)
    if program == "custom":
        # scheduler-plugins' CapacityScheduling (ElasticQuotas RBAC) and a plugin of the spec's
        # own (its rbac a PolicyRule the renderer writes out).
        doc["spec"]["custom"]["plugins"] = [
            {
                "name": "LabelMatch",
                "extensionPoints": ["Filter"],
                "rbac": [{"apiGroups": ["example.io"], "resources": ["labels"], "verbs": ["get"]}],
            }
        ]
        doc["spec"]["profiles"][0]["plugins"] = {
            "multiPoint": {"enabled": [{"name": "CapacityScheduling"}, {"name": "LabelMatch"}]}
        }
        doc["spec"]["profiles"][0]["pluginConfig"].append(
            {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 5}}
        )
    return doc


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    """Set ``path`` in ``doc``, making (or replacing) the containers on the way."""
    node: Any = doc
    for key, following in zip(path, path[1:], strict=False):
        kind = list if isinstance(following, int) else dict
        if isinstance(node, list):
            while len(node) <= key:
                node.append(None)
        if not isinstance(node[key] if isinstance(node, list) else node.get(key), kind):
            node[key] = kind()
        node = node[key]
    last = path[-1]
    if isinstance(node, list):
        while len(node) <= last:
            node.append(None)
    node[last] = value


BASES = {p: _base(p) for p in ("kube-scheduler", "builtin", "custom")}
STATS = {"cases": 0, "accepted": 0, "forms": 0}


@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    program=st.sampled_from(sorted(BASES)),
    changes=st.lists(
        st.tuples(st.sampled_from(PATHS), values) | accepted_changes, min_size=1, max_size=3
    ),
)
def test_hostile_values_are_refused_or_rendered_safely(
    program: str, changes: list[tuple[tuple[Any, ...], Any]]
) -> None:
    doc = copy.deepcopy(BASES[program])
    for path, value in changes:
        if path[:2] == ("spec", "builtin") and program != "builtin":
            continue
        if path[:2] == ("spec", "custom") and program != "custom":
            continue
        _set(doc, path, copy.deepcopy(value))
    STATS["cases"] += 1
    try:
        spec, problems = spec_from_dict(doc, "hostile.yaml")
    except KschedError:
        return
    report = FileReport("hostile.yaml")
    _check_document(copy.deepcopy(doc), "", None, False, report, AliasBudget())
    # validate reports exactly when the loader (render, create, deploy) refuses.
    assert bool(report.problems) == bool(problems), (report.problems, problems)
    for problem in problems:
        text = str(problem)
        assert "\n" not in text and "\r" not in text and "\x1b" not in text, text
        assert "\u2028" not in text and "\x85" not in text, text
        assert len(text) < 2000
    if problems:
        return
    assert spec is not None
    STATS["accepted"] += 1
    STATS["forms"] += check_rendered(spec)


def test_the_property_test_covers_every_spec_field_and_accepts_some() -> None:
    if STATS["cases"]:  # run after the property test in the same session
        assert STATS["accepted"] >= STATS["cases"] // 5, STATS
    assert ("spec", "service", "user") in FIELDS
    assert ("spec", "builtin", "metricsPort") in FIELDS
    assert ("spec", "custom", "plugins") in FIELDS
    assert ("metadata", "name") in FIELDS
    assert len(FIELDS) >= 30
