"""Snapshots carry the objects the volume filters read (PVCs, PVs, StorageClasses, CSIDrivers,
CSINodes, CSIStorageCapacities): reduced to what the filters read, written, read back, turned
into API objects that give `why` the same verdicts, anonymized consistently with the pods and
nodes that name them, and seeded into a simulation's lab."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_filters_storage import CLASS, DRIVER, ZONE, capacity, claim, driver, uses_claim
from test_filters_support import node

from kschedctl.base.errors import SpecError
from kschedctl.clustersnapshot import (
    ClusterSnapshot,
    dump,
    load_snapshot,
    node_object,
    pod_object,
    snapshot_from_text,
    storage_objects,
)
from kschedctl.clustersnapshot.anonymize import Anonymizer, anonymize
from kschedctl.clustersnapshot.reduce import Reducer
from kschedctl.lab.provision import volume_for
from kschedctl.lab.seed import as_created, storage_collection
from kschedctl.model.filters import NodeInfoSnapshot, evaluate
from kschedctl.model.filters.volumebinding import BIND_COMPLETED, SELECTED_NODE
from kschedctl.ops.simulate import plan_from_snapshot
from kschedctl.ops.snapshot import OPTIONAL, STORAGE_FIELDS

HOST = "kubernetes.io/hostname"
SECRET = "do-not-copy-me"


def local_volume(name: str, on: str, claim_name: str | None = None) -> dict[str, Any]:
    """A bound local PV on node ``on`` with what a real one carries besides (secrets too)."""
    term = {"matchExpressions": [{"key": HOST, "operator": "In", "values": [on]}]}
    spec: dict[str, Any] = {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "local",
        "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        "csi": {"driver": DRIVER, "volumeHandle": f"vol-{name}", "fsType": "ext4",
                "nodePublishSecretRef": {"name": SECRET, "namespace": "kube-system"},
                "volumeAttributes": {"token": SECRET}},
        "mountOptions": ["hard"],
    }  # fmt: skip
    if claim_name:
        spec["claimRef"] = {"namespace": "default", "name": claim_name, "uid": "u-1"}
    return {"metadata": {"name": name, "uid": "u-2", "labels": {ZONE: "b"},
                         "annotations": {"pv.kubernetes.io/provisioned-by": SECRET}},
            "spec": spec, "status": {"phase": "Bound" if claim_name else "Available"}}  # fmt: skip


def bound_claim(name: str, volume: str) -> dict[str, Any]:
    out = claim(name, volumeName=volume, storageClassName="local")
    out["metadata"]["annotations"] = {
        "pv.kubernetes.io/bind-completed": "yes",
        "kubectl.kubernetes.io/last-applied-configuration": SECRET,
    }
    out["status"] = {"phase": "Bound"}
    return out


NODES = [node(n, labels={ZONE: z, HOST: n}) for n, z in (("n1", "a"), ("n2", "b"), ("n3", "b"))]


def taken(*, storage: bool = True) -> ClusterSnapshot:
    """n1 alone has capacity for ``data`` (WaitForFirstConsumer, CSI storage capacity);
    ``kept`` is bound to a local volume on n2."""
    reducer = Reducer()
    reducer.add_nodes(NODES)
    reducer.add_pods([uses_claim("p", "data"), uses_claim("q", "kept")])
    if storage:
        csinode = {"metadata": {"name": "n1"}, "spec": {"drivers": [
            {"name": DRIVER, "nodeID": SECRET, "topologyKeys": [HOST]}]}}  # fmt: skip
        local = {"metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner",
                 "volumeBindingMode": "WaitForFirstConsumer"}  # fmt: skip
        fast = {**CLASS, "parameters": {"csi.storage.k8s.io/provisioner-secret-name": SECRET}}
        cap = capacity("a", "10Gi")
        cap["nodeTopology"] = {"matchLabels": {HOST: "n1"}}
        for field_name, objects in (
            ("persistent_volume_claims", [claim("data"), bound_claim("kept", "pv-kept")]),
            ("persistent_volumes", [local_volume("pv-kept", "n2", "kept")]),
            ("storage_classes", [fast, local]),
            ("csi_drivers", [driver()]),
            ("csi_nodes", [csinode]),
            ("csi_storage_capacities", [cap]),
        ):
            reducer.add_storage(field_name, objects)
    return reducer.finish()


def verdicts(snap: ClusterSnapshot) -> dict[str, tuple[list[str], list[str]]]:
    """Each pending pod's feasible nodes and not-evaluated filters, on the snapshot's objects."""
    storage: dict[str, Any] = storage_objects(snap)
    state = NodeInfoSnapshot([node_object(n) for n in snap.nodes], [], **storage)
    out = {}
    for p in snap.pending_pods:
        ev = evaluate(pod_object(p), state)
        out[p.name] = (ev.feasible, sorted({n.plugin for n in ev.not_evaluated}))
    return out


EXPECTED = {"p": (["n1"], []), "q": (["n2"], [])}


def test_the_storage_objects_give_the_filters_their_verdicts() -> None:
    assert verdicts(taken()) == EXPECTED


@pytest.mark.parametrize("as_json", [False, True], ids=["yaml", "json"])
def test_storage_objects_survive_the_file(tmp_path: Path, as_json: bool) -> None:
    snap = taken()
    path = tmp_path / ("snap.json" if as_json else "snap.yaml")
    path.write_text(dump(snap, as_json=as_json))
    again = load_snapshot(str(path))
    assert again.persistent_volume_claims == snap.persistent_volume_claims
    assert again.persistent_volumes == snap.persistent_volumes
    assert again.csi_storage_capacities == snap.csi_storage_capacities
    assert verdicts(again) == EXPECTED


def test_reduce_keeps_what_the_filters_read_and_no_secret() -> None:
    snap = taken()
    text = dump(snap)
    assert SECRET not in text and "u-1" not in text and "mountOptions" not in text
    (pv,) = snap.persistent_volumes or []
    assert pv.source == {"csi": {"driver": DRIVER, "volumeHandle": "vol-pv-kept", "fsType": "ext4"}}
    assert pv.claim_ref == {"namespace": "default", "name": "kept"}
    kept = (snap.persistent_volume_claims or [])[1]
    assert kept.annotations == {"pv.kubernetes.io/bind-completed": "yes"}
    assert (snap.csi_nodes or [])[0].drivers == [{"name": DRIVER, "topologyKeys": [HOST]}]


def test_the_beta_class_annotation_is_the_claims_class_and_absent_is_not_empty() -> None:
    reducer = Reducer()
    beta = claim("b")
    beta["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "old"}
    unset = claim("u")
    del unset["spec"]["storageClassName"]
    reducer.add_storage("persistent_volume_claims", [beta, unset, claim("e", storageClassName="")])
    classes = [c.storage_class_name for c in reducer.finish().persistent_volume_claims or []]
    assert classes == ["old", None, ""]
    made = storage_objects(reducer.snapshot)["persistent_volume_claims"] or []
    assert ["storageClassName" in c["spec"] for c in made] == [True, False, True]


def test_an_older_snapshot_without_them_loads_and_the_volume_filters_are_not_evaluated() -> None:
    text = dump(taken(storage=False))
    assert "\n  persistentVolumeClaims:" not in text  # as a file of an older kschedctl
    old = snapshot_from_text(text)
    assert old.persistent_volume_claims is None
    assert all(v is None for v in storage_objects(old).values())
    for feasible, unevaluated in verdicts(old).values():
        assert feasible == ["n1", "n2", "n3"] and "VolumeBinding" in unevaluated
    assert any(o.what == "PersistentVolumeClaims" for o in old.metadata.omitted)


def test_taken_but_empty_is_written_and_read_as_empty() -> None:
    reducer = Reducer()
    reducer.add_storage("csi_drivers", [])
    again = snapshot_from_text(dump(reducer.finish()))
    assert again.csi_drivers == [] and again.persistent_volumes is None


def test_the_reader_checks_names_and_quantities() -> None:
    text = dump(taken()).replace("storage: 5Gi", "storage: lots").replace("pv-kept", "PV_KEPT")
    with pytest.raises(SpecError) as err:
        snapshot_from_text(text, "snap.yaml")
    message = str(err.value)
    assert "spec.persistentVolumeClaims[0].requests.storage" in message
    assert "spec.persistentVolumes[0].name" in message


def test_anonymize_renames_them_consistently_with_the_pods_and_nodes() -> None:
    snap = taken()
    anon = anonymize(snap, key=b"k" * 32)
    text = dump(anon)
    for name in ("data", "kept", "pv-kept", "vol-pv-kept", "n1", "n2", "fast", "local"):
        assert f" {name}\n" not in text and f": {name}\n" not in text, name
    mapping = Anonymizer(b"k" * 32)  # the same key: the same replacements
    n1, n2 = (mapping.node_name(n) for n in ("n1", "n2"))
    claims = {c.name: c for c in anon.persistent_volume_claims or []}
    assert set(claims) == {c for p in anon.pending_pods for c in p.persistent_volume_claims}
    (pv,) = anon.persistent_volumes or []
    assert pv.claim_ref["name"] in claims and claims[pv.claim_ref["name"]].volume_name == pv.name
    assert (anon.csi_nodes or [])[0].name == n1
    (cap,) = anon.csi_storage_capacities or []
    assert cap.node_topology == {"matchLabels": {HOST: n1}}
    classes = {c.name for c in anon.storage_classes or []}
    assert {cap.storage_class_name, pv.storage_class_name} <= classes
    assert (anon.csi_drivers or [])[0].name == DRIVER  # a product's name, like a provisioner's
    # the same verdicts, on the renamed nodes
    assert sorted(verdicts(anon).values()) == sorted([([n1], []), ([n2], [])])


def test_snapshot_reads_each_storage_collection() -> None:
    paths = {o.what: o.path for o in OPTIONAL if o.what in STORAGE_FIELDS}
    assert paths == {
        "StorageClasses": "/apis/storage.k8s.io/v1/storageclasses",
        "CSIDrivers": "/apis/storage.k8s.io/v1/csidrivers",
        "CSINodes": "/apis/storage.k8s.io/v1/csinodes",
        "PersistentVolumes": "/api/v1/persistentvolumes",
        "PersistentVolumeClaims": "/api/v1/persistentvolumeclaims",
        "CSIStorageCapacities": "/apis/storage.k8s.io/v1/csistoragecapacities",
    }
    assert storage_collection("v1", "PersistentVolumeClaim", "ns") == (
        "/api/v1/namespaces/ns/persistentvolumeclaims"
    )


def test_simulate_seeds_them_volumes_before_the_claims_bound_to_them() -> None:
    plan = plan_from_snapshot(taken(), "snap.yaml")
    kinds = [o["kind"] for o in plan.what.storage]
    assert kinds == ["StorageClass", "StorageClass", "CSIDriver", "CSINode", "PersistentVolume",
                     "PersistentVolumeClaim", "PersistentVolumeClaim", "CSIStorageCapacity"]  # fmt: skip
    pv = next(o for o in plan.what.storage if o["kind"] == "PersistentVolume")
    assert pv["spec"]["claimRef"] == {"namespace": "default", "name": "kept"}  # pre-bound by name
    csinode = next(o for o in plan.what.storage if o["kind"] == "CSINode")
    assert csinode["spec"]["drivers"][0]["nodeID"] == "n1"
    # created without the volume controller's own marks, which it sets when it binds the two
    kept = next(o for o in plan.what.storage if o["metadata"]["name"] == "kept")
    assert kept["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes"}
    assert "annotations" not in as_created(kept)["metadata"]


def test_the_simulation_provisions_a_volume_on_the_chosen_node_for_the_claim() -> None:
    pending = claim("data")
    pending["metadata"].update(uid="u-9", annotations={SELECTED_NODE: "n2"})
    pv = volume_for(pending, CLASS, NODES[1])
    assert pv["metadata"]["name"] == "pvc-u-9"
    assert pv["spec"]["claimRef"]["uid"] == "u-9"  # bound to this claim, not a namesake
    assert pv["spec"]["csi"]["driver"] == DRIVER and pv["spec"]["capacity"] == {"storage": "5Gi"}
    # bound, the volume is usable where the scheduler put the pod, and only there
    bound = {"metadata": {**pending["metadata"], "annotations": {BIND_COMPLETED: "yes"}},
             "spec": {**pending["spec"], "volumeName": pv["metadata"]["name"]}}  # fmt: skip
    state = NodeInfoSnapshot(NODES, [], persistent_volume_claims=[bound], persistent_volumes=[pv],
                             storage_classes=[CLASS], csi_drivers=[], csi_storage_capacities=[],
                             csi_nodes=[])  # fmt: skip
    assert evaluate(uses_claim("p", "data"), state).feasible == ["n2"]
