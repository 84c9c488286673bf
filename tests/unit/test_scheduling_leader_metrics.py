"""Leader election decisions, the token bucket and the metrics text."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from kschedctl.k8s.ratelimit import TokenBucket
from kschedctl.model.scheduling.leader import LeaderElector, micro_time
from kschedctl.model.scheduling.metrics import Metrics, quantile


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def elector(identity: str, clock: Clock) -> LeaderElector:
    return LeaderElector(identity, "kube-system", "mine", 15, 10, 2, clock=clock)


def test_micro_time_always_has_six_fraction_digits() -> None:
    assert (
        micro_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
        == "2026-01-02T03:04:05.000000Z"
    )


def test_create_when_missing_then_renew() -> None:
    clock = Clock()
    a = elector("a_1", clock)
    action = a.attempt(None)
    assert action.kind == "create" and action.body is not None
    spec = action.body["spec"]
    assert spec["holderIdentity"] == "a_1" and spec["leaseDurationSeconds"] == 15
    assert a.succeeded(action.body) is True
    again = a.attempt(action.body)
    assert again.kind == "update" and a.succeeded(again.body or {}) is False  # already leading


def test_a_live_lease_is_respected_and_an_expired_one_taken_over() -> None:
    clock = Clock()
    a, b = elector("a_1", clock), elector("b_2", clock)
    lease = {
        "metadata": {"name": "mine", "namespace": "kube-system", "resourceVersion": "5"},
        "spec": a.attempt(None).body["spec"],
    }  # type: ignore[index]
    assert b.attempt(lease).kind == "none"
    clock.now += 14  # a stopped renewing; b judges by when it saw the record change
    assert b.attempt(lease).kind == "none"
    clock.now += 2
    takeover = b.attempt(lease)
    assert takeover.kind == "update" and takeover.body is not None
    assert takeover.body["metadata"]["resourceVersion"] == "5"  # optimistic concurrency
    assert takeover.body["spec"]["holderIdentity"] == "b_2"
    assert takeover.body["spec"]["leaseTransitions"] == 1


def test_renewals_keep_standbys_waiting_whatever_their_clocks_say() -> None:
    clock = Clock()
    a, b = elector("a_1", clock), elector("b_2", clock)
    spec = a.attempt(None).body["spec"]  # type: ignore[index]
    for i in range(10):
        spec = {**spec, "renewTime": f"2020-01-01T00:00:{i:02d}.000000Z"}  # an old, skewed clock
        assert b.attempt({"metadata": {}, "spec": spec}).kind == "none"
        clock.now += 5


def test_step_down_after_the_renew_deadline_and_release() -> None:
    clock = Clock()
    a = elector("a_1", clock)
    body = a.attempt(None).body
    assert body is not None
    a.succeeded(body)
    clock.now += 9
    assert not a.should_step_down()
    clock.now += 2
    assert a.should_step_down()
    released = a.release_body(body)
    assert released is not None and released["spec"]["holderIdentity"] == ""
    assert released["spec"]["leaseDurationSeconds"] == 1
    assert elector("b_2", clock).attempt(released).kind == "update"  # no wait after a release
    assert elector("c_3", clock).release_body(body) is None


def test_lease_timing_is_checked() -> None:
    with pytest.raises(ValueError, match="leaseDuration > renewDeadline"):
        LeaderElector("x", "ns", "n", 10, 10, 2)


def test_token_bucket_allows_a_burst_then_the_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(qps=10, burst=3, clock=clock)
    assert [bucket.reserve() for _ in range(3)] == [0, 0, 0]
    assert bucket.reserve() == pytest.approx(0.1)
    assert bucket.reserve() == pytest.approx(0.2)
    clock.now += 1.0
    assert bucket.reserve() == 0  # refilled (capped at the burst)
    slept: list[float] = []
    bucket = TokenBucket(qps=2, burst=1, clock=clock, sleep=slept.append)
    bucket.take()
    bucket.take()
    assert slept == [pytest.approx(0.5)]
    with pytest.raises(ValueError):
        TokenBucket(qps=0, burst=1)


def test_metrics_text_format() -> None:
    m = Metrics()
    m.counter("pods_scheduled_total", "Pods bound.")
    m.histogram("decision_duration_seconds", "Decision time.", (0.001, 0.01))
    m.gauge("is_leader", "Leading.", lambda: [((), 1.0)])
    m.inc("pods_scheduled_total", (("fallback", ""),))
    m.inc("pods_scheduled_total", (("fallback", "spare"),), by=2)
    for v in (0.0005, 0.005, 0.5):
        m.observe("decision_duration_seconds", v)
    text = m.render()
    assert "# TYPE kschedctl_scheduler_pods_scheduled_total counter" in text
    assert 'kschedctl_scheduler_pods_scheduled_total{fallback="spare"} 2' in text
    assert 'kschedctl_scheduler_decision_duration_seconds_bucket{le="0.001"} 1' in text
    assert 'kschedctl_scheduler_decision_duration_seconds_bucket{le="0.01"} 2' in text
    assert 'kschedctl_scheduler_decision_duration_seconds_bucket{le="+Inf"} 3' in text
    assert "kschedctl_scheduler_decision_duration_seconds_count 3" in text
    assert "kschedctl_scheduler_is_leader 1" in text
    assert m.value("pods_scheduled_total", (("fallback", "spare"),)) == 2


def test_histogram_quantiles_interpolate_like_promql() -> None:
    assert quantile(0.5, [(0.001, 0), (0.002, 10), (float("inf"), 10)]) == pytest.approx(0.0015)
    assert quantile(0.99, [(0.001, 5), (0.002, 5), (float("inf"), 10)]) == 0.002
    assert quantile(0.5, [(1, 0), (float("inf"), 0)]) is None
