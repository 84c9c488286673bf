"""The `why` decision tree on plain-dict fixtures: findings, summary, JSON contract."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_filters_support import container, host_port, node, pod

from kschedctl.model.config.versions import server_version_or_default
from kschedctl.model.filters import NodeInfoSnapshot, evaluate, failed_scheduling_message
from kschedctl.observe.diagnosis import diagnose
from kschedctl.observe.failedscheduling import Reported, parse_failed_scheduling
from kschedctl.observe.schedulers import Lease, Scheduler

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def default_scheduler(**facts: Any) -> Scheduler:
    lease = Lease("kube-system", "kube-scheduler", holder="cp-1_abc", renew_age=2, duration=15)
    return Scheduler(name="default-scheduler", form="process", lease=lease, **facts)


def cluster() -> NodeInfoSnapshot:
    nodes = [
        node("tainted", taints=[TAINT]),
        node("cordoned", unschedulable=True),
        node("small", cpu="2", memory="2Gi", pods="3", labels={"disk": "ssd"}),
        node("big", labels={"gen": "6"}),
    ]
    running = [pod("web", node_name="small", cpu="1500m", memory="1536Mi")]
    return NodeInfoSnapshot(nodes, running)


def codes(diag: Any) -> list[str]:
    return [f.code for f in diag.findings]


# -- pods that are not waiting for a scheduler ---------------------------------------------------


@pytest.mark.parametrize(
    ("phase", "node_name", "code", "schedulable"),
    [
        ("Running", "big", "pod-running", True),
        ("Succeeded", "big", "pod-finished", True),
        ("Failed", None, "pod-finished", True),
        ("Pending", "big", "pod-bound", True),
        ("Pending", "gone", "bound-to-missing-node", False),
    ],
    ids=["running", "succeeded", "failed", "bound-pending", "bound-missing-node"],
)
def test_pods_not_waiting_for_a_scheduler(
    phase: str, node_name: str | None, code: str, schedulable: bool
) -> None:
    p = pod("p", node_name=node_name, phase=phase)
    diag = diagnose(p, cluster(), None)
    assert codes(diag) == [code]
    assert diag.schedulable is schedulable
    assert diag.evaluation is None and diag.summary is None
    assert diag.to_dict()["nodes"] == []


def test_a_pending_pod_needs_a_snapshot() -> None:
    with pytest.raises(ValueError, match="snapshot"):
        diagnose(pod("p"), None, [default_scheduler()])


# -- before the filters: gates, deletion, the scheduler ------------------------------------------


def test_scheduling_gates_come_first_and_nothing_is_reported() -> None:
    p = pod("p", schedulingGates=[{"name": "example.com/quota"}])
    diag = diagnose(p, cluster(), [default_scheduler()])
    assert codes(diag)[0] == "scheduling-gated"
    assert "[example.com/quota]" in diag.findings[0].message
    assert "fits on 2 of 4" in diag.findings[0].message  # what happens once released
    assert "/spec/schedulingGates" in (diag.findings[0].fix or "")
    assert diag.summary is None  # kube-scheduler writes nothing for a gated pod
    assert not diag.schedulable
    assert diag.evaluation is not None and diag.evaluation.schedulable


def test_a_terminating_pod_is_skipped_by_schedulers() -> None:
    p = pod("p")
    p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    diag = diagnose(p, cluster(), [default_scheduler()])
    assert codes(diag)[0] == "pod-terminating"
    assert not diag.schedulable


def test_a_scheduler_name_nothing_serves() -> None:
    p = pod("p", schedulerName="gpu-scheduler", cpu="100m")
    others = [default_scheduler(), Scheduler("batch", "deployment", managed=True, served=True)]
    unserved = Scheduler("gpu-scheduler", "none", served=False, pending=1)
    diag = diagnose(p, cluster(), [*others, unserved])
    first = diag.findings[0]
    assert first.code == "scheduler-not-served" and first.severity == "error"
    assert "default-scheduler (process)" in first.message
    assert "batch (deployment, kschedctl)" in first.message
    assert "fits on 2 of 4" in first.message
    assert "kschedctl deploy gpu-scheduler --as-deployment" in (first.fix or "")
    assert diag.summary is None  # the pod gets no events at all
    assert not diag.schedulable
    assert diag.to_dict()["scheduler"]["served"] is False


def test_an_invisible_default_scheduler_is_only_a_warning() -> None:
    diag = diagnose(pod("p", cpu="100m"), cluster(), [])
    assert codes(diag)[0] == "scheduler-not-visible"
    assert diag.findings[0].severity == "warning"
    assert diag.schedulable


def test_unknown_schedulers_when_discovery_was_not_allowed() -> None:
    diag = diagnose(pod("p", cpu="100m"), cluster(), None)
    assert "scheduler-unknown" in codes(diag)
    assert diag.to_dict()["scheduler"] == {"name": "default-scheduler", "served": None}
    assert diag.schedulable


def _managed(**facts: Any) -> Scheduler:
    return Scheduler(
        "mine", "deployment", managed=True, namespace="kube-system",
        instance="deployment/mine", **facts,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("facts", "log", "code"),
    [
        ({"desired": 2, "ready": 0}, [], "scheduler-not-ready"),
        (
            {"desired": 1, "ready": 1,
             "lease": Lease("kube-system", "mine", holder="mine-1_x", renew_age=90, duration=15)},
            [],
            "scheduler-no-leader",
        ),
    ],
    ids=["not-ready", "lease-not-held"],
)  # fmt: skip
def test_unhealthy_schedulers_block_the_pod(
    facts: dict[str, Any], log: list[str], code: str
) -> None:
    p = pod("p", schedulerName="mine", cpu="100m")
    diag = diagnose(p, cluster(), [default_scheduler(), _managed(**facts)], scheduler_log=log)
    assert codes(diag)[0] == code
    assert diag.findings[0].severity == "error"
    assert not diag.schedulable
    # An unhealthy scheduler still writes this once it works: the summary stays computed.
    assert diag.evaluation is not None and diag.evaluation.schedulable


FORBIDDEN_LOG = [
    "I0101 ok",
    'E0101 leaderelection.go:1] "Error retrieving lease lock" err="leases.coordination.k8s.io '
    '\\"mine\\" is forbidden: first"',
    'E0101 reflector.go:1] "Unhandled Error" err="pods is forbidden: latest"',
]


def test_forbidden_in_the_logs_of_a_scheduler_without_a_leader() -> None:
    stale = Lease("kube-system", "mine", holder="mine-1_x", renew_age=90, duration=15)
    entry = _managed(desired=1, ready=1, lease=stale)
    p = pod("p", schedulerName="mine", cpu="100m")
    diag = diagnose(p, cluster(), [entry], scheduler_log=FORBIDDEN_LOG)
    assert codes(diag)[:2] == ["scheduler-no-leader", "scheduler-forbidden"]
    forbidden = diag.findings[1]
    assert forbidden.severity == "error"
    assert "2 recent line(s)" in forbidden.message
    assert forbidden.message.endswith('err="pods is forbidden: latest"')
    assert "kschedctl status mine" in (forbidden.fix or "")
    assert not diag.schedulable


def test_usage_text_that_says_forbidden_is_no_refusal() -> None:
    """kube-scheduler's usage (printed on a bad flag) describes --authorization-kubeconfig
    with "... are forbidden.": that is no API refusal."""
    usage = [
        "Error: unknown flag: --no-such-flag",
        "      --authorization-kubeconfig string   kubeconfig file pointing at the 'core' "
        "kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io. "
        "This is optional. If empty, all requests not skipped by authorization are forbidden.",
    ]
    p = pod("p", schedulerName="mine", cpu="100m")
    diag = diagnose(p, cluster(), [_managed(desired=1, ready=1)], scheduler_log=usage)
    assert "scheduler-forbidden" not in codes(diag)


def test_forbidden_in_the_logs_of_a_working_scheduler_is_a_warning() -> None:
    p = pod("p", schedulerName="mine", cpu="100m")
    diag = diagnose(p, cluster(), [_managed(desired=1, ready=1)], scheduler_log=FORBIDDEN_LOG)
    forbidden = next(f for f in diag.findings if f.code == "scheduler-forbidden")
    assert forbidden.severity == "warning" and "is Ready and leading but logs" in forbidden.message
    assert diag.schedulable


def test_a_healthy_managed_scheduler_is_named() -> None:
    lease = Lease("kube-system", "mine", holder="mine-7d-abc_123", renew_age=1, duration=15)
    entry = _managed(desired=1, ready=1, lease=lease, leader="mine-7d-abc")
    diag = diagnose(pod("p", schedulerName="mine", cpu="100m"), cluster(), [entry])
    ok = next(f for f in diag.findings if f.code == "scheduler-ok")
    assert "led by mine-7d-abc" in ok.message
    assert diag.schedulable


# -- the filters ---------------------------------------------------------------------------------


def test_no_node_fits_summary_is_the_failed_scheduling_message() -> None:
    p = pod("p", cpu="1", memory="1Gi", nodeSelector={"disk": "ssd"})
    snap = cluster()
    diag = diagnose(p, snap, [default_scheduler()], server_version=(1, 36, 3))
    expected = failed_scheduling_message(evaluate(p, snap), (1, 36, 3))
    assert diag.summary == expected
    assert diag.summary == (
        "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) didn't "
        "match Pod's node affinity/selector, 1 node(s) had untolerated taint(s), 1 node(s) were "
        "unschedulable. no new claims to deallocate, preemption: 0/4 nodes are available: 1 No "
        "preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling."
    )
    assert not diag.schedulable
    found = codes(diag)
    assert found[0] == "no-node-fits"
    for plugin in ("TaintToleration", "NodeUnschedulable", "NodeAffinity", "NodeResourcesFit"):
        assert f"rejected-by-{plugin}" in found
    fixes = {f.code: f.fix or "" for f in diag.findings}
    assert (
        "add the toleration {key: dedicated, operator: Equal, value: gpu"
        in fixes["rejected-by-TaintToleration"]
    )
    assert "kubectl label node big disk=ssd" in fixes["rejected-by-NodeAffinity"]
    assert "lower the pod's cpu request to at most 500m" in fixes["rejected-by-NodeResourcesFit"]
    assert "preemption-not-helpful" in found


def test_older_servers_get_their_own_wording() -> None:
    p = pod("p", nodeSelector={"disk": "nvme"})
    diag = diagnose(p, cluster(), [default_scheduler()], server_version=(1, 30, 2))
    assert diag.summary is not None
    assert "1 node(s) had untolerated taint {dedicated: gpu}" in diag.summary
    assert "no new claims to deallocate" not in diag.summary


def test_a_pod_that_fits() -> None:
    diag = diagnose(pod("p", cpu="100m"), cluster(), [default_scheduler()])
    assert diag.schedulable and diag.summary is None
    fits = next(f for f in diag.findings if f.code == "fits")
    assert fits.message == "fits on 2 of 4 node(s): small, big"


def test_all_reasons_lists_every_failing_filter() -> None:
    p = pod("p", cpu="3", nodeSelector={"disk": "ssd"})
    first = diagnose(p, cluster(), [default_scheduler()])
    every = diagnose(p, cluster(), [default_scheduler()], all_reasons=True)
    assert first.summary == every.summary  # what kube-scheduler counts does not change
    tainted = next(n for n in every.to_dict()["nodes"] if n["name"] == "tainted")
    assert [r["plugin"] for r in tainted["reasons"]] == ["TaintToleration", "NodeAffinity"]
    assert tainted["counted"] == 1


def test_host_port_conflicts_and_preemption_that_helps() -> None:
    nodes = [node("a"), node("b")]
    low = [
        pod(f"low-{n}", node_name=n, containers=[container(ports=[host_port(8080)])], priority=0)
        for n in ("a", "b")
    ]
    p = pod("p", containers=[container(ports=[host_port(8080)])], priority=1000)
    diag = diagnose(p, NodeInfoSnapshot(nodes, low), [default_scheduler()])
    assert "rejected-by-NodePorts" in codes(diag)
    possible = next(f for f in diag.findings if f.code == "preemption-possible")
    assert "default/low-a" in possible.message
    # Preemption succeeds: kube-scheduler's message then has no PostFilter text.
    assert diag.summary == (
        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."
    )


def test_a_prefilter_rejection() -> None:
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "missing"}}]
    snap = NodeInfoSnapshot([node("a")], [], persistent_volume_claims=[], storage_classes=[])
    diag = diagnose(pod("p", volumes=volumes), snap, [default_scheduler()])
    assert "prefilter-rejected" in codes(diag)
    assert "not-evaluated" in codes(diag)
    assert diag.summary is not None and 'persistentvolumeclaim "missing" not found' in diag.summary


def test_nominated_pods_are_explained() -> None:
    p = pod("p", cpu="3", nodeSelector={"disk": "ssd"})
    p["status"]["nominatedNodeName"] = "small"
    diag = diagnose(p, cluster(), [default_scheduler()])
    assert "nominated" in codes(diag)


# -- what the scheduler reported -----------------------------------------------------------------


def _failing() -> tuple[dict[str, Any], str]:
    p = pod("p", nodeSelector={"disk": "nvme"})
    message = failed_scheduling_message(evaluate(p, cluster()), (1, 36))
    assert message is not None
    return p, message


def test_reported_message_matches() -> None:
    p, message = _failing()
    reported = Reported(event=message, event_time="2026-01-01T00:00:00Z", count=3)
    diag = diagnose(p, cluster(), [default_scheduler()], reported=reported)
    assert "reported-matches" in codes(diag)
    assert diag.to_dict()["reported"]["count"] == 3


def test_reported_message_differs() -> None:
    p, _ = _failing()
    reported = Reported(event="0/3 nodes are available: 3 Insufficient cpu.", event_time="t")
    diag = diagnose(p, cluster(), [default_scheduler()], reported=reported)
    differs = next(f for f in diag.findings if f.code == "reported-differs")
    assert differs.severity == "warning" and "3 Insufficient cpu" in differs.message


def test_reported_failure_of_a_pod_that_fits_now() -> None:
    reported = Reported(event="0/4 nodes are available: 4 Insufficient cpu.", event_time="t")
    diag = diagnose(pod("p", cpu="100m"), cluster(), [default_scheduler()], reported=reported)
    assert "reported-stale" in codes(diag)


# -- the JSON contract ---------------------------------------------------------------------------


def test_json_contract() -> None:
    p, message = _failing()
    data = diagnose(p, cluster(), [default_scheduler()]).to_dict()
    json.dumps(data)  # serialisable as is
    assert list(data) == [
        "pod", "phase", "schedulable", "scheduler", "findings", "summary", "reported",
        "preemption", "notEvaluated", "notes", "nodes", "nodeGroups", "fallback", "plugins",
        "doubleBooking", "pluginsNotRun",
    ]  # fmt: skip
    assert data["pod"] == {
        "namespace": "default",
        "name": "p",
        "schedulerName": "default-scheduler",
    }
    assert data["schedulable"] is False
    assert data["scheduler"]["name"] == "default-scheduler" and data["scheduler"]["served"] is True
    assert all(set(f) == {"code", "severity", "message", "fix"} for f in data["findings"])
    assert data["summary"] == message
    assert [n["name"] for n in data["nodes"]] == ["tainted", "cordoned", "small", "big"]
    assert data["fallback"] is None  # only kschedctl's own scheduler has a fallback policy
    assert data["plugins"] is None  # and Python plugins
    assert data["pluginsNotRun"] is None  # none it did not run
    for n in data["nodes"]:
        assert {"name", "fits", "reasons"} <= set(n)
        assert n["fits"] is False
        assert {"plugin", "message", "detail", "fix", "code"} <= set(n["reasons"][0])


# -- reading kube-scheduler's message back -------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "total", "counts", "post"),
    [
        (
            "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu. "
            "no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is "
            "not helpful for scheduling.",
            4,
            {"node(s) had untolerated taint(s)": 1, "Insufficient cpu": 3},
            "no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is "
            "not helpful for scheduling.",
        ),
        (
            "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod "
            "ports.",
            2,
            {"node(s) didn't have free ports for the requested pod ports": 2},
            "",
        ),
        (
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found",
            3,
            {"pod has unbound immediate PersistentVolumeClaims": 3},
            "not found",
        ),
    ],
    ids=["with-postfilter", "histogram-only", "prefilter"],
)
def test_parse_failed_scheduling(
    message: str, total: int, counts: dict[str, int], post: str
) -> None:
    assert parse_failed_scheduling(message) == (total, counts, post)


def test_parse_failed_scheduling_rejects_other_text() -> None:
    with pytest.raises(ValueError):
        parse_failed_scheduling("Successfully assigned a/b to c")


@pytest.mark.parametrize(
    ("git", "version"),
    [("v1.36.3", (1, 36, 3)), ("v1.34.1-eks-abc", (1, 34, 1)), ("v1.30", (1, 30)), ("", (1, 36))],
)
def test_parse_version(git: str, version: tuple[int, ...]) -> None:
    assert server_version_or_default(git) == version


# -- a scheduler whose pods do not run -------------------------------------------------------------


def _crash(**facts: Any) -> Any:
    from kschedctl.observe.crash import ContainerProblem, CrashReport

    problem = ContainerProblem(
        "kube-system", "mine-1", "kube-scheduler", "CrashLoopBackOff", "back-off 10s",
        restarts=3, last_reason="Error", exit_code=1, hint="read its previous log", **facts,
    )  # fmt: skip
    return CrashReport(problem, ["I0101 starting", "Error: unknown flag: --bogus", "Usage:"])


def test_a_crashing_scheduler_is_named_with_its_exit_code_and_key_log_line() -> None:
    p = pod("p", schedulerName="mine", cpu="100m")
    entry = _managed(desired=1, ready=0, problem="CrashLoopBackOff")
    diag = diagnose(p, cluster(), [default_scheduler(), entry], crashes=[_crash()])
    assert codes(diag)[0] == "scheduler-not-running"
    assert "scheduler-not-ready" not in codes(diag)  # the generic finding adds nothing
    finding = diag.findings[0]
    assert finding.severity == "error" and not diag.schedulable
    assert finding.message == (
        "scheduler mine is not running: pod kube-system/mine-1 container kube-scheduler is "
        "CrashLoopBackOff (last termination: Error, exit code 1; 3 restart(s)); its log said: "
        "Error: unknown flag: --bogus"
    )
    assert finding.fix == "read its previous log"


def test_a_crashing_replica_beside_a_ready_one_is_a_warning() -> None:
    p = pod("p", schedulerName="mine", cpu="100m")
    entry = _managed(desired=2, ready=1, problem="CrashLoopBackOff")
    diag = diagnose(p, cluster(), [default_scheduler(), entry], crashes=[_crash()])
    finding = next(f for f in diag.findings if f.code == "scheduler-not-running")
    assert finding.severity == "warning" and "serves, but one of its pods" in finding.message
    assert diag.schedulable


def test_a_bound_pod_whose_container_crashes_says_so() -> None:
    p = pod("p", node_name="big", phase="Running")
    p["status"]["containerStatuses"] = [{
        "name": "c", "restartCount": 1,
        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s"}},
        "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
    }]  # fmt: skip
    diag = diagnose(p, cluster(), None)
    assert codes(diag) == ["pod-running", "container-not-running"]
    assert "OOMKilled, exit code 137" in diag.findings[1].message
    assert "resources.limits.memory" in (diag.findings[1].fix or "")
