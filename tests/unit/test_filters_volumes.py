"""The per-node volume filters on plain-dict fixtures: PV node affinity of bound claims,
VolumeZone (multi-zone labels, beta keys), WaitForFirstConsumer matching (class, access modes,
capacity, volumeMode, selector, smallest fit), provisioning with and without a scheduler that
provisions, ReadWriteOncePod conflicts, and the messages kube-scheduler v1.36 writes."""

from __future__ import annotations

from typing import Any

import pytest
from test_filters_support import node, pod

from kschedctl.model.filters import (
    NodeInfoSnapshot,
    evaluate,
    failed_scheduling_message,
    feasible_nodes,
)
from kschedctl.model.filters.volumebinding import (
    REASON_BIND_CONFLICT,
    REASON_NODE_CONFLICT,
    REASON_PROVISIONING_UNSUPPORTED,
    REASON_PV_NOT_EXIST,
    find_matching_volume,
    pv_node_affinity_failure,
)
from kschedctl.model.filters.volumerestrictions import REASON_RWOP_CONFLICT
from kschedctl.model.filters.volumes import volume_bindings
from kschedctl.model.filters.volumezone import REASON_ZONE_CONFLICT, zone_set

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def sc(
    name: str,
    mode: str = "WaitForFirstConsumer",
    provisioner: str = "kubernetes.io/no-provisioner",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
        **extra,
    }


def on_nodes(*names: str) -> dict[str, Any]:
    return {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": HOST, "operator": "In", "values": list(names)}]}
            ]
        }
    }


def pv(
    name: str,
    *,
    size: str = "10Gi",
    cls: str = "local",
    nodes: tuple[str, ...] = (),
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    phase: str = "Available",
    claim: tuple[str, str] | None = None,
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": list(modes),
        "storageClassName": cls,
        "local": {"path": f"/mnt/{name}"},
        **spec,
    }
    if nodes:
        s["nodeAffinity"] = on_nodes(*nodes)
    if claim:
        s["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": s,
        "status": {"phase": phase},
    }


def pvc(
    name: str,
    *,
    cls: str | None = "local",
    size: str = "1Gi",
    volume: str = "",
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "accessModes": list(modes),
        "resources": {"requests": {"storage": size}},
        **spec,
    }
    if cls is not None:
        s["storageClassName"] = cls
    ann = dict(annotations or {})
    if volume:
        s["volumeName"] = volume
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "annotations": ann,
        },
        "spec": s,
        "status": {"phase": "Bound" if volume else "Pending"},
    }


def with_claims(name: str, *claims: str, **kw: Any) -> dict[str, Any]:
    return pod(
        name,
        volumes=[
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
            for i, c in enumerate(claims)
        ],
        **kw,
    )


NODES = [
    node("n1", labels={ZONE: "a"}),
    node("n2", labels={ZONE: "b"}),
    node("n3", labels={ZONE: "a"}),
]
CLASSES = [sc("local"), sc("fast", provisioner="example.com/csi"), sc("now", mode="Immediate")]


def snap(
    pvcs: list[dict[str, Any]],
    pvs: list[dict[str, Any]],
    nodes: list[dict[str, Any]] = NODES,
    pods: list[dict[str, Any]] = (),
    drivers: list[dict[str, Any]] | None = [],  # noqa: B006 (read only)
    capacities: list[dict[str, Any]] | None = [],  # noqa: B006 (read only)
) -> NodeInfoSnapshot:  # type: ignore[assignment]
    return NodeInfoSnapshot(
        nodes,
        pods,
        persistent_volume_claims=pvcs,
        storage_classes=CLASSES,
        persistent_volumes=pvs,
        csi_drivers=drivers,
        csi_storage_capacities=capacities,
    )


def reasons(ev: Any) -> dict[str, list[str]]:
    return {v.name: [r.message for r in v.scheduler_reasons] for v in ev.nodes}


# --- bound claims: PV node affinity and zones ---------------------------------------------------


def test_bound_claim_goes_only_where_its_pv_node_affinity_allows() -> None:
    s = snap(
        [pvc("data", volume="pv1")],
        [pv("pv1", nodes=("n2",), phase="Bound", claim=("default", "data"))],
    )
    ev = evaluate(with_claims("p", "data"), s)
    assert ev.feasible == ["n2"]
    assert reasons(ev)["n1"] == [REASON_NODE_CONFLICT]
    assert ev.complete
    assert failed_scheduling_message(
        evaluate(with_claims("p", "data", nodeSelector={HOST: "n1"}), s)
    ) == (
        "0/3 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, "
        "2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert feasible_nodes(with_claims("p", "data"), s).names == ("n2",)
    detail = ev.verdict("n1").reasons[0].detail
    assert "pv1" in detail and "kubernetes.io/hostname" in detail


@pytest.mark.parametrize(
    ("labels", "feasible"),
    [
        pytest.param({ZONE: "a"}, ["n1", "n3", "bare"], id="one-zone"),
        pytest.param({ZONE: "a__b"}, ["n1", "n2", "n3", "bare"], id="multi-zone-separator"),
        pytest.param(
            {"failure-domain.beta.kubernetes.io/zone": "b"},
            ["n2", "bare"],
            id="beta-key-matches-ga-node-label",
        ),
        pytest.param({ZONE: "a__"}, ["n1", "n2", "n3", "bare"], id="invalid-value-ignored"),
        pytest.param(
            {"topology.kubernetes.io/region": "r1"}, ["bare"], id="region-missing-on-nodes"
        ),
    ],
)
def test_volume_zone(labels: dict[str, str], feasible: list[str]) -> None:
    nodes = [*NODES, node("bare")]  # a node without zone labels is never constrained
    s = snap([pvc("data", volume="pv1")], [pv("pv1", phase="Bound", labels=labels)], nodes)
    ev = evaluate(with_claims("p", "data"), s)
    assert ev.feasible == feasible
    for name, rs in reasons(ev).items():
        assert rs == ([] if name in feasible else [REASON_ZONE_CONFLICT])
    assert list(feasible_nodes(with_claims("p", "data"), s).names) == feasible


def test_zone_set() -> None:
    assert zone_set("a__b") == {"a", "b"}
    assert zone_set(" a ") == {"a"}
    assert zone_set("a____b") is None


def test_bound_pv_missing_is_volume_zone_prefilter_not_found() -> None:
    s = snap([pvc("data", volume="gone")], [])
    ev = evaluate(with_claims("p", "data"), s)
    assert ev.prefilter is not None and ev.prefilter.message == 'persistentvolume "gone" not found'
    # A PreFilter rejection: DynamicResources' PostFilter finds no state ("not found").
    assert failed_scheduling_message(ev) == (
        '0/3 nodes are available: persistentvolume "gone" not found. not found'
    )


def test_ephemeral_claim_bound_to_missing_pv() -> None:
    p = pod("p", uid="u", volumes=[{"name": "s", "ephemeral": {"volumeClaimTemplate": {}}}])
    p["metadata"]["uid"] = "u"
    claim = pvc("p-s", volume="gone")
    claim["metadata"]["ownerReferences"] = [{"controller": True, "uid": "u"}]
    ev = evaluate(p, snap([claim], []))
    assert reasons(ev)["n1"] == [REASON_PV_NOT_EXIST]


def test_pv_node_affinity_matches_labels_only() -> None:
    terms = {
        "required": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["x"]}]}
            ]
        }
    }
    assert pv_node_affinity_failure(pv("a", nodeAffinity=terms), {}) is None  # Go skips fields
    assert pv_node_affinity_failure(pv("a"), {}) is None
    empty = {"required": {"nodeSelectorTerms": []}}
    assert pv_node_affinity_failure(pv("a", nodeAffinity=empty), {}) is not None


# --- WaitForFirstConsumer: static matching ------------------------------------------------------


def test_wffc_claim_fits_only_nodes_with_a_matching_local_pv() -> None:
    s = snap([pvc("data")], [pv("pv-n3", nodes=("n3",))])
    ev = evaluate(with_claims("p", "data"), s)
    assert ev.feasible == ["n3"]
    assert reasons(ev)["n1"] == [REASON_BIND_CONFLICT]
    assert failed_scheduling_message(
        evaluate(with_claims("p", "data", nodeSelector={HOST: "n1"}), s)
    ).startswith(
        "0/3 nodes are available: 1 node(s) didn't find available persistent volumes to bind, "
        "2 node(s) didn't match Pod's node affinity/selector."
    )
    [(claim, volume)] = volume_bindings(with_claims("p", "data"), s, "n3")
    assert (claim["metadata"]["name"], volume["metadata"]["name"]) == ("data", "pv-n3")
    assert volume_bindings(with_claims("p", "data"), s, "n1") == []


@pytest.mark.parametrize(
    ("volume", "fits"),
    [
        pytest.param(pv("x", nodes=("n1",)), True, id="matches"),
        pytest.param(pv("x", nodes=("n1",), size="512Mi"), False, id="too-small"),
        pytest.param(pv("x", nodes=("n1",), cls="other"), False, id="other-class"),
        pytest.param(pv("x", nodes=("n1",), modes=("ReadOnlyMany",)), False, id="access-modes"),
        pytest.param(pv("x", nodes=("n1",), volumeMode="Block"), False, id="volume-mode"),
        pytest.param(pv("x", nodes=("n1",), phase="Released"), False, id="not-available"),
        pytest.param(
            pv("x", nodes=("n1",), claim=("default", "other")), False, id="claimed-by-another"
        ),
        pytest.param(pv("x", nodes=("n2",)), False, id="other-node"),
        pytest.param(
            pv("x", nodes=("n1",), phase="Bound", claim=("default", "data")),
            True,
            id="pre-bound-to-this-claim",
        ),
        pytest.param(
            pv("x", nodes=("n1",), volumeAttributesClassName="gold"), False, id="vac-differs"
        ),
        pytest.param(pv("x"), True, id="no-node-affinity"),
    ],
)
def test_find_matching_volume_rules(volume: dict[str, Any], fits: bool) -> None:
    found = find_matching_volume(pvc("data"), [volume], {HOST: "n1"}, set())
    assert (found is not None) == fits


def test_selector_and_smallest_fit() -> None:
    claim = pvc("data", size="3Gi", selector={"matchLabels": {"tier": "gold"}})
    vols = [
        pv("big", size="100Gi", labels={"tier": "gold"}),
        pv("small-silver", size="4Gi", labels={"tier": "silver"}),
        pv("small-gold", size="5Gi", labels={"tier": "gold"}),
        pv("tiny-gold", size="2Gi", labels={"tier": "gold"}),
    ]
    assert find_matching_volume(claim, vols, {}, set())["metadata"]["name"] == "small-gold"  # type: ignore[index]
    assert find_matching_volume(claim, vols, {}, {"small-gold"})["metadata"]["name"] == "big"  # type: ignore[index]


def test_two_claims_get_two_volumes_smallest_request_first() -> None:
    s = snap(
        [pvc("big", size="8Gi"), pvc("small", size="1Gi")],
        [pv("a", size="10Gi", nodes=("n1",)), pv("b", size="2Gi", nodes=("n1",))],
    )
    binds = volume_bindings(with_claims("p", "big", "small"), s, "n1")
    assert sorted((c["metadata"]["name"], v["metadata"]["name"]) for c, v in binds) == [
        ("big", "a"),
        ("small", "b"),
    ]
    one = snap(
        [pvc("big", size="8Gi"), pvc("small", size="1Gi")], [pv("a", size="10Gi", nodes=("n1",))]
    )
    assert reasons(evaluate(with_claims("p", "big", "small"), one))["n1"] == [REASON_BIND_CONFLICT]


def test_selected_node_annotation_pins_the_claim() -> None:
    claim = pvc("data", cls="fast", annotations={"volume.kubernetes.io/selected-node": "n2"})
    ev = evaluate(with_claims("p", "data"), snap([claim], []))
    assert ev.feasible == ["n2"]
    assert reasons(ev)["n1"] == [REASON_BIND_CONFLICT]


def test_bound_and_unbound_conflicts_are_both_reported() -> None:
    s = snap(
        [pvc("a", volume="pv-a"), pvc("b")],
        [pv("pv-a", nodes=("n2",), phase="Bound", claim=("default", "a"))],
    )
    assert reasons(evaluate(with_claims("p", "a", "b"), s))["n1"] == [
        REASON_NODE_CONFLICT,
        REASON_BIND_CONFLICT,
    ]


# --- provisioning ---------------------------------------------------------------------------------


def test_provisioning_passes_for_kube_scheduler_and_is_refused_for_kschedctl() -> None:
    s = snap([pvc("data", cls="fast")], [])
    p = with_claims("p", "data")
    kube = evaluate(p, s)
    assert kube.feasible == ["n1", "n2", "n3"]
    assert not kube.not_evaluated  # no CSIDriver opts into storage capacity
    ours = evaluate(p, s, dynamic_provisioning=False)
    assert ours.feasible == []
    assert reasons(ours)["n1"] == [REASON_PROVISIONING_UNSUPPORTED]
    assert "example.com/csi" in ours.verdict("n1").reasons[0].detail
    assert feasible_nodes(p, s, dynamic_provisioning=False).names == ()
    assert failed_scheduling_message(ours, truncate=False).startswith(
        "0/3 nodes are available: 3 node(s) would need dynamic provisioning of a "
        "PersistentVolume, which kschedctl's scheduler does not do (use kube-scheduler for this pod)."
    )


def test_static_pv_wins_over_provisioning() -> None:
    s = snap([pvc("data", cls="fast")], [pv("x", cls="fast", nodes=("n1",))])
    assert evaluate(with_claims("p", "data"), s, dynamic_provisioning=False).feasible == ["n1"]


def test_allowed_topologies_restrict_provisioning() -> None:
    classes = [
        sc(
            "zoned",
            provisioner="example.com/csi",
            allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["b"]}]}],
        )
    ]
    s = NodeInfoSnapshot(
        NODES,
        persistent_volume_claims=[pvc("data", cls="zoned")],
        storage_classes=classes,
        persistent_volumes=[],
    )
    ev = evaluate(with_claims("p", "data"), s)
    assert ev.feasible == ["n2"]
    assert reasons(ev)["n1"] == [REASON_BIND_CONFLICT]


def test_unbound_immediate_and_no_pvs_given() -> None:
    s = snap([pvc("data", cls="now")], [])
    ev = evaluate(with_claims("p", "data"), s)
    assert (
        ev.prefilter is not None
        and ev.prefilter.message == "pod has unbound immediate PersistentVolumeClaims"
    )
    without_pvs = NodeInfoSnapshot(
        NODES, persistent_volume_claims=[pvc("data")], storage_classes=CLASSES
    )
    found = feasible_nodes(with_claims("p", "data"), without_pvs)
    assert found.rejected and "VolumeBinding" in found.not_evaluated


def test_csi_volumes_leave_attach_limits_unevaluated() -> None:
    s = snap(
        [pvc("data", volume="c")],
        [pv("c", phase="Bound", csi={"driver": "d", "volumeHandle": "h"})],
    )
    found = feasible_nodes(with_claims("p", "data"), s)
    assert found.not_evaluated == ("NodeVolumeLimits",)
    local = snap([pvc("data", volume="l")], [pv("l", phase="Bound")])
    assert evaluate(with_claims("p", "data"), local).complete


# --- ReadWriteOncePod -----------------------------------------------------------------------------


def test_read_write_once_pod_claim_in_use() -> None:
    claim = pvc("solo", volume="pv1", modes=("ReadWriteOncePod",))
    user = with_claims("user", "solo", node_name="n1")
    s = snap([claim], [pv("pv1", phase="Bound", modes=("ReadWriteOncePod",))], pods=[user])
    ev = evaluate(with_claims("p", "solo", priority=10), s)
    assert reasons(ev) == {n: [REASON_RWOP_CONFLICT] for n in ("n1", "n2", "n3")}
    assert ev.verdict("n1").code == "Unschedulable"
    # Preemption can help where the user runs: evicting it frees the claim.
    assert ev.preemption is not None
    assert [(c.node, c.victims) for c in ev.preemption.candidates] == [("n1", ("default/user",))]
    free = snap([claim], [pv("pv1", phase="Bound", modes=("ReadWriteOncePod",))])
    assert evaluate(with_claims("p", "solo"), free).feasible == ["n1", "n2", "n3"]


# --- `why` gives the scheduler's reasons ----------------------------------------------------------


def test_why_uses_the_same_volume_reasons_as_each_scheduler() -> None:
    from kschedctl.model.scheduling.algorithm import Algorithm
    from kschedctl.model.scheduling.policy import FallbackPolicy
    from kschedctl.observe.diagnosis import diagnose

    s = snap([pvc("data", cls="fast"), pvc("local-data")], [pv("l", nodes=("n2",))])
    provisioned = with_claims("p", "data", schedulerName="fb")
    ours = diagnose(provisioned, s, None, fallback=FallbackPolicy())
    decision = Algorithm().decide(provisioned, s)
    assert decision.node is None and ours.summary == decision.message
    assert ours.evaluation is not None and not ours.evaluation.schedulable
    kube = diagnose(with_claims("p", "data"), s, None)
    assert kube.evaluation is not None and kube.evaluation.feasible == ["n1", "n2", "n3"]
    local = with_claims("q", "local-data", schedulerName="fb")
    placed = diagnose(local, s, None, fallback=FallbackPolicy())
    assert placed.evaluation is not None and placed.evaluation.feasible == ["n2"]
    assert Algorithm().decide(local, s).node == "n2"
