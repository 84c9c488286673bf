"""The rollout rules `deploy` waits by (kubectl rollout status' for a Deployment; a bare or
static pod's replacement Ready; the Lease held by a new pod), on plain dicts."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.observe.crash import ContainerProblem, CrashReport
from kschedctl.observe.rollout import (
    deployment_state,
    fatal,
    lease_holder,
    new_template_hash,
    pod_state,
    same_containers,
)

HASH = "cfg1"


def deployment(generation: int = 2, observed: int = 2, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "s", "uid": "d-uid", "generation": generation,
                     "annotations": {"deployment.kubernetes.io/revision": "2"}},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": observed, **status},
    }  # fmt: skip


def replicaset(template: str, revision: str, owner: str = "d-uid") -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"s-{template}", "labels": {"pod-template-hash": template},
            "annotations": {"deployment.kubernetes.io/revision": revision},
            "ownerReferences": [{"kind": "Deployment", "uid": owner}],
        }
    }  # fmt: skip


RSS = [replicaset("old", "1"), replicaset("new", "2")]


def pod(name: str, template: str = "new", ready: bool = True, **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"pod-template-hash": template},
                     "annotations": {"kschedctl.io/config-hash": meta.pop("hash", HASH)}, **meta},
        "spec": {"containers": [{"name": "kube-scheduler", "image": "ks:v1",
                                 "command": ["kube-scheduler", "--v=2"]}],
                 "nodeName": "node-1"},
        "status": {"startTime": "2026-12-05T10:00:00Z",
                   "conditions": [{"type": "Ready", "status": str(ready)}]},
    }  # fmt: skip


COMPLETE = {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3}


@pytest.mark.parametrize(
    ("dep", "pods", "text", "done"),
    [
        pytest.param(
            deployment(generation=3, observed=2, **COMPLETE), [pod("a"), pod("b"), pod("c")],
            "its new spec is not yet seen by the controller", False, id="generation-not-observed",
        ),
        pytest.param(
            deployment(replicas=3, updatedReplicas=2, readyReplicas=2, availableReplicas=2),
            [pod("a"), pod("b", ready=False), pod("o", "old")],
            "2 of 3 updated, 1 ready, 1 old pod left", False, id="the-issue-2-of-3-and-an-old-pod",
        ),
        pytest.param(
            deployment(replicas=5, updatedReplicas=3, readyReplicas=5, availableReplicas=5),
            [pod("a"), pod("b"), pod("c"), pod("o1", "old"), pod("o2", "old")],
            "3 of 3 updated, 3 ready, 2 old pods left", False, id="old-replicas-pending-termination",
        ),
        pytest.param(
            deployment(replicas=3, updatedReplicas=3, readyReplicas=3, availableReplicas=2),
            [pod("a"), pod("b"), pod("c")], "3 of 3 updated, 3 ready", False,
            id="updated-not-yet-available",
        ),
        pytest.param(
            deployment(**COMPLETE), [pod("a"), pod("b"), pod("c", hash="other")],
            "3 of 3 updated, 2 ready, 1 old pod left", False, id="a-pod-of-another-config",
        ),
        pytest.param(
            deployment(**COMPLETE),
            [pod("a"), pod("b"), pod("c"), pod("o", "old", deletionTimestamp="2026-12-05T10:01:00Z")],
            "3 of 3 updated, 3 ready", True, id="complete-an-old-pod-terminating",
        ),
    ],
)  # fmt: skip
def test_deployment_rollout_rules(
    dep: dict[str, Any], pods: list[dict[str, Any]], text: str, done: bool
) -> None:
    state = deployment_state(dep, RSS, pods, HASH)
    assert (state.text, state.done, state.failed) == (text, done, "")


def test_current_pods_are_the_newest_replicasets_and_no_terminating_one() -> None:
    pods = [pod("a"), pod("o", "old"), pod("t", deletionTimestamp="2026-12-05T10:01:00Z")]
    state = deployment_state(deployment(**COMPLETE), RSS, pods, HASH)
    assert [p["metadata"]["name"] for p in state.current] == ["a"]


def test_newest_replicaset_is_the_deployments_revision_and_owned_by_it() -> None:
    assert new_template_hash(deployment(), RSS) == "new"
    assert new_template_hash(deployment(), [replicaset("x", "2", owner="other")]) is None
    state = deployment_state(deployment(**COMPLETE), [], [pod("a")], HASH)
    assert not state.done and state.current == ()


def test_progress_deadline_exceeded_is_a_failure() -> None:
    message = 'ReplicaSet "s-new" has timed out progressing.'
    conditions = [{"type": "Progressing", "reason": "ProgressDeadlineExceeded", "message": message}]
    state = deployment_state(deployment(conditions=conditions), RSS, [], HASH)
    assert state.failed == message and not state.done


TEMPLATE = {k: v for k, v in pod("s").items() if k != "status"}


@pytest.mark.parametrize(
    ("pods", "text", "done"),
    [
        pytest.param([], "the new pod is not created yet", False, id="none"),
        pytest.param([pod("s", ready=False)], "the new pod is not Ready", False, id="not-ready"),
        pytest.param([pod("s")], "the new pod is Ready", True, id="ready"),
        pytest.param(
            [pod("s", hash="old")], "the new pod is not created yet", False, id="old-config"
        ),
        pytest.param(
            [pod("s", deletionTimestamp="2026-12-05T10:01:00Z", hash="old"), pod("s")],
            "the new pod is Ready, 1 old pod left",
            False,
            id="old-one-still-terminating",
        ),
    ],
)
def test_pod_rollout_rules(pods: list[dict[str, Any]], text: str, done: bool) -> None:
    state = pod_state(pods, TEMPLATE)
    assert (state.text, state.done) == (text, done)


def test_a_changed_flag_is_a_new_pod() -> None:
    flagged = pod("s")
    flagged["spec"]["containers"][0]["command"] = ["kube-scheduler", "--no-such-flag=1"]
    assert same_containers(pod("s"), TEMPLATE) and not same_containers(flagged, TEMPLATE)


def lease(holder: str, acquired: str = "2026-12-05T10:00:05.123456Z") -> dict[str, Any]:
    return {"spec": {"holderIdentity": holder, "acquireTime": acquired}}


@pytest.mark.parametrize(
    ("obj", "pods", "holder"),
    [
        pytest.param(lease("a_1"), [pod("a")], "a_1", id="a-new-pod"),
        pytest.param(lease("o_1"), [pod("a")], None, id="an-old-pod"),
        pytest.param(
            lease("a_1", "2026-12-05T09:59:00Z"), [pod("a")], None,
            id="the-replaced-pod-of-the-same-name",
        ),
        pytest.param(
            lease("node-1_9"), [{**pod("a"), "spec": {"hostNetwork": True, "nodeName": "node-1"}}],
            "node-1_9", id="static-pod-by-its-node",
        ),
        pytest.param(
            lease("cp-1_9"),
            [{**pod("a"), "spec": {"hostNetwork": True, "nodeName": "CP-1.example.com"}}],
            "cp-1_9", id="static-pod-node-named-by-its-fqdn",
        ),
        pytest.param({"spec": {}}, [pod("a")], None, id="not-held"),
    ],
)  # fmt: skip
def test_lease_held_by_a_new_pod(
    obj: dict[str, Any], pods: list[dict[str, Any]], holder: str | None
) -> None:
    assert lease_holder(obj, pods) == holder


def test_fatal_problems_leave_out_a_failed_mount_naming_nothing_missing() -> None:
    def report(reason: str, missing: str | None = None) -> CrashReport:
        return CrashReport(ContainerProblem("ns", "p", "c", reason, "", missing=missing))

    reports = [
        report("FailedMount"),
        report("FailedMount", "ConfigMap ns/x"),
        report("CrashLoopBackOff"),
        report("ImagePullBackOff"),
        report("OOMKilled"),
        report("CreateContainerConfigError"),
    ]
    assert [r.problem.reason for r in fatal(reports)] == [
        "FailedMount", "CrashLoopBackOff", "ImagePullBackOff", "OOMKilled",
        "CreateContainerConfigError",
    ]  # fmt: skip
    assert fatal(reports)[0].problem.missing == "ConfigMap ns/x"
