"""Counters, gauges and histograms in the Prometheus text format (version 0.0.4).

Small and dependency-free on purpose: a scheduler pod should not need a metrics library. The
decision-latency buckets are kube-scheduler's (``scheduler_scheduling_algorithm_duration_seconds``:
1 ms doubling 15 times), so the two can be compared bucket for bucket.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Sequence

__all__ = ["Metrics", "Histogram", "DECISION_BUCKETS", "define_scheduler_metrics", "quantile"]

DECISION_BUCKETS = tuple(0.001 * 2**i for i in range(15))
BINDING_BUCKETS = tuple(0.001 * 2**i for i in range(15))

Labels = tuple[tuple[str, str], ...]
Series = list[tuple[Labels, float]]


def _labels(labels: Labels, extra: str = "") -> str:
    parts = [f'{k}="{_escape(v)}"' for k, v in labels]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf"
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


class Histogram:
    def __init__(self, buckets: Sequence[float]) -> None:
        self.buckets = tuple(buckets)
        self.counts = [0] * (len(self.buckets) + 1)  # the last one is +Inf
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += 1
                break
        else:
            self.counts[-1] += 1
        self.sum += value
        self.count += 1

    def cumulative(self) -> list[tuple[float, int]]:
        out, total = [], 0
        for bound, n in zip((*self.buckets, math.inf), self.counts, strict=True):
            total += n
            out.append((bound, total))
        return out


def quantile(q: float, cumulative: Sequence[tuple[float, int]]) -> float | None:
    """PromQL's ``histogram_quantile``: linear interpolation inside the bucket."""
    if not cumulative or cumulative[-1][1] == 0:
        return None
    total = cumulative[-1][1]
    rank = q * total
    lower_bound, lower_count = 0.0, 0
    for bound, count in cumulative:
        if count >= rank:
            if math.isinf(bound):
                return lower_bound
            if count == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (
                count - lower_count
            )
        lower_bound, lower_count = bound, count
    return lower_bound


class Metrics:
    """A registry of named series; ``render`` gives the exposition text."""

    def __init__(self, prefix: str = "kschedctl_scheduler_") -> None:
        self.prefix = prefix
        self._lock = threading.Lock()
        self._help: dict[str, tuple[str, str]] = {}  # name -> (type, help)
        self._values: dict[str, dict[Labels, float]] = {}
        self._histograms: dict[str, dict[Labels, Histogram]] = {}
        self._buckets: dict[str, Sequence[float]] = {}
        self._gauges: dict[str, Callable[[], Iterable[tuple[Labels, float]]]] = {}

    def counter(self, name: str, help_text: str) -> None:
        self._help[name] = ("counter", help_text)
        self._values.setdefault(name, {})

    def histogram(self, name: str, help_text: str, buckets: Sequence[float]) -> None:
        self._help[name] = ("histogram", help_text)
        self._histograms.setdefault(name, {})
        self._buckets[name] = buckets

    def gauge(
        self, name: str, help_text: str, read: Callable[[], Iterable[tuple[Labels, float]]]
    ) -> None:
        """A gauge read when scraped (queue lengths, leadership)."""
        self._help[name] = ("gauge", help_text)
        self._gauges[name] = read

    def inc(self, name: str, labels: Labels = (), by: float = 1) -> None:
        with self._lock:
            series = self._values[name]
            series[labels] = series.get(labels, 0) + by

    def observe(self, name: str, value: float, labels: Labels = ()) -> None:
        with self._lock:
            series = self._histograms[name]
            hist = series.get(labels)
            if hist is None:
                hist = series[labels] = Histogram(self._buckets[name])
            hist.observe(value)

    def value(self, name: str, labels: Labels = ()) -> float:
        with self._lock:
            return self._values[name].get(labels, 0)

    def histogram_of(self, name: str, labels: Labels = ()) -> Histogram | None:
        with self._lock:
            return self._histograms[name].get(labels)

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            for name, (kind, help_text) in sorted(self._help.items()):
                full = self.prefix + name
                lines.append(f"# HELP {full} {help_text}")
                lines.append(f"# TYPE {full} {kind}")
                if kind == "counter":
                    series = self._values[name] or {(): 0}
                    for labels, value in sorted(series.items()):
                        lines.append(f"{full}{_labels(labels)} {_number(value)}")
                elif kind == "histogram":
                    for labels, hist in sorted(self._histograms[name].items()):
                        for bound, count in hist.cumulative():
                            le = f'le="{_number(bound)}"'
                            lines.append(f"{full}_bucket{_labels(labels, le)} {count}")
                        lines.append(f"{full}_sum{_labels(labels)} {_number(hist.sum)}")
                        lines.append(f"{full}_count{_labels(labels)} {hist.count}")
                else:
                    for labels, value in self._gauges[name]():
                        lines.append(f"{full}{_labels(labels)} {_number(value)}")
        return "\n".join(lines) + "\n"


def define_scheduler_metrics(
    m: Metrics,
    plugins: Iterable[str],
    queue: Callable[[], Series],
    leader: Callable[[], Series],
    cache: Callable[[], Series],
) -> None:
    """The families kschedctl's scheduler exports; the gauges are read when scraped."""
    m.counter(
        "pods_scheduled_total",
        'Pods bound to a node, by the fallback step that placed them ("" for none).',
    )
    m.counter("pods_failed_total", "Scheduling attempts that found no node, fallbacks included.")
    m.counter("fallback_used_total", "Pods placed by a fallback step, by step.")
    m.counter(
        "plugin_errors_total",
        "Scheduling attempts failed by a Python plugin that raised or broke its contract, "
        "by plugin.",
    )
    for plugin in plugins:  # a 0 series per plugin from the start
        m.inc("plugin_errors_total", (("plugin", plugin),), 0)
    m.counter(
        "binding_errors_total",
        "Bindings that failed, by reason (conflict, gone, error, volume, claim).",
    )
    m.histogram(
        "decision_duration_seconds",
        "Time to filter, score and walk the fallback steps for one pod.",
        DECISION_BUCKETS,
    )
    m.histogram(
        "binding_duration_seconds",
        "Time of the binding request, client rate limiting included.",
        BINDING_BUCKETS,
    )
    m.counter(
        "preemption_attempts_total",
        "Pods that found no node and were allowed to preempt (DefaultPreemption runs).",
    )
    m.counter("preemption_victims_total", "Pods evicted to make room for preemptors.")
    m.gauge("pending_pods", "Pods in the scheduling queue, by queue.", queue)
    m.gauge("is_leader", "1 while this replica may schedule (holds the Lease).", leader)
    m.gauge("cache_objects", "Objects in the scheduler's cache, by kind.", cache)
