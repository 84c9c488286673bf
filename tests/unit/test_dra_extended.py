"""DRA-backed extended resources and the DynamicResources PostFilter on plain dicts, as
kube-scheduler v1.36 has them (extendeddynamicresources.go, dynamicresources.go PostFilter):
the special claim's requests and the pod's request mappings, which nodes serve the resource
through DRA, what Reserve/PreBind write, and which claim the PostFilter releases."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from test_filters_dra import GPU, claim, device_class, exactly, resource_slice, snapshot
from test_filters_support import container, node, pod
from test_scheduling_dra import NODES, cache_with
from test_scheduling_loop import FakeApi, eventually, running, settings  # noqa: F401

from kschedctl.model.filters import NodeInfoSnapshot, evaluate, failed_scheduling_message
from kschedctl.model.filters.drabind import extended_status
from kschedctl.model.filters.draextended import (
    ANNOTATION,
    find_extended_claim,
    requests_and_mappings,
    special_claim,
)
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.loop import SchedulerLoop
from kschedctl.model.scheduling.port import ApiConflict

EXT = "example.com/gpu"
CLASSES = {EXT: "gpu"}
GPUS_ON_B = {EXT: "2"}  # node b's device plugin serves two


def gpu_pod(count: str = "3", name: str = "p", **spec: Any) -> dict[str, Any]:
    out = pod(name, containers=[container("app", requests={EXT: count, "cpu": "100m"})], **spec)
    out["metadata"]["uid"] = f"uid-{name}"
    return out


def mapping(c: str, request: str) -> dict[str, str]:
    return {"containerName": c, "resourceName": EXT, "requestName": request}


def test_one_request_per_container_named_by_container_and_sorted_resource_index() -> None:
    p = pod("p", containers=[container("a", requests={EXT: "2", "cpu": "1"}),
                             container("b", requests={EXT: "1"})])  # fmt: skip
    requests, mappings = requests_and_mappings(p, [EXT], CLASSES)
    # "cpu" sorts before "example.com/gpu": index 1 in container a, 0 in container b
    assert requests == [
        {"name": "container-0-request-1",
         "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}},
        {"name": "container-1-request-0",
         "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}},
    ]  # fmt: skip
    assert mappings == [
        mapping("a", "container-0-request-1"),
        mapping("b", "container-1-request-0"),
    ]


def test_init_containers_reuse_later_requests_and_share_the_largest_of_their_own() -> None:
    p = pod(
        "p",
        initContainers=[container("i0", requests={EXT: "3"}), container("i1", requests={EXT: "2"}),
                        container("side", requests={EXT: "1"}, restart_policy="Always")],
        containers=[container("app", requests={EXT: "1"})],
    )  # fmt: skip
    requests, mappings = requests_and_mappings(p, [EXT], CLASSES)
    # i0 reuses side's and app's devices (2) and needs 1 more; i1 is covered by them: its
    # own request of 0 is none. The sidecar and app keep theirs.
    assert [(r["name"], r["exactly"]["count"]) for r in requests] == [
        ("container-0-request-0", 1), ("container-2-request-0", 1), ("container-3-request-0", 1)]  # fmt: skip
    assert mappings == [
        mapping("side", "container-2-request-0"), mapping("app", "container-3-request-0"),
        mapping("i0", "container-2-request-0"), mapping("i0", "container-3-request-0"),
        mapping("i0", "container-0-request-0"),
        mapping("i1", "container-2-request-0"), mapping("i1", "container-3-request-0"),
    ]  # fmt: skip


def test_the_special_claim_is_found_by_annotation_and_controlling_owner() -> None:
    p = gpu_pod()
    mine = copy.deepcopy(special_claim(p))
    mine["metadata"]["name"] = "p-extended-resources-x7k2q"
    other_uid = copy.deepcopy(mine)
    other_uid["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    unannotated = copy.deepcopy(mine)
    unannotated["metadata"]["annotations"] = {}
    assert find_extended_claim(p, [other_uid, unannotated]) is None
    assert find_extended_claim(p, [other_uid, mine]) is mine
    assert special_claim(p)["metadata"]["annotations"] == {ANNOTATION: "true"}


def test_a_node_whose_device_plugin_serves_the_resource_is_left_to_node_resources_fit() -> None:
    nodes = [node("a"), node("b", extra=GPUS_ON_B)]
    snap = NodeInfoSnapshot(nodes, device_classes=[device_class(extended=EXT)],
                            resource_slices=[resource_slice("a", 4)], resource_claims=[])  # fmt: skip
    ev = evaluate(gpu_pod("3"), snap)
    # a: no example.com/gpu in allocatable, 4 devices through DRA; b: its plugin has only 2
    assert ev.feasible == ["a"]
    assert ev.verdict("b").reasons[0].message == f"Insufficient {EXT}"
    assert [n.plugin for n in ev.not_evaluated] == []


def test_fits_nowhere_gives_kube_schedulers_message() -> None:
    ev = evaluate(gpu_pod("5"), snapshot([], classes=[device_class(extended=EXT)]))
    assert failed_scheduling_message(ev) == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_reserve_writes_the_special_claim_last_to_create_and_the_pod_status() -> None:
    cache = cache_with([claim("c", exactly())], [resource_slice("a", 3)])
    cache.replace_dra("DeviceClass", [device_class(extended=EXT)])
    p = gpu_pod("2", resourceClaims=[{"name": "r0", "resourceClaimName": "c"}])
    decision = Algorithm().decide(p, cache.snapshot)
    assert decision.node == "a"
    user, special = decision.claims
    assert not user.create and special.create
    assert special.claim["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}]  # fmt: skip
    assert special.claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2
    assert special.allocation is not None
    devices = {r["device"] for r in special.allocation["devices"]["results"]}
    assert devices.isdisjoint(r["device"] for r in user.allocation["devices"]["results"])  # type: ignore[index]
    assert special.assumed["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert special.assumed["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "uid-p"}]  # fmt: skip
    created = {"metadata": {"name": "p-extended-resources-abcde"}}
    assert extended_status(p, created, special)["status"] == {
        "extendedResourceClaimStatus": {
            "requestMappings": [mapping("app", "container-0-request-1")],  # cpu sorts first
            "resourceClaimName": "p-extended-resources-abcde",
        }
    }


def test_the_assumed_special_claim_holds_its_devices_until_the_created_one_is_back() -> None:
    cache = cache_with([], [resource_slice("a", 3)])
    cache.replace_dra("DeviceClass", [device_class(extended=EXT)])
    algo = Algorithm()
    first = algo.decide(gpu_pod("2", "p1"), cache.snapshot)
    assert first.node == "a"
    cache.assume_claims(first.claims)
    assert algo.decide(gpu_pod("2", "p2"), cache.snapshot).node is None  # 1 device left
    # the created claim comes back, not yet allocated: the assumed copy still counts
    (write,) = first.claims
    created = {**copy.deepcopy(write.claim), "spec": write.claim["spec"]}
    created["metadata"].update(name="p1-extended-resources-abcde", resourceVersion="7")
    cache.dra_event("ResourceClaim", "ADDED", created)
    assert algo.decide(gpu_pod("2", "p2"), cache.snapshot).node is None
    allocated = {**created, "status": dict(write.assumed["status"])}
    cache.dra_event("ResourceClaim", "MODIFIED", allocated)
    assert set(cache.dra.tables["ResourceClaim"]) == {("default", "p1-extended-resources-abcde")}
    assert algo.decide(gpu_pod("2", "p2"), cache.snapshot).node is None  # the API's copy holds
    cache.dra_event("ResourceClaim", "DELETED", allocated)
    assert algo.decide(gpu_pod("2", "p2"), cache.snapshot).node == "a"


def test_unreserve_forgets_the_in_memory_special_claim() -> None:
    cache = cache_with([], [resource_slice("a", 2)])
    cache.replace_dra("DeviceClass", [device_class(extended=EXT)])
    decision = Algorithm().decide(gpu_pod("2", "p1"), cache.snapshot)
    cache.assume_claims(decision.claims)
    cache.forget_claims(decision.claims)
    assert cache.dra.tables["ResourceClaim"] == {}
    assert Algorithm().decide(gpu_pod("2", "p2"), cache.snapshot).node == "a"


def _allocated_to_a(reserved: list[dict[str, str]]) -> dict[str, Any]:
    selector = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}  # fmt: skip
    allocation = {"nodeSelector": selector, "devices": {"results": [
        {"request": "gpu", "driver": GPU, "pool": "a", "device": "a100-0"}]}}  # fmt: skip
    return claim("c", exactly(), allocation=allocation, reservedFor=reserved)


def _pod_for_b() -> dict[str, Any]:
    p = pod("p", resourceClaims=[{"name": "r0", "resourceClaimName": "c"}],
            nodeSelector={"kubernetes.io/hostname": "b"})  # fmt: skip
    p["metadata"]["uid"] = "uid-p"
    return p


@pytest.mark.parametrize(
    ("reserved", "released"),
    [
        pytest.param([], True, id="reserved-for-nobody"),
        pytest.param([{"resource": "pods", "name": "p", "uid": "uid-p"}], True, id="only-this-pod"),
        pytest.param([{"resource": "pods", "name": "q", "uid": "uid-q"}], False, id="another-pod"),
    ],
)
def test_postfilter_deallocates_a_claim_allocated_where_the_pod_cannot_go(
    reserved: list[dict[str, str]], released: bool
) -> None:
    ev = evaluate(_pod_for_b(), snapshot([_allocated_to_a(reserved)]))
    assert ev.verdict("b").reasons[0].message == "resourceclaim not available on the node"
    post = "deallocation of ResourceClaim completed" if released else "still not schedulable"
    assert failed_scheduling_message(ev) == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        f"1 resourceclaim not available on the node. {post}, preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    )
    cache = cache_with(
        [_allocated_to_a(reserved)], [resource_slice("a", 1), resource_slice("b", 1)]
    )
    decision = Algorithm().decide(_pod_for_b(), cache.snapshot)
    assert decision.node is None
    if released:
        assert decision.release is not None and not decision.release.delete
        assert decision.release.name == "default/c"
    else:
        assert decision.release is None


def test_postfilter_deletes_the_special_claim_of_an_earlier_attempt() -> None:
    p = gpu_pod("2")
    stale = copy.deepcopy(special_claim(p))
    stale["metadata"]["name"] = "p-extended-resources-old"
    stale["spec"] = {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}}]}}  # fmt: skip
    ev = evaluate(p, snapshot([stale], classes=[device_class(extended=EXT)]))
    assert ev.verdict("a").reasons[0].message == "cannot schedule extended resource claim"
    assert ev.dra_release is not None and ev.dra_release.delete
    assert "2 cannot schedule extended resource claim. deletion of ResourceClaim completed" in str(
        failed_scheduling_message(ev)
    )


def test_prebinds_finalizer_update_does_not_free_the_devices_in_flight() -> None:
    """PreBind adds the finalizer in one update, the allocation in the next: the watch shows
    the claim changed but not yet allocated in between. The devices stay taken (two pods
    bound to one device in the lab before: test_builtin_dra's two competing pods)."""
    cache = cache_with([claim("c1", exactly(count=3)), claim("c2", exactly(count=3))],
                       [resource_slice("a", 4)])  # fmt: skip
    for c in cache.dra.tables["ResourceClaim"].values():
        c["metadata"]["resourceVersion"] = "1"  # type: ignore[index]
    algo = Algorithm()
    p1 = pod("p1", resourceClaims=[{"name": "r0", "resourceClaimName": "c1"}])
    first = algo.decide(p1, cache.snapshot)
    assert first.node == "a"
    cache.assume_claims(first.claims)
    finalized = copy.deepcopy(dict(first.claims[0].claim))
    finalized["metadata"].update(resourceVersion="2", finalizers=["resource.kubernetes.io/delete-protection"])  # fmt: skip
    cache.dra_event("ResourceClaim", "MODIFIED", finalized)
    p2 = pod("p2", resourceClaims=[{"name": "r0", "resourceClaimName": "c2"}])
    assert algo.decide(p2, cache.snapshot).node is None
    allocated = {**finalized, "status": dict(first.claims[0].assumed["status"])}
    allocated["metadata"] = {**finalized["metadata"], "resourceVersion": "3"}
    cache.dra_event("ResourceClaim", "MODIFIED", allocated)
    assert not cache.dra.assumed  # the API's copy holds the allocation now
    assert algo.decide(p2, cache.snapshot).node is None


def _gpu_api() -> FakeApi:
    api = FakeApi(copy.deepcopy(NODES))
    api.volumes["deviceclasses"]["gpu"] = device_class(extended=EXT)
    api.volumes["resourceslices"]["a"] = resource_slice("a", 1)
    return api


def test_the_loop_creates_reserves_and_names_the_special_claim_before_binding(
    running: Callable[..., SchedulerLoop],  # noqa: F811
) -> None:
    api = _gpu_api()
    order: list[str] = []
    api.claim_hook = lambda c: order.append(f"claim {c['metadata']['name']}")
    api.bind_hook = lambda p: order.append(f"bind {p['metadata']['name']}")
    api.add_pod(gpu_pod("1", schedulerName="mine"))
    running(api, settings())
    eventually(lambda: api.binds)
    name = "p-extended-resources-x7k2q"
    assert order == [f"claim create {name}", f"claim {name}", "bind p"]
    assert api.claim_writes == [(name, True, "p")]
    (patch,) = [s for s in api.status_patches if "extendedResourceClaimStatus" in s["status"]]
    assert patch["status"]["extendedResourceClaimStatus"]["resourceClaimName"] == name


def test_a_failed_binding_deletes_the_created_special_claim(
    running: Callable[..., SchedulerLoop],  # noqa: F811
) -> None:
    api = _gpu_api()
    attempts: list[str] = []
    deleted: list[str] = []
    delete = api.delete_claim

    def taken_once(p: dict[str, Any]) -> None:
        attempts.append(p["metadata"]["name"])
        if len(attempts) == 1:
            raise ApiConflict("pod p: the object has been modified")

    def deleting(claim: Any) -> None:
        deleted.append(claim["metadata"]["name"])
        delete(claim)

    api.bind_hook = taken_once
    api.delete_claim = deleting  # type: ignore[method-assign]
    api.add_pod(gpu_pod("1", schedulerName="mine"))
    running(api, settings())
    eventually(lambda: api.binds)  # the pod's next attempt binds, with a claim of its own
    assert deleted == ["p-extended-resources-x7k2q"]  # Unreserve deleted the first one
    assert len(api.volumes["resourceclaims"]) == 1


def test_the_loop_deallocates_in_the_postfilter_then_places_the_pod(
    running: Callable[..., SchedulerLoop],  # noqa: F811
) -> None:
    api = FakeApi(copy.deepcopy(NODES))
    api.volumes["deviceclasses"]["gpu"] = device_class()
    api.volumes["resourceslices"]["a"] = resource_slice("a", 1)
    api.volumes["resourceslices"]["b"] = resource_slice("b", 1)
    api.volumes["resourceclaims"]["c"] = _allocated_to_a([])
    p = _pod_for_b()
    p["spec"]["schedulerName"] = "mine"
    api.add_pod(p)
    running(api, settings())
    eventually(lambda: api.binds)
    assert api.binds[0][:2] == ("p", "b")
    failed = next(e["note"] for e in api.events if e["reason"] == "FailedScheduling")
    assert "1 resourceclaim not available on the node. deallocation of ResourceClaim" in failed
    results = api.volumes["resourceclaims"]["c"]["status"]["allocation"]["devices"]["results"]
    assert {r["pool"] for r in results} == {"b"}
