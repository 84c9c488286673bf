"""The snapshot file: API objects reduced, written and read back unchanged, bad files refused
with a message naming the field, anonymisation that changes no scheduling outcome, and the
read-only use case against a fake cluster (refusals, omissions)."""

from __future__ import annotations

import copy
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import snapshot_fixtures as fx
import yaml

from kschedctl.base.errors import ClusterError, ForbiddenError, NotFoundError, SpecError
from kschedctl.clustersnapshot import (
    API_VERSION,
    ClusterSnapshot,
    dump,
    load_snapshot,
    node_object,
    pod_object,
    snapshot_from_dict,
    snapshot_from_text,
    snapshot_to_dict,
)
from kschedctl.clustersnapshot import reading as reading_module
from kschedctl.clustersnapshot.anonymize import Anonymizer, anonymize
from kschedctl.clustersnapshot.reduce import Reducer, reduce_pod
from kschedctl.model.filters import NodeInfoSnapshot, feasible_nodes
from kschedctl.ops.snapshot import OPTIONAL, STORAGE_FIELDS, take_snapshot, write_snapshot
from kschedctl.render import schemas

KEY = b"k" * 32  # a fixed anonymisation key: the same replacements run after run


def reduced(**kwargs: Any) -> ClusterSnapshot:
    reducer = Reducer(**kwargs)
    reducer.add_pods(fx.every_pod())  # before the nodes: the order of the reads is free
    reducer.add_nodes(fx.NODES)
    reducer.add_namespaces(fx.NAMESPACES)
    reducer.add_pdbs(fx.PDBS)
    reducer.add_priority_classes(fx.PRIORITY_CLASSES)
    return reducer.finish()


def feasible(snap: ClusterSnapshot) -> dict[str, tuple[str, ...]]:
    """Each pending pod's feasible nodes, by the filters, on the snapshot turned back into
    API objects."""
    state = NodeInfoSnapshot(
        [node_object(n) for n in snap.nodes],
        [pod_object(p) for p in snap.pods],
        {ns.name: ns.labels for ns in snap.namespaces},
    )
    out = {}
    for p in snap.pending_pods:
        if p.scheduling_gates:
            continue
        out[p.key] = tuple(sorted(feasible_nodes(pod_object(p), state).names))
    return out


# --- reduce --------------------------------------------------------------------------------


def test_reduce_keeps_what_scheduling_reads_and_nothing_else() -> None:
    snap = reduced()
    assert [n.name for n in snap.nodes] == ["node-a1", "node-a2", "node-b1", "node-b2"]
    assert snap.nodes[3].taints == [
        {"key": "dedicated", "value": "gpu-team", "effect": "NoSchedule"}
    ]
    assert snap.nodes[0].images == []  # only with images=True
    assert reduced(images=True).nodes[0].images == [
        {"names": ["registry.corp/secret:v1"], "sizeBytes": 1000}
    ]
    keys = {p.key for p in snap.pods}
    assert "shop/old-job" not in keys  # terminal
    assert {"kube-system/agent-node-a1", "shop/gateway"} <= keys
    gateway = next(p for p in snap.pods if p.name == "gateway")
    assert gateway.owner_kind == ""  # no owner
    assert gateway.overhead == {"cpu": "50m"}
    assert [c.restart_policy for c in gateway.init_containers] == ["", "Always"]
    assert gateway.containers[0].ports == [
        {"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}
    ]
    assert gateway.persistent_volume_claims == ["gw-data"]
    text = dump(ClusterSnapshot(nodes=snap.nodes, pods=snap.pods, pending_pods=snap.pending_pods))
    for secret in ("hunter2", "uid-", "annotations", "conditions", "timeAdded", "PASSWORD"):
        assert secret not in text
    assert [p.name for p in snap.pending_pods][:2] == ["web-2", "web-3"]
    assert snap.pending_pods[-1].scheduling_gates == ["example.com/wait"]


def test_omitted_says_what_was_left_out_with_counts() -> None:
    omitted = {o.what: o for o in reduced().metadata.omitted}
    assert omitted["terminal pods (Succeeded, Failed)"].count == 1
    assert omitted["PersistentVolumeClaims"].count == 1  # pods using claims: not evaluated
    assert omitted["node images (status.images)"].count == 4
    assert "ResourceClaims, ResourceSlices, DeviceClasses (DRA)" in omitted


def test_pods_on_a_node_gone_between_the_reads_are_dropped_and_counted() -> None:
    reducer = Reducer()
    reducer.add_nodes(fx.NODES[:1])
    reducer.add_pods([fx.pod("a", "here", "node-a1"), fx.pod("a", "gone", "node-zz")])
    snap = reducer.finish()
    assert [p.name for p in snap.pods] == ["here"]
    assert any(
        o.what.startswith("pods bound to a node not") and o.count == 1
        for o in snap.metadata.omitted
    )


def test_pending_namespace_keeps_every_bound_pod() -> None:
    snap = reduced(pending_namespace="data")
    assert [p.key for p in snap.pending_pods] == ["data/db-1"]
    assert any(p.namespace == "shop" for p in snap.pods)


def test_generic_ephemeral_volumes_name_their_claim_after_the_pod() -> None:
    raw = fx.pod("a", "p", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}])
    assert reduce_pod(raw).persistent_volume_claims == ["p-scratch"]


# --- round trip ----------------------------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True], ids=["yaml", "json"])
def test_round_trip(as_json: bool, tmp_path: Path) -> None:
    snap = reduced(images=True)
    snap.metadata.created = "2026-12-03T12:00:00Z"
    text = dump(snap, as_json=as_json)
    assert snapshot_from_text(text, "s") == snap
    path = tmp_path / ("s.json" if as_json else "s.yaml")
    path.write_text(text)
    assert load_snapshot(str(path)) == snap
    assert dump(load_snapshot(str(path)), as_json=as_json) == text  # byte-identical


def test_the_file_validates_against_the_shipped_schema() -> None:
    document = json.loads(schemas.shipped_path("snapshot").read_text())
    jsonschema.Draft202012Validator.check_schema(document)
    jsonschema.Draft202012Validator(document).validate(snapshot_to_dict(reduced(images=True)))
    bad = snapshot_to_dict(reduced())
    bad["spec"]["nodes"][0]["colour"] = "blue"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(document).validate(bad)


def test_api_objects_from_the_snapshot_give_the_filters_the_same_answers() -> None:
    """The snapshot keeps every constraint: on it, each pending pod fits exactly where it
    fits on the live objects."""
    live = NodeInfoSnapshot(fx.NODES, fx.BOUND, {n["metadata"]["name"]: n for n in fx.NAMESPACES})
    for raw in fx.PENDING[:-1]:  # the gated one aside
        want = tuple(sorted(feasible_nodes(raw, live).names))
        key = f"{raw['metadata']['namespace']}/{raw['metadata']['name']}"
        assert feasible(reduced())[key] == want, key


def test_every_constraint_is_exercised() -> None:
    assert feasible(reduced()) == {
        "shop/web-2": ("node-a2", "node-b1"),  # anti-affinity with web-1 (node-a1); b2 tainted
        "shop/web-3": ("node-b1",),  # spread: zone-a has web-1
        "shop/zoned": ("node-b1",),
        "shop/gpu": ("node-b2",),  # tolerates the taint, cpu-gen < 4
        "shop/porty": ("node-a1", "node-b1"),  # 8080 taken on node-a2
        "shop/near-db": ("node-b1",),  # zone of db-0, by namespaceSelector team=data
        "data/db-1": ("node-b1",),
        "shop/huge": (),
    }


# --- load errors ---------------------------------------------------------------------------


def _doc(**changes: Any) -> dict[str, Any]:
    doc = snapshot_to_dict(reduced())
    for path, value in changes.items():
        target = doc
        *parents, last = path.split("__")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value
    return doc


_DELETE = object()

BAD = {
    "wrong apiVersion": (
        {"apiVersion": "kschedctl.io/v1"},
        "f.yaml: apiVersion: expected 'kschedctl.io/v1alpha1', got 'kschedctl.io/v1'",
    ),
    "no apiVersion": (
        {"apiVersion": _DELETE},
        "apiVersion: expected 'kschedctl.io/v1alpha1', got None",
    ),
    "wrong kind": ({"kind": "Scheduler"}, "f.yaml: kind: expected 'Snapshot', got 'Scheduler'"),
    "unknown top field": ({"status": {}}, "f.yaml: status: unknown field"),
    "unknown node field": (
        {"spec__nodes__0__labelz": {}},
        "f.yaml: spec.nodes[0].labelz: unknown field (did you mean 'labels'?)",
    ),
    "unknown pod field": ({"spec__pods__0__uid": "x"}, "f.yaml: spec.pods[0].uid: unknown field"),
    "missing node": (
        {"spec__pods__0__nodeName": "node-zz"},
        "f.yaml: spec.pods[0].nodeName: node 'node-zz' is not in the snapshot's nodes",
    ),
    "bound pod without node": (
        {"spec__pods__0__nodeName": _DELETE},
        "f.yaml: spec.pods[0].nodeName: a bound pod needs a node (pending pods: pendingPods)",
    ),
    "pending pod with a node": (
        {"spec__pendingPods__0__nodeName": "node-a1"},
        "f.yaml: spec.pendingPods[0].nodeName: a pending pod has no node (bound pods go in pods)",
    ),
    "duplicate node": (
        {"spec__nodes__1__name": "node-a1"},
        "f.yaml: spec.nodes[1].name: node 'node-a1' is listed twice",
    ),
    "duplicate pod": (
        {"spec__pendingPods__0__name": "web-1"},
        "f.yaml: spec.pendingPods[0].name: pod 'shop/web-1' is listed twice",
    ),
    "bad quantity": (
        {"spec__nodes__0__allocatable__cpu": "4 cores"},
        "f.yaml: spec.nodes[0].allocatable.cpu: '4 cores' is not a quantity (e.g. 500m, 2Gi)",
    ),
    "number for a label value": (
        {"spec__nodes__0__labels__rack": 7},
        "f.yaml: spec.nodes[0].labels.rack: must be a string, not 7",
    ),
    "list for a mapping": (
        {"spec__pods__0__affinity": ["x"]},
        "f.yaml: spec.pods[0].affinity: must be a mapping, not ['x']",
    ),
    "nameless node": ({"spec__nodes__0__name": ""}, "f.yaml: spec.nodes[0].name: is required"),
    "priority as text": (
        {"spec__priorityClasses__0__value": "high"},
        "f.yaml: spec.priorityClasses[0].value: must be an integer, not 'high'",
    ),
    "spec not a mapping": ({"spec": [1]}, "f.yaml: spec: must be a mapping, not [1]"),
}


@pytest.mark.parametrize(("changes", "message"), BAD.values(), ids=BAD.keys())
def test_bad_documents_are_refused_naming_the_field(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as caught:
        snapshot_from_dict(_doc(**changes), "f.yaml")
    assert message in caught.value.message
    assert caught.value.exit_code == 3


def test_every_problem_is_listed() -> None:
    doc = _doc(spec__nodes__0__colour="x", spec__pods__0__nodeName="nope")
    with pytest.raises(SpecError) as caught:
        snapshot_from_dict(doc, "f.yaml")
    assert "f.yaml has 2 problems:" in caught.value.message
    assert len(caught.value.problems) == 2


BAD_TEXT = {
    "two documents": ("---\na: 1\n---\nb: 2\n", "expected one YAML document, found 2"),
    "malformed YAML": ("spec: [\n", "malformed YAML"),
    "not a mapping": ("- 1\n", "must be a mapping, not [1]"),
    "duplicate key": ("kind: Snapshot\nkind: Snapshot\n", "duplicate key 'kind'"),
    "duplicate JSON field": ('{"kind": "Snapshot", "kind": "x"}', "duplicate field 'kind' in JSON"),
    "malformed JSON": ('{"kind": ', "malformed JSON (line 1"),
    "alias bomb": (
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
            for p, c in zip("abcdef", "bcdefg", strict=True)
        ),
        "aliases expand to more than",
    ),
}


@pytest.mark.parametrize(("text", "message"), BAD_TEXT.values(), ids=BAD_TEXT.keys())
def test_bad_text_is_refused(text: str, message: str) -> None:
    with pytest.raises(SpecError, match="f.yaml: ") as caught:
        snapshot_from_text(text, "f.yaml")
    assert message in caught.value.message


def test_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no such file"):
        load_snapshot(str(tmp_path / "nope.yaml"))


def test_reading_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(dump(reduced()))
    monkeypatch.setattr(reading_module, "MAX_SNAPSHOT_BYTES", 100)
    with pytest.raises(SpecError, match="too large") as caught:
        load_snapshot(str(path))
    assert "20,000 pods" in (caught.value.hint or "")
    os.mkfifo(tmp_path / "fifo")  # never blocks
    with pytest.raises(SpecError, match="a FIFO"):
        load_snapshot(str(tmp_path / "fifo"))


# --- anonymize -----------------------------------------------------------------------------


def test_anonymized_snapshots_schedule_the_same() -> None:
    """Equality of outcomes, node by node: each pending pod fits on the images of the nodes
    it fitted on before (the filters know nothing of the mapping)."""
    snap = reduced(images=True)
    anon = anonymize(snap, KEY)
    mapping = Anonymizer(KEY)
    mapping.node_name("node-a1")  # the same key gives the same replacements
    before, after = feasible(snap), feasible(anon)
    renamed = {
        f"{mapping.namespace(k.split('/')[0])}/{mapping.text(k.split('/')[1], 'pod-')}": tuple(
            sorted(mapping.node_name(n) for n in v)
        )
        for k, v in before.items()
    }
    assert after == renamed
    assert [len(v) for v in after.values()] == [len(v) for v in before.values()]


def test_anonymized_file_leaks_no_name_or_value() -> None:
    snap = reduced(images=True)
    text = dump(anonymize(snap, KEY))
    for secret in (
        "node-a1",
        "zone-a",
        "shop",
        "web",
        "gpu-team",
        "registry.corp",
        "gw-data",
        "team",
    ):
        if secret == "team":
            assert "team: " in text  # keys are kept…
            assert ": data" not in text and ": web" not in text  # …their values are not
            continue
        assert secret not in text, secret
    assert "anonymized: true" in text and "serverHash" not in text


def test_anonymize_keeps_the_equalities_the_scheduler_tests() -> None:
    anon = anonymize(reduced(), KEY)
    for n in anon.nodes:
        assert n.labels["kubernetes.io/hostname"] == n.name  # still the node's name
        assert n.name.startswith("node-")
    agents = [p for p in anon.pods if p.owner_kind == "DaemonSet"]
    for agent in agents:
        term = agent.affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [agent.node_name]
        assert agent.namespace == "kube-system"  # every cluster has it: kept
    for ns in anon.namespaces:
        assert ns.labels["kubernetes.io/metadata.name"] == ns.name
    zones = {n.labels["topology.kubernetes.io/zone"] for n in anon.nodes}
    assert len(zones) == 2 and not zones & {"zone-a", "zone-b"}
    assert {n.labels.get("example.com/cpu-gen") for n in anon.nodes} == {None, "5", "3"}  # Gt/Lt
    assert anon.pod_disruption_budgets[0].selector == {"matchLabels": anon.pods[0].labels}
    assert anonymize(reduced(), KEY) == anon  # same key: same output
    assert anonymize(reduced()) != anonymize(reduced())  # a fresh key each time


def test_replacements_are_unique_even_on_a_digest_collision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kschedctl.clustersnapshot import anonymize as module

    monkeypatch.setattr(module, "_DIGEST_HEX", 0)  # every first try collides
    anon = Anonymizer(KEY)
    outs = {anon.text(f"v{i}") for i in range(50)}
    assert len(outs) == 50


# --- the use case against a fake cluster ---------------------------------------------------


class FakeCluster:
    """Answers list requests from dicts; ``forbidden`` paths answer 403, ``missing`` 404."""

    server = "https://10.0.0.1:6443"

    def __init__(self, forbidden: tuple[str, ...] = (), missing: tuple[str, ...] = ()) -> None:
        self.forbidden, self.missing = forbidden, missing
        self.collections = {
            "/api/v1/nodes": fx.NODES,
            "/api/v1/pods": fx.every_pod(),
            "/api/v1/namespaces": fx.NAMESPACES,
            "/apis/policy/v1/poddisruptionbudgets": fx.PDBS,
            "/apis/scheduling.k8s.io/v1/priorityclasses": fx.PRIORITY_CLASSES,
            "/apis/resource.k8s.io/v1/deviceclasses": [],
            "/apis/resource.k8s.io/v1/resourceslices": [],
            "/apis/resource.k8s.io/v1/resourceclaims": [],
            "/apis/resource.k8s.io/v1/resourceclaimtemplates": [],
            **{o.path: [] for o in OPTIONAL if o.what in STORAGE_FIELDS},
        }
        self.page_sizes: list[int] = []

    def _check(self, path: str) -> None:
        if path in self.forbidden:
            resource = path.rsplit("/", 1)[1]
            raise ForbiddenError(
                f'forbidden: {resource} is forbidden: User "u" cannot list resource '
                f'"{resource}" at the cluster scope'
            )
        if path in self.missing:
            raise NotFoundError("the server could not find the requested resource")

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        self._check(path)
        return copy.deepcopy(self.collections[path])

    def pages(self, path: str, *, limit: int = 500, **query: Any) -> Any:
        self._check(path)
        items = copy.deepcopy(self.collections[path])
        for start in range(0, len(items), 3):  # small pages: more than one
            self.page_sizes.append(len(items[start : start + 3]))
            yield items[start : start + 3]

    def server_version(self) -> dict[str, Any]:
        return {"gitVersion": "v1.36.3"}


NOW = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)


def test_take_snapshot_reads_everything_page_by_page() -> None:
    cluster = FakeCluster()
    taken = take_snapshot(cluster, now=lambda: NOW)  # type: ignore[arg-type]
    snap = taken.snapshot
    assert len(cluster.page_sizes) > 1
    want = reduced()
    assert (snap.nodes, snap.pods, snap.pending_pods) == (want.nodes, want.pods, want.pending_pods)
    assert (snap.namespaces, snap.pod_disruption_budgets) == (
        want.namespaces,
        want.pod_disruption_budgets,
    )
    assert snap.priority_classes == want.priority_classes
    assert (snap.device_classes, snap.resource_slices, snap.resource_claims) == ([], [], [])
    assert (snap.persistent_volume_claims, snap.csi_storage_capacities) == ([], [])
    assert snap.metadata.created == "2026-12-03T12:00:00Z"
    assert snap.metadata.source.version == "v1.36.3"
    assert len(snap.metadata.source.server_hash) == 16
    assert cluster.server not in dump(snap)
    assert (taken.daemonset_pods, taken.gated_pods, taken.refused) == (4, 1, [])


@pytest.mark.parametrize("resource", ["nodes", "pods"])
def test_required_collections_refused_exit_4_naming_resource_and_verb(resource: str) -> None:
    cluster = FakeCluster(forbidden=(f"/api/v1/{resource}",))
    with pytest.raises(ForbiddenError) as caught:
        take_snapshot(cluster)  # type: ignore[arg-type]
    assert caught.value.exit_code == 4
    what = "pods in all namespaces" if resource == "pods" else resource
    assert caught.value.message.startswith(f"cannot list {what}: forbidden: ")
    assert "the verbs get and list on nodes and on pods in all namespaces" in (
        caught.value.hint or ""
    )


def test_optional_collections_refused_or_missing_are_omitted_with_their_cost() -> None:
    cluster = FakeCluster(
        forbidden=("/apis/policy/v1/poddisruptionbudgets", "/api/v1/namespaces"),
        missing=("/apis/scheduling.k8s.io/v1/priorityclasses",),
    )
    taken = take_snapshot(cluster)  # type: ignore[arg-type]
    assert sorted(taken.refused) == ["Namespaces", "PodDisruptionBudgets", "PriorityClasses"]
    omitted = {o.what: o.reason for o in taken.snapshot.metadata.omitted}
    assert omitted["PodDisruptionBudgets"].startswith("forbidden (list): preemption")
    assert omitted["PriorityClasses"].startswith("not served by this API server")
    assert not taken.snapshot.pod_disruption_budgets and not taken.snapshot.namespaces


def test_other_cluster_errors_pass_through() -> None:
    cluster = FakeCluster()

    def broken(path: str, **query: Any) -> Any:
        raise ClusterError("cannot reach the API server")

    cluster.list = broken  # type: ignore[method-assign]
    with pytest.raises(ClusterError, match="cannot reach"):
        take_snapshot(cluster)  # type: ignore[arg-type]


def test_anonymized_take_has_no_server_hash() -> None:
    taken = take_snapshot(FakeCluster(), anonymized=True)  # type: ignore[arg-type]
    assert taken.snapshot.metadata.anonymized
    assert taken.snapshot.metadata.source.server_hash == ""
    assert taken.snapshot.metadata.source.version == "v1.36.3"


def test_write_snapshot_is_private_and_json_by_extension(tmp_path: Path) -> None:
    snap = reduced()
    write_snapshot(snap, str(tmp_path / "s.json"))
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o600
    assert json.loads((tmp_path / "s.json").read_text())["apiVersion"] == API_VERSION
    assert write_snapshot(snap, "-") == dump(snap)
    assert not (tmp_path / "-").exists()
    write_snapshot(snap, str(tmp_path / "s.yaml"))
    assert yaml.safe_load((tmp_path / "s.yaml").read_text())["kind"] == "Snapshot"
