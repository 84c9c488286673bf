"""status's Metrics section without a cluster: which replicas are asked, on which port, and
the reason shown for each one that cannot be read (the port-forward itself is e2e-tested)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kschedctl.errors import ClusterError, ForbiddenError
from kschedctl.k8s.scrape import Target
from kschedctl.observe.schedulers import Lease, Scheduler
from kschedctl.ops import status_metrics

FIXTURE = Path(__file__).parent / "fixtures" / "metrics" / "kube-scheduler-v1.36.3.txt"


def _pod(name: str, argv: list[str], phase: str = "Running") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"containers": [{"name": "s", "command": argv}]},
        "status": {"phase": phase},
    }


@pytest.fixture()
def asked(monkeypatch: pytest.MonkeyPatch) -> list[Target]:
    """Every Target the section reads; pod ``refused`` answers 403, ``silent`` times out."""
    targets: list[Target] = []

    def fake_get(cluster: object, target: Target, path: str, timeout: float) -> str:
        targets.append(target)
        assert path == "/metrics" and timeout == status_metrics.TIMEOUT
        if target.pod == "refused":
            raise ForbiddenError("pod kube-system/refused port 10259: answered 403", hint="RBAC")
        if target.pod == "silent":
            raise ClusterError("pod kube-system/silent port 10259: no answer within 5s")
        if target.pod == "other":
            return "go_goroutines 3\n"
        return FIXTURE.read_text()

    monkeypatch.setattr(status_metrics, "get_via_port_forward", fake_get)
    return targets


def test_each_replica_is_read_and_each_failure_says_why(asked: list[Target]) -> None:
    names = ["ok", "refused", "silent", "other", "pending", "off"]
    entry = Scheduler(
        "s", "deployment", namespace="kube-system", pods=names,
        lease=Lease("kube-system", "s", "ok_1234-5678"),
    )  # fmt: skip
    pods = [
        _pod("ok", ["kube-scheduler", "--secure-port=10300"]),
        _pod("refused", ["kube-scheduler"]),
        _pod("silent", ["kube-scheduler"]),
        _pod("other", ["kube-scheduler"]),
        _pod("pending", ["kube-scheduler"], phase="Pending"),
        _pod("off", ["kube-scheduler", "--secure-port=0"]),
    ]
    report = status_metrics.read_metrics(object(), entry, pods)  # type: ignore[arg-type]
    assert report["problem"] is None
    by_pod = {r["pod"].split("/")[1]: r for r in report["replicas"]}
    assert list(by_pod) == names
    assert sorted((t.pod, t.port, t.https) for t in asked) == [
        ("ok", 10300, True), ("other", 10259, True), ("refused", 10259, True),
        ("silent", 10259, True),
    ]  # fmt: skip
    ok = by_pod["ok"]
    assert ok["problem"] is None and ok["summary"] is not None
    assert ok["summary"]["attempts"]["scheduled"] == 6
    assert ok["leader"] is True
    assert by_pod["refused"]["problem"] == "pod kube-system/refused port 10259: answered 403; RBAC"
    assert "no answer within 5s" in (by_pod["silent"]["problem"] or "")
    assert "not a kube-scheduler" in (by_pod["other"]["problem"] or "")
    assert by_pod["pending"]["problem"] == "the pod is Pending, not Running"
    assert "--secure-port=0" in (by_pod["off"]["problem"] or "")
    # The Lease names "ok": the others are not the leader, even unread.
    assert [by_pod[n]["leader"] for n in names[1:]] == [False] * 5


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (None, "nothing serves this name"),
        (Scheduler("s", "service", managed=True), "a systemd service on a host"),
    ],
    ids=["unserved", "host-service"],
)
def test_nothing_to_forward_to_is_said_once(
    asked: list[Target], entry: Scheduler | None, says: str
) -> None:
    report = status_metrics.read_metrics(object(), entry, [])  # type: ignore[arg-type]
    assert report["replicas"] == [] and says in (report["problem"] or "")
    assert asked == []


def test_a_static_pods_mirror_pods_are_matched_to_the_lease_by_their_node(
    asked: list[Target],
) -> None:
    """A static pod shares its node's network and UTS namespace: kube-scheduler's Lease
    identity is ``<node>_<uuid>``, not the mirror pod's name ``<name>-<node>``."""
    names = ["s-node-a", "s-node-b"]
    entry = Scheduler(
        "s", "static-pod", namespace="kube-system", pods=names,
        lease=Lease("kube-system", "s", "node-b_1234-5678"),
    )  # fmt: skip
    pods = []
    for name in names:
        pod = _pod(name, ["kube-scheduler", "--secure-port=10260"], phase="Pending")
        pod["spec"].update(hostNetwork=True, nodeName=name.removeprefix("s-"))
        pods.append(pod)
    report = status_metrics.read_metrics(object(), entry, pods)  # type: ignore[arg-type]
    assert [(r["pod"], r["port"], r["leader"]) for r in report["replicas"]] == [
        ("kube-system/s-node-a", 10260, False),
        ("kube-system/s-node-b", 10260, True),
    ]
    assert asked == []  # not Running: nothing read, the Lease alone says who leads
