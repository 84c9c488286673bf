"""Issue 28, storage: VolumeBinding's storage capacity check (CSIDriver.storageCapacity and
CSIStorageCapacity), VolumeRestrictions' inline disk conflicts, the "not found" PostFilter
text kschedctl's scheduler gives after an unbound immediate claim, and the declared list of
Filter plugins kschedctl does not evaluate, walked against every supported version."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_filters_support import node, pod

from kschedctl._generated import registry_data
from kschedctl.model.filters import NodeInfoSnapshot, evaluate, failed_scheduling_message
from kschedctl.model.filters.table import FILTERS
from kschedctl.model.filters.unevaluated import UNEVALUATED
from kschedctl.model.filters.verdicts import UNSCHEDULABLE
from kschedctl.model.filters.volumebinding import (
    REASON_NOT_ENOUGH_SPACE,
    REASON_PROVISIONING_UNSUPPORTED,
)
from kschedctl.model.filters.volumerestrictions import REASON_DISK_CONFLICT, REASON_RWOP_CONFLICT
from kschedctl.model.scheduling.algorithm import stage_failure

ZONE = "topology.kubernetes.io/zone"
DRIVER = "csi.example.com"
NODES = [node(f"n{i}", labels={ZONE: z}) for i, z in ((1, "a"), (2, "b"), (3, "b"))]
CLASS = {
    "metadata": {"name": "fast"},
    "provisioner": DRIVER,
    "volumeBindingMode": "WaitForFirstConsumer",
}


def claim(name: str = "data", size: str | None = "5Gi", **spec: Any) -> dict[str, Any]:
    resources = {"requests": {"storage": size}} if size else {}
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                 "resources": resources, **spec},
    }  # fmt: skip


def capacity(zone: str, size: str | None = "10Gi", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "metadata": {"name": f"cap-{zone}", "namespace": "kube-system"},
        "storageClassName": "fast",
        "nodeTopology": {"matchLabels": {ZONE: zone}},
        **extra,
    }
    if size is not None:
        out["capacity"] = size
    return out


def driver(storage_capacity: bool | None = True) -> dict[str, Any]:
    spec = {} if storage_capacity is None else {"storageCapacity": storage_capacity}
    return {"metadata": {"name": DRIVER}, "spec": spec}


def with_volumes(name: str, *volumes: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return pod(name, volumes=list(volumes), **kw)


def uses_claim(name: str = "p", claim_name: str = "data", **kw: Any) -> dict[str, Any]:
    return with_volumes(name, {"name": "v", "persistentVolumeClaim": {"claimName": claim_name}},
                        **kw)  # fmt: skip


def snap(
    claims: list[dict[str, Any]] = (),  # type: ignore[assignment]
    capacities: list[dict[str, Any]] | None = (),  # type: ignore[assignment]
    drivers: list[dict[str, Any]] | None = None,
    pods: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> NodeInfoSnapshot:
    return NodeInfoSnapshot(
        NODES,
        pods,
        persistent_volume_claims=claims,
        storage_classes=[CLASS],
        persistent_volumes=[],
        csi_drivers=[driver()] if drivers is None else drivers,
        csi_storage_capacities=capacities,
        csi_nodes=[],
    )


def messages(ev: Any) -> dict[str, list[str]]:
    return {v.name: [r.message for r in v.scheduler_reasons] for v in ev.nodes}


# --- VolumeBinding: storage capacity ------------------------------------------------------------


def test_nodes_no_capacity_reaches_have_not_enough_free_storage() -> None:
    ev = evaluate(uses_claim(), snap([claim()], [capacity("a")]))
    assert ev.feasible == ["n1"]
    assert messages(ev) == {"n1": [], "n2": [REASON_NOT_ENOUGH_SPACE],
                            "n3": [REASON_NOT_ENOUGH_SPACE]}  # fmt: skip
    assert "CSIStorageCapacity of class fast" in ev.verdict("n2").reasons[0].detail


def test_no_capacity_anywhere_gives_kube_schedulers_message() -> None:
    ev = evaluate(uses_claim(), snap([claim()], [capacity("a", "1Gi")]), preemption=False)
    assert failed_scheduling_message(ev, (1, 36)) == (
        "0/3 nodes are available: 3 node(s) did not have enough free storage. "
        "no new claims to deallocate"
    )


@pytest.mark.parametrize(
    ("cap", "feasible"),
    [
        pytest.param(capacity("a", "10Gi", maximumVolumeSize="4Gi"), [], id="max-volume-size-wins"),
        pytest.param(capacity("a", "1Gi", maximumVolumeSize="5Gi"), ["n1"], id="max-size-enough"),
        pytest.param(capacity("a", "5Gi"), ["n1"], id="exactly-enough"),
        pytest.param(capacity("a", None), [], id="no-capacity-field"),
        pytest.param({**capacity("a"), "storageClassName": "slow"}, [], id="other-class"),
        pytest.param({**capacity("a"), "nodeTopology": None}, [], id="no-topology"),
        pytest.param({**capacity("a"), "nodeTopology": {}}, ["n1", "n2", "n3"], id="all-nodes"),
    ],
)
def test_capacity_rules(cap: dict[str, Any], feasible: list[str]) -> None:
    assert evaluate(uses_claim(), snap([claim()], [cap])).feasible == feasible


@pytest.mark.parametrize(
    ("drivers", "size"),
    [
        pytest.param([], "5Gi", id="no-csidriver"),
        pytest.param([driver(False)], "5Gi", id="storage-capacity-false"),
        pytest.param([driver(None)], "5Gi", id="storage-capacity-unset"),
        pytest.param(None, None, id="no-storage-request"),
    ],
)
def test_capacity_is_not_checked(drivers: list[dict[str, Any]] | None, size: str | None) -> None:
    ev = evaluate(uses_claim(), snap([claim(size=size)], [], drivers))
    assert ev.feasible == ["n1", "n2", "n3"]


def test_kschedctls_scheduler_short_of_storage_says_so_before_provisioning() -> None:
    ev = evaluate(uses_claim(), snap([claim()], [capacity("a")]), dynamic_provisioning=False)
    assert messages(ev) == {"n1": [REASON_PROVISIONING_UNSUPPORTED],
                            "n2": [REASON_NOT_ENOUGH_SPACE], "n3": [REASON_NOT_ENOUGH_SPACE]}  # fmt: skip


def test_unknown_capacity_is_not_evaluated() -> None:
    ev = evaluate(uses_claim(), snap([claim()], None))
    assert [n.plugin for n in ev.not_evaluated] == ["VolumeBinding"]
    assert "CSIStorageCapacities" in ev.not_evaluated[0].why


def test_not_evaluated_filters_come_in_filter_order() -> None:
    p = with_volumes("p", {"name": "d", **{"gcePersistentDisk": {"pdName": "x"}}},
                     {"name": "v", "persistentVolumeClaim": {"claimName": "data"}})  # fmt: skip
    s = NodeInfoSnapshot(NODES, persistent_volume_claims=[claim()], storage_classes=[CLASS],
                         persistent_volumes=[])  # fmt: skip
    assert [n.plugin for n in evaluate(p, s).not_evaluated] == ["NodeVolumeLimits", "VolumeBinding"]


def test_snapshot_keeps_capacities_current() -> None:
    s = snap([claim()], [])
    assert evaluate(uses_claim(), s).feasible == []
    s.set_volume_object("CSIStorageCapacity", capacity("b"))
    assert evaluate(uses_claim(), s).feasible == ["n2", "n3"]
    s.remove_volume_object("CSIStorageCapacity", capacity("b"))
    s.set_volume_object("CSIDriver", driver(False))
    assert evaluate(uses_claim(), s).feasible == ["n1", "n2", "n3"]


# --- VolumeRestrictions: inline disks -----------------------------------------------------------

GCE = {"gcePersistentDisk": {"pdName": "disk-1"}}
GCE_RO = {"gcePersistentDisk": {"pdName": "disk-1", "readOnly": True}}
EBS = {"awsElasticBlockStore": {"volumeID": "vol-1"}}
EBS_RO = {"awsElasticBlockStore": {"volumeID": "vol-1", "readOnly": True}}
RBD = {"rbd": {"monitors": ["m1", "m2"], "pool": "rbd", "image": "img"}}
RBD_OTHER_MON = {"rbd": {"monitors": ["m2", "m3"], "pool": "rbd", "image": "img"}}
RBD_RO = {"rbd": {"monitors": ["m1"], "pool": "rbd", "image": "img", "readOnly": True}}
ISCSI = {"iscsi": {"targetPortal": "t:3260", "iqn": "iqn.x", "lun": 0}}
ISCSI_RO = {"iscsi": {"targetPortal": "t:3260", "iqn": "iqn.x", "lun": 0, "readOnly": True}}


@pytest.mark.parametrize(
    ("mine", "theirs", "conflict"),
    [
        pytest.param(GCE, GCE, True, id="gce"),
        pytest.param(GCE_RO, GCE, True, id="gce-one-read-only"),
        pytest.param(GCE_RO, GCE_RO, False, id="gce-both-read-only"),
        pytest.param(GCE, {"gcePersistentDisk": {"pdName": "disk-2"}}, False, id="gce-other"),
        pytest.param(EBS_RO, EBS_RO, True, id="ebs-even-read-only"),
        pytest.param(EBS, {"awsElasticBlockStore": {"volumeID": "v2"}}, False, id="ebs-other"),
        pytest.param(RBD, RBD_OTHER_MON, True, id="rbd-shared-monitor"),
        pytest.param(RBD_RO, RBD_RO, False, id="rbd-both-read-only"),
        pytest.param(RBD, {"rbd": {**RBD["rbd"], "monitors": ["m9"]}}, False, id="rbd-no-mon"),
        pytest.param(RBD, {"rbd": {**RBD["rbd"], "image": "i2"}}, False, id="rbd-other-image"),
        pytest.param(ISCSI, ISCSI, True, id="iscsi"),
        pytest.param(ISCSI_RO, ISCSI_RO, False, id="iscsi-both-read-only"),
        pytest.param(GCE, EBS, False, id="different-kinds"),
    ],
)
def test_inline_disk_conflicts(
    mine: dict[str, Any], theirs: dict[str, Any], conflict: bool
) -> None:
    other = with_volumes("other", {"name": "d", **theirs}, node_name="n1")
    ev = evaluate(with_volumes("p", {"name": "d", **mine}), snap(pods=[other]))
    assert not ev.not_evaluated
    assert messages(ev)["n1"] == ([REASON_DISK_CONFLICT] if conflict else [])
    assert ev.feasible == (["n2", "n3"] if conflict else ["n1", "n2", "n3"])
    if conflict:
        assert ev.verdict("n1").reasons[0].code == UNSCHEDULABLE


def test_attach_limits_are_not_evaluated_only_where_a_node_declares_one() -> None:
    p = with_volumes("p", {"name": "d", **GCE})
    s = snap()
    assert not evaluate(p, s).not_evaluated
    s.set_volume_object("CSINode", {"metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": "pd.csi.storage.gke.io", "nodeID": "n1", "allocatable": {"count": 15}}]}})  # fmt: skip
    assert [n.plugin for n in evaluate(p, s).not_evaluated] == ["NodeVolumeLimits"]


def test_disk_conflict_comes_before_read_write_once_pod() -> None:
    rwop = claim(accessModes=["ReadWriteOncePod"])
    holder = with_volumes("holder", {"name": "v", "persistentVolumeClaim": {"claimName": "data"}},
                          {"name": "d", **EBS}, node_name="n1")  # fmt: skip
    p = with_volumes("p", {"name": "v", "persistentVolumeClaim": {"claimName": "data"}},
                     {"name": "d", **EBS})  # fmt: skip
    ev = evaluate(p, snap([rwop], [], [], pods=[holder]))
    assert messages(ev) == {"n1": [REASON_DISK_CONFLICT], "n2": [REASON_RWOP_CONFLICT],
                            "n3": [REASON_RWOP_CONFLICT]}  # fmt: skip


def test_disk_conflict_preemption_evicts_the_disks_user() -> None:
    other = with_volumes("other", {"name": "d", **GCE}, node_name="n1")
    s = NodeInfoSnapshot([node("n1")], [other], csi_nodes=[])
    ev = evaluate(with_volumes("p", {"name": "d", **GCE}, priority=10), s)
    assert ev.preemption is not None and ev.preemption.helps
    assert ev.preemption.candidates[0].victims == ("default/other",)


# --- kschedctl's scheduler after an unbound immediate claim -------------------------------------


def test_scheduler_message_after_unbound_immediate_claim_ends_like_kube_schedulers() -> None:
    immediate = {**CLASS, "volumeBindingMode": "Immediate"}
    s = NodeInfoSnapshot(NODES, persistent_volume_claims=[claim()], storage_classes=[immediate],
                         persistent_volumes=[], csi_drivers=[], csi_storage_capacities=[])  # fmt: skip
    text, _ = stage_failure(uses_claim(), s, False, (1, 36, 3), preempting=True)
    assert (
        text
        == "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    )


# --- nothing silently fits ----------------------------------------------------------------------

MODELLED = {f.plugin for f in FILTERS if f.explain is not None}


@pytest.mark.parametrize("minor", sorted(registry_data.DEFAULT_PLUGINS))
def test_every_default_filter_is_evaluated_or_declared_unevaluated(minor: str) -> None:
    filters = [
        name
        for name, _weight in registry_data.DEFAULT_PLUGINS[minor]
        if "Filter" in registry_data.PLUGINS[minor].get(name, ())
    ]
    assert filters
    missing = [f for f in filters if f not in MODELLED and f not in UNEVALUATED]
    assert not missing, f"kube-scheduler {minor} runs {missing}: model them or declare them"
    assert not MODELLED & set(UNEVALUATED), "a modelled filter is declared unevaluated"


def test_docs_list_the_unevaluated_filters() -> None:
    page = (Path(__file__).parents[2] / "docs/commands/troubleshooting.md").read_text()
    section = page.split("<!-- unevaluated filters -->")[1]
    listed = section.split("<!-- /unevaluated filters -->")[0]
    names = [n for line in listed.splitlines() for n in re.findall(r"`(\w+)`", line.split(":")[0])]
    assert sorted(names) == sorted(UNEVALUATED)
