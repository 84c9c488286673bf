"""The Prometheus text parser and the keeping-up summary, on kube-scheduler v1.36.3's real
/metrics (captured in the lab) and on kschedctl's own scheduler's exposition."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from kschedctl.model.scheduling.metrics import DECISION_BUCKETS, Metrics
from kschedctl.observe.metrics import (
    SUMMARY_PREFIXES,
    MetricsFormatError,
    Sample,
    metrics_endpoint,
    parse_text,
    summarize,
)

FIXTURE = Path(__file__).parent / "fixtures" / "metrics" / "kube-scheduler-v1.36.3.txt"


@pytest.fixture(scope="module")
def kube_samples() -> list[Sample]:
    return parse_text(FIXTURE.read_text())


def test_parses_every_sample_of_real_kube_scheduler_text(kube_samples: list[Sample]) -> None:
    lines = [
        line
        for line in FIXTURE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(kube_samples) == len(lines)
    attempts = [s for s in kube_samples if s.name == "scheduler_schedule_attempts_total"]
    assert {(s.labels["result"], s.value) for s in attempts} == {
        ("scheduled", 6.0),
        ("unschedulable", 1.0),
    }
    assert all(s.labels["profile"] == "msched" for s in attempts)


def test_kube_scheduler_summary(kube_samples: list[Sample]) -> None:
    summary = summarize(kube_samples)
    assert summary is not None
    assert summary["program"] == "kube-scheduler"
    assert summary["attempts"] == {"scheduled": 6, "unschedulable": 1, "error": 0}
    assert summary["attemptsByProfile"] == {
        "msched": {"scheduled": 6, "unschedulable": 1, "error": 0}
    }
    assert summary["pending"] == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 0}
    assert summary["leader"] is True


def test_attempt_latency_is_histogram_quantile_over_all_results(
    kube_samples: list[Sample],
) -> None:
    # Cumulative over both results: 0.001:1 … 0.004:1, 0.008:2, 0.016:5, 0.032:6, 0.064:7.
    # p50: rank 3.5 in (0.008, 0.016] holding 3 → 0.008 + 0.008 * 1.5/3 = 0.012.
    # p99: rank 6.93 in (0.032, 0.064] holding 1 → 0.032 + 0.032 * 0.93 = 0.06176.
    latency = summarize(kube_samples)["attemptLatency"]  # type: ignore[index]
    assert latency["count"] == 7
    assert latency["p50"] == pytest.approx(0.012)
    assert latency["p99"] == pytest.approx(0.06176)


def test_pod_scheduling_sli_latency(kube_samples: list[Sample]) -> None:
    sli = summarize(kube_samples)["podSchedulingLatency"]  # type: ignore[index]
    assert sli is not None
    assert sli["count"] == 6  # the unschedulable pod has not been scheduled: not in the SLI
    assert 0.01 <= sli["p50"] <= 0.02  # type: ignore[operator]


def test_rank_in_the_inf_bucket_is_the_highest_finite_bound() -> None:
    text = "\n".join(
        [
            'scheduler_scheduling_attempt_duration_seconds_bucket{result="scheduled",le="0.1"} 1',
            'scheduler_scheduling_attempt_duration_seconds_bucket{result="scheduled",le="+Inf"} 10',
            'scheduler_schedule_attempts_total{profile="p",result="error"} 2',
        ]
    )
    summary = summarize(parse_text(text))
    assert summary is not None
    assert summary["attemptLatency"] == {"count": 10, "p50": 0.1, "p99": 0.1}
    assert summary["attempts"] == {"scheduled": 0, "unschedulable": 0, "error": 2}
    assert summary["leader"] is None  # no leader election status: it does not say


def test_no_observations_give_no_quantiles() -> None:
    summary = summarize(parse_text('scheduler_pending_pods{queue="active"} 3\n'))
    assert summary is not None
    assert summary["attemptLatency"] == {"count": 0, "p50": None, "p99": None}
    assert summary["podSchedulingLatency"] is None
    assert summary["pending"] == {"active": 3}


def test_kschedctl_scheduler_maps_onto_the_same_summary() -> None:
    m = Metrics()
    m.counter("pods_scheduled_total", "scheduled")
    m.counter("pods_failed_total", "failed")
    m.counter("binding_errors_total", "binding errors")
    m.histogram("decision_duration_seconds", "decisions", DECISION_BUCKETS)
    m.gauge("pending_pods", "queue", lambda: [((("queue", "active"),), 2.0)])
    m.gauge("is_leader", "leader", lambda: [((), 1.0)])
    m.inc("pods_scheduled_total", (("fallback", "none"),), 4)
    m.inc("pods_scheduled_total", (("fallback", "relax-affinity"),), 1)
    m.inc("pods_failed_total")
    m.inc("binding_errors_total", (("reason", "conflict"),), 2)
    for seconds in (0.0015, 0.0015, 0.003, 0.003):
        m.observe("decision_duration_seconds", seconds)
    summary = summarize(parse_text(m.render()))
    assert summary is not None
    assert summary["program"] == "kschedctl"
    assert summary["attempts"] == {"scheduled": 5, "unschedulable": 1, "error": 2}
    assert summary["pending"] == {"active": 2}
    assert summary["leader"] is True
    # Two in (0.001, 0.002], two in (0.002, 0.004]: p50 at rank 2 is the top of the first.
    assert summary["attemptLatency"]["count"] == 4
    assert summary["attemptLatency"]["p50"] == pytest.approx(0.002)
    assert summary["attemptLatency"]["p99"] == pytest.approx(0.002 + 0.002 * 1.96 / 2)


def test_another_program_is_not_summarized() -> None:
    assert summarize(parse_text("go_goroutines 12\nprocess_open_fds 9\n")) is None


@pytest.mark.parametrize(
    ("line", "labels", "value"),
    [
        ('m{a="x\\"y",b="1\\\\2"} 3', {"a": 'x"y', "b": "1\\2"}, 3.0),
        ('m{a="line\\nbreak",} 1 1700000000000', {"a": "line\nbreak"}, 1.0),
        ("m 1e3", {}, 1000.0),
        ('m{le="+Inf"} +Inf', {"le": "+Inf"}, math.inf),
        ('m{a="{,}"} -2.5', {"a": "{,}"}, -2.5),
    ],
    ids=[
        "escaped-quote-and-backslash",
        "newline-trailing-comma-timestamp",
        "exponent",
        "inf",
        "braces-in-value",
    ],  # fmt: skip
)
def test_sample_syntax(line: str, labels: dict[str, str], value: float) -> None:
    (sample,) = parse_text(line)
    assert sample.name == "m"
    assert dict(sample.labels) == labels
    assert sample.value == value


def test_nan_counts_as_nothing() -> None:
    summary = summarize(parse_text('scheduler_schedule_attempts_total{result="scheduled"} NaN'))
    assert summary is not None
    assert summary["attempts"]["scheduled"] == 0


@pytest.mark.parametrize(
    "text",
    ["<html>forbidden</html>", "m{a=unquoted} 1", "m one", 'm{a="x" b="y"} 1'],
    ids=["html", "unquoted-label", "not-a-number", "missing-comma"],
)
def test_malformed_text_names_the_line(text: str) -> None:
    with pytest.raises(MetricsFormatError, match="line 2"):
        parse_text("# HELP m a metric\n" + text)


def test_prefix_filter_reads_what_the_summary_needs(kube_samples: list[Sample]) -> None:
    text = FIXTURE.read_text() + "\ngo_goroutines 12\nsome_other_family{x=broken\n"
    filtered = parse_text(text, SUMMARY_PREFIXES)
    assert summarize(filtered) == summarize(kube_samples)
    assert all(s.name.startswith(SUMMARY_PREFIXES) for s in filtered)


@pytest.mark.parametrize(
    ("container", "port", "https", "problem"),
    [
        ({"command": ["kube-scheduler", "--config=/etc/c.yaml"]}, 10259, True, ""),
        ({"command": ["kube-scheduler", "--secure-port=10260", "--secure-port", "10261"]},
         10261, True, ""),
        ({"command": ["kube-scheduler"], "args": ["--secure-port=0"]}, None, True, "turns"),
        ({"command": ["kube-scheduler", "--secure-port=$(PORT)"],
          "env": [{"name": "PORT", "value": "10270"}]}, 10270, True, ""),
        ({"command": ["kube-scheduler", "--secure-port=http"]}, None, True, "not a port"),
        ({"command": ["kschedctl", "scheduler", "run"]}, 10259, False, ""),
        ({"args": ["scheduler", "run", "--metrics-port=9100"], "image": "kschedctl:0.1.0"},
         9100, False, ""),
    ],
    ids=["default", "last-wins", "off", "env-expanded", "not-a-number", "builtin-default",
         "builtin-port"],
)  # fmt: skip
def test_metrics_endpoint(
    container: dict[str, Any], port: int | None, https: bool, problem: str
) -> None:
    endpoint = metrics_endpoint(container, "kube-system")
    assert (endpoint.port, endpoint.https) == (port, https)
    assert problem in endpoint.problem and bool(problem) == bool(endpoint.problem)
