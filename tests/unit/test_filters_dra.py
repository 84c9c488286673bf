"""The DynamicResources filter on plain dicts: the allocator (draalloc), the PreFilter and
Filter messages and codes of kube-scheduler v1.36, and the FailedScheduling text."""

from __future__ import annotations

from typing import Any

import pytest
from test_filters_support import container, node, pod

from kschedctl.model.filters import NodeInfoSnapshot, evaluate, failed_scheduling_message
from kschedctl.model.filters.draalloc import AllocationError, Unsupported, allocate
from kschedctl.model.filters.feasible import feasible_nodes

GPU = "gpu.example.com"


def device_class(name: str = "gpu", extended: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"metadata": {"name": name}, "spec": spec}


def resource_slice(node_name: str, count: int, model: str = "a100", **pool: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{node_name}-{model}"},
        "spec": {
            "driver": GPU,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1, **pool},
            "devices": [
                {"name": f"{model}-{i}", "attributes": {"model": {"string": model}},
                 "capacity": {"memory": {"value": "40Gi" if model == "a100" else "80Gi"}}}
                for i in range(count)
            ],
        },
    }  # fmt: skip


def claim(name: str, *requests: dict[str, Any], **status: Any) -> dict[str, Any]:
    out = {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": list(requests)}},
    }
    if status:
        out["status"] = status
    return out


def exactly(name: str = "gpu", cls: str = "gpu", count: int = 1, *selectors: str) -> dict[str, Any]:
    req: dict[str, Any] = {"deviceClassName": cls, "count": count}
    if selectors:
        req["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": req}


def claim_pod(*claims: str, **spec: Any) -> dict[str, Any]:
    refs = [{"name": f"r{i}", "resourceClaimName": c} for i, c in enumerate(claims)]
    return pod("p", resourceClaims=refs, **spec)


def snapshot(claims: list[dict[str, Any]], slices: list[dict[str, Any]] | None = None,
             classes: list[dict[str, Any]] | None = None) -> NodeInfoSnapshot:  # fmt: skip
    return NodeInfoSnapshot(
        [node(n, labels={"kubernetes.io/hostname": n}) for n in ("a", "b")],
        device_classes=classes if classes is not None else [device_class()],
        resource_slices=slices if slices is not None else [resource_slice("a", 2), resource_slice("b", 4, "h100")],
        resource_claims=claims,
    )  # fmt: skip


H100 = f'device.attributes["{GPU}"].model == "h100"'


@pytest.mark.parametrize(
    ("requests", "feasible"),
    [
        pytest.param([exactly()], ["a", "b"], id="one-device-anywhere"),
        pytest.param([exactly(count=3)], ["b"], id="three-only-where-four"),
        pytest.param([exactly(count=5)], [], id="five-nowhere"),
        pytest.param([exactly("x", "gpu", 1, H100)], ["b"], id="selector-picks-the-pool"),
        pytest.param([exactly("x", count=2), exactly("y", count=1)], ["b"], id="across-requests"),
        pytest.param(
            [{"name": "x", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}],
            ["a", "b"],
            id="all-devices",
        ),  # fmt: skip
        pytest.param(
            [
                {
                    "name": "x",
                    "firstAvailable": [
                        {"name": "big", "deviceClassName": "gpu", "count": 3},
                        {"name": "small", "deviceClassName": "gpu", "count": 1},
                    ],
                }
            ],
            ["a", "b"],
            id="first-available-falls-back",
        ),  # fmt: skip
    ],
)
def test_allocation_across_requests(requests: list[dict[str, Any]], feasible: list[str]) -> None:
    ev = evaluate(claim_pod("c"), snapshot([claim("c", *requests)]))
    assert ev.feasible == feasible
    assert not ev.not_evaluated


def test_a_device_serves_one_claim_of_the_pod() -> None:
    snap = snapshot([claim("c1", exactly(count=2)), claim("c2", exactly(count=1))])
    assert evaluate(claim_pod("c1", "c2"), snap).feasible == ["b"]


def test_devices_held_by_other_claims_are_not_free() -> None:
    held = claim("other", exactly(count=3), allocation={"devices": {"results": [
        {"request": "gpu", "driver": GPU, "pool": "b", "device": f"h100-{i}"} for i in range(3)]}})  # fmt: skip
    ev = evaluate(claim_pod("c"), snapshot([held, claim("c", exactly(count=2))]))
    assert ev.feasible == ["a"]
    detail = ev.verdict("b").reasons[0].detail
    assert "4 device(s) match, 1 free" in detail and "2 wanted" in detail


def test_cannot_allocate_is_unresolvable_and_the_message_is_kube_schedulers() -> None:
    ev = evaluate(claim_pod("c"), snapshot([claim("c", exactly(count=5))]))
    r = ev.verdict("a").reasons[0]
    assert (r.plugin, r.message, r.code) == (
        "DynamicResources", "cannot allocate all claims", "UnschedulableAndUnresolvable")  # fmt: skip
    assert failed_scheduling_message(ev) == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_missing_device_class_is_a_prefilter_rejection() -> None:
    ev = evaluate(claim_pod("c"), snapshot([claim("c", exactly(cls="nope"))]))
    assert ev.prefilter is not None
    assert failed_scheduling_message(ev) == (
        "0/2 nodes are available: request gpu: device class nope does not exist. no new claims "
        "to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
        "scheduling."
    )


def test_first_available_names_the_subrequest_of_a_missing_class() -> None:
    req = {"name": "x", "firstAvailable": [{"name": "s", "deviceClassName": "nope"}]}
    ev = evaluate(claim_pod("c"), snapshot([claim("c", req)]))
    assert ev.prefilter is not None
    assert ev.prefilter.message == "request x/s: device class nope does not exist"


def test_missing_claim_and_template_claim_not_created_yet() -> None:
    ev = evaluate(claim_pod("absent"), snapshot([]))
    assert ev.prefilter is not None
    assert ev.prefilter.message == 'could not find ResourceClaim "default/absent"'
    templated = pod("p", resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "t"}])
    ev = evaluate(templated, snapshot([]))
    assert ev.prefilter is not None
    assert ev.prefilter.message == 'pod "default/p": ResourceClaim not created yet'


def test_an_allocated_claim_binds_the_pod_to_its_nodes() -> None:
    selector = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}  # fmt: skip
    done = claim("c", exactly(), allocation={"nodeSelector": selector, "devices": {"results": [
        {"request": "gpu", "driver": GPU, "pool": "a", "device": "a100-0"}]}})  # fmt: skip
    ev = evaluate(claim_pod("c"), snapshot([done]))
    assert ev.feasible == ["a"]
    assert ev.verdict("b").reasons[0].message == "resourceclaim not available on the node"


def test_extended_resource_backed_by_a_class_is_left_to_dra() -> None:
    classes = [device_class(extended="example.com/gpu")]
    gpus = {"requests": {"example.com/gpu": "3"}, "limits": {"example.com/gpu": "3"}}
    three = pod("p", containers=[{**container(), "resources": gpus}])
    ev = evaluate(three, snapshot([], classes=classes))
    assert ev.feasible == ["b"]
    assert ev.verdict("a").reasons[0].message == "cannot allocate all claims"
    assert "claim default/p-extended-resources-*" in ev.verdict("a").reasons[0].detail
    assert failed_scheduling_message(ev) is None


def test_incomplete_pool_serves_nothing_and_fails_all() -> None:
    # GatherPools keeps an incomplete pool without its slices (kube-scheduler v1.36)
    partial = [resource_slice("a", 2, resourceSliceCount=2)]
    exact = allocate([claim("c", exactly())], node("a"), {"gpu": device_class()}, partial, set())
    assert not exact.ok
    every = claim(
        "c", {"name": "x", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}
    )
    with pytest.raises(AllocationError, match="currently being updated"):
        allocate([every], node("a"), {"gpu": device_class()}, partial, set())


def test_only_the_newest_pool_generation_counts() -> None:
    old = resource_slice("a", 4, generation=1)
    new = resource_slice("a", 1, "a100", generation=2)
    new["metadata"]["name"] = "newer"
    two = allocate([claim("c", exactly(count=2))], node("a"), {"gpu": device_class()},
                   [old, new], set())  # fmt: skip
    assert not two.ok


def test_allocation_result_names_request_driver_pool_device() -> None:
    got = allocate([claim("c", exactly(count=2))], node("b"), {"gpu": device_class()},
                   [resource_slice("b", 4, "h100")], set())  # fmt: skip
    assert got.ok
    assert got.results == ((
        {"request": "gpu", "driver": GPU, "pool": "b", "device": "h100-0"},
        {"request": "gpu", "driver": GPU, "pool": "b", "device": "h100-1"}),)  # fmt: skip


def test_cel_runtime_error_is_kube_schedulers_error_text() -> None:
    bad = claim("c", exactly("gpu", "gpu", 1, f'device.attributes["{GPU}"].vendor == "x"'))
    ev = evaluate(claim_pod("c"), snapshot([bad]))
    r = ev.verdict("a").reasons[0]
    assert r.message == (
        'running "DynamicResources" filter plugin: claim default/c: selector #0: '
        "CEL runtime error: no such key: vendor"
    )
    assert r.code == "Error"
    assert failed_scheduling_message(ev) == r.message  # the error is the whole message


def test_what_is_not_reproduced_is_not_evaluated() -> None:
    bound = resource_slice("a", 2)
    bound["spec"]["devices"][0]["bindingConditions"] = ["attached"]
    ev = evaluate(claim_pod("c"), snapshot([claim("c", exactly())], [bound]))
    assert [n.plugin for n in ev.not_evaluated] == ["DynamicResources"]
    assert "has binding conditions" in ev.not_evaluated[0].why
    with pytest.raises(Unsupported):
        allocate([claim("c", exactly())], node("a"), {"gpu": device_class()}, [bound], set())


def test_without_the_dra_objects_the_filter_is_not_evaluated() -> None:
    ev = evaluate(claim_pod("c"), NodeInfoSnapshot([node("a")]))
    assert [n.plugin for n in ev.not_evaluated] == ["DynamicResources"]


def test_kschedctls_scheduler_places_claim_pods_and_dra_extended_resources() -> None:
    found = feasible_nodes(claim_pod("c"), snapshot([claim("c", exactly())]))
    assert found.names == ("a", "b") and not found.rejected
    extended = pod("p", containers=[container(requests={"example.com/gpu": "3"})])
    snap = snapshot([], classes=[device_class(extended="example.com/gpu")])
    found = feasible_nodes(extended, snap)
    assert found.names == ("b",) and not found.rejected and not found.not_evaluated


def test_hostile_search_is_bounded() -> None:
    many = [resource_slice(f"n{i}", 1) for i in range(1)] + [resource_slice("a", 60)]
    # 20 requests of 3 over 60 devices where the last cannot be met: the search gives up.
    requests = [exactly(f"r{i}", "gpu", 3) for i in range(20)] + [exactly("last", "gpu", 61)]
    with pytest.raises(Unsupported, match="steps"):
        allocate([claim("c", *requests)], node("a"), {"gpu": device_class()}, many, set())


@pytest.mark.parametrize(
    ("constraint", "ok"),
    [
        pytest.param({"matchAttribute": f"{GPU}/model"}, False, id="all-requests-one-model"),
        pytest.param({"matchAttribute": "model"}, False, id="bare-name-is-not-qualified"),
        pytest.param({"requests": ["x"], "matchAttribute": f"{GPU}/model"}, True, id="only-x"),
        pytest.param({"matchAttribute": "other.io/model"}, False, id="attribute-missing"),
    ],
)
def test_match_attribute_constraints(constraint: dict[str, Any], ok: bool) -> None:
    mixed = resource_slice("a", 2, "a100")
    mixed["spec"]["devices"] += resource_slice("a", 1, "h100")["spec"]["devices"]
    two = claim("c", exactly("x", "gpu", 2), exactly("y", "gpu", 1))
    two["spec"]["devices"]["constraints"] = [constraint]
    got = allocate([two], node("a"), {"gpu": device_class()}, [mixed], set())
    assert got.ok is ok
    if ok:  # x took the two a100 (same model), y the h100
        models = [r["device"].split("-")[0] for r in got.results[0]]
        assert models == ["a100", "a100", "h100"]
