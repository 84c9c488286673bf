"""kschedctl's own scheduler with Dynamic Resource Allocation, against the real kube-scheduler
v1.36.3 as the oracle, on a lab of its own whose nodes publish ResourceSlices (lab/devices.py;
the nodes and DeviceClasses of test_why_dra: kube-scheduler's messages count every node).

The proofs: the same node as kube-scheduler for the same claim; the claim's allocation and
reservation written as kube-scheduler writes them (the same status shape) before the pod is
bound; two pods competing for the last devices: one binds, the other gets kube-scheduler's
message; claims that cannot be allocated get kube-scheduler's FailedScheduling message word
for word; an extended resource a DeviceClass backs gets the same special claim and pod
status; a claim allocated where the pod cannot go is deallocated by the PostFilter. `kschedctl scheduler run` runs as a subprocess (stopped by pid).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from e2e_helpers import latest_failure, pod_events, pod_manifest, wait_for
from test_builtin_scheduler import SCHEDULER, Scheduler, scheduler
from test_why_dra import (
    GPU,
    RESOURCE,
    claim,
    claim_pod,
    dra_cluster,
    dra_lab,
    why_json,
)

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

__all__ = ["dra_cluster", "dra_lab"]  # the module's lab and its DeviceClasses

H100 = f'device.attributes["{GPU}"].model == "h100"'


@pytest.fixture(scope="module")
def placer(dra_lab: Lab, dra_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[Scheduler]:  # fmt: skip
    log = tmp_path_factory.mktemp("placer") / "scheduler.log"
    with scheduler(dra_lab, log, "--no-leader-elect") as running:
        running.port()  # serving: it started
        yield running
    print(log.read_text(errors="replace")[-3000:])


def _namespace(cluster: Cluster, name: str) -> str:
    cluster.create("/api/v1/namespaces", {"metadata": {"name": name}})
    return name


def _drop(cluster: Cluster, name: str) -> None:
    """Delete the namespace and wait until its pods and claims are gone (devices free)."""
    cluster.delete(f"/api/v1/namespaces/{name}")
    wait_for(lambda: not cluster.list(f"/api/v1/namespaces/{name}/pods"), 90,
             f"the pods of {name} to go")  # fmt: skip
    wait_for(lambda: not cluster.list(f"{RESOURCE}/namespaces/{name}/resourceclaims"), 90,
             f"the claims of {name} to go")  # fmt: skip


@pytest.fixture()
def spaces(dra_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for name in made:
        _drop(dra_cluster, name)


def _pod(cluster: Cluster, ns: str, name: str, claim_name: str, ours: bool) -> None:
    body = claim_pod(name, claim_name)
    if ours:
        body["spec"]["schedulerName"] = SCHEDULER
    cluster.create(f"/api/v1/namespaces/{ns}/pods", body)


def _claim(cluster: Cluster, ns: str, body: dict[str, Any]) -> None:
    cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", body)


def _node(cluster: Cluster, ns: str, name: str) -> str | None:
    return cluster.get(f"/api/v1/namespaces/{ns}/pods/{name}")["spec"].get("nodeName")


def _status(cluster: Cluster, ns: str, name: str) -> dict[str, Any]:
    return dict(
        cluster.get(f"{RESOURCE}/namespaces/{ns}/resourceclaims/{name}").get("status") or {}
    )


def _shape(claim: dict[str, Any]) -> dict[str, Any]:
    """A claim's metadata finalizers and status without what differs between two runs (the
    timestamp's value, the pod's name and uid)."""
    status = dict(claim.get("status") or {})
    alloc = dict(status.get("allocation") or {})
    assert alloc.pop("allocationTimestamp", None), "allocationTimestamp is set"
    status["allocation"] = alloc
    status["reservedFor"] = [sorted(r) for r in status.get("reservedFor") or []]
    return {"finalizers": (claim.get("metadata") or {}).get("finalizers"), "status": status}


def _failure(cluster: Cluster, ns: str, pod: str, reporter: str) -> str:
    def found() -> str | None:
        return (
            latest_failure(cluster, ns, pod) if _reported_by(cluster, ns, pod, reporter) else None
        )

    return str(wait_for(found, 90, f"FailedScheduling for {pod} from {reporter}"))


def _reported_by(cluster: Cluster, ns: str, pod: str, reporter: str) -> bool:
    return any(
        e.get("reason") == "FailedScheduling" and e.get("reportingController") == reporter
        for e in pod_events(cluster, ns, pod)
    )


def test_same_node_and_same_claim_status_as_kube_scheduler(
    dra_cluster: Cluster, placer: Scheduler, spaces: list[str]
) -> None:
    statuses: dict[str, dict[str, Any]] = {}
    nodes: dict[str, str] = {}
    for who in ("kube", "ours"):
        ns = _namespace(dra_cluster, f"dra-place-{who}")
        spaces.append(ns)
        # three GPUs of 40Gi or more: only dra-h100 has three (dra-a100 has two)
        _claim(dra_cluster, ns, claim("c", "gpu", 3))
        _pod(dra_cluster, ns, "p", "c", ours=who == "ours")
        nodes[who] = str(wait_for(lambda ns=ns: _node(dra_cluster, ns, "p"), 90, f"{who} binds"))
        statuses[who] = dra_cluster.get(f"{RESOURCE}/namespaces/{ns}/resourceclaims/c")
        print(f"\n[{who}] node {nodes[who]}\n  claim status: {statuses[who].get('status')}")
        _drop(dra_cluster, ns)  # the devices are free again for the next scheduler
        spaces.remove(ns)
    assert nodes["ours"] == nodes["kube"] == "dra-h100"
    assert _shape(statuses["ours"]) == _shape(statuses["kube"])


def test_two_pods_for_the_last_devices_one_binds_the_other_gets_kube_schedulers_message(
    dra_cluster: Cluster, placer: Scheduler, spaces: list[str]
) -> None:
    ns = _namespace(dra_cluster, "dra-compete")
    spaces.append(ns)
    for name in ("c1", "c2", "ck"):
        _claim(dra_cluster, ns, claim(name, "gpu", 3, H100))  # dra-h100 has 4: one fits
    _pod(dra_cluster, ns, "p1", "c1", ours=True)
    _pod(dra_cluster, ns, "p2", "c2", ours=True)

    def one_bound_one_failed() -> tuple[str, str] | None:
        bound = [p for p in ("p1", "p2") if _node(dra_cluster, ns, p)]
        failed = [p for p in ("p1", "p2") if _reported_by(dra_cluster, ns, p, SCHEDULER)]
        return (bound[0], failed[0]) if len(bound) == 1 and failed else None

    winner, loser = wait_for(one_bound_one_failed, 90, "one pod bound, the other refused")
    assert _node(dra_cluster, ns, winner) == "dra-h100"
    assert _node(dra_cluster, ns, loser) is None
    won = "c1" if winner == "p1" else "c2"
    reserved = _status(dra_cluster, ns, won)["reservedFor"]
    assert [r["name"] for r in reserved] == [winner]
    assert not _status(dra_cluster, ns, "c2" if won == "c1" else "c1").get("allocation")
    # kube-scheduler in the same state: a third pod for the same devices
    _pod(dra_cluster, ns, "pk", "ck", ours=False)
    expected = _failure(dra_cluster, ns, "pk", "default-scheduler")
    mine = _failure(dra_cluster, ns, loser, SCHEDULER)
    print(f"\n  kube-scheduler: {expected}\n  kschedctl:      {mine}")
    assert mine == expected
    assert "cannot allocate all claims" in mine


@pytest.mark.parametrize(
    ("claim_args", "words"),
    [
        pytest.param(("gpu", 5), "cannot allocate all claims", id="no-slice-can-satisfy"),
        pytest.param(("no-such-class", 1), "device class no-such-class does not exist",
                     id="missing-device-class"),
    ],
)  # fmt: skip
def test_unallocatable_claims_get_kube_schedulers_message_word_for_word(
    dra_cluster: Cluster, placer: Scheduler, spaces: list[str], claim_args: tuple[str, int],
    words: str,
) -> None:  # fmt: skip
    ns = _namespace(dra_cluster, f"dra-fail-{claim_args[0]}")
    spaces.append(ns)
    for name in ("ck", "cm"):
        _claim(dra_cluster, ns, claim(name, *claim_args))
    _pod(dra_cluster, ns, "pk", "ck", ours=False)
    _pod(dra_cluster, ns, "pm", "cm", ours=True)
    expected = _failure(dra_cluster, ns, "pk", "default-scheduler")
    mine = _failure(dra_cluster, ns, "pm", SCHEDULER)
    print(f"\n  kube-scheduler: {expected}\n  kschedctl:      {mine}")
    assert mine == expected and words in mine
    assert _node(dra_cluster, ns, "pm") is None
    assert not _status(dra_cluster, ns, "cm").get("allocation")


EXTENDED = "example.com/gpu"  # the DeviceClass gpu's extendedResourceName (test_why_dra)


def _gpu_pod(cluster: Cluster, ns: str, name: str, count: int, ours: bool, **spec: Any) -> None:
    gpus = {"requests": {EXTENDED: str(count)}, "limits": {EXTENDED: str(count)}}
    body = pod_manifest(name, containers=[
        {"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": gpus}])  # fmt: skip
    body["spec"].update(spec)
    if ours:
        body["spec"]["schedulerName"] = SCHEDULER
    cluster.create(f"/api/v1/namespaces/{ns}/pods", body)


def _special_shape(claim: dict[str, Any]) -> dict[str, Any]:
    """The special claim without what differs between two runs (its generated name, its
    uid and the pod's, the timestamps)."""
    md = claim["metadata"]
    owners = [{k: v for k, v in o.items() if k != "uid"} for o in md.get("ownerReferences") or []]
    return {
        "generateName": md.get("generateName"),
        "annotations": md.get("annotations"),
        "ownerReferences": owners,
        "spec": claim.get("spec"),
        **_shape(claim),
    }


def test_extended_resource_backed_by_a_device_class_same_node_claim_and_pod_status(
    dra_cluster: Cluster, placer: Scheduler, spaces: list[str]
) -> None:
    """example.com/gpu: 3 — only dra-h100's four devices serve three (dra-a100 has two): the
    special claim is created, allocated and reserved, and the pod's status names it, as
    kube-scheduler does."""
    seen: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {}
    for who in ("kube", "ours"):
        ns = _namespace(dra_cluster, f"dra-ext-{who}")
        spaces.append(ns)
        _gpu_pod(dra_cluster, ns, "p", 3, ours=who == "ours")
        node = str(wait_for(lambda ns=ns: _node(dra_cluster, ns, "p"), 90, f"{who} binds"))
        pod = dra_cluster.get(f"/api/v1/namespaces/{ns}/pods/p")
        status = pod["status"]["extendedResourceClaimStatus"]  # written before the binding
        claim = dra_cluster.get(
            f"{RESOURCE}/namespaces/{ns}/resourceclaims/{status['resourceClaimName']}"
        )
        print(f"\n[{who}] node {node}\n  pod status: {status}\n  claim: {claim}")
        assert claim["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
        assert status["resourceClaimName"].startswith("p-extended-resources-")
        seen[who] = (node, _special_shape(claim), status["requestMappings"])
        _drop(dra_cluster, ns)  # the devices are free again for the next scheduler
        spaces.remove(ns)
    assert seen["ours"][0] == seen["kube"][0] == "dra-h100"
    assert seen["ours"][1] == seen["kube"][1]
    assert (
        seen["ours"][2]
        == seen["kube"][2]
        == [
            {
                "containerName": "app",
                "resourceName": EXTENDED,
                "requestName": "container-0-request-0",
            }
        ]
    )


def test_extended_resource_that_fits_nowhere_same_message_from_why_and_both_schedulers(
    dra_lab: Lab, dra_cluster: Cluster, placer: Scheduler, spaces: list[str]
) -> None:
    ns = _namespace(dra_cluster, "dra-ext-nowhere")
    spaces.append(ns)
    _gpu_pod(dra_cluster, ns, "pk", 5, ours=False)
    _gpu_pod(dra_cluster, ns, "pm", 5, ours=True)
    expected = _failure(dra_cluster, ns, "pk", "default-scheduler")
    mine = _failure(dra_cluster, ns, "pm", SCHEDULER)
    code, data = why_json(dra_lab, ns, "pk")  # why speaks for the pod's own scheduler
    print(f"\n  kube-scheduler: {expected}\n  kschedctl:      {mine}\n  why:            "
          f"{data['summary']}")  # fmt: skip
    assert mine == expected == data["summary"]
    assert "4 cannot allocate all claims" in mine
    assert code == 6 and not data["notEvaluated"]
    assert not dra_cluster.list(f"{RESOURCE}/namespaces/{ns}/resourceclaims")  # nothing created


def _allocate_on_a100(cluster: Cluster, ns: str, name: str) -> None:
    """Write an allocation on dra-a100, reserved for nobody, into claim ``name`` (as a pod
    that left it behind would have)."""
    path = f"{RESOURCE}/namespaces/{ns}/resourceclaims/{name}"
    live = cluster.get(path)
    live["status"] = {"allocation": {
        "devices": {"results": [
            {"request": "gpu", "driver": GPU, "pool": "dra-a100", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["dra-a100"]}]}]},
    }}  # fmt: skip
    cluster.request("PUT", f"{path}/status", body=live)


def test_postfilter_deallocates_a_claim_the_pod_cannot_use_then_the_pod_schedules(
    dra_cluster: Cluster, placer: Scheduler, spaces: list[str]
) -> None:
    """The claim is allocated on dra-a100 and reserved for nobody; the pod must run in pool
    h100: every scheduler deallocates the claim in its PostFilter (the same message), then
    places the pod on dra-h100 with a fresh allocation."""
    messages: dict[str, str] = {}
    for who, reporter in (("kube", "default-scheduler"), ("ours", SCHEDULER)):
        ns = _namespace(dra_cluster, f"dra-post-{who}")
        spaces.append(ns)
        _claim(dra_cluster, ns, claim("c", "gpu", 1))
        _allocate_on_a100(dra_cluster, ns, "c")
        body = claim_pod("p", "c")
        body["spec"]["nodeSelector"] = {"pool": "h100"}
        if who == "ours":
            body["spec"]["schedulerName"] = SCHEDULER
        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", body)
        assert wait_for(lambda ns=ns: _node(dra_cluster, ns, "p"), 90, f"{who} binds") == "dra-h100"
        messages[who] = _failure(dra_cluster, ns, "p", reporter)
        results = _status(dra_cluster, ns, "c")["allocation"]["devices"]["results"]
        print(f"\n[{who}] {messages[who]}\n  allocation now: {results}")
        assert {r["pool"] for r in results} == {"dra-h100"}
    assert messages["ours"] == messages["kube"]
    assert "1 resourceclaim not available on the node" in messages["ours"]
    assert ". deallocation of ResourceClaim completed, preemption: " in messages["ours"]


@pytest.fixture()
def plugin_node(dra_cluster: Cluster) -> Iterator[str]:
    """A fifth node whose device plugin advertises example.com/gpu: 4 (no kwok: nothing runs
    there; the pods tolerate its not-ready taints), for this test only."""
    capacity = {"cpu": "8", "memory": "16Gi", "pods": "110", EXTENDED: "4"}
    body = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "dra-plugin", "labels": {
                "pool": "plugin", "kubernetes.io/hostname": "dra-plugin"}},
            "status": {"capacity": capacity, "allocatable": dict(capacity)}}  # fmt: skip
    dra_cluster.create("/api/v1/nodes", body)
    try:
        yield "dra-plugin"
    finally:
        dra_cluster.delete("/api/v1/nodes/dra-plugin")


def test_a_nodes_own_extended_resource_counts_as_before(
    dra_lab: Lab, dra_cluster: Cluster, placer: Scheduler, spaces: list[str], plugin_node: str
) -> None:
    """On a node that advertises example.com/gpu the DeviceClass plays no part: NodeResourcesFit
    counts it (no claim is made), and 5 of 4 is "Insufficient", word for word from why and
    both schedulers."""
    ns = _namespace(dra_cluster, "dra-ext-plugin")
    spaces.append(ns)
    tolerate = [{"key": f"node.kubernetes.io/{t}", "operator": "Exists"}
                for t in ("not-ready", "unreachable")]  # fmt: skip
    for name, count, ours in (("fk", 2, False), ("fm", 2, True), ("nk", 5, False), ("nm", 5, True)):
        _gpu_pod(dra_cluster, ns, name, count, ours, nodeSelector={"pool": "plugin"},
                 tolerations=tolerate)  # fmt: skip
    for name in ("fk", "fm"):
        assert (
            wait_for(lambda n=name: _node(dra_cluster, ns, n), 90, f"{name} binds") == plugin_node
        )
    assert not dra_cluster.list(f"{RESOURCE}/namespaces/{ns}/resourceclaims")
    expected = _failure(dra_cluster, ns, "nk", "default-scheduler")
    mine = _failure(dra_cluster, ns, "nm", SCHEDULER)
    code, data = why_json(dra_lab, ns, "nk")
    print(f"\n  kube-scheduler: {expected}\n  kschedctl:      {mine}\n  why:            "
          f"{data['summary']}")  # fmt: skip
    assert mine == expected == data["summary"]
    assert f"1 Insufficient {EXTENDED}" in mine
