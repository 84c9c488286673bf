"""A scheduler's own ``/metrics``, read: the Prometheus text format parsed, and the figures that
say whether it is keeping up.

kube-scheduler (metric names from k8s.io/kubernetes pkg/scheduler/metrics/metrics.go, v1.36):

- ``scheduler_schedule_attempts_total{profile, result}`` — result ``scheduled``,
  ``unschedulable`` (no node fits) or ``error`` (the scheduler's own failure);
- ``scheduler_pending_pods{queue}`` — ``active``, ``backoff``, ``unschedulable``, ``gated``;
- ``scheduler_scheduling_attempt_duration_seconds{profile, result}`` — one scheduling cycle;
- ``scheduler_pod_scheduling_sli_duration_seconds{attempts}`` — queue entry to scheduled;
- ``leader_election_master_status{name}`` — 1 on the replica that leads (client-go).

kschedctl's own scheduler (:mod:`kschedctl.model.scheduling.loop`) maps onto the same summary:
``kschedctl_scheduler_pods_scheduled_total`` (scheduled), ``_pods_failed_total``
(unschedulable), ``_binding_errors_total`` (error), ``_decision_duration_seconds`` (latency),
``_pending_pods{queue}``, ``_is_leader``.

Quantiles are PromQL's ``histogram_quantile`` over the cumulative buckets since the process
started (:func:`kschedctl.model.scheduling.metrics.quantile`), summed over profiles and results.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from kschedctl.model.scheduling.metrics import quantile
from kschedctl.observe.containers import expanded_argv, is_builtin_container

__all__ = [
    "ATTEMPT_RESULTS",
    "DEFAULT_PORT",
    "PENDING_QUEUES",
    "Endpoint",
    "MetricsFormatError",
    "MetricsSummary",
    "SUMMARY_PREFIXES",
    "Sample",
    "metrics_endpoint",
    "parse_text",
    "summarize",
]

ATTEMPT_RESULTS = ("scheduled", "unschedulable", "error")
PENDING_QUEUES = ("active", "backoff", "unschedulable", "gated")

KUBE = "scheduler_"
OWN = "kschedctl_scheduler_"
# The metric names :func:`summarize` reads: parse_text(text, SUMMARY_PREFIXES).
SUMMARY_PREFIXES = (KUBE, OWN, "leader_election_master_status")
# kube-scheduler's --secure-port default (cmd/kube-scheduler/app/options: KubeSchedulerPort);
# kschedctl's scheduler's --metrics-port default is the same number.
DEFAULT_PORT = 10259


class MetricsFormatError(ValueError):
    """The text is not the Prometheus text exposition format (line number, what was wrong)."""


@dataclass(frozen=True)
class Sample:
    name: str
    labels: Mapping[str, str]
    value: float


class Latency(TypedDict):
    count: int  # observations in the histogram
    p50: float | None  # seconds; None without observations
    p99: float | None


class MetricsSummary(TypedDict):
    program: str  # kube-scheduler | kschedctl
    attempts: dict[str, int]  # result -> count, every result of ATTEMPT_RESULTS
    attemptsByProfile: dict[str, dict[str, int]]  # profile -> result -> count (kube-scheduler)
    pending: dict[str, int]  # queue -> pods (the queues the scheduler reports)
    attemptLatency: Latency  # one scheduling attempt (kschedctl: one decision)
    podSchedulingLatency: Latency | None  # queue entry to scheduled (kube-scheduler's SLI)
    leader: bool | None  # None: the scheduler does not say


# name{labels} value [timestamp]; label values are quoted with \\, \" and \n escapes.
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?\s*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def parse_text(text: str, prefixes: tuple[str, ...] = ("",)) -> list[Sample]:
    """The samples of a Prometheus text-format (0.0.4) exposition, in order; comments (HELP,
    TYPE) are skipped, and so are lines that start with none of ``prefixes`` (a metric-name
    filter: kube-scheduler exposes ~2,500 samples, the summary reads ~100).
    MetricsFormatError names the first line that is not a sample."""
    samples = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith(prefixes) or not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _SAMPLE.match(line.strip())
        if match is None:
            raise MetricsFormatError(f"line {number} is not a metric sample: {line[:120]!r}")
        name, label_text, value_text = match.groups()
        try:
            value = float(value_text)  # also NaN, +Inf, -Inf
        except ValueError:
            raise MetricsFormatError(
                f"line {number}: {value_text[:40]!r} is not a number"
            ) from None
        samples.append(Sample(name, _labels(label_text or "", number), value))
    return samples


def _labels(text: str, number: int) -> dict[str, str]:
    labels: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _LABEL.match(text, position)
        if match is None:
            raise MetricsFormatError(f"line {number}: malformed labels {text[:120]!r}")
        key, raw, _ = match.groups()
        labels[key] = re.sub(r"\\[\\\"n]", lambda m: _UNESCAPE[m.group(0)], raw)
        position = match.end()
    return labels


def summarize(samples: Sequence[Sample]) -> MetricsSummary | None:
    """The summary of a kube-scheduler's or kschedctl's scheduler's samples; None when they are
    neither's (no scheduling counters: another program serves the port)."""
    names = {s.name for s in samples}
    if f"{KUBE}schedule_attempts_total" in names or f"{KUBE}pending_pods" in names:
        return _kube_scheduler(samples)
    if f"{OWN}pods_scheduled_total" in names or f"{OWN}pending_pods" in names:
        return _kschedctl(samples)
    return None


def _kube_scheduler(samples: Sequence[Sample]) -> MetricsSummary:
    by_profile: dict[str, dict[str, int]] = {}
    for s in _named(samples, f"{KUBE}schedule_attempts_total"):
        profile = by_profile.setdefault(s.labels.get("profile", ""), _zero_attempts())
        result = s.labels.get("result", "")
        profile[result] = profile.get(result, 0) + _count(s.value)
    attempts = _zero_attempts()
    for counts in by_profile.values():
        for result, n in counts.items():
            attempts[result] = attempts.get(result, 0) + n
    leaders = [s.value for s in _named(samples, "leader_election_master_status")]
    sli = _latency(samples, f"{KUBE}pod_scheduling_sli_duration_seconds")
    return {
        "program": "kube-scheduler",
        "attempts": attempts,
        "attemptsByProfile": dict(sorted(by_profile.items())),
        "pending": _pending(samples, f"{KUBE}pending_pods"),
        "attemptLatency": _latency(samples, f"{KUBE}scheduling_attempt_duration_seconds"),
        "podSchedulingLatency": sli if sli["count"] else None,
        # Without leader election client-go registers no status: the one replica schedules.
        "leader": any(v == 1 for v in leaders) if leaders else None,
    }


def _kschedctl(samples: Sequence[Sample]) -> MetricsSummary:
    def total(name: str) -> int:
        return sum(_count(s.value) for s in _named(samples, OWN + name))

    leaders = [s.value for s in _named(samples, f"{OWN}is_leader")]
    return {
        "program": "kschedctl",
        "attempts": {
            "scheduled": total("pods_scheduled_total"),
            "unschedulable": total("pods_failed_total"),
            "error": total("binding_errors_total"),
        },
        "attemptsByProfile": {},
        "pending": _pending(samples, f"{OWN}pending_pods"),
        "attemptLatency": _latency(samples, f"{OWN}decision_duration_seconds"),
        "podSchedulingLatency": None,
        "leader": leaders[0] == 1 if leaders else None,
    }


def _named(samples: Iterable[Sample], name: str) -> list[Sample]:
    return [s for s in samples if s.name == name]


def _zero_attempts() -> dict[str, int]:
    return dict.fromkeys(ATTEMPT_RESULTS, 0)


def _count(value: float) -> int:
    return int(value) if math.isfinite(value) else 0


def _pending(samples: Sequence[Sample], name: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for s in _named(samples, name):
        queue = s.labels.get("queue", "")
        found[queue] = found.get(queue, 0) + _count(s.value)
    known = {q: found.pop(q) for q in PENDING_QUEUES if q in found}
    return {**known, **dict(sorted(found.items()))}


def _latency(samples: Sequence[Sample], histogram: str) -> Latency:
    """p50/p99 of ``histogram`` summed over its series (every label but ``le``)."""
    buckets: dict[float, float] = {}
    for s in _named(samples, histogram + "_bucket"):
        try:
            bound = float(s.labels.get("le", ""))
        except ValueError:
            continue
        buckets[bound] = buckets.get(bound, 0.0) + s.value
    cumulative = [(bound, int(count)) for bound, count in sorted(buckets.items())]
    count = cumulative[-1][1] if cumulative and math.isinf(cumulative[-1][0]) else 0
    return {
        "count": count,
        "p50": quantile(0.5, cumulative) if count else None,
        "p99": quantile(0.99, cumulative) if count else None,
    }


@dataclass(frozen=True)
class Endpoint:
    """Where a scheduler container serves ``/metrics`` inside its pod."""

    port: int | None  # None: it serves none (``problem`` says why)
    https: bool  # kube-scheduler: its secure port; kschedctl's scheduler: plain HTTP
    problem: str = ""


def metrics_endpoint(container: Mapping[str, Any], namespace: str) -> Endpoint:
    """The port ``container`` (a kube-scheduler's or kschedctl's scheduler's) serves
    ``/metrics`` on, from its flags (the last one wins, as pflag reads them)."""
    builtin = is_builtin_container(dict(container))
    flag = "metrics-port" if builtin else "secure-port"
    value: str | None = None
    argv = expanded_argv(dict(container), namespace)
    for index, arg in enumerate(argv):
        if arg.startswith(f"--{flag}="):
            value = arg.split("=", 1)[1]
        elif arg == f"--{flag}" and index + 1 < len(argv):
            value = argv[index + 1]
    if value is None:
        return Endpoint(DEFAULT_PORT, not builtin)
    try:
        port = int(value)
    except ValueError:
        return Endpoint(None, not builtin, f"--{flag}={value[:40]!r} is not a port number")
    if port == 0:
        return Endpoint(None, not builtin, f"--{flag}=0 turns its serving off: no /metrics")
    if not 0 < port < 65536:
        return Endpoint(None, not builtin, f"--{flag}={port} is not a port number")
    return Endpoint(port, not builtin)
