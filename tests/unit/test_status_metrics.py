"""status's Metrics section without a cluster: which replicas are asked, on which port, what
each is sent, and the reason shown for each one that cannot be read (the port-forward and the
TokenRequest themselves are e2e-tested: tests/e2e/test_metrics.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kschedctl.base.errors import ClusterError, ForbiddenError
from kschedctl.k8s.scrape import Answer, Target
from kschedctl.k8s.tokens import MintedToken
from kschedctl.observe.schedulers import Lease, Scheduler
from kschedctl.ops import status_metrics

MARK_S = {"kschedctl.io/scheduler": "s"}  # kschedctl deployed it as "s"
FIXTURE = Path(__file__).parent / "fixtures" / "metrics" / "kube-scheduler-v1.36.3.txt"


def _pod(name: str, argv: list[str], phase: str = "Running") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "kube-system", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "s", "command": argv}]},
        "status": {"phase": phase},
    }


class Asked(list[tuple[Target, str | None]]):
    """Every (Target, bearer token) the section reads; ``minted``: the accounts."""

    minted: list[str]
    probed: list[Target]


@pytest.fixture()
def asked(monkeypatch: pytest.MonkeyPatch) -> Asked:
    """The kschedctl.k8s functions the section calls, answering from fixtures: pod ``refused``
    answers 403, ``silent`` times out, ``other`` is no scheduler; a ServiceAccount exists when
    its name starts with ``s-``."""
    targets = Asked()
    targets.minted = []
    targets.probed = []

    def fake_get(
        cluster: object, target: Target, path: str, timeout: float, *, bearer: str | None
    ) -> str:
        targets.append((target, bearer))
        assert path == "/metrics" and timeout == status_metrics.TIMEOUT
        if target.pod == "refused":
            raise ForbiddenError("pod kube-system/refused port 10259: answered 403", hint="RBAC")
        if target.pod == "silent":
            raise ClusterError("pod kube-system/silent port 10259: no answer within 5s")
        if target.pod == "other":
            return "go_goroutines 3\n"
        return FIXTURE.read_text()

    def fake_mint(cluster: object, namespace: str, account: str) -> MintedToken:
        targets.minted.append(f"{namespace}/{account}")
        return MintedToken(f"token-of-{account}", f"{namespace}/{account}", 600)

    def fake_probe(
        cluster: object, target: Target, paths: list[str], timeout: float
    ) -> dict[str, Answer]:
        targets.probed.append(target)
        return {path: Answer(200, "OK", "ok\n") for path in paths}

    monkeypatch.setattr(status_metrics, "get_via_port_forward", fake_get)
    monkeypatch.setattr(status_metrics, "mint_token", fake_mint)
    monkeypatch.setattr(status_metrics, "probe_via_port_forward", fake_probe)
    monkeypatch.setattr(
        status_metrics, "service_account_exists", lambda c, ns, name: name.startswith("s-")
    )
    return targets


def test_each_replica_is_read_and_each_failure_says_why(asked: Asked) -> None:
    names = ["ok", "refused", "silent", "other", "pending", "off"]
    entry = Scheduler(
        "s", "deployment", managed=True, namespace="kube-system", labels=MARK_S, pods=names,
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
    assert report["problem"] is None and report["readerProblem"] is None
    assert report["reader"] == "kube-system/s-metrics-reader"
    by_pod = {r["pod"].split("/")[1]: r for r in report["replicas"]}
    assert list(by_pod) == names
    # Each replica asked is sent the one token minted for this, and nothing else.
    assert sorted((t.pod, t.port, t.https, bearer) for t, bearer in asked) == [
        ("ok", 10300, True, "token-of-s-metrics-reader"),
        ("other", 10259, True, "token-of-s-metrics-reader"),
        ("refused", 10259, True, "token-of-s-metrics-reader"),
        ("silent", 10259, True, "token-of-s-metrics-reader"),
    ]  # fmt: skip
    assert asked.minted == ["kube-system/s-metrics-reader"]  # once, for every replica
    assert by_pod["ok"]["sent"] == {
        "token": True, "serviceAccount": "kube-system/s-metrics-reader", "lifetimeSeconds": 600,
    }  # fmt: skip
    assert by_pod["pending"]["sent"] is None and by_pod["off"]["sent"] is None
    assert asked.probed == []
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
    asked: Asked, entry: Scheduler | None, says: str
) -> None:
    report = status_metrics.read_metrics(object(), entry, [])  # type: ignore[arg-type]
    assert report["replicas"] == [] and says in (report["problem"] or "")
    assert asked == []


def test_a_static_pods_mirror_pods_are_matched_to_the_lease_by_their_node(
    asked: Asked,
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
    assert asked.minted == [] and report["reader"] is None and report["readerProblem"] is None


def test_kschedctls_own_scheduler_is_sent_no_credentials_at_all(asked: Asked) -> None:
    """It serves /metrics over plain HTTP to anyone (kschedctl.ops.serving): no token is
    minted, no ServiceAccount looked for."""
    entry = Scheduler("b", "deployment", managed=True, namespace="kube-system", labels={"kschedctl.io/scheduler": "b"},
                      pods=["b-1"])  # fmt: skip
    pod = _pod("b-1", ["kschedctl", "scheduler", "run", "--metrics-port=10300"])
    report = status_metrics.read_metrics(object(), entry, [pod])  # type: ignore[arg-type]
    assert [(t.pod, t.port, t.https, bearer) for t, bearer in asked] == [
        ("b-1", 10300, False, None)
    ]
    assert asked.minted == [] and report["reader"] is None
    (replica,) = report["replicas"]
    assert replica["sent"] == {
        "token": False, "serviceAccount": None, "lifetimeSeconds": None
    }  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "reader", "says"),
    [
        (Scheduler("default-scheduler", "static-pod", namespace="kube-system", pods=["k-n1"]),
         None, "kschedctl did not deploy this scheduler"),
        (Scheduler("x", "deployment", managed=True, namespace="kube-system", labels={"kschedctl.io/scheduler": "x"},
                   pods=["k-n1"]),
         None, "its metrics-reader ServiceAccount kube-system/x-metrics-reader does not exist "
         "(kschedctl deploys it"),
        (Scheduler("x", "deployment", managed=True, namespace="kube-system", labels={"kschedctl.io/scheduler": "x"},
                   pods=["k-n1"]),
         "mine", "ServiceAccount kube-system/mine does not exist"),
    ],
    ids=["kube-scheduler-itself", "older-deploy", "named-reader-missing"],
)  # fmt: skip
def test_without_a_reader_no_token_is_minted_and_health_is_read_anonymously(
    asked: Asked, entry: Scheduler, reader: str | None, says: str
) -> None:
    pod = _pod("k-n1", ["kube-scheduler", "--v=10"])
    report = status_metrics.read_metrics(object(), entry, [pod], reader)  # type: ignore[arg-type]
    assert asked == [] and asked.minted == []
    assert [t.pod for t in asked.probed] == ["k-n1"]
    problem = report["readerProblem"] or ""
    assert says in problem
    assert "never sends your own credentials to a pod" in problem
    suggested = reader or f"{entry.name}-metrics-reader"
    assert "--non-resource-url=/metrics" in problem and f"--metrics-reader {suggested}" in problem
    (replica,) = report["replicas"]
    assert replica["summary"] is None and replica["problem"] == problem
    assert replica["sent"] is not None and replica["sent"]["token"] is False
    assert replica["health"] == {p: "200 ok" for p in ("/healthz", "/readyz", "/livez")}


def test_a_reader_named_by_the_caller_is_used_for_any_scheduler(asked: Asked) -> None:
    entry = Scheduler("default-scheduler", "static-pod", namespace="kube-system", pods=["k-n1"])
    pod = _pod("k-n1", ["kube-scheduler"])
    report = status_metrics.read_metrics(object(), entry, [pod], "s-reader")  # type: ignore[arg-type]
    assert report["reader"] == "kube-system/s-reader"
    assert asked.minted == ["kube-system/s-reader"]
    assert [bearer for _, bearer in asked] == ["token-of-s-reader"]
