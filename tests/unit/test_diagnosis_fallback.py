"""`why` for pods of kschedctl's own scheduler: which fallback step would place them."""

from __future__ import annotations

import json
from typing import Any

from test_filters_support import node, pod

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.policy import POD_POLICY_ANNOTATION
from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.observe.diagnosis import diagnose
from kschedctl.observe.failedscheduling import Reported
from kschedctl.observe.schedulers import Lease, Scheduler

SPARE_TAINT = {"key": "pool", "value": "spare", "effect": "NoSchedule"}
POLICY = parse_policy(
    {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "FallbackPolicy",
        "fallbacks": [
            {"name": "gold", "nodeSelector": {"pool": "gold"}},
            {"name": "spare-pool", "nodePool": {"pool": "spare"},
             "tolerate": [{"key": "pool", "operator": "Equal", "value": "spare", "effect": "NoSchedule"}]},
        ],
    },
    "scheduler fb's policy",
)  # fmt: skip


def fb() -> Scheduler:
    lease = Lease("kube-system", "fb", holder="fb-1_x", renew_age=1, duration=15)
    return Scheduler(name="fb", form="deployment", managed=True, lease=lease, desired=1, ready=1)


def cluster() -> NodeInfoSnapshot:
    return NodeInfoSnapshot(
        [node("main", labels={"pool": "main"}, cpu="1"), node("spare", labels={"pool": "spare"}, taints=[SPARE_TAINT])],
        [],
    )  # fmt: skip


def ours(**kw: Any) -> dict[str, Any]:
    return pod("p", schedulerName="fb", nodeSelector={"pool": "main"}, **kw)


def codes(d: Any) -> list[str]:
    return [f.code for f in d.findings]


def test_a_pod_that_fits_needs_no_fallback() -> None:
    d = diagnose(ours(cpu="500m"), cluster(), [fb()], fallback=POLICY)
    assert d.schedulable and d.summary is None
    assert not any(c.startswith("fallback") for c in codes(d))
    assert d.fallback is not None and d.fallback["stages"][0]["chosen"] == "main"


def test_the_step_that_would_place_the_pod_is_named() -> None:
    d = diagnose(ours(cpu="2"), cluster(), [fb()], fallback=POLICY)
    assert d.schedulable and d.summary is None
    (found,) = [f for f in d.findings if f.code == "fallback-applies"]
    assert "'spare-pool'" in found.message and "on spare" in found.message
    assert "no-node-fits" in codes(d)  # the pod's own rules still fail, and why is shown
    assert [s["step"] for s in d.fallback["stages"]] == [None, "gold", "spare-pool"]  # type: ignore[index]
    json.dumps(d.to_dict())


def test_no_step_helps_and_the_summary_is_the_schedulers_own_message() -> None:
    p = ours(cpu="8")
    d = diagnose(p, cluster(), [fb()], fallback=POLICY)
    assert not d.schedulable
    assert "fallback-none-fits" in codes(d)
    expected = Algorithm(policy=POLICY).failure(p, cluster(), POLICY)[0]
    assert (
        d.summary == expected
        and "Fallback steps of the scheduler's policy tried: gold: " in expected
    )
    reported = diagnose(
        p, cluster(), [fb()], fallback=POLICY, reported=Reported(event=expected, condition=expected)
    )
    assert "reported-matches" in codes(reported)


def test_the_pods_own_annotation_wins_and_a_bad_one_is_reported() -> None:
    p = ours(cpu="2")
    p["metadata"]["annotations"] = {POD_POLICY_ANNOTATION: "fallbacks: [{name: x}]"}
    d = diagnose(p, cluster(), [fb()], fallback=POLICY)
    assert not d.schedulable
    assert {"fallback-policy-invalid", "fallback-none-fits"} <= set(codes(d))


def test_other_schedulers_are_unchanged() -> None:
    d = diagnose(ours(cpu="2"), cluster(), [fb()])
    assert not d.schedulable and d.fallback is None


def test_a_gated_pod_says_what_the_fallback_would_do() -> None:
    d = diagnose(
        ours(cpu="2", schedulingGates=[{"name": "hold"}]), cluster(), [fb()], fallback=POLICY
    )
    (gated,) = [f for f in d.findings if f.code == "scheduling-gated"]
    assert "a fallback step of its scheduler places it" in gated.message
    assert "None" not in gated.message
