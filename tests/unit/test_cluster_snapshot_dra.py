"""Snapshots carry the DynamicResources plugin's objects: reduced, written, read back, turned
into API objects that give `why` the same verdicts; --anonymize leaves them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_filters_dra import GPU, claim, device_class, exactly, resource_slice
from test_filters_dra_features import HALF, partitioned, tainted
from test_filters_support import node, pod

from kschedctl.clustersnapshot import (
    ClusterSnapshot,
    claim_template_objects,
    dra_objects,
    dump,
    load_snapshot,
    node_object,
    pod_object,
)
from kschedctl.clustersnapshot.anonymize import anonymize
from kschedctl.clustersnapshot.reduce import Reducer
from kschedctl.model.filters import NodeInfoSnapshot, evaluate


def taken(claims: list[dict[str, Any]]) -> ClusterSnapshot:
    reducer = Reducer()
    reducer.add_nodes([node(n, labels={"kubernetes.io/hostname": n}) for n in ("a", "b")])
    pending = pod("p", resourceClaims=[{"name": "r0", "resourceClaimName": "c"}])
    reducer.add_pods([pending])
    reducer.add_dra([device_class()], [resource_slice("a", 2), resource_slice("b", 4, "h100")], claims)  # fmt: skip
    return reducer.finish()


def verdicts(snap: ClusterSnapshot) -> tuple[list[str], list[str]]:
    state = NodeInfoSnapshot([], [], **dra_objects(snap))
    for n in snap.nodes:
        state.upsert_node(node_object(n))
    ev = evaluate(pod_object(snap.pending_pods[0]), state)
    return ev.feasible, [n.plugin for n in ev.not_evaluated]


def test_dra_objects_survive_the_file(tmp_path: Path) -> None:
    held = claim("other", exactly(count=3), allocation={"devices": {"results": [
        {"request": "gpu", "driver": GPU, "pool": "b", "device": f"h100-{i}"} for i in range(3)]}})  # fmt: skip
    snap = taken([held, claim("c", exactly(count=2))])
    assert verdicts(snap) == (["a"], [])
    path = tmp_path / "snap.yaml"
    path.write_text(dump(snap))
    again = load_snapshot(str(path))
    assert again.resource_claims == snap.resource_claims
    assert again.resource_slices == snap.resource_slices
    assert verdicts(again) == (["a"], [])


def test_without_dra_objects_the_pod_is_not_evaluated() -> None:
    snap = taken([claim("c", exactly())])
    snap.resource_claims = None
    assert verdicts(snap) == (["a", "b"], ["DynamicResources"])
    assert any("DRA" in o.what for o in Reducer().finish().metadata.omitted)


def test_anonymize_leaves_the_dra_objects_out_and_renames_claim_references() -> None:
    snap = anonymize(taken([claim("c", exactly())]))
    assert snap.resource_claims is None and snap.device_classes is None
    (ref,) = snap.pending_pods[0].resource_claims
    assert ref["resourceClaimName"] != "c" and ref["resourceClaimName"].startswith("claim-")


def test_claim_templates_are_kept_for_the_simulation(tmp_path: Path) -> None:
    reducer = Reducer()
    template = {"metadata": {"name": "t", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [exactly(count=2)]}}}}  # fmt: skip
    reducer.add_claim_templates([template])
    snap = reducer.finish()
    path = tmp_path / "snap.json"
    path.write_text(dump(snap, as_json=True))
    (made,) = claim_template_objects(load_snapshot(str(path)))
    assert made["spec"] == template["spec"]
    assert made["metadata"] == {"name": "t", "namespace": "ml"}


def test_taints_tolerations_and_shared_counters_survive_the_file(tmp_path: Path) -> None:
    reducer = Reducer()
    reducer.add_nodes([node(n, labels={"kubernetes.io/hostname": n}) for n in ("a", "b")])
    reducer.add_pods([pod("p", resourceClaims=[{"name": "r0", "resourceClaimName": "c"}])])
    halves = claim("c", exactly("h", "gpu", 2, HALF))
    halves["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
        {"key": f"{GPU}/health", "operator": "Exists"}]  # fmt: skip
    reducer.add_dra([device_class()], [tainted(), *partitioned("b")], [halves])
    snap = reducer.finish()
    assert verdicts(snap) == (["b"], [])  # two halves of b's one counter set
    path = tmp_path / "snap.yaml"
    path.write_text(dump(snap))
    again = load_snapshot(str(path))
    assert again.resource_slices == snap.resource_slices
    assert verdicts(again) == (["b"], [])
