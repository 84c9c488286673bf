"""Every filter, in kube-scheduler's order, through ``evaluate`` on small snapshots."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_filters_support import container, expr, host_port, node, node_affinity, pod, pod_term

from kschedctl.model.filters import (
    FILTER_ORDER,
    NodeInfoSnapshot,
    evaluate,
    failed_scheduling_message,
    matches_node_affinity,
)
from kschedctl.model.filters.verdicts import UNRESOLVABLE, UNSCHEDULABLE


def only(pod_: dict[str, Any], *nodes: dict[str, Any], pods: Any = (), **kw: Any) -> Any:
    """The single node's verdict."""
    ev = evaluate(pod_, NodeInfoSnapshot(list(nodes), list(pods), kw.pop("namespaces", None)), **kw)
    assert len(ev.nodes) == 1
    return ev.nodes[0]


def messages(v: Any) -> list[str]:
    return [r.message for r in v.reasons]


# --- order -------------------------------------------------------------------------------


def test_filter_order_is_kube_schedulers() -> None:
    assert FILTER_ORDER[:6] == (
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
    )
    assert FILTER_ORDER.index("PodTopologySpread") < FILTER_ORDER.index("InterPodAffinity")


def test_first_failing_filter_wins_and_all_reasons_lists_every_one() -> None:
    n = node("n", cpu="1", unschedulable=True, taints=[{"key": "k", "effect": "NoSchedule"}])
    p = pod(
        "p",
        cpu="2",
        nodeSelector={"a": "b"},
        containers=[container(cpu="2", ports=[host_port(80)])],
    )
    busy = pod("busy", node_name="n", containers=[container(ports=[host_port(80)])])
    assert [r.plugin for r in only(p, n, pods=[busy]).reasons] == ["NodeUnschedulable"]
    every = only(p, n, pods=[busy], all_reasons=True)
    assert [r.plugin for r in every.reasons] == [
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
    ]
    assert [r.plugin for r in every.scheduler_reasons] == ["NodeUnschedulable"]


# --- NodeUnschedulable, NodeName, TaintToleration ---------------------------------------


@pytest.mark.parametrize(
    ("tolerations", "fits"),
    [
        ([], False),
        (
            [
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "operator": "Exists",
                    "effect": "NoSchedule",
                }
            ],
            True,
        ),
        ([{"operator": "Exists"}], True),
        (
            [
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                }
            ],
            False,
        ),
    ],
    ids=["no-toleration", "exact", "tolerate-everything", "wrong-effect"],
)
def test_cordoned_node(tolerations: list[dict[str, str]], fits: bool) -> None:
    v = only(pod("p", tolerations=tolerations), node("n", unschedulable=True))
    assert v.fits is fits
    if not fits:
        assert messages(v) == ["node(s) were unschedulable"] and v.code == UNRESOLVABLE
        assert v.reasons[0].fix == "uncordon it (kubectl uncordon n)"


def test_node_name() -> None:
    assert only(pod("p", nodeName="other"), node("n")).plugin == "NodeName"
    assert only(pod("p", nodeName="n"), node("n")).fits


def test_untolerated_taint_detail_and_fix() -> None:
    n = node(
        "n",
        taints=[
            {"key": "soft", "effect": "PreferNoSchedule"},
            {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
        ],
    )
    v = only(pod("p"), n)
    r = v.reasons[0]
    assert (r.message, r.code) == ("node(s) had untolerated taint(s)", UNRESOLVABLE)
    assert r.detail == "taint dedicated=gpu:NoSchedule is not tolerated"
    assert "{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}" in (r.fix or "")
    assert r.taint == {"key": "dedicated", "value": "gpu"}
    tol = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert only(pod("p", tolerations=tol), n).fits  # PreferNoSchedule never filters


# --- NodeAffinity ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("affinity", "labels", "fits"),
    [
        (node_affinity({"matchExpressions": [expr("zone", "In", "a", "b")]}), {"zone": "b"}, True),
        (node_affinity({"matchExpressions": [expr("zone", "NotIn", "a")]}), {}, True),
        (node_affinity({"matchExpressions": [expr("zone", "NotIn", "a")]}), {"zone": "a"}, False),
        (node_affinity({"matchExpressions": [expr("gpu", "Exists")]}), {}, False),
        (node_affinity({"matchExpressions": [expr("gpu", "DoesNotExist")]}), {}, True),
        (node_affinity({"matchExpressions": [expr("cores", "Gt", "8")]}), {"cores": "16"}, True),
        (node_affinity({"matchExpressions": [expr("cores", "Lt", "8")]}), {"cores": "16"}, False),
        # terms are ORed, expressions inside a term ANDed
        (
            node_affinity(
                {"matchExpressions": [expr("zone", "In", "x")]},
                {"matchExpressions": [expr("zone", "In", "a"), expr("ssd", "Exists")]},
            ),
            {"zone": "a", "ssd": ""},
            True,
        ),
        (
            node_affinity({"matchExpressions": [expr("zone", "In", "a"), expr("ssd", "Exists")]}),
            {"zone": "a"},
            False,
        ),
        # a term with no expressions or fields matches nothing
        (node_affinity({}), {"zone": "a"}, False),
        (node_affinity({"matchFields": [expr("metadata.name", "NotIn", "n")]}), {}, False),
    ],
    ids=[
        "in",
        "notin-absent-label",
        "notin",
        "exists",
        "doesnotexist",
        "gt",
        "lt",
        "or-of-terms",
        "and-in-term",
        "empty-term",
        "matchfields-notin",
    ],
)
def test_required_node_affinity(
    affinity: dict[str, Any], labels: dict[str, str], fits: bool
) -> None:
    n = node("n", labels=labels)
    v = only(pod("p", affinity=affinity), n)
    assert v.fits is fits
    assert matches_node_affinity(pod("p", affinity=affinity), n) is fits
    if not fits:
        assert messages(v) == ["node(s) didn't match Pod's node affinity/selector"]


def test_node_selector_and_affinity_are_anded_and_detail_names_the_label() -> None:
    aff = node_affinity({"matchExpressions": [expr("zone", "In", "a")]})
    v = only(pod("p", nodeSelector={"disk": "ssd"}, affinity=aff), node("n", labels={"zone": "a"}))
    assert v.reasons[0].detail == "nodeSelector disk=ssd (node has no label disk)"
    assert v.reasons[0].fix is not None and "kubectl label node n disk=ssd" in v.reasons[0].fix
    v = only(pod("p", affinity=aff), node("n", labels={"zone": "b"}))
    assert v.reasons[0].detail == "required node affinity: zone In [a] (node has zone=b)"


def test_matchfields_prefilter_narrows_the_nodes() -> None:
    aff = node_affinity({"matchFields": [expr("metadata.name", "In", "n2")]})
    ev = evaluate(
        pod("p", cpu="8", affinity=aff), NodeInfoSnapshot([node("n1"), node("n2"), node("n3")])
    )
    assert [messages(v) for v in ev.nodes] == [
        ["node(s) didn't satisfy plugin(s) [NodeAffinity]"],
        ["Insufficient cpu"],
        ["node(s) didn't satisfy plugin(s) [NodeAffinity]"],
    ]
    assert failed_scheduling_message(ev) == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) "
        "[NodeAffinity]. no new claims to deallocate, preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling."
    )


def test_matchfields_prefilter_is_skipped_when_a_term_pins_no_name() -> None:
    aff = node_affinity(
        {"matchFields": [expr("metadata.name", "In", "n2")]},
        {"matchExpressions": [expr("zone", "In", "a")]},
    )
    ev = evaluate(pod("p", affinity=aff), NodeInfoSnapshot([node("n1"), node("n2")]))
    assert messages(ev.nodes[0]) == ["node(s) didn't match Pod's node affinity/selector"]
    assert ev.nodes[1].fits


# --- NodePorts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("used", "wanted", "conflict"),
    [
        (host_port(80), host_port(80), True),
        (host_port(80), host_port(81), False),
        (host_port(80), host_port(80, protocol="UDP"), False),
        (host_port(80, ip="10.0.0.1"), host_port(80), True),  # wanted 0.0.0.0: any IP conflicts
        (host_port(80), host_port(80, ip="10.0.0.1"), True),  # used 0.0.0.0 conflicts with all
        (host_port(80, ip="10.0.0.1"), host_port(80, ip="10.0.0.2"), False),
        (host_port(80, ip="10.0.0.1"), host_port(80, ip="10.0.0.1"), True),
        (host_port(80, protocol="SCTP"), host_port(80, protocol="SCTP"), True),
    ],
    ids=[
        "same",
        "other-port",
        "other-protocol",
        "wildcard-wanted",
        "wildcard-used",
        "different-ips",
        "same-ip",
        "sctp",
    ],
)
def test_host_ports(used: dict[str, Any], wanted: dict[str, Any], conflict: bool) -> None:
    busy = pod("busy", node_name="n", containers=[container(ports=[used])])
    v = only(pod("p", containers=[container(ports=[wanted])]), node("n"), pods=[busy])
    assert v.fits is not conflict
    if conflict:
        r = v.reasons[0]
        assert r.message == "node(s) didn't have free ports for the requested pod ports"
        assert r.code == UNSCHEDULABLE and "default/busy" in r.detail


def test_sidecar_ports_count_but_plain_init_container_ports_do_not() -> None:
    busy = pod(
        "busy",
        node_name="n",
        containers=[container()],
        initContainers=[container("side", ports=[host_port(80)], restart_policy="Always")],
    )
    assert (
        only(pod("p", containers=[container(ports=[host_port(80)])]), node("n"), pods=[busy]).plugin
        == "NodePorts"
    )
    init_only = pod(
        "i",
        node_name="n",
        containers=[container()],
        initContainers=[container("init", ports=[host_port(80)])],
    )
    assert only(
        pod("p", containers=[container(ports=[host_port(80)])]), node("n"), pods=[init_only]
    ).fits


# --- NodeResourcesFit --------------------------------------------------------------------


def test_insufficient_cpu_and_memory_on_the_same_node_with_numbers() -> None:
    busy = pod("busy", node_name="n", cpu="2500m", memory="7Gi")
    v = only(pod("p", cpu="3", memory="2Gi"), node("n", cpu="4", memory="8Gi"), pods=[busy])
    assert messages(v) == ["Insufficient cpu", "Insufficient memory"]
    assert [r.detail for r in v.reasons] == [
        "cpu: requests 3, free 1.5 of 4",
        "memory: requests 2Gi, free 1Gi of 8Gi",
    ]
    assert v.code == UNSCHEDULABLE


def test_request_larger_than_allocatable_is_unresolvable() -> None:
    v = only(pod("p", cpu="5"), node("n", cpu="4"))
    assert v.code == UNRESOLVABLE and "exceeds the node's allocatable" in (v.reasons[0].fix or "")


def test_terminal_pods_do_not_count() -> None:
    done = pod("done", node_name="n", cpu="4", phase="Succeeded")
    failed = pod("failed", node_name="n", cpu="4", phase="Failed")
    assert only(pod("p", cpu="4"), node("n", cpu="4", pods="2"), pods=[done, failed]).fits


def test_too_many_pods_even_for_a_pod_requesting_nothing() -> None:
    existing = [pod(f"e{i}", node_name="n") for i in range(2)]
    v = only(pod("p"), node("n", cpu="1", pods="2"), pods=existing)
    assert (
        messages(v) == ["Too many pods"]
        and v.reasons[0].detail == "pods: 2 of 2 already on the node"
    )
    # a pod requesting nothing fits a node whose cpu is fully requested
    full = [pod("full", node_name="n", cpu="1")]
    assert only(pod("p"), node("n", cpu="1"), pods=full).fits


def test_extended_resources() -> None:
    gpu_pod = pod("p", containers=[container(requests={"nvidia.com/gpu": "1"})])
    v = only(gpu_pod, node("n"))
    assert messages(v) == ["Insufficient nvidia.com/gpu"] and v.code == UNRESOLVABLE
    assert only(gpu_pod, node("n", extra={"nvidia.com/gpu": "1"})).fits


def test_sidecars_and_overhead_in_the_request() -> None:
    p = pod(
        "p",
        containers=[container(cpu="1")],
        initContainers=[container("side", cpu="1", restart_policy="Always")],
        overhead={"cpu": "500m"},
    )
    assert messages(only(p, node("n", cpu="2"))) == ["Insufficient cpu"]
    assert only(p, node("n", cpu="2500m")).fits


# --- PodTopologySpread -------------------------------------------------------------------

ZONES = [
    node("a1", labels={"zone": "a"}),
    node("a2", labels={"zone": "a"}),
    node("b1", labels={"zone": "b"}),
]


def spread(**extra: Any) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        **extra,
    }


def web(name: str, node_name: str, **kw: Any) -> dict[str, Any]:
    return pod(name, node_name=node_name, labels={"app": "web"}, **kw)


def plugins(ev: Any) -> list[str | None]:
    return [v.plugin for v in ev.nodes]


def test_spread_skew() -> None:
    ev = evaluate(
        pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread()]),
        NodeInfoSnapshot(ZONES, [web("w1", "a1")]),
    )
    assert plugins(ev) == ["PodTopologySpread", "PodTopologySpread", None]
    assert "zone=a has 1 matching pod(s)" in ev.nodes[0].reasons[0].detail


def test_spread_ignores_schedule_anyway_and_terminating_pods() -> None:
    soft = spread(whenUnsatisfiable="ScheduleAnyway")
    assert (
        evaluate(
            pod("p", labels={"app": "web"}, topologySpreadConstraints=[soft]),
            NodeInfoSnapshot(ZONES, [web("w1", "a1")]),
        )
        .nodes[0]
        .fits
    )
    gone = web("w1", "a1")
    gone["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert (
        evaluate(
            pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread()]),
            NodeInfoSnapshot(ZONES, [gone]),
        )
        .nodes[0]
        .fits
    )


def test_spread_node_affinity_policy_honor_by_default() -> None:
    existing = [web("w1", "a1"), web("w2", "a2")]
    p = pod(
        "p", labels={"app": "web"}, nodeSelector={"zone": "a"}, topologySpreadConstraints=[spread()]
    )
    # Honor: zone b is not a domain, so the global minimum is zone a's own count
    assert evaluate(p, NodeInfoSnapshot(ZONES, existing)).nodes[0].fits
    p["spec"]["topologySpreadConstraints"] = [spread(nodeAffinityPolicy="Ignore")]
    assert plugins(evaluate(p, NodeInfoSnapshot(ZONES, existing))) == [
        "PodTopologySpread",
        "PodTopologySpread",
        "NodeAffinity",
    ]


def test_spread_node_taints_policy() -> None:
    nodes = [
        node("a1", labels={"zone": "a"}),
        node("b1", labels={"zone": "b"}, taints=[{"key": "t", "effect": "NoSchedule"}]),
    ]
    p = pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread()])
    assert plugins(evaluate(p, NodeInfoSnapshot(nodes, [web("w1", "a1")]))) == [
        "PodTopologySpread",
        "TaintToleration",
    ]
    p["spec"]["topologySpreadConstraints"] = [spread(nodeTaintsPolicy="Honor")]
    assert plugins(evaluate(p, NodeInfoSnapshot(nodes, [web("w1", "a1")]))) == [
        None,
        "TaintToleration",
    ]


def test_spread_min_domains() -> None:
    existing = [web("w1", "a1"), web("w2", "b1")]
    p = pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread(minDomains=3)])
    # only 2 domains < minDomains 3: global minimum is 0, so 1 + 1 - 0 > 1 everywhere
    assert plugins(evaluate(p, NodeInfoSnapshot(ZONES, existing))) == ["PodTopologySpread"] * 3
    p["spec"]["topologySpreadConstraints"] = [spread(minDomains=2)]
    assert plugins(evaluate(p, NodeInfoSnapshot(ZONES, existing))) == [None, None, None]


def test_spread_missing_label_is_unresolvable() -> None:
    nodes = [*ZONES, node("nolabel")]
    ev = evaluate(
        pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread()]),
        NodeInfoSnapshot(nodes),
    )
    v = ev.verdict("nolabel")
    assert messages(v) == [
        "node(s) didn't match pod topology spread constraints (missing required label)"
    ]
    assert v.code == UNRESOLVABLE


def test_spread_match_label_keys_and_other_namespaces() -> None:
    existing = [
        pod("old", node_name="a1", labels={"app": "web", "rev": "1"}),
        pod("other-ns", node_name="a1", namespace="x", labels={"app": "web", "rev": "2"}),
    ]
    p = pod(
        "p",
        labels={"app": "web", "rev": "2"},
        topologySpreadConstraints=[spread(matchLabelKeys=["rev"])],
    )
    assert evaluate(p, NodeInfoSnapshot(ZONES, existing)).nodes[0].fits
    p["spec"]["topologySpreadConstraints"] = [spread()]
    assert not evaluate(p, NodeInfoSnapshot(ZONES, existing)).nodes[0].fits


# --- InterPodAffinity --------------------------------------------------------------------

HOSTS = [
    node("n1", labels={"zone": "a"}),
    node("n2", labels={"zone": "a"}),
    node("n3", labels={"zone": "b"}),
]


def test_required_pod_affinity_and_the_first_replica_exception() -> None:
    aff = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [pod_term({"app": "db"}, "zone")]
        }
    }
    db = pod("db", node_name="n3", labels={"app": "db"})
    ev = evaluate(pod("p", affinity=aff), NodeInfoSnapshot(HOSTS, [db]))
    assert plugins(ev) == ["InterPodAffinity", "InterPodAffinity", None]
    assert ev.nodes[0].code == UNRESOLVABLE
    # no db pod anywhere, and the pod does not match its own term: nowhere
    assert (
        plugins(evaluate(pod("p", affinity=aff), NodeInfoSnapshot(HOSTS)))
        == ["InterPodAffinity"] * 3
    )
    # ... but a pod matching its own term may start the group
    first = pod("p", labels={"app": "db"}, affinity=aff)
    assert plugins(evaluate(first, NodeInfoSnapshot(HOSTS))) == [None, None, None]


def test_required_anti_affinity_of_the_incoming_pod() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [pod_term({"app": "web"}, "zone")]
        }
    }
    ev = evaluate(pod("p", affinity=anti), NodeInfoSnapshot(HOSTS, [web("w", "n1")]))
    assert plugins(ev) == ["InterPodAffinity", "InterPodAffinity", None]
    r = ev.nodes[0].reasons[0]
    assert r.message == "node(s) didn't match pod anti-affinity rules" and r.code == UNSCHEDULABLE
    assert "default/w" in r.detail


def test_existing_pods_anti_affinity() -> None:
    guard = pod(
        "guard",
        node_name="n1",
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [pod_term({"app": "web"})]
            }
        },
    )
    ev = evaluate(pod("p", labels={"app": "web"}), NodeInfoSnapshot(HOSTS, [guard]))
    assert plugins(ev) == ["InterPodAffinity", None, None]
    assert messages(ev.nodes[0]) == ["node(s) didn't satisfy existing pods anti-affinity rules"]


def test_affinity_term_namespaces() -> None:
    other = pod("db", namespace="data", node_name="n1", labels={"app": "db"})
    term = pod_term({"app": "db"})
    aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    # default: the pod's own namespace only
    assert not evaluate(pod("p", affinity=aff), NodeInfoSnapshot(HOSTS, [other])).nodes[0].fits
    term["namespaces"] = ["data"]
    assert evaluate(pod("p", affinity=aff), NodeInfoSnapshot(HOSTS, [other])).nodes[0].fits
    del term["namespaces"]
    term["namespaceSelector"] = {}  # all namespaces
    assert evaluate(pod("p", affinity=aff), NodeInfoSnapshot(HOSTS, [other])).nodes[0].fits
    term["namespaceSelector"] = {"matchLabels": {"team": "data"}}
    namespaces = {"data": {"metadata": {"name": "data", "labels": {"team": "data"}}}}
    assert (
        evaluate(pod("p", affinity=aff), NodeInfoSnapshot(HOSTS, [other], namespaces)).nodes[0].fits
    )
    no_ns = evaluate(pod("p", affinity=aff), NodeInfoSnapshot(HOSTS, [other]))
    assert not no_ns.nodes[0].fits and no_ns.notes  # says it had no namespace labels


def test_existing_anti_affinity_with_namespace_selector() -> None:
    guard = pod(
        "guard",
        namespace="sec",
        node_name="n1",
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    pod_term({"app": "web"}, namespaceSelector={"matchLabels": {"env": "prod"}})
                ]
            }
        },
    )
    p = pod("p", namespace="shop", labels={"app": "web"})
    prod = {"shop": {"env": "prod"}}
    assert evaluate(p, NodeInfoSnapshot(HOSTS, [guard], prod)).nodes[0].plugin == "InterPodAffinity"
    assert evaluate(p, NodeInfoSnapshot(HOSTS, [guard], {"shop": {"env": "dev"}})).nodes[0].fits


# --- nominated pods, preemption, volumes, snapshot updates ------------------------------


def test_nominated_pods_of_higher_priority_take_their_place_first() -> None:
    nominated = pod("nom", cpu="3", priority=100)
    nominated["status"]["nominatedNodeName"] = "n"
    v = only(pod("p", cpu="2", priority=10), node("n", cpu="4"), pods=[nominated])
    assert messages(v) == ["Insufficient cpu"] and "default/nom" in v.reasons[0].detail
    assert only(pod("p", cpu="2", priority=200), node("n", cpu="4"), pods=[nominated]).fits


def test_preemption_dry_run() -> None:
    nodes = [
        node("n1", cpu="4"),
        node("n2", cpu="4"),
        node("n3", cpu="1", taints=[{"key": "k", "effect": "NoSchedule"}]),
    ]
    existing = [
        pod("low-1", node_name="n1", cpu="2", priority=1),
        pod("low-2", node_name="n1", cpu="1", priority=1),
        pod("peer", node_name="n2", cpu="3", priority=5),
    ]
    ev = evaluate(pod("p", cpu="3", priority=5), NodeInfoSnapshot(nodes, existing))
    assert ev.preemption is not None and ev.preemption.helps
    # evicting low-1 alone is enough; low-2 is reprieved
    assert [(c.node, c.victims) for c in ev.preemption.candidates] == [("n1", ("default/low-1",))]
    assert ev.preemption.node_reasons == {"n2": ("No preemption victims found for incoming pod",)}
    assert failed_scheduling_message(ev) == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    )
    # the snapshot is left as it was
    assert [p.name for p in NodeInfoSnapshot(nodes, existing).node("n1").pods] == ["low-1", "low-2"]
    assert ev.nodes[0].reasons[0].detail == "cpu: requests 3, free 1 of 4"


def test_preemption_that_cannot_help() -> None:
    existing = [
        pod("low", node_name="n1", cpu="1", priority=1),
        pod("big", node_name="n1", cpu="3", priority=10),
    ]
    ev = evaluate(pod("p", cpu="3", priority=5), NodeInfoSnapshot([node("n1", cpu="4")], existing))
    assert ev.preemption is not None and not ev.preemption.helps
    assert failed_scheduling_message(ev) == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
        "0/1 nodes are available: 1 Insufficient cpu."
    )
    never = pod("p", cpu="3", priority=5, preemptionPolicy="Never")
    assert failed_scheduling_message(
        evaluate(never, NodeInfoSnapshot([node("n1", cpu="4")], existing))
    ) == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
        "not eligible due to preemptionPolicy=Never."
    )


def test_volumes_are_reported_as_not_evaluated() -> None:
    p = pod("p", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}])
    ev = evaluate(p, NodeInfoSnapshot([node("n")]))
    assert ev.schedulable and not ev.complete
    assert [n.plugin for n in ev.not_evaluated] == [
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
    ]
    assert "data-0" in ev.not_evaluated[0].why
    assert evaluate(
        pod("p", volumes=[{"name": "t", "emptyDir": {}}]), NodeInfoSnapshot([node("n")])
    ).complete


def test_assume_prevents_double_booking_and_forget_undoes_it() -> None:
    snap = NodeInfoSnapshot([node("n", cpu="4")])
    first, second = pod("a", cpu="3"), pod("b", cpu="3")
    assert evaluate(first, snap).feasible == ["n"]
    snap.assume(first, "n")
    assert snap.node("n").requested["cpu"] == 3000
    assert evaluate(second, snap).feasible == []
    bound = json.loads(json.dumps(first))
    bound["spec"]["nodeName"] = "n"
    snap.upsert_pod(bound)  # the watch confirms the binding: replaced, not added twice
    assert snap.node("n").requested["cpu"] == 3000 and len(snap.node("n").pods) == 1
    snap.forget(first)
    assert evaluate(second, snap).feasible == ["n"]


def test_pods_bound_before_their_node_appears_are_attached_later() -> None:
    snap = NodeInfoSnapshot([], [pod("early", node_name="late", cpu="1")])
    snap.upsert_node(node("late", cpu="1"))
    assert evaluate(pod("p", cpu="1"), snap).nodes[0].plugin == "NodeResourcesFit"
    snap.remove_pod("uid-default-early")
    assert evaluate(pod("p", cpu="1"), snap).schedulable


def test_evaluation_is_json_ready() -> None:
    ev = evaluate(pod("p", cpu="8"), NodeInfoSnapshot([node("n")]))
    data = json.loads(json.dumps(ev.to_dict()))
    assert data["schedulable"] is False
    assert data["nodes"][0]["reasons"][0]["message"] == "Insufficient cpu"
    assert data["pod"] == {
        "namespace": "default",
        "name": "p",
        "schedulerName": "default-scheduler",
    }


def test_nominated_pods_of_another_scheduler_are_not_counted() -> None:
    nominated = pod("nom", cpu="3", priority=100, schedulerName="other-scheduler")
    nominated["status"]["nominatedNodeName"] = "n"
    assert only(pod("p", cpu="2"), node("n", cpu="4"), pods=[nominated]).fits


def test_non_zero_requests_per_node_for_scoring() -> None:
    snap = NodeInfoSnapshot(
        [node("n")], [pod("a", node_name="n"), pod("b", node_name="n", cpu="1")]
    )
    assert snap.node("n").non_zero_requested() == {"cpu": 1100, "memory": 400 * 1024**2}
    assert snap.node("n").requested == {"cpu": 1000}


def test_non_zero_requests_follow_every_change_once_computed() -> None:
    """The sums are kept up to date by add/remove after the first call: always equal to a
    fresh count over the node's pods."""
    snap = NodeInfoSnapshot([node("n"), node("m")], [pod("a", node_name="n")])
    info = snap.node("n")

    def fresh() -> dict[str, int]:
        cpu = sum(p.non_zero()[0] for p in info.pods)
        return {"cpu": cpu, "memory": sum(p.non_zero()[1] for p in info.pods)}

    assert info.non_zero_requested() == fresh() == {"cpu": 100, "memory": 200 * 1024**2}
    b = pod("b", node_name="n", cpu="1")
    snap.upsert_pod(b)
    assert info.non_zero_requested() == fresh() == {"cpu": 1100, "memory": 400 * 1024**2}
    pending = pod("c", cpu="250m")
    snap.assume(pending, "n")
    assert info.non_zero_requested() == fresh() == {"cpu": 1350, "memory": 600 * 1024**2}
    snap.forget(pending)
    snap.remove_pod(b)
    assert info.non_zero_requested() == fresh() == {"cpu": 100, "memory": 200 * 1024**2}
    snap.upsert_node(node("n", cpu="8"))  # a node update carries its pods over
    assert snap.node("n").non_zero_requested() == {"cpu": 100, "memory": 200 * 1024**2}


def pvc(name: str, *, bound: bool = False, cls: str | None = None, **extra: Any) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": "default"}
    spec: dict[str, Any] = {}
    if cls is not None:
        spec["storageClassName"] = cls
    if bound:
        spec["volumeName"] = f"pv-{name}"
        md["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    md.update(extra.pop("metadata", {}))
    return {"metadata": md, "spec": spec, "status": extra.pop("status", {})}


CLASSES = [
    {"metadata": {"name": "fast"}, "volumeBindingMode": "Immediate"},
    {"metadata": {"name": "local"}, "volumeBindingMode": "WaitForFirstConsumer"},
]


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ([], 'persistentvolumeclaim "data" not found'),
        ([pvc("data", cls="fast")], "pod has unbound immediate PersistentVolumeClaims"),
        ([pvc("data")], "pod has unbound immediate PersistentVolumeClaims"),
        ([pvc("data", cls="local")], None),
        ([pvc("data", bound=True, cls="fast")], None),
        (
            [pvc("data", cls="fast", metadata={"deletionTimestamp": "2026-01-01T00:00:00Z"})],
            'persistentvolumeclaim "data" is being deleted',
        ),
        (
            [pvc("data", bound=True, status={"phase": "Lost"})],
            'persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-data"',
        ),
    ],
    ids=[
        "missing",
        "unbound-immediate",
        "unbound-no-class",
        "wait-for-first-consumer",
        "bound",
        "deleting",
        "lost",
    ],
)
def test_volume_prefilter(claims: list[dict[str, Any]], message: str | None) -> None:
    p = pod("p", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}])
    snap = NodeInfoSnapshot(
        [node("n1"), node("n2")], persistent_volume_claims=claims, storage_classes=CLASSES
    )
    ev = evaluate(p, snap)
    if message is None:
        assert ev.prefilter is None and ev.schedulable and not ev.complete
        return
    assert ev.prefilter is not None and ev.prefilter.message == message
    assert failed_scheduling_message(ev) == f"0/2 nodes are available: {message}. not found"


def test_ephemeral_volume_claim_not_created_yet() -> None:
    p = pod("p", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}])
    ev = evaluate(p, NodeInfoSnapshot([node("n")], persistent_volume_claims=[], storage_classes=[]))
    assert ev.prefilter is not None and ev.prefilter.message == (
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"'
    )


def test_prefilter_rejection_with_all_reasons_still_shows_node_filters() -> None:
    p = pod("p", cpu="8", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "gone"}}])
    snap = NodeInfoSnapshot([node("n")], persistent_volume_claims=[], storage_classes=[])
    v = evaluate(p, snap, all_reasons=True).nodes[0]
    assert messages(v) == ['persistentvolumeclaim "gone" not found', "Insufficient cpu"]
    assert [r.message for r in v.scheduler_reasons] == ['persistentvolumeclaim "gone" not found']
