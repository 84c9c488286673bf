"""`kschedctl simulate` of a GPU cluster: a snapshot with DeviceClasses, ResourceSlices and
ResourceClaims is seeded into the simulation lab, kube-scheduler allocates from it, and the pod
that fits nowhere gets the reasons `why`'s engine gives (builds its own lab, 2 nodes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kschedctl.cli import app
from kschedctl.clustersnapshot import dump
from kschedctl.clustersnapshot.reduce import Reducer
from kschedctl.lab.devices import node_resource_slices
from kschedctl.lab.nodes import lab_node

FIXTURES = Path(__file__).parent.parent / "fixtures" / "simulate"
GPU = "gpu.example.com"


def gpu_claim(name: str, count: int, selector: str) -> dict[str, Any]:
    exactly = {"deviceClassName": "gpu", "count": count,
               "selectors": [{"cel": {"expression": selector}}]}  # fmt: skip
    return {"metadata": {"name": name, "namespace": "ml"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}  # fmt: skip


def claim_pod(name: str, claim: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
        },
        "status": {"phase": "Pending"},
    }  # fmt: skip


def gpu_snapshot(path: Path) -> None:
    nodes = [
        lab_node("gpu-a100", devices=[{"driver": GPU, "name": "gpu", "count": 2,
                 "attributes": {"model": "a100"}, "capacity": {"memory": "40Gi"}}]),
        lab_node("gpu-h100", devices=[{"driver": GPU, "name": "gpu", "count": 4,
                 "attributes": {"model": "h100"}, "capacity": {"memory": "80Gi"}}]),
    ]  # fmt: skip
    reducer = Reducer()
    reducer.add_nodes(nodes)
    reducer.add_namespaces([{"metadata": {"name": "ml"}}])
    infer = claim_pod("infer", "")
    infer["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-a100"}]
    reducer.add_pods([claim_pod("train", "two-h100"), claim_pod("big-model", "big-memory"), infer])
    one_a100 = gpu_claim("one-a100", 1, f'device.attributes["{GPU}"].model == "a100"')
    reducer.add_claim_templates(
        [{"metadata": one_a100["metadata"], "spec": {"spec": one_a100["spec"]}}]
    )
    gpu_class = {"metadata": {"name": "gpu"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}}  # fmt: skip
    reducer.add_dra(
        [gpu_class],
        [s for n in nodes for s in node_resource_slices(n)],
        [
            gpu_claim("two-h100", 2, f'device.attributes["{GPU}"].model == "h100"'),
            gpu_claim("big-memory", 1,
                      f'device.capacity["{GPU}"].memory.compareTo(quantity("96Gi")) >= 0'),
        ],
    )  # fmt: skip
    path.write_text(dump(reducer.finish()))


def test_a_gpu_cluster_is_simulated_with_its_devices(tmp_path: Path) -> None:
    snapshot = tmp_path / "gpus.yaml"
    gpu_snapshot(snapshot)
    result = CliRunner().invoke(
        app,
        ["simulate", str(snapshot), "--scheduler", str(FIXTURES / "kube-scheduler.yaml"),
         "--settle", "3", "-o", "json"],
        prog_name="kschedctl",
    )  # fmt: skip
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.stderr
    (kube,) = json.loads(result.stdout)["candidates"]
    placed = {p["pod"]: p["node"] for p in kube["pods"]}
    # infer's claim is made from its template by the simulation lab's controller
    assert placed == {"ml/train": "gpu-h100", "ml/big-model": None, "ml/infer": "gpu-a100"}
    reasons = {r["reason"] for r in kube["reasons"]}
    assert reasons == {"cannot allocate all claims"}
    assert reasons == {r["reason"] for r in kube["whyReasons"]}
