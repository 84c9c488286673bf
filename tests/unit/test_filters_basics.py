"""Quantities, pod requests, node allocatable, tolerations and selectors."""

from __future__ import annotations

from typing import Any

import pytest
from test_filters_support import container, node, pod

from kschedctl.model.filters import (
    QuantityError,
    find_untolerated_taint,
    format_amount,
    label_selector,
    node_allocatable,
    parse_quantity,
    pod_requests,
    to_milli,
    to_units,
    tolerates,
)
from kschedctl.model.filters.selectors import Requirement, node_selector_term, parse_go_int

GI = 1024**3
MI = 1024**2


@pytest.mark.parametrize(
    ("text", "milli", "units"),
    [
        ("100m", 100, 1),
        ("1", 1000, 1),
        ("1.5", 1500, 2),
        ("0.1m", 1, 1),  # rounded up, like MilliValue()
        ("1e3", 1_000_000, 1000),
        ("1E3", 1_000_000, 1000),
        ("1k", 1_000_000, 1000),
        ("1Ki", 1_024_000, 1024),
        ("1Gi", GI * 1000, GI),
        ("1G", 10**12, 10**9),
        ("129e6", 129 * 10**9, 129 * 10**6),
        ("123Mi", 123 * MI * 1000, 123 * MI),
        ("1n", 1, 1),
        ("0.5n", 1, 1),  # ParseQuantity rounds up to the nano
        (".5", 500, 1),
        ("+2", 2000, 2),
        ("1E", 10**21, 10**18),  # E alone is exa
        ("10Ei", (2**63 - 1) * 1000, 2**63 - 1),  # binary-SI capped at int64
        (4, 4000, 4),  # JSON numbers
    ],
    ids=str,
)
def test_quantity_parsing(text: Any, milli: int, units: int) -> None:
    nanos = parse_quantity(text)
    assert (to_milli(nanos), to_units(nanos)) == (milli, units)


@pytest.mark.parametrize("text", ["", "1K", "abc", "1.2.3", "1Kib", "1 Gi", "e", True])
def test_invalid_quantities(text: Any) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_sum_of_quantities_is_rounded_once() -> None:
    # 0.4m + 0.4m + 0.4m is 1.2m: MilliValue of the sum is 2, not 3 (one per container).
    p = pod("p", containers=[container(f"c{i}", cpu="0.4m") for i in range(3)])
    assert pod_requests(p)["cpu"] == 2


def test_requests_sum_regular_containers() -> None:
    p = pod("p", containers=[container("a", cpu="250m", memory="64Mi"), container("b", cpu="1")])
    assert pod_requests(p) == {"cpu": 1250, "memory": 64 * MI}


def test_init_containers_take_the_max_and_sidecars_add_up() -> None:
    p = pod(
        "p",
        containers=[container("app", cpu="1", memory="1Gi")],
        initContainers=[
            container("sidecar", cpu="500m", memory="100Mi", restart_policy="Always"),
            container("migrate", cpu="2", memory="200Mi"),  # needs 2 + 0.5 while it runs
            container("late-sidecar", cpu="100m", restart_policy="Always"),
        ],
        overhead={"cpu": "50m", "memory": "10Mi"},
    )
    # regular = 1 + 0.5 + 0.1 = 1.6 cpu; init peak = 2 + 0.5 = 2.5 cpu -> 2.5 + overhead
    assert pod_requests(p) == {"cpu": 2550, "memory": 1024 * MI + 100 * MI + 10 * MI}


def test_pod_level_requests_replace_cpu_and_memory_only() -> None:
    p = pod(
        "p",
        containers=[container(cpu="1", memory="1Gi", requests={"example.com/dongle": "2"})],
        resources={"requests": {"cpu": "3", "memory": "2Gi"}},
    )
    assert pod_requests(p) == {"cpu": 3000, "memory": 2 * GI, "example.com/dongle": 2}


def test_running_pod_uses_the_larger_of_spec_and_resized_status() -> None:
    p = pod("p", node_name="n", cpu="1")
    p["status"]["containerStatuses"] = [
        {"name": "c", "resources": {"requests": {"cpu": "2"}}, "allocatedResources": {"cpu": "2"}}
    ]
    assert pod_requests(p)["cpu"] == 1000
    assert pod_requests(p, use_status=True)["cpu"] == 2000
    p["status"]["conditions"] = [{"type": "PodResizePending", "reason": "Infeasible"}]
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "8"
    assert pod_requests(p, use_status=True)["cpu"] == 2000  # infeasible resize: spec ignored


def test_non_zero_requests_for_scoring() -> None:
    p = pod("p", containers=[container("a"), container("b", cpu="1")])
    assert pod_requests(p) == {"cpu": 1000}
    assert pod_requests(p, non_zero=True) == {"cpu": 1100, "memory": 2 * 200 * MI}


def test_node_allocatable() -> None:
    n = node("n", cpu="3500m", memory="7Gi", pods="58", extra={"nvidia.com/gpu": "2"})
    assert node_allocatable(n) == {"cpu": 3500, "memory": 7 * GI, "pods": 58, "nvidia.com/gpu": 2}


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 1500, "1.5"),
        ("cpu", 250, "250m"),
        ("cpu", 4000, "4"),
        ("memory", GI, "1Gi"),
        ("memory", 1536 * MI, "1.5Gi"),
        ("memory", 100, "100"),
        ("pods", 3, "3"),
    ],
    ids=str,
)
def test_format_amount(resource: str, amount: int, text: str) -> None:
    assert format_amount(resource, amount) == text


TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("toleration", "ok"),
    [
        ({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, True),
        ({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}, True),  # "" means Equal
        ({"key": "dedicated", "operator": "Equal", "value": "cpu", "effect": "NoSchedule"}, False),
        ({"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}, True),
        ({"key": "dedicated", "operator": "Exists"}, True),  # empty effect matches all
        ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"operator": "Exists"}, True),  # empty key with Exists tolerates everything
        ({"operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, False),
        ({"key": "dedicated", "operator": "Gt", "value": "1"}, False),  # alpha gate off
    ],
    ids=lambda t: str(t) if isinstance(t, dict) else str(t),
)
def test_toleration_rules(toleration: dict[str, str], ok: bool) -> None:
    assert tolerates(TAINT, [toleration]) is ok


def test_comparison_operators_behind_the_gate() -> None:
    taint = {"key": "tier", "value": "5", "effect": "NoSchedule"}
    assert tolerates(
        taint, [{"key": "tier", "operator": "Lt", "value": "9"}], comparison_operators=True
    )
    assert not tolerates(
        taint, [{"key": "tier", "operator": "Gt", "value": "9"}], comparison_operators=True
    )


def test_first_untolerated_noschedule_or_noexecute_taint_in_node_order() -> None:
    taints = [
        {"key": "soft", "effect": "PreferNoSchedule"},
        {"key": "a", "effect": "NoSchedule"},
        {"key": "b", "effect": "NoExecute"},
    ]
    assert find_untolerated_taint(taints, []) == taints[1]
    assert find_untolerated_taint(taints, [{"key": "a", "operator": "Exists"}]) == taints[2]
    assert (
        find_untolerated_taint(
            taints,
            [{"operator": "Exists", "effect": "NoSchedule"}, {"key": "b", "operator": "Exists"}],
        )
        is None
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("-7", -7),
        ("+3", 3),
        ("9223372036854775808", None),
        ("1.0", None),
        ("0x10", None),
        (" 1", None),
        ("1_0", None),
    ],
    ids=str,
)
def test_go_parse_int(text: str, value: int | None) -> None:
    assert parse_go_int(text) == value


LABELS = {"zone": "a", "cores": "8", "gen": "x1"}


@pytest.mark.parametrize(
    ("req", "ok"),
    [
        (Requirement("zone", "In", ("a", "b")), True),
        (Requirement("zone", "In", ("b",)), False),
        (Requirement("missing", "In", ("a",)), False),
        (Requirement("zone", "NotIn", ("b",)), True),
        (Requirement("zone", "NotIn", ("a",)), False),
        (Requirement("missing", "NotIn", ("a",)), True),  # absent label passes NotIn
        (Requirement("zone", "Exists"), True),
        (Requirement("missing", "Exists"), False),
        (Requirement("missing", "DoesNotExist"), True),
        (Requirement("zone", "DoesNotExist"), False),
        (Requirement("cores", "Gt", ("4",)), True),
        (Requirement("cores", "Gt", ("8",)), False),  # strict
        (Requirement("cores", "Lt", ("16",)), True),
        (Requirement("gen", "Gt", ("0",)), False),  # non-integer label value fails
        (Requirement("missing", "Lt", ("9",)), False),
    ],
    ids=lambda r: r.describe() if isinstance(r, Requirement) else str(r),
)
def test_requirement_operators(req: Requirement, ok: bool) -> None:
    assert req.matches(LABELS) is ok


def test_label_selector_nil_empty_and_expressions() -> None:
    assert not label_selector(None).matches({"a": "b"})
    assert label_selector({}).matches({}) and label_selector({}).empty()
    sel = label_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
        }
    )
    assert sel.matches({"app": "web"}) and not sel.matches({"app": "web", "tier": "db"})


def test_node_selector_term_parse_errors_never_match() -> None:
    term = node_selector_term(
        0, {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["x"]}]}
    )
    assert term is not None and term.error and not term.matches({"cores": "9"}, "n")
    assert node_selector_term(1, {}) is None  # empty terms are dropped


def test_match_fields_metadata_name() -> None:
    term = node_selector_term(
        0, {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}
    )
    assert term is not None
    assert not term.matches({}, "n1") and term.matches({}, "n2")
    bad = node_selector_term(
        0, {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}
    )
    assert bad is not None and bad.error == "matchFields metadata.name: must have one element"
