"""kschedctl's scheduler with Dynamic Resource Allocation, on plain dicts: the claim status it
writes (kube-scheduler's bindClaim shape), the assume cache's Reserve/Unreserve bookkeeping,
and the loop writing allocation + reservation before the binding and releasing on failure."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from test_filters_dra import GPU, claim, device_class, exactly, resource_slice
from test_filters_support import node, pod
from test_scheduling_loop import FakeApi, eventually, running, settings  # noqa: F401

from kschedctl.model.filters.dra import pod_dra_state
from kschedctl.model.filters.drabind import claim_writes
from kschedctl.model.filters.nodefilters import Incoming
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.cache import SchedulerCache
from kschedctl.model.scheduling.loop import SchedulerLoop

NODES = [node(n, cpu="8", labels={"kubernetes.io/hostname": n}) for n in ("a", "b")]


def claim_pod(name: str, *claims: str, uid: str | None = None) -> dict[str, Any]:
    refs = [{"name": f"r{i}", "resourceClaimName": c} for i, c in enumerate(claims)]
    out = pod(name, cpu="1", resourceClaims=refs, schedulerName="mine")
    out["metadata"]["uid"] = uid or f"uid-{name}"
    return out


def cache_with(claims: list[dict[str, Any]], slices: list[dict[str, Any]]) -> SchedulerCache:
    cache = SchedulerCache("mine")
    cache.replace_nodes(copy.deepcopy(NODES))
    cache.replace_pods([])
    cache.replace_dra("DeviceClass", [device_class()])
    cache.replace_dra("ResourceSlice", slices)
    cache.replace_dra("ResourceClaim", claims)
    return cache


def test_the_claim_status_is_kube_schedulers_shape() -> None:
    c = claim("c", exactly(count=2))
    c["spec"]["devices"]["config"] = [{"opaque": {"driver": GPU, "parameters": {"x": 1}}}]
    cache = cache_with([c], [resource_slice("a", 2)])
    p = claim_pod("p", "c")
    state = pod_dra_state(Incoming(p), cache.snapshot.dra)  # type: ignore[arg-type]
    (write,) = claim_writes(p, state, cache.snapshot.node("a"))
    assert write.allocation == {
        "devices": {
            "results": [
                {"request": "gpu", "driver": GPU, "pool": "a", "device": "a100-0"},
                {"request": "gpu", "driver": GPU, "pool": "a", "device": "a100-1"},
            ],
            "config": [{"source": "FromClaim", "opaque": {"driver": GPU, "parameters": {"x": 1}}}],
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
            ]
        },
    }
    assert write.reserve == {"resource": "pods", "name": "p", "uid": "uid-p"}
    assert write.assumed["status"]["reservedFor"] == [write.reserve]


def test_an_allocated_claim_is_only_reserved() -> None:
    allocated = claim("c", exactly(), allocation={"devices": {"results": []}})
    cache = cache_with([allocated], [resource_slice("a", 1)])
    p = claim_pod("p", "c")
    state = pod_dra_state(Incoming(p), cache.snapshot.dra)  # type: ignore[arg-type]
    (write,) = claim_writes(p, state, cache.snapshot.node("a"))
    assert write.allocation is None and write.reserve is not None


def test_reserve_takes_the_device_unreserve_and_deletion_give_it_back() -> None:
    cache = cache_with([claim("c1", exactly()), claim("c2", exactly())], [resource_slice("a", 1)])
    algo = Algorithm()
    first = algo.decide(claim_pod("p1", "c1"), cache.snapshot)
    assert first.node == "a" and first.claims[0].allocation is not None
    cache.assume(claim_pod("p1", "c1"), "a")
    cache.assume_claims(first.claims)
    # the one device is in flight for p1: p2 gets kube-scheduler's message
    second = algo.decide(claim_pod("p2", "c2"), cache.snapshot)
    assert second.node is None
    assert second.message == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    # the binding failed: Unreserve frees the device
    cache.forget("uid-p1")
    cache.forget_claims(first.claims)
    assert algo.decide(claim_pod("p2", "c2"), cache.snapshot).node == "a"
    # the API echoes p1's claim allocated: the device stays taken until the claim is deleted
    written = dict(first.claims[0].assumed)
    written["metadata"] = {**written["metadata"], "resourceVersion": "2"}
    cache.assume_claims(first.claims)
    cache.dra_event("ResourceClaim", "MODIFIED", written)
    assert not cache.dra.assumed  # the API moved on: its copy is the truth now
    assert algo.decide(claim_pod("p2", "c2"), cache.snapshot).node is None
    cache.dra_event("ResourceClaim", "DELETED", written)
    assert algo.decide(claim_pod("p2", "c2"), cache.snapshot).node == "a"


def test_the_same_node_as_the_filter_allows() -> None:
    # three devices wanted: only b has them (a has two)
    cache = cache_with(
        [claim("c", exactly(count=3))], [resource_slice("a", 2), resource_slice("b", 4, "h100")]
    )
    decision = Algorithm().decide(claim_pod("p", "c"), cache.snapshot)
    assert decision.node == "b"
    assert {r["pool"] for r in decision.claims[0].allocation["devices"]["results"]} == {"b"}  # type: ignore[index]


def test_the_dra_objects_unknown_leave_claim_pods_not_evaluated() -> None:
    cache = SchedulerCache("mine")
    cache.replace_nodes(copy.deepcopy(NODES))
    cache.replace_pods([])
    decision = Algorithm().decide(claim_pod("p", "c"), cache.snapshot)
    assert decision.node is None and "does not evaluate DynamicResources" in str(decision.message)


def test_extended_resources_backed_by_a_device_class_are_placed_with_a_claim_to_create() -> None:
    cache = cache_with([], [resource_slice("a", 2)])
    cache.replace_dra("DeviceClass", [device_class(extended="example.com/gpu")])
    p = pod("p", containers=[{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}])
    decision = Algorithm().decide(p, cache.snapshot)
    assert decision.node == "a"
    (write,) = decision.claims
    assert write.create and write.claim["metadata"]["generateName"] == "p-extended-resources-"
    assert write.mappings == (
        {"containerName": "c", "resourceName": "example.com/gpu",
         "requestName": "container-0-request-0"},
    )  # fmt: skip


def _api_with_claims(*claims: dict[str, Any]) -> FakeApi:
    api = FakeApi(copy.deepcopy(NODES))
    api.volumes["deviceclasses"]["gpu"] = device_class()
    api.volumes["resourceslices"]["a"] = resource_slice("a", 1)
    for c in claims:
        c["metadata"]["uid"] = f"uid-{c['metadata']['name']}"
        c["metadata"]["resourceVersion"] = "1"
        api.volumes["resourceclaims"][c["metadata"]["name"]] = c
    return api


def test_the_loop_writes_allocation_and_reservation_before_binding(
    running: Callable[..., SchedulerLoop],  # noqa: F811
) -> None:
    api = _api_with_claims(claim("c1", exactly()), claim("c2", exactly()))
    order: list[str] = []
    api.claim_hook = lambda c: order.append(f"claim {c['metadata']['name']}")
    api.bind_hook = lambda p: order.append(f"bind {p['metadata']['name']}")
    api.add_pod(claim_pod("p1", "c1"))
    api.add_pod(claim_pod("p2", "c2"))
    running(api, settings())
    eventually(lambda: api.binds and any(e["reason"] == "FailedScheduling" for e in api.events))
    assert len(api.binds) == 1  # one device: never two pods on it
    winner = api.binds[0][0]
    mine = "c1" if winner == "p1" else "c2"
    assert order[:2] == [f"claim {mine}", f"bind {winner}"]
    assert api.claim_writes == [(mine, True, winner)]
    status = api.volumes["resourceclaims"][mine]["status"]
    assert status["reservedFor"] == [{"resource": "pods", "name": winner, "uid": f"uid-{winner}"}]
    failed = next(e["note"] for e in api.events if e["reason"] == "FailedScheduling")
    assert failed.startswith("0/2 nodes are available: 2 cannot allocate all claims. still not")


def test_a_failed_binding_unreserves_and_frees_the_device(
    running: Callable[..., SchedulerLoop],  # noqa: F811
) -> None:
    from kschedctl.model.scheduling.port import ApiConflict

    api = _api_with_claims(claim("c1", exactly()), claim("c2", exactly()))

    def someone_else_binds_p1(p: dict[str, Any]) -> None:
        if p["metadata"]["name"] == "p1":
            raise ApiConflict("pod p1 is already assigned to node elsewhere")

    api.bind_hook = someone_else_binds_p1
    api.add_pod(claim_pod("p1", "c1"))
    loop = running(api, settings())
    eventually(lambda: loop.metrics.value("binding_errors_total", (("reason", "conflict"),)) == 1)
    # Unreserve took p1 out of reservedFor; the claim keeps its allocation (kube-scheduler too)
    eventually(lambda: api.volumes["resourceclaims"]["c1"]["status"]["reservedFor"] == [])
    eventually(lambda: not loop.cache.dra.assumed)
    api.remove_pod("uid-p1")
    with api.lock:  # the claim is deleted (its pod gone): the device is free again
        gone = api.volumes["resourceclaims"].pop("c1")
        api._broadcast("resourceclaims", "DELETED", gone)
    api.bind_hook = None
    api.add_pod(claim_pod("p2", "c2"))
    eventually(lambda: api.binds)
    assert api.binds[0][:2] == ("p2", "a")


def test_preemption_treats_claims_as_kube_scheduler_does() -> None:
    """DynamicResources has no PreFilterExtensions: evicting a victim never frees its
    devices in the dry run, and a node it rejects (UnschedulableAndUnresolvable) is no
    candidate. Node b's only device is held by a low-priority pod's claim: not a candidate;
    node a is short of cpu only: preemption picks its low-priority pod."""
    from kschedctl.model.filters import NodeInfoSnapshot

    held = claim("held", exactly(), allocation={"devices": {"results": [
        {"request": "gpu", "driver": GPU, "pool": "b", "device": "a100-0"}]}})  # fmt: skip
    nodes = [node(n, cpu="2", labels={"kubernetes.io/hostname": n}) for n in ("a", "b")]
    low_a = pod("low-a", cpu="2", node_name="a", priority=1)
    low_b = pod("low-b", cpu="1", node_name="b", priority=1,
                resourceClaims=[{"name": "r", "resourceClaimName": "held"}])  # fmt: skip
    snap = NodeInfoSnapshot(
        nodes, [low_a, low_b], device_classes=[device_class()],
        resource_slices=[resource_slice("a", 1), resource_slice("b", 1)],
        resource_claims=[held, claim("c", exactly())],
    )  # fmt: skip
    high = claim_pod("high", "c")
    high["spec"]["priority"] = 100
    decision = Algorithm().decide(high, snap)
    assert decision.node is None
    assert decision.victims is not None and decision.victims.node == "a"
    # preemption found a node: the PostFilter succeeded, the message has no PostFilter part
    assert decision.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 cannot allocate all claims."
    )
    # without node a's way out, nothing helps: b's device stays held whoever is evicted
    snap.remove_node("a")
    decision = Algorithm().decide(high, snap)
    assert decision.victims is None
    assert decision.message == (
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_plugins_see_the_allocation_in_ctx() -> None:
    import textwrap

    from kschedctl.model.scheduling.pluginload import plugin_from_source
    from kschedctl.model.scheduling.plugins import PluginSet, thaw

    plugin = plugin_from_source("seen.py", textwrap.dedent(
        """
        SEEN = {}
        def filter(pod, node, ctx):
            name = node["metadata"]["name"]
            SEEN[name] = ctx.allocation(name)
            return None if name == "b" else "only b"
        """
    ))  # fmt: skip
    cache = cache_with(
        [claim("c", exactly())], [resource_slice("a", 1), resource_slice("b", 1, "h100")]
    )
    decision = Algorithm(plugins=PluginSet((plugin,))).decide(claim_pod("p", "c"), cache.snapshot)
    assert decision.node == "b"
    assert plugin.filter is not None
    seen = plugin.filter.__globals__["SEEN"]
    assert seen["b"]["c"]["devices"]["results"] == (
        {"request": "gpu", "driver": GPU, "pool": "b", "device": "h100-0"},
    )
    # the same devices the scheduler then writes into the claim
    assert decision.claims[0].allocation == thaw(seen["b"]["c"])
    no_claims = Algorithm(plugins=PluginSet((plugin,))).decide(pod("q", cpu="1"), cache.snapshot)
    assert no_claims.node == "b" and seen["b"] is None


def test_a_claim_naming_a_missing_device_class_is_rejected_by_the_prefilter() -> None:
    cache = cache_with([claim("c", exactly(cls="nope"))], [resource_slice("a", 1)])
    decision = Algorithm().decide(claim_pod("p", "c"), cache.snapshot)
    assert decision.node is None and not decision.claims
    assert decision.message == (
        "0/2 nodes are available: request gpu: device class nope does not exist. no new claims "
        "to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
        "scheduling."
    )
