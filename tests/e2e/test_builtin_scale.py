"""1,000 pending pods on 500 nodes, all bound by kschedctl's scheduler, capacities respected.

Each node has 1 cpu and each pod asks for 500m: the pods fill the cluster exactly, so they can
all be bound only if no node ever gets a third pod — one double-booked node would leave a pod
with nowhere to go. A lab of its own (module scope) holds the 500 nodes.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from e2e_helpers import pod_manifest, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.nodes import lab_node
from kschedctl.lab.processes import proxy_free_environment
from kschedctl.model.filters import node_allocatable, pod_requests

pytestmark = pytest.mark.scale

NODES, PODS = 500, 1000
NAME = "bulk"


@pytest.fixture(scope="module")
def big_lab(
    lab_binaries: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lab]:
    """Own control plane: 500 simulated nodes that must fill exactly (a session lab's nodes
    would take pods)."""
    the_lab = Lab(tmp_path_factory.mktemp("scale") / "lab")
    nodes = [
        lab_node(f"n{i:03d}", capacity={"cpu": "1", "memory": "4Gi", "pods": "110"})
        for i in range(NODES)
    ]
    try:
        # up() returns once the nodes are Ready and no longer tainted not-ready.
        the_lab.up(nodes, progress=lambda _m: None, timeout=600)
        yield the_lab
    finally:
        the_lab.down()


def test_a_thousand_pods_on_five_hundred_nodes(big_lab: Lab, tmp_path: Path) -> None:
    api = Cluster.connect(str(big_lab.kubeconfig))
    log = tmp_path / "bulk.log"
    try:
        api.create("/api/v1/namespaces", {"metadata": {"name": "bulk"}})
        wait_for(lambda: _has_default_sa(api), 60, "the default ServiceAccount")

        def create(i: int) -> None:
            body = pod_manifest(f"p{i:04d}", schedulerName=NAME)
            body["spec"]["containers"][0]["resources"] = {
                "requests": {"cpu": "500m", "memory": "64Mi"}
            }
            api.create("/api/v1/namespaces/bulk/pods", body)

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, range(PODS)))
        argv = [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={NAME}",
                f"--kubeconfig={big_lab.kubeconfig}", "--metrics-port=0", "--qps=200", "--burst=200"]  # fmt: skip
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment()
            )
        started = time.monotonic()
        try:
            wait_for(lambda: _bound(api) == PODS, 300, f"all {PODS} pods bound", interval=2)
            took = time.monotonic() - started
            print(f"\n{PODS} pods on {NODES} nodes bound in {took:.1f}s")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        assert proc.returncode == 0, log.read_text()[-2000:]

        nodes = {n["metadata"]["name"]: n for n in api.list("/api/v1/nodes")}
        pods = api.list("/api/v1/namespaces/bulk/pods")
        per_node = Counter(p["spec"]["nodeName"] for p in pods)
        assert set(per_node.values()) == {2} and len(per_node) == NODES
        used: Counter[str] = Counter()
        for p in pods:
            used[p["spec"]["nodeName"]] += pod_requests(p)["cpu"]
        for name, cpu in used.items():
            assert cpu <= node_allocatable(nodes[name])["cpu"], name
        # Retries are allowed (a node can turn NotReady, and be tainted, under this load), but
        # every pod ended up bound; show what delayed any.
        delays = Counter(
            e.get("note", "")[:160]
            for e in api.list("/apis/events.k8s.io/v1/namespaces/bulk/events")
            if e.get("reason") == "FailedScheduling"
        )
        for note, count in delays.most_common(5):
            print(f"  {count} x FailedScheduling: {note}")
    finally:
        api.close()


def _has_default_sa(api: Cluster) -> bool:
    return any(
        sa["metadata"]["name"] == "default"
        for sa in api.list("/api/v1/namespaces/bulk/serviceaccounts")
    )


def _bound(api: Cluster) -> int:
    return sum(1 for p in api.list("/api/v1/namespaces/bulk/pods") if p["spec"].get("nodeName"))
