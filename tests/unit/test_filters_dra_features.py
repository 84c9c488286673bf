"""The DRA features kube-scheduler v1.36 runs by default, in the allocator (draalloc) and in
`why`'s reasons: device taints and tolerations, partitionable devices (shared counters),
admin access, All and firstAvailable with them; and the 1.34/1.35 variants (taints ignored,
partitionable devices never allocated)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from test_filters_dra import GPU, claim, claim_pod, device_class, exactly, resource_slice, snapshot
from test_filters_support import node

from kschedctl.model.filters import evaluate, failed_scheduling_message
from kschedctl.model.filters.draalloc import AllocationError, allocate, allocated_devices
from kschedctl.model.filters.drabind import pod_claim_writes
from kschedctl.model.filters.drafeatures import features_for
from kschedctl.model.filters.feasible import feasible_nodes

CLASSES = {"gpu": device_class()}


def tainted(effect: str = "NoSchedule", value: str | None = "broken") -> dict[str, Any]:
    """Node a's two a100 with the same taint (key gpu.example.com/health)."""
    s = resource_slice("a", 2)
    taint = {"key": f"{GPU}/health", "effect": effect, **({"value": value} if value else {})}
    for d in s["spec"]["devices"]:
        d["taints"] = [taint]
    return s


def tolerating(*tolerations: dict[str, Any], count: int = 1) -> dict[str, Any]:
    req = exactly(count=count)
    req["exactly"]["tolerations"] = list(tolerations)
    return req


@pytest.mark.parametrize(
    ("effect", "tolerations", "ok"),
    [
        pytest.param("NoSchedule", [], False, id="no-schedule-untolerated"),
        pytest.param("NoExecute", [], False, id="no-execute-untolerated"),
        pytest.param("None", [], True, id="effect-none-ignored"),
        pytest.param("NoSchedule", [{"key": f"{GPU}/health", "operator": "Exists"}], True,
                     id="exists-on-key"),
        pytest.param("NoSchedule", [{"operator": "Exists"}], True, id="exists-everything"),
        pytest.param("NoSchedule", [{"key": f"{GPU}/health", "value": "broken"}], True,
                     id="equal-by-default"),
        pytest.param("NoSchedule", [{"key": f"{GPU}/health", "value": "fine"}], False,
                     id="equal-other-value"),
        pytest.param("NoSchedule", [{"operator": "Exists", "effect": "NoExecute"}], False,
                     id="other-effect"),
    ],
)  # fmt: skip
def test_device_taints_and_tolerations(
    effect: str, tolerations: list[dict[str, Any]], ok: bool
) -> None:
    got = allocate([claim("c", tolerating(*tolerations))], node("a"), CLASSES, [tainted(effect)], set())  # fmt: skip
    assert got.ok is ok
    if ok and tolerations:  # the result carries the request's tolerations, as Go writes it
        assert got.results[0][0]["tolerations"] == tolerations


def test_taints_are_ignored_before_1_36() -> None:
    got = allocate([claim("c", exactly())], node("a"), CLASSES, [tainted()], set(), features_for(35))  # fmt: skip
    assert got.ok


def test_why_judges_the_snapshot_with_the_versions_gates() -> None:
    """A 1.35 cluster's kube-scheduler ignores device taints: why, told the version, too."""
    from kschedctl.model.filters import NodeInfoSnapshot

    nodes = [node(n, labels={"kubernetes.io/hostname": n}) for n in ("a", "b")]
    slices = [tainted(), resource_slice("b", 4, "h100")]

    def feasible(minor: int) -> list[str]:
        snap = NodeInfoSnapshot(nodes, device_classes=[device_class()], resource_slices=slices,
                                resource_claims=[claim("c", exactly())],
                                dra_features=features_for(minor))  # fmt: skip
        return evaluate(claim_pod("c"), snap).feasible

    assert feasible(36) == ["b"] and feasible(35) == ["a", "b"]


def test_why_says_which_taint_kept_the_devices() -> None:
    ev = evaluate(claim_pod("c"), snapshot([claim("c", exactly())], [tainted(), resource_slice("b", 4, "h100")]))  # fmt: skip
    assert ev.feasible == ["b"]
    reason = ev.verdict("a").reasons[0]
    assert reason.message == "cannot allocate all claims"
    assert reason.detail == (
        "claim default/c, request gpu (class gpu): 2 device(s) match, 2 free, 2 of them tainted "
        f"({GPU}/health=broken:NoSchedule) without a toleration, 1 wanted"
    )
    assert not ev.not_evaluated


def test_a_tainted_device_fails_an_all_request() -> None:
    s = resource_slice("a", 2)
    s["spec"]["devices"][1]["taints"] = [{"key": "k", "effect": "NoExecute"}]
    everything = {"name": "x", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}
    assert not allocate([claim("c", everything)], node("a"), CLASSES, [s], set()).ok


def test_first_available_skips_a_subrequest_whose_devices_are_tainted() -> None:
    slices = [tainted(), resource_slice("a", 1, "h100") | {"metadata": {"name": "a-h100"}}]
    slices[1]["spec"]["pool"] = {"name": "a-h100", "generation": 1, "resourceSliceCount": 1}
    request = {"name": "x", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu",
         "selectors": [{"cel": {"expression": f'device.attributes["{GPU}"].model == "a100"'}}]},
        {"name": "any", "deviceClassName": "gpu"},
    ]}  # fmt: skip
    got = allocate([claim("c", request)], node("a"), CLASSES, slices, set())
    assert got.ok
    assert [(r["request"], r["device"]) for r in got.results[0]] == [("x/any", "h100-0")]


def partitioned(node_name: str = "a") -> list[dict[str, Any]]:
    """One 80Gi GPU as a counter set, offered whole (gpu-0, 80Gi) or as two halves
    (gpu-0-half-0/1, 40Gi each): two slices of one pool, as drivers publish them."""
    pool = {"name": node_name, "generation": 1, "resourceSliceCount": 2}
    counters = {
        "metadata": {"name": f"{node_name}-counters"},
        "spec": {"driver": GPU, "nodeName": node_name, "pool": pool,
                 "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]},
    }  # fmt: skip

    def device(name: str, memory: str, model: str) -> dict[str, Any]:
        return {
            "name": name,
            "attributes": {"model": {"string": model}},
            "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}],
        }  # fmt: skip

    devices = {
        "metadata": {"name": f"{node_name}-devices"},
        "spec": {"driver": GPU, "nodeName": node_name, "pool": pool, "devices": [
            device("gpu-0", "80Gi", "whole"),
            device("gpu-0-half-0", "40Gi", "half"),
            device("gpu-0-half-1", "40Gi", "half"),
        ]},
    }  # fmt: skip
    return [counters, devices]


HALF = f'device.attributes["{GPU}"].model == "half"'
WHOLE = f'device.attributes["{GPU}"].model == "whole"'


@pytest.mark.parametrize(
    ("requests", "devices"),
    [
        pytest.param([exactly("h", "gpu", 2, HALF)], ["gpu-0-half-0", "gpu-0-half-1"],
                     id="two-halves"),
        pytest.param([exactly("w", "gpu", 1, WHOLE)], ["gpu-0"], id="whole"),
        pytest.param([exactly("w", "gpu", 1, WHOLE), exactly("h", "gpu", 1, HALF)], None,
                     id="whole-and-a-half-exceed-the-counter"),
        pytest.param([exactly(count=2)], ["gpu-0-half-0", "gpu-0-half-1"],
                     id="search-backs-off-the-whole-gpu"),
        pytest.param([exactly(count=3)], None, id="three-never-fit"),
    ],
)  # fmt: skip
def test_partitionable_devices_share_their_counters(
    requests: list[dict[str, Any]], devices: list[str] | None
) -> None:
    got = allocate([claim("c", *requests)], node("a"), CLASSES, partitioned(), set())
    assert got.ok is (devices is not None)
    if devices is not None:
        assert [r["device"] for r in got.results[0]] == devices


def test_counters_held_by_other_claims_are_not_available() -> None:
    held = {(GPU, "a", "gpu-0-half-0")}
    assert not allocate([claim("c", exactly("w", "gpu", 1, WHOLE))], node("a"), CLASSES, partitioned(), held).ok  # fmt: skip
    got = allocate([claim("c", exactly("h", "gpu", 1, HALF))], node("a"), CLASSES, partitioned(), held)  # fmt: skip
    assert [r["device"] for r in got.results[0]] == ["gpu-0-half-1"]


def test_why_says_the_counters_ran_out() -> None:
    holder = claim("held", exactly(), allocation={"devices": {"results": [
        {"request": "gpu", "driver": GPU, "pool": "a", "device": "gpu-0-half-0"}]}})  # fmt: skip
    want = claim("c", exactly("w", "gpu", 1, WHOLE))
    ev = evaluate(claim_pod("c"), snapshot([holder, want], partitioned()))
    reason = ev.verdict("a").reasons[0]
    assert reason.message == "cannot allocate all claims"
    assert "1 of them lack the shared counters left in their pool" in reason.detail
    assert failed_scheduling_message(ev) == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_partitionable_devices_are_never_allocated_before_1_36() -> None:
    got = allocate([claim("c", exactly("h", "gpu", 1, HALF))], node("a"), CLASSES, partitioned(), set(), features_for(35))  # fmt: skip
    assert not got.ok


@pytest.mark.parametrize(
    "breakage",
    [
        pytest.param(lambda s: s[1]["spec"]["devices"][0]["consumesCounters"][0].update(counterSet="nope"),
                     id="unknown-counter-set"),
        pytest.param(lambda s: s[0]["spec"]["sharedCounters"].append(
            copy.deepcopy(s[0]["spec"]["sharedCounters"][0])), id="duplicate-counter-set"),
    ],
)  # fmt: skip
def test_an_invalid_pool_offers_no_device(breakage: Any) -> None:
    slices = partitioned()
    breakage(slices)
    assert not allocate([claim("c", exactly())], node("a"), CLASSES, slices, set()).ok


def test_admin_access_takes_devices_other_claims_hold() -> None:
    admin = exactly(count=2)
    admin["exactly"]["adminAccess"] = True
    held = {(GPU, "a", "a100-0"), (GPU, "a", "a100-1")}
    got = allocate([claim("c", admin)], node("a"), CLASSES, [resource_slice("a", 2)], held)
    assert got.ok
    assert [r.get("adminAccess") for r in got.results[0]] == [True, True]
    # ... but never the same device twice for one claim, and without it the devices are taken
    admin["exactly"]["count"] = 3
    assert not allocate([claim("c", admin)], node("a"), CLASSES, [resource_slice("a", 2)], held).ok  # fmt: skip
    assert not allocate([claim("c", exactly())], node("a"), CLASSES, [resource_slice("a", 2)], held).ok  # fmt: skip


def test_admin_access_results_hold_nothing() -> None:
    results = [{"driver": GPU, "pool": "a", "device": "a100-0", "adminAccess": True},
               {"driver": GPU, "pool": "a", "device": "a100-1"}]  # fmt: skip
    holder = claim("h", exactly(), allocation={"devices": {"results": results}})
    assert allocated_devices([holder]) == {(GPU, "a", "a100-1")}


def test_an_all_request_a_constraint_cannot_hold_is_an_error() -> None:
    mixed = resource_slice("a", 1, "a100")
    mixed["spec"]["devices"] += resource_slice("a", 1, "h100")["spec"]["devices"]
    everything = {"name": "x", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}
    c = claim("c", everything)
    c["spec"]["devices"]["constraints"] = [{"matchAttribute": f"{GPU}/model"}]
    with pytest.raises(AllocationError, match="because a claim constraint would not be satisfied"):
        allocate([c], node("a"), CLASSES, [mixed], set())


def models(*names: str) -> dict[str, Any]:
    """Node a's devices d0, d1, ... with these models (one slice)."""
    s = resource_slice("a", len(names))
    for i, (d, m) in enumerate(zip(s["spec"]["devices"], names, strict=True)):
        d["name"], d["attributes"] = f"d{i}", {"model": {"string": m}}
    return s


@pytest.mark.parametrize(
    ("names", "requests", "constraint", "devices"),
    [
        pytest.param(["m1", "m1", "m2"], [exactly("x", "gpu", 2)], {}, ["d0", "d2"],
                     id="one-request-skips-the-same-model"),
        pytest.param(["m1", "m1"], [exactly("x", "gpu", 2)], {}, None, id="no-two-models"),
        pytest.param(["m1", "m1", "m2"], [exactly("x"), exactly("y")], {}, ["d0", "d2"],
                     id="across-requests"),
        pytest.param(["m1", "m1"], [exactly("x"), exactly("y")], {"requests": ["x"]},
                     ["d0", "d1"], id="only-x-named"),
        # Go keeps one value per request (the latest): d2 is compared with d1 only
        pytest.param(["m1", "m2", "m1"], [exactly("x", "gpu", 3)], {}, ["d0", "d1", "d2"],
                     id="go-compares-with-the-requests-latest-device"),
    ],
)  # fmt: skip
def test_distinct_attribute_constraints(
    names: list[str], requests: list[dict[str, Any]], constraint: dict[str, Any],
    devices: list[str] | None,
) -> None:  # fmt: skip
    c = claim("c", *requests)
    c["spec"]["devices"]["constraints"] = [{"distinctAttribute": f"{GPU}/model", **constraint}]
    got = allocate([c], node("a"), CLASSES, [models(*names)], set())
    assert got.ok is (devices is not None)
    if devices is not None:
        assert [r["device"] for r in got.results[0]] == devices


def test_a_constraint_of_no_known_kind_is_an_error() -> None:
    c = claim("c", exactly())
    c["spec"]["devices"]["constraints"] = [{"requests": ["gpu"]}]
    with pytest.raises(AllocationError, match=r"constraint #0: empty constraint"):
        allocate([c], node("a"), CLASSES, [resource_slice("a", 1)], set())


def test_kschedctls_scheduler_places_pods_these_features_let_fit() -> None:
    """The scheduler's filter (feasible_nodes) shares the allocator: a tolerating claim on
    tainted devices and two halves of a partitioned GPU are placed, not refused."""
    tolerant = claim("c", tolerating({"operator": "Exists"}))
    found = feasible_nodes(claim_pod("c"), snapshot([tolerant], [tainted()]))
    assert found.names == ("a",) and not found.not_evaluated
    halves = claim("c", exactly("h", "gpu", 2, HALF))
    found = feasible_nodes(claim_pod("c"), snapshot([halves], partitioned("b")))
    assert found.names == ("b",) and not found.not_evaluated


def test_a_pool_spread_over_nodes_is_complete_with_the_other_nodes_slices() -> None:
    mine = resource_slice("a", 1, resourceSliceCount=2)
    theirs = resource_slice("b", 1, resourceSliceCount=2)
    theirs["spec"]["pool"]["name"] = "a"
    got = allocate([claim("c", exactly())], node("a"), CLASSES, [mine], set(), everywhere=[mine, theirs])  # fmt: skip
    assert got.ok
    newer = copy.deepcopy(theirs)
    newer["spec"]["pool"]["generation"] = 2
    got = allocate([claim("c", exactly())], node("a"), CLASSES, [mine], set(), everywhere=[mine, newer])  # fmt: skip
    assert not got.ok and not got.shortages[0].in_class  # obsolete: left out


def test_an_all_request_fails_on_any_incomplete_pool_even_an_unrelated_one() -> None:
    other = resource_slice("a", 1, "h100", resourceSliceCount=2)
    other["spec"]["pool"]["name"] = "elsewhere"
    everything = {"name": "x", "firstAvailable": [
        {"name": "one", "deviceClassName": "gpu"},
        {"name": "all", "deviceClassName": "gpu", "allocationMode": "All"}]}  # fmt: skip
    with pytest.raises(AllocationError, match=r"request all: asks for all devices, but resource "
                       r"pool gpu.example.com/elsewhere is currently being updated"):  # fmt: skip
        allocate([claim("c", everything)], node("a"), CLASSES, [resource_slice("a", 2), other], set())  # fmt: skip


def test_invalid_pools_are_named_when_nothing_fits() -> None:
    slices = partitioned()
    slices[1]["spec"]["devices"][0]["consumesCounters"][0]["counterSet"] = "nope"
    ev = evaluate(claim_pod("c"), snapshot([claim("c", exactly())], slices))
    assert ev.verdict("a").reasons[0].message == "invalid resource pools were encountered"


def test_per_device_node_selection() -> None:
    s = resource_slice("a", 2)
    del s["spec"]["nodeName"]
    s["spec"]["perDeviceNodeSelection"] = True
    s["spec"]["devices"][0]["nodeName"] = "b"
    s["spec"]["devices"][1]["allNodes"] = True
    got = allocate([claim("c", exactly())], node("a"), CLASSES, [s], set())
    assert [r["device"] for r in got.results[0]] == ["a100-1"]  # a100-0 serves node b only
    assert not allocate([claim("c", exactly(count=2))], node("a"), CLASSES, [s], set()).ok
    assert allocate([claim("c", exactly())], node("a"), CLASSES, [s], set(), features_for(35)).ok is False  # fmt: skip


def test_per_device_node_selection_pins_the_allocation_as_go_does() -> None:
    """kschedctl's scheduler writes the allocation's node selector from the device's own
    node selection (``createNodeSelector``): a device with a nodeName pins the node."""
    s = resource_slice("a", 1)
    del s["spec"]["nodeName"]
    s["spec"]["perDeviceNodeSelection"] = True
    s["spec"]["devices"][0]["nodeName"] = "a"
    snap = snapshot([claim("c", exactly())], [s])
    (write,) = pod_claim_writes(claim_pod("c"), snap, "a")
    assert write.allocation is not None
    assert write.allocation["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}  # fmt: skip


def shared_gpu(*, multiple: bool = True, policy: dict[str, Any] | None = None,
               node_name: str = "a") -> dict[str, Any]:  # fmt: skip
    """Node a's one GPU with 80Gi of memory (and a policy), shareable when ``multiple``."""
    s = resource_slice(node_name, 1)
    device = s["spec"]["devices"][0]
    device["capacity"] = {"memory": {"value": "80Gi", **({"requestPolicy": policy} if policy else {})}}  # fmt: skip
    if multiple:
        device["allowMultipleAllocations"] = True
    return s


def wanting(name: str, memory: str | None) -> dict[str, Any]:
    req = exactly(name)
    if memory is not None:
        req["exactly"]["capacity"] = {"requests": {"memory": memory}}
    return req


STEPPED = {"default": "10Gi", "validRange": {"min": "10Gi", "max": "40Gi", "step": "10Gi"}}


@pytest.mark.parametrize(
    ("requests", "policy", "consumed"),
    [
        pytest.param(["40Gi", "40Gi"], None, ["40Gi", "40Gi"], id="two-shares-of-one-gpu"),
        pytest.param(["40Gi", "41Gi"], None, None, id="over-the-capacity"),
        pytest.param(["15Gi", None], STEPPED, ["20Gi", "10Gi"], id="rounded-up-and-default"),
        pytest.param(["50Gi"], STEPPED, None, id="above-the-policy-max"),
        pytest.param(["5Gi"], {"validValues": ["8Gi", "16Gi"]}, ["8Gi"], id="next-valid-value"),
        pytest.param([None, None], None, None, id="no-request-takes-everything"),
    ],
)  # fmt: skip
def test_consumable_capacity_shares(
    requests: list[str | None], policy: dict[str, Any] | None, consumed: list[str] | None
) -> None:
    c = claim("c", *[wanting(f"r{i}", m) for i, m in enumerate(requests)])
    got = allocate([c], node("a"), CLASSES, [shared_gpu(policy=policy)], set())
    assert got.ok is (consumed is not None)
    if consumed is not None:
        results = got.results[0]
        assert [r["consumedCapacity"]["memory"] for r in results] == consumed
        assert {r["device"] for r in results} == {"a100-0"}
        assert len({r["shareID"] for r in results}) == len(results)


def test_shares_other_claims_hold_count() -> None:
    held = claim("held", exactly(), allocation={"devices": {"results": [
        {"request": "gpu", "driver": GPU, "pool": "a", "device": "a100-0",
         "shareID": "u-1", "consumedCapacity": {"memory": "60Gi"}}]}})  # fmt: skip
    ev = evaluate(claim_pod("c"), snapshot([held, claim("c", wanting("gpu", "30Gi"))], [shared_gpu()]))  # fmt: skip
    reason = ev.verdict("a").reasons[0]
    assert reason.message == "cannot allocate all claims"
    assert "1 of them lack the capacity the request asks for" in reason.detail
    fits = claim("c", wanting("gpu", "20Gi"))
    assert evaluate(claim_pod("c"), snapshot([held, fits], [shared_gpu()])).verdict("a").fits


def test_capacity_requests_on_a_device_that_is_not_shared() -> None:
    alone = [shared_gpu(multiple=False)]
    assert allocate([claim("c", wanting("gpu", "40Gi"))], node("a"), CLASSES, alone, set()).ok
    assert not allocate([claim("c", wanting("gpu", "90Gi"))], node("a"), CLASSES, alone, set()).ok
    two = claim("c", wanting("x", "10Gi"), wanting("y", "10Gi"))  # one device, one request
    assert not allocate([two], node("a"), CLASSES, alone, set()).ok
    unknown = exactly()
    unknown["exactly"]["capacity"] = {"requests": {"cores": "1"}}
    assert not allocate([claim("c", unknown)], node("a"), CLASSES, alone, set()).ok
