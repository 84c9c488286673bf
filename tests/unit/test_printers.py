"""kubectl's -o values: parsing, -o name, custom-columns (kubectl's printer and tabwriter)."""

from __future__ import annotations

import pytest

from kschedctl.base.errors import EXIT_USAGE, UsageError
from kschedctl.printers import formats, table
from kschedctl.printers.formats import OutputFormat, as_item, as_list

ALL = formats.ALL_FORMATS

PODS = as_list(
    [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "labels": {"app": "web"}},
         "spec": {"containers": [{"name": "a"}, {"name": "b"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db-0"}, "spec": {}},
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("table", OutputFormat("table")),
        ("json", OutputFormat("json")),
        ("name", OutputFormat("name")),
        (
            "jsonpath={.items[*].metadata.name}",
            OutputFormat("jsonpath", "{.items[*].metadata.name}"),
        ),
        ("jsonpath-as-json={.kind}", OutputFormat("jsonpath-as-json", "{.kind}")),
        (
            "custom-columns=NAME:.metadata.name",
            OutputFormat("custom-columns", "NAME:.metadata.name"),
        ),
        # a template may hold '=' itself (filters)
        ('jsonpath={.items[?(@.a=="b")].c}', OutputFormat("jsonpath", '{.items[?(@.a=="b")].c}')),
    ],
)
def test_output_values(value: str, expected: OutputFormat) -> None:
    assert formats.parse_output(value, ALL) == expected


@pytest.mark.parametrize(
    ("value", "offered", "message"),
    [
        ("csv", ALL, "unknown output format 'csv'"),
        ("wide", formats.DATA_FORMATS, "unknown output format 'wide'"),
        ("jsonpath", ALL, "template format specified but no template given"),
        ("jsonpath=", ALL, "template format specified but no template given"),
        ("custom-columns", ALL, "template format specified but no template given"),
        ("json=x", ALL, "json takes no argument"),
        ("jsonpath={.a", ALL, "unclosed action at 3"),
        ("jsonpath={.a[x]}", ALL, "invalid array index x at 3"),
        ("custom-columns=NAME", ALL, "unexpected custom-columns spec: NAME"),
        ("custom-columns=A:.a:b", ALL, "expected <header>:<json-path-expr>"),
        ("custom-columns=A:{.a}{.b}", ALL, "unexpected path string"),
    ],
)
def test_bad_output_values_are_usage_errors(
    value: str, offered: tuple[str, ...], message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        formats.parse_output(value, offered)
    assert caught.value.exit_code == EXIT_USAGE
    assert message in caught.value.message


def test_help_and_hints_spell_templates_with_their_argument() -> None:
    assert formats.spelled(("table", "jsonpath", "custom-columns")) == (
        "table, jsonpath=TEMPLATE, custom-columns=SPEC"
    )


# -- -o name: cli-runtime's NamePrinter ------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "name"),
    [
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, "pod/p"),
        ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}, "deployment.apps/d"),
        ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"}},
         "clusterrole.rbac.authorization.k8s.io/r"),
        (as_item("Scheduler", "s1", {"form": "deployment"}), "scheduler/s1"),
    ],
)  # fmt: skip
def test_name_form(obj: dict, name: str) -> None:
    assert formats.name_of(obj) == name


def test_names_of_a_list_and_of_one_object() -> None:
    assert formats.names(PODS) == ["pod/web-1", "pod/db-0"]
    assert formats.names(PODS["items"][0]) == ["pod/web-1"]


def test_an_object_without_a_name_has_no_name_form() -> None:
    with pytest.raises(UsageError, match="-o name"):
        formats.name_of(
            {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        )


def test_as_item_puts_kind_and_metadata_first() -> None:
    item = as_item("Scheduler", "s", {"form": "pod"}, namespace="ns", labels={"a": "b"})
    assert list(item) == ["kind", "metadata", "form"]
    assert item["metadata"] == {"name": "s", "namespace": "ns", "labels": {"a": "b"}}
    assert as_item("Event", "e", {})["metadata"] == {"name": "e"}


# -- custom-columns: kubectl/pkg/cmd/get/customcolumn.go --------------------------------------


def test_custom_columns_header_rows_and_none() -> None:
    text = formats.custom_columns("NAME:.metadata.name,APP:.metadata.labels.app", PODS)
    assert text == "NAME    APP\nweb-1   web\ndb-0    <none>\n"


def test_custom_columns_without_headers() -> None:
    text = formats.custom_columns("NAME:.metadata.name", PODS, headers=False)
    assert text == "web-1\ndb-0\n"


@pytest.mark.parametrize(
    "expression", [".metadata.name", "metadata.name", "{.metadata.name}", "{metadata.name}"]
)
def test_custom_columns_relaxed_paths(expression: str) -> None:
    assert formats.custom_columns(f"N:{expression}", PODS, headers=False) == "web-1\ndb-0\n"


def test_custom_columns_joins_several_results_and_prints_maps_as_go_does() -> None:
    text = formats.custom_columns(
        "C:.spec.containers[*].name,L:.metadata.labels", PODS, headers=False
    )
    assert text.splitlines() == ["a,b      map[app:web]", "<none>   <none>"]


def test_custom_columns_of_one_object_is_one_row() -> None:
    assert formats.custom_columns("K:.kind", {"kind": "Scheduler"}) == "K\nScheduler\n"


def test_custom_columns_cells_cannot_drive_the_terminal() -> None:
    data = {"kind": "X", "m": "a\x1b[31mred\rb\nc"}
    assert formats.custom_columns("M:.m", data, headers=False) == "a^[[31mred\\rb\\nc\n"


def test_tabwriter_pads_like_kubectl() -> None:
    # minwidth 6, padding 3; the last cell is never padded
    assert (
        table.render([["A", "B", "C"], ["longer", "x", "y"]])
        == "A        B     C\nlonger   x     y\n"
    )
