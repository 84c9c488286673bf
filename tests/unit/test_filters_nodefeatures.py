"""NodeDeclaredFeatures on plain dicts: each feature kube-scheduler v1.36 infers from a pod's
spec, the filter against ``status.declaredFeatures`` in `why` and kschedctl's scheduler, and
kube-scheduler's message."""

from __future__ import annotations

from typing import Any

import pytest
from test_filters_support import container, node, pod

from kschedctl.model.filters import NodeInfoSnapshot, evaluate, failed_scheduling_message
from kschedctl.model.filters.nodefeatures import REASON_NODE_FEATURES, required_features
from kschedctl.model.filters.verdicts import UNRESOLVABLE
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.slim import slim_node
from kschedctl.model.scheduling.strategies import DEFAULT_STRATEGY

RESTART_ALL = "RestartAllContainersOnContainerExits"
USERNS = "UserNamespacesHostNetworkSupport"


def restarting(action: str = "RestartAllContainers") -> dict[str, Any]:
    rule = {"action": action, "exitCodes": {"operator": "In", "values": [42]}}
    return {**container(), "restartPolicy": "Never", "restartPolicyRules": [rule]}


def declaring(name: str, *features: str) -> dict[str, Any]:
    n = node(name)
    n["status"]["declaredFeatures"] = sorted(features)
    return n


@pytest.mark.parametrize(
    ("spec", "features"),
    [
        pytest.param({}, (), id="nothing"),
        pytest.param({"containers": [restarting()]}, (RESTART_ALL,), id="container-rule"),
        pytest.param(
            {"containers": [container()], "initContainers": [restarting()]},
            (RESTART_ALL,),
            id="init-container-rule",
        ),  # fmt: skip
        pytest.param({"containers": [restarting("Restart")]}, (), id="other-action"),
        pytest.param({"hostNetwork": True, "hostUsers": False}, (USERNS,), id="userns-hostnet"),
        pytest.param({"hostNetwork": True}, (), id="hostnet-host-users-unset"),
        pytest.param({"hostNetwork": True, "hostUsers": True}, (), id="hostnet-host-users"),
        pytest.param({"hostUsers": False}, (), id="userns-pod-network"),
        pytest.param(
            {"containers": [restarting()], "hostNetwork": True, "hostUsers": False},
            (RESTART_ALL, USERNS),
            id="both-sorted",
        ),  # fmt: skip
    ],
)
def test_inferred_features(spec: dict[str, Any], features: tuple[str, ...]) -> None:
    assert required_features(pod("p", **spec)) == features


def test_nodes_without_the_feature_are_unresolvable() -> None:
    snap = NodeInfoSnapshot([node("a"), declaring("b", RESTART_ALL), declaring("c", USERNS)])
    p = pod("p", containers=[restarting()])
    ev = evaluate(p, snap)
    assert not ev.not_evaluated
    assert ev.feasible == ["b"]
    reason = ev.verdict("a").reasons[0]
    assert (reason.message, reason.code) == (REASON_NODE_FEATURES, UNRESOLVABLE)
    assert RESTART_ALL in reason.detail


def test_every_required_feature_must_be_declared() -> None:
    snap = NodeInfoSnapshot([declaring("a", RESTART_ALL), declaring("b", RESTART_ALL, USERNS)])
    p = pod("p", containers=[restarting()], hostNetwork=True, hostUsers=False)
    assert evaluate(p, snap).feasible == ["b"]


def test_kube_schedulers_message() -> None:
    snap = NodeInfoSnapshot([node("a"), node("b")])
    ev = evaluate(pod("p", hostNetwork=True, hostUsers=False), snap)
    assert failed_scheduling_message(ev, (1, 36, 3)) == (
        "0/2 nodes are available: 2 node(s) didn't match Pod's required features. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )


def test_kschedctls_scheduler_places_such_pods_where_the_feature_is_declared() -> None:
    nodes = [slim_node(node("a")), slim_node(declaring("b", RESTART_ALL))]
    assert nodes[1]["status"]["declaredFeatures"] == [RESTART_ALL]  # the cache keeps it
    decision = Algorithm(DEFAULT_STRATEGY).decide(
        pod("p", containers=[restarting()]), NodeInfoSnapshot(nodes)
    )
    assert decision.node == "b"
    refused = Algorithm(DEFAULT_STRATEGY).decide(
        pod("p", containers=[restarting()]), NodeInfoSnapshot(nodes[:1])
    )
    assert refused.node is None
    assert refused.message is not None
    assert refused.message.startswith(
        "0/1 nodes are available: 1 node(s) didn't match Pod's required features."
    )
