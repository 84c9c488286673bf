"""`kschedctl simulate` end to end: each run builds its own lab from a snapshot (10 nodes), runs
the candidates one after the other, and tears the lab down.

- spread vs binpack differ the way they must (binpack uses fewer nodes); a fallback-policy
  candidate places the pod the others leave Pending and the report names the step; the pod
  that fits nowhere gets kube-scheduler's reasons, the same `why`'s engine gives; a later
  candidate that leaves more pods unschedulable fails the run with --fail-if-worse (exit 7).
- round trip: a snapshot of the session lab, its bound test pods submitted again to a
  candidate with the lab's own scheduler config, land where the live lab put them (the pods
  whose placement is unique), and the pod no node fits gets the reasons `why` gives live.
- SIGTERM and SIGHUP stop a simulation as Ctrl-C does: every process its lab started is gone
  and the lab's directory removed, whether the lab was starting or a candidate running.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import (
    Recorded,
    pod_manifest,
    recorded_processes,
    running,
    signal_and_wait,
    start_kschedctl,
    wait_for,
)
from typer.testing import CliRunner

from kschedctl.cli import app
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import processes
from kschedctl.lab.cluster import Lab

FIXTURES = Path(__file__).parent.parent / "fixtures" / "simulate"
HOST = "kubernetes.io/hostname"


def kschedctl(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args), prog_name="kschedctl")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def candidate(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in report["candidates"] if c["name"] == name)


def test_candidates_side_by_side(tmp_path: Path) -> None:
    report_file = tmp_path / "report.svg"
    result = kschedctl(
        "simulate", str(FIXTURES / "cluster.yaml"),
        "--scheduler", str(FIXTURES / "fallback.yaml"),
        "--scheduler", str(FIXTURES / "spread.yaml"),
        "--scheduler", str(FIXTURES / "binpack.yaml"),
        "--scheduler", str(FIXTURES / "kube-scheduler.yaml"),
        "--settle", "3", "--fail-if-worse", "--report", str(report_file), "-o", "json",
    )  # fmt: skip
    # fallback (the baseline) places every pod; the others leave the training pod: exit 7
    assert result.exit_code == 7, result.stderr
    assert "leave(s) more pods unschedulable than fallback" in result.stderr
    report = json.loads(result.stdout)
    assert report["worse"] == ["spread", "binpack", "kube-sim"]
    fallback, spread = candidate(report, "fallback"), candidate(report, "spread")
    binpack, kube = candidate(report, "binpack"), candidate(report, "kube-sim")

    # 8 web pods of 500m on 8 general nodes of 4 cpu (2 with a 1-cpu database each)
    assert spread["nodesUsed"] == {"before": 2, "after": 8}
    assert binpack["nodesUsed"]["after"] < spread["nodesUsed"]["after"]
    assert binpack["nodesUsed"]["after"] <= 2
    for c in (spread, binpack, kube):
        assert (c["scheduled"], c["unschedulable"]) == (8, 1)
        (left,) = [p for p in c["pods"] if p["node"] is None]
        assert left["pod"] == "batch/train-0"

    # the fallback step places the training pod on the spare pool, and the report names it
    assert (fallback["scheduled"], fallback["unschedulable"]) == (9, 0)
    assert fallback["fallbackSteps"] == {"spare-pool": 1}
    train = next(p for p in fallback["pods"] if p["pod"] == "batch/train-0")
    assert train["fallbackStep"] == "spare-pool" and train["node"].startswith("spare-")
    moved = next(d for d in report["differences"] if d["candidate"] == "spread")
    assert {"pod": "batch/train-0", "baseline": "group-3", "candidate": "(unschedulable)"} in moved[
        "pods"
    ]

    # fits nowhere: kube-scheduler's reasons are the ones `why`'s engine gives for it
    reasons = {r["reason"] for r in kube["reasons"]}
    assert reasons == {"Insufficient cpu", "node(s) had untolerated taint(s)"} or reasons == {
        "Insufficient cpu", "node(s) had untolerated taint {pool: spare}"}  # fmt: skip
    assert reasons == {r["reason"] for r in kube["whyReasons"]}
    assert {r["reason"] for r in spread["reasons"]} == {r["reason"] for r in spread["whyReasons"]}
    assert report_file.read_text().startswith("<svg")


def test_routing_decides_which_pods_a_candidate_receives(tmp_path: Path) -> None:
    result = kschedctl(
        "simulate", str(FIXTURES / "cluster.yaml"),
        "--scheduler", str(FIXTURES / "routed-binpack.yaml"),
        "--scheduler", str(FIXTURES / "binpack.yaml"), "--settle", "3", "-o", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    routed, plain = candidate(report, "routed-binpack"), candidate(report, "binpack")
    # the shop namespace (team=shop) is routed: its 8 web pods; batch/train-0 is not
    assert routed["received"] == {"routed-binpack": 8, "default-scheduler": 1}
    assert (routed["submitted"], routed["scheduled"]) == (8, 8)
    assert plain["received"] == {} and plain["submitted"] == 9


def test_round_trip_of_the_session_lab(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    nodes = sorted(n["metadata"]["name"] for n in cluster.list("/api/v1/nodes"))
    # unique placements: a node named by hostname, or the only node with room for 3.5 cpu
    for i, node in enumerate(nodes[:3]):
        manifest = pod_manifest(f"pinned-{i}", nodeSelector={HOST: node})
        cluster.create(f"/api/v1/namespaces/{namespace}/pods", manifest)
    filler = pod_manifest("filler", nodeSelector={HOST: nodes[0]})
    filler["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "3"}}
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", filler)
    nowhere = pod_manifest("nowhere")
    nowhere["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100"}}
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", nowhere)

    def live() -> dict[str, str] | None:
        pods = cluster.list(f"/api/v1/namespaces/{namespace}/pods")
        bound = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods}
        reported = any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                       for p in pods if p["metadata"]["name"] == "nowhere"
                       for c in p.get("status", {}).get("conditions") or [])  # fmt: skip
        placed = {k: v for k, v in bound.items() if v}
        return placed if len(placed) == 4 and reported else None

    placed = wait_for(live, 120, "the test pods bound and 'nowhere' reported")
    why = kschedctl(
        "why", "--all", "-n", namespace, "-o", "json", "--kubeconfig", str(lab.kubeconfig)
    )
    assert why.exit_code == 6, why.stderr
    why_reasons = {r["reason"] for r in json.loads(why.stdout)["summary"]}

    snap_file = tmp_path / "lab.yaml"
    taken = kschedctl("snapshot", "-f", str(snap_file), "--kubeconfig", str(lab.kubeconfig))
    assert taken.exit_code == 0, taken.stderr
    # the test's bound pods go back to pending: the simulation places them again
    doc = yaml.safe_load(snap_file.read_text())
    spec = doc["spec"]
    ours = [p for p in spec["pods"] if p["namespace"] == namespace]
    spec["pods"] = [p for p in spec["pods"] if p["namespace"] != namespace]
    for pod in ours:
        pod.pop("nodeName")
        pod.pop("phase", None)
    spec["pendingPods"] = [
        p for p in spec.get("pendingPods", []) if p["namespace"] == namespace
    ] + ours
    snap_file.write_text(yaml.safe_dump(doc))
    # the lab's own scheduler: kube-scheduler with the default profile (lab/cluster.py)
    own = tmp_path / "lab-default"
    own.mkdir()
    (own / "scheduler.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kschedctl.io/v1alpha1", "kind": "Scheduler",
        "metadata": {"name": "default-scheduler"},
        "spec": {"program": "kube-scheduler", "replacesDefault": True,
                 "profiles": [{"schedulerName": "default-scheduler"}]},
    }))  # fmt: skip

    result = kschedctl(
        "simulate", str(snap_file), "--scheduler", str(own), "--settle", "3", "-o", "yaml"
    )
    assert result.exit_code == 0, result.stderr
    report = yaml.safe_load(result.stdout)
    (run,) = report["candidates"]
    simulated = {
        p["pod"].split("/", 1)[1]: p["node"]
        for p in run["pods"]
        if p["pod"].startswith(namespace + "/")
    }
    assert simulated == {**placed, "nowhere": None}
    assert {r["reason"] for r in run["reasons"]} == why_reasons
    assert {r["reason"] for r in run["whyReasons"]} == why_reasons


@pytest.mark.parametrize(
    ("signum", "phase"),
    [(signal.SIGTERM, "a candidate runs"), (signal.SIGHUP, "the lab starts")],
)
def test_a_terminating_signal_stops_the_simulation_lab(
    signum: int, phase: str, tmp_path: Path
) -> None:
    directory = tmp_path / "sim" / "lab"
    seen: set[Recorded] = set()

    def reached() -> bool:
        seen.update(recorded_processes(directory))
        if phase == "the lab starts":
            return any(exe.endswith("kube-apiserver") for _, exe, _ in seen)
        return any((directory / "procs").glob("*.json")) and len(seen) > 6

    # --settle long: the candidate is still running when the signal comes
    proc = start_kschedctl(
        "simulate", str(FIXTURES / "cluster.yaml"), "--scheduler", str(FIXTURES / "spread.yaml"),
        "--lab-dir", str(tmp_path / "sim"), "--settle", "300", "-o", "json",
    )  # fmt: skip
    try:
        wait_for(lambda: reached() or proc.poll() is not None, 300, f"the moment {phase}")
        assert proc.poll() is None, proc.communicate()
        identity = processes.read_identity(directory)
        assert identity is not None and running(seen)
        stderr = signal_and_wait(proc, signum)
        # what the command left, before this test cleans up after it
        left, marked, kept = running(seen), processes.marked(identity), directory.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if directory.exists():
            Lab(directory).down()
    assert left == [], stderr
    assert marked == []  # nor one whose record was not written yet
    assert not kept
    assert proc.returncode == 128 + signum, stderr
    assert f"terminated by {signal.Signals(signum).name}" in stderr
