"""`kschedctl why` for pods with Dynamic Resource Allocation claims, against the real
kube-scheduler v1.36.3 allocating from ResourceSlices the lab publishes (lab/devices.py).

Own control plane: kube-scheduler's messages count every node, so the cluster holds exactly
these shapes — two GPU pools (a100 with 40Gi, h100 with 80Gi), a node without devices, and
the selector corpus' node (tests/corpus/dra-selectors.yaml) with many identical devices.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import lab_of_its_own, latest_failure, pod_manifest, wait_for
from typer.testing import CliRunner

from kschedctl.cli import app
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.devices import node_resource_slices
from kschedctl.lab.nodes import lab_node

CORPUS = Path(__file__).parents[1] / "corpus" / "dra-selectors.yaml"
RESOURCE = "/apis/resource.k8s.io/v1"
GPU = "gpu.example.com"


def corpus() -> dict[str, Any]:
    return dict(yaml.safe_load(CORPUS.read_text()))


def dra_nodes() -> list[dict[str, Any]]:
    device = corpus()["device"]
    plain_attributes = {k: next(iter(v.values())) for k, v in device["attributes"].items()}
    plain_attributes["driverVersion"] = {"version": device["attributes"]["driverVersion"]["version"]}  # fmt: skip
    return [
        lab_node("dra-a100", labels={"pool": "a100"}, devices=[
            {"driver": GPU, "name": "gpu", "count": 2,
             "attributes": {"model": "a100"}, "capacity": {"memory": "40Gi"}}]),
        lab_node("dra-h100", labels={"pool": "h100"}, devices=[
            {"driver": GPU, "name": "gpu", "count": 4,
             "attributes": {"model": "h100"}, "capacity": {"memory": "80Gi"}}]),
        lab_node("dra-plain"),
        lab_node("dra-corpus", labels={"pool": "corpus"}, devices=[
            {"driver": device["driver"], "name": "dev", "count": 64,
             "attributes": plain_attributes,
             "capacity": {k: v["value"] for k, v in device["capacity"].items()}}]),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def dra_lab(
    lab_binaries: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lab]:
    with lab_of_its_own(tmp_path_factory.mktemp("dra-lab"), dra_nodes()) as the_lab:
        yield the_lab


@pytest.fixture(scope="module")
def dra_cluster(dra_lab: Lab) -> Iterator[Cluster]:
    connection = Cluster.connect(str(dra_lab.kubeconfig))
    classes = [
        ("gpu", GPU, "example.com/gpu"),
        ("corpus", corpus()["device"]["driver"], None),
    ]
    for name, driver, extended in classes:
        spec: dict[str, Any] = {
            "selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]
        }
        if extended:
            spec["extendedResourceName"] = extended
        connection.create(f"{RESOURCE}/deviceclasses", {"metadata": {"name": name}, "spec": spec})
    yield connection
    connection.close()


@pytest.fixture()
def ns(dra_cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    slug = "".join(c for c in request.node.name.lower() if c.isalnum())[:30]
    name = f"dra-{slug}"
    dra_cluster.create("/api/v1/namespaces", {"metadata": {"name": name}})
    yield name
    dra_cluster.delete(f"/api/v1/namespaces/{name}")
    wait_for(lambda: not dra_cluster.list(f"/api/v1/namespaces/{name}/pods"), 60,
             f"the pods of {name} to go")  # fmt: skip
    wait_for(lambda: not dra_cluster.list(f"{RESOURCE}/namespaces/{name}/resourceclaims"), 60,
             f"the claims of {name} to go")  # fmt: skip


def claim(name: str, cls: str, count: int = 1, *selectors: str) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls, "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
    }


def claim_pod(name: str, claim_name: str) -> dict[str, Any]:
    pod = pod_manifest(name, resourceClaims=[{"name": "gpu", "resourceClaimName": claim_name}])
    pod["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    return pod


def why_json(lab: Lab, namespace: str, pod: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        app, ["why", pod, "-n", namespace, "-o", "json", "--kubeconfig", str(lab.kubeconfig)]
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code in (0, 6), result.stderr
    return result.exit_code, json.loads(result.stdout)


def check_against_scheduler(lab: Lab, cluster: Cluster, namespace: str, pod: str) -> dict[str, Any]:
    """why's summary equals kube-scheduler's latest FailedScheduling message."""
    wait_for(lambda: latest_failure(cluster, namespace, pod), 60, f"FailedScheduling for {pod}")
    state: dict[str, Any] = {}

    def agree() -> bool:
        state["code"], state["why"] = why_json(lab, namespace, pod)
        state["event"] = latest_failure(cluster, namespace, pod)
        return bool(state["why"]["summary"] == state["event"])

    wait_for(agree, 20, f"why's summary to equal kube-scheduler's message for {pod}", 1.0)
    data = state["why"]
    print(f"\n[{pod}]\n  kube-scheduler: {state['event']}\n  why summary:    {data['summary']}")
    assert state["code"] == 6 and data["schedulable"] is False
    assert not data["notEvaluated"], data["notEvaluated"]
    return dict(data)


def reasons(data: dict[str, Any]) -> dict[str, str]:
    return {n["name"]: n["reasons"][0]["message"] for n in data["nodes"] if n["reasons"]}


def test_claim_naming_a_missing_device_class(dra_lab: Lab, dra_cluster: Cluster, ns: str) -> None:
    dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", claim("c", "no-such-class"))
    dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("target", "c"))
    data = check_against_scheduler(dra_lab, dra_cluster, ns, "target")
    assert "request gpu: device class no-such-class does not exist" in data["summary"]


def test_claim_no_resource_slice_can_satisfy(dra_lab: Lab, dra_cluster: Cluster, ns: str) -> None:
    # 3 h100 fit only dra-h100, which has 4; with 80Gi and 5 devices nothing fits.
    big = claim("c", "gpu", 5, f'device.capacity["{GPU}"].memory.compareTo(quantity("64Gi")) >= 0')
    dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", big)
    dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("target", "c"))
    data = check_against_scheduler(dra_lab, dra_cluster, ns, "target")
    assert "4 cannot allocate all claims" in data["summary"]
    detail = next(n for n in data["nodes"] if n["name"] == "dra-h100")["reasons"][0]["detail"]
    assert "4 device(s) match, 4 free" in detail and "5 wanted" in detail


def test_extended_resource_backed_by_a_device_class(
    dra_lab: Lab, dra_cluster: Cluster, ns: str
) -> None:
    gpu = {"resources": {"requests": {"example.com/gpu": "5"}, "limits": {"example.com/gpu": "5"}}}
    pod = pod_manifest("target", containers=[{"name": "app", "image": "registry.k8s.io/pause:3.10", **gpu}])  # fmt: skip
    dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    data = check_against_scheduler(dra_lab, dra_cluster, ns, "target")
    assert "Insufficient example.com/gpu" not in data["summary"]


def test_satisfiable_claim_fits_and_is_allocated(
    dra_lab: Lab, dra_cluster: Cluster, ns: str
) -> None:
    h100 = claim("c", "gpu", 2, f'device.attributes["{GPU}"].model == "h100"')
    dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", h100)
    pod = claim_pod("target", "c")
    pod["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
    dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    code, data = why_json(dra_lab, ns, "target")  # gated: why evaluates, nobody binds yet
    fits = [n["name"] for n in data["nodes"] if n["fits"]]
    assert fits == ["dra-h100"], data["nodes"]
    dra_cluster.patch(f"/api/v1/namespaces/{ns}/pods/target", {"spec": {"schedulingGates": None}})

    def running() -> dict[str, Any] | None:
        p = dra_cluster.get(f"/api/v1/namespaces/{ns}/pods/target")
        return p if p["status"].get("phase") == "Running" else None

    placed = wait_for(running, 60, "the pod with the claim running")
    assert placed["spec"]["nodeName"] == "dra-h100"
    allocated = dra_cluster.get(f"{RESOURCE}/namespaces/{ns}/resourceclaims/c")["status"]
    assert {r["pool"] for r in allocated["allocation"]["devices"]["results"]} == {"dra-h100"}


def test_selector_corpus_against_kube_scheduler(
    dra_lab: Lab, dra_cluster: Cluster, ns: str
) -> None:
    """One claim and pod per corpus selector: kube-scheduler's verdict (bound, cannot
    allocate, error) is the corpus' expectation."""
    selectors = corpus()["selectors"]
    for i, entry in enumerate(selectors):
        dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims",
                           claim(f"c{i}", "corpus", 1, entry["expr"]))  # fmt: skip
        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod(f"p{i}", f"c{i}"))

    def verdicts() -> dict[int, tuple[str, str]] | None:
        out: dict[int, tuple[str, str]] = {}
        pods = {p["metadata"]["name"]: p for p in dra_cluster.list(f"/api/v1/namespaces/{ns}/pods")}
        events = dra_cluster.list(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")
        notes: dict[str, str] = {}
        for e in events:
            if e.get("reason") == "FailedScheduling":
                notes[e["regarding"]["name"]] = e.get("note") or ""
        for i in range(len(selectors)):
            pod = pods[f"p{i}"]
            if pod["spec"].get("nodeName"):
                out[i] = ("match", pod["spec"]["nodeName"])
            elif f"p{i}" in notes:
                note = notes[f"p{i}"]
                out[i] = ("nomatch" if "cannot allocate all claims" in note else "error", note)
            else:
                return None
        return out

    found = wait_for(verdicts, 120, "kube-scheduler's verdict on every corpus selector", 1.0)
    for i, entry in enumerate(selectors):
        print(f"  {found[i][0]:8} {entry['expr']}  [{found[i][1][:160]}]")
    assert {i: v[0] for i, v in found.items()} == {i: e["want"] for i, e in enumerate(selectors)}
    # An error's message is the whole FailedScheduling text: why's summary is that text.
    failing = next(i for i, e in enumerate(selectors) if e["want"] == "error")
    code, data = why_json(dra_lab, ns, f"p{failing}")
    assert code == 6 and data["summary"] == latest_failure(dra_cluster, ns, f"p{failing}")


def test_match_attribute_constraint(dra_lab: Lab, dra_cluster: Cluster, ns: str) -> None:
    """Two a100 and one h100 of another driver on dra-plain: a claim whose requests must
    all share a model fits nowhere; one that constrains only request x fits dra-plain."""
    mixed = {
        "metadata": {"name": "dra-plain-mixed"},
        "spec": {"driver": "mixed.example.com", "nodeName": "dra-plain",
                 "pool": {"name": "dra-plain-mixed", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"d{i}", "attributes": {"model": {"string": m}}}
                             for i, m in enumerate(["a100", "a100", "h100"])]},
    }  # fmt: skip
    dra_cluster.create(f"{RESOURCE}/resourceslices", mixed)
    selector = {"cel": {"expression": 'device.driver == "mixed.example.com"'}}
    dra_cluster.create(f"{RESOURCE}/deviceclasses",
                       {"metadata": {"name": "mixed"}, "spec": {"selectors": [selector]}})  # fmt: skip
    try:
        for name, constraint in (
            ("all", {"matchAttribute": "mixed.example.com/model"}),
            ("only-x", {"requests": ["x"], "matchAttribute": "mixed.example.com/model"}),
        ):
            body = {"metadata": {"name": name}, "spec": {"devices": {
                "requests": [{"name": "x", "exactly": {"deviceClassName": "mixed", "count": 2}},
                             {"name": "y", "exactly": {"deviceClassName": "mixed"}}],
                "constraints": [constraint]}}}  # fmt: skip
            dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", body)
        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("all", "all"))
        data = check_against_scheduler(dra_lab, dra_cluster, ns, "all")
        assert "4 cannot allocate all claims" in data["summary"]

        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("only-x", "only-x"))
        assert bound_to(dra_cluster, ns, "only-x") == "dra-plain"
        results = allocation_results(dra_cluster, ns, "only-x")
        assert sorted((r["request"], r["device"]) for r in results) == [
            ("x", "d0"), ("x", "d1"), ("y", "d2")]  # fmt: skip
    finally:
        dra_cluster.delete(f"{RESOURCE}/resourceslices/dra-plain-mixed")
        dra_cluster.delete(f"{RESOURCE}/deviceclasses/mixed")


@contextmanager
def plain_node_devices(cluster: Cluster, cls: str, devices: list[dict[str, Any]]) -> Iterator[None]:
    """``devices`` (the nodes file's form, one driver) published for dra-plain as the lab
    publishes them, with DeviceClass ``cls`` selecting their driver; removed after."""
    slices = node_resource_slices(lab_node("dra-plain", devices=devices))
    driver = devices[0]["driver"]
    for s in slices:
        cluster.create(f"{RESOURCE}/resourceslices", s)
    selector = {"cel": {"expression": f'device.driver == "{driver}"'}}
    cluster.create(f"{RESOURCE}/deviceclasses",
                   {"metadata": {"name": cls}, "spec": {"selectors": [selector]}})  # fmt: skip
    try:
        yield
    finally:
        for s in slices:
            cluster.delete(f"{RESOURCE}/resourceslices/{s['metadata']['name']}")
        cluster.delete(f"{RESOURCE}/deviceclasses/{cls}")


def fits_while_gated(lab: Lab, cluster: Cluster, ns: str, pod: dict[str, Any]) -> list[str]:
    """The nodes why says fit a gated pod (nobody binds it yet); then the gate is lifted."""
    name = pod["metadata"]["name"]
    pod["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
    cluster.create(f"/api/v1/namespaces/{ns}/pods", pod)
    code, data = why_json(lab, ns, name)
    assert not data["notEvaluated"], data["notEvaluated"]
    cluster.patch(f"/api/v1/namespaces/{ns}/pods/{name}", {"spec": {"schedulingGates": None}})
    return [n["name"] for n in data["nodes"] if n["fits"]]


def bound_to(cluster: Cluster, ns: str, pod: str) -> str:
    def bound() -> str | None:
        found = cluster.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
        return str(found["spec"].get("nodeName") or "") or None

    return str(wait_for(bound, 60, f"{pod} bound"))


def fits_and_binds(lab: Lab, cluster: Cluster, ns: str, pod: dict[str, Any], node: str) -> None:
    """why says only ``node`` fits the gated pod; ungated, kube-scheduler binds it there."""
    assert fits_while_gated(lab, cluster, ns, pod) == [node]
    assert bound_to(cluster, ns, pod["metadata"]["name"]) == node


def allocation_results(cluster: Cluster, ns: str, claim_name: str) -> list[dict[str, Any]]:
    """The devices allocated to claim ``claim_name``, once written."""

    def results() -> list[dict[str, Any]] | None:
        found = cluster.get(f"{RESOURCE}/namespaces/{ns}/resourceclaims/{claim_name}")
        return (
            ((found.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results")
        )

    return list(wait_for(results, 60, f"claim {claim_name} allocated"))


TAINTED = [{"driver": "taint.example.com", "name": "gpu", "count": 2,
            "taints": [{"key": "taint.example.com/health", "value": "broken",
                        "effect": "NoSchedule"}]}]  # fmt: skip


def test_device_taints_and_tolerations(dra_lab: Lab, dra_cluster: Cluster, ns: str) -> None:
    """dra-plain's two devices are tainted NoSchedule: a claim without a toleration fits
    nowhere (the same text as kube-scheduler's), one tolerating the taint fits dra-plain."""
    with plain_node_devices(dra_cluster, "tainted", TAINTED):
        dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", claim("plain", "tainted"))
        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("plain", "plain"))
        data = check_against_scheduler(dra_lab, dra_cluster, ns, "plain")
        assert "4 cannot allocate all claims" in data["summary"]
        detail = next(n for n in data["nodes"] if n["name"] == "dra-plain")["reasons"][0]["detail"]
        assert "2 of them tainted (taint.example.com/health=broken:NoSchedule)" in detail

        tolerant = claim("tolerant", "tainted")
        tolerant["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
            {"key": "taint.example.com/health", "operator": "Exists", "effect": "NoSchedule"}]  # fmt: skip
        dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", tolerant)
        fits_and_binds(dra_lab, dra_cluster, ns, claim_pod("tolerant", "tolerant"), "dra-plain")


PARTITIONED = [
    {"driver": "part.example.com", "sharedCounters": {"gpu-0": {"memory": "80Gi"}}},
    {"driver": "part.example.com", "name": "whole", "attributes": {"size": "whole"},
     "consumesCounters": {"gpu-0": {"memory": "80Gi"}}},
    {"driver": "part.example.com", "name": "half", "count": 2, "attributes": {"size": "half"},
     "consumesCounters": {"gpu-0": {"memory": "40Gi"}}},
]  # fmt: skip


def sized(name: str, size: str, count: int = 1) -> dict[str, Any]:
    return claim(name, "partitioned", count, f'device.attributes["part.example.com"].size == "{size}"')  # fmt: skip


def test_partitionable_devices(dra_lab: Lab, dra_cluster: Cluster, ns: str) -> None:
    """One 80Gi GPU of dra-plain offered whole or as two 40Gi halves (one counter set): two
    halves fit dra-plain and are allocated; then the whole GPU fits nowhere, as
    kube-scheduler says, because the halves consume its counters."""
    with plain_node_devices(dra_cluster, "partitioned", PARTITIONED):
        dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", sized("halves", "half", 2))
        fits_and_binds(dra_lab, dra_cluster, ns, claim_pod("halves", "halves"), "dra-plain")
        allocation_results(dra_cluster, ns, "halves")

        dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", sized("whole", "whole"))
        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("whole", "whole"))
        data = check_against_scheduler(dra_lab, dra_cluster, ns, "whole")
        assert "4 cannot allocate all claims" in data["summary"]
        detail = next(n for n in data["nodes"] if n["name"] == "dra-plain")["reasons"][0]["detail"]
        assert "1 of them lack the shared counters left in their pool" in detail


def test_admin_access_shares_devices_other_claims_hold(
    dra_lab: Lab, dra_cluster: Cluster, ns: str
) -> None:
    """dra-a100's two GPUs held by one claim: another claim for one fits nowhere (the same
    text as kube-scheduler's); an admin-access claim for both fits dra-a100."""
    a100 = f'device.attributes["{GPU}"].model == "a100"'
    dra_cluster.patch(f"/api/v1/namespaces/{ns}",
                      {"metadata": {"labels": {"resource.kubernetes.io/admin-access": "true"}}})  # fmt: skip
    dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", claim("both", "gpu", 2, a100))
    dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("both", "both"))
    assert bound_to(dra_cluster, ns, "both") == "dra-a100"

    dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", claim("one", "gpu", 1, a100))
    dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("one", "one"))
    data = check_against_scheduler(dra_lab, dra_cluster, ns, "one")
    assert "4 cannot allocate all claims" in data["summary"]

    admin = claim("admin", "gpu", 2, a100)
    admin["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", admin)
    fits_and_binds(dra_lab, dra_cluster, ns, claim_pod("admin", "admin"), "dra-a100")


def test_distinct_attribute_constraint(dra_lab: Lab, dra_cluster: Cluster, ns: str) -> None:
    """dra-plain's devices a-0, a-1 (model m1) and b-0 (m2): three of distinct models fit
    nowhere (the same text as kube-scheduler's); two fit dra-plain, a-0 and b-0."""
    distinct = [
        {"driver": "distinct.example.com", "name": "a", "count": 2, "attributes": {"model": "m1"}},
        {"driver": "distinct.example.com", "name": "b", "attributes": {"model": "m2"}},
    ]
    with plain_node_devices(dra_cluster, "distinct", distinct):
        for name, count in (("three", 3), ("two", 2)):
            body = claim(name, "distinct", count)
            body["spec"]["devices"]["constraints"] = [
                {"distinctAttribute": "distinct.example.com/model"}]  # fmt: skip
            dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", body)
        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("three", "three"))
        data = check_against_scheduler(dra_lab, dra_cluster, ns, "three")
        assert "4 cannot allocate all claims" in data["summary"]

        fits_and_binds(dra_lab, dra_cluster, ns, claim_pod("two", "two"), "dra-plain")
        results = allocation_results(dra_cluster, ns, "two")
        assert [r["device"] for r in results] == ["a-0", "b-0"]


def test_first_available_passes_over_tainted_devices(
    dra_lab: Lab, dra_cluster: Cluster, ns: str
) -> None:
    """A prioritized list whose first choice is dra-plain's tainted devices: with an
    impossible second choice it fits nowhere (kube-scheduler's text); with four h100 as the
    second it fits dra-h100, where kube-scheduler allocates the second subrequest."""
    h100 = {"cel": {"expression": f'device.attributes["{GPU}"].model == "h100"'}}
    with plain_node_devices(dra_cluster, "tainted", TAINTED):
        for name, count in (("never", 5), ("h100", 4)):
            body = {"metadata": {"name": name}, "spec": {"devices": {"requests": [
                {"name": "gpu", "firstAvailable": [
                    {"name": "tainted", "deviceClassName": "tainted", "count": 2},
                    {"name": "h100", "deviceClassName": "gpu", "count": count,
                     "selectors": [h100]}]}]}}}  # fmt: skip
            dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", body)
        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("never", "never"))
        data = check_against_scheduler(dra_lab, dra_cluster, ns, "never")
        assert "4 cannot allocate all claims" in data["summary"]

        fits_and_binds(dra_lab, dra_cluster, ns, claim_pod("h100", "h100"), "dra-h100")
        results = allocation_results(dra_cluster, ns, "h100")
        assert {r["request"] for r in results} == {"gpu/h100"}


def test_incomplete_pool_serves_nothing(dra_lab: Lab, dra_cluster: Cluster, ns: str) -> None:
    """A pool on dra-plain announcing two slices with one published: kube-scheduler allocates
    nothing from it (not even one device), and why says so in its words."""
    (half,) = node_resource_slices(lab_node("dra-plain", devices=[
        {"driver": "partial.example.com", "name": "gpu", "count": 2}]))  # fmt: skip
    half["spec"]["pool"]["resourceSliceCount"] = 2
    dra_cluster.create(f"{RESOURCE}/resourceslices", half)
    selector = {"cel": {"expression": 'device.driver == "partial.example.com"'}}
    dra_cluster.create(f"{RESOURCE}/deviceclasses",
                       {"metadata": {"name": "partial"}, "spec": {"selectors": [selector]}})  # fmt: skip
    try:
        dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", claim("one", "partial"))
        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("one", "one"))
        data = check_against_scheduler(dra_lab, dra_cluster, ns, "one")
        assert "4 cannot allocate all claims" in data["summary"]
    finally:
        dra_cluster.delete(f"{RESOURCE}/resourceslices/{half['metadata']['name']}")
        dra_cluster.delete(f"{RESOURCE}/deviceclasses/partial")


def test_consumable_capacity_shares(dra_lab: Lab, dra_cluster: Cluster, ns: str) -> None:
    """dra-plain's one 80Gi device allows multiple allocations: a 50Gi share fits dra-plain
    and is allocated (a shareID, 50Gi consumed); then a 40Gi share fits nowhere, as
    kube-scheduler says."""
    shared = [{"driver": "shared.example.com", "name": "gpu", "capacity": {"memory": "80Gi"},
               "allowMultipleAllocations": True}]  # fmt: skip
    with plain_node_devices(dra_cluster, "shared", shared):
        for name, memory in (("fifty", "50Gi"), ("forty", "40Gi")):
            body = claim(name, "shared")
            body["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {
                "requests": {"memory": memory}}  # fmt: skip
            dra_cluster.create(f"{RESOURCE}/namespaces/{ns}/resourceclaims", body)
        fits_and_binds(dra_lab, dra_cluster, ns, claim_pod("fifty", "fifty"), "dra-plain")
        (result,) = allocation_results(dra_cluster, ns, "fifty")
        assert result["consumedCapacity"] == {"memory": "50Gi"} and result["shareID"]

        dra_cluster.create(f"/api/v1/namespaces/{ns}/pods", claim_pod("forty", "forty"))
        data = check_against_scheduler(dra_lab, dra_cluster, ns, "forty")
        assert "4 cannot allocate all claims" in data["summary"]
        detail = next(n for n in data["nodes"] if n["name"] == "dra-plain")["reasons"][0]["detail"]
        assert "1 of them lack the capacity the request asks for" in detail
