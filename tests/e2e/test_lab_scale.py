"""`lab up --nodes 2000`: every node Ready, untainted, heartbeating through its Lease, and
kube-scheduler places pods on them — a lab of its own, beside the session's.

How long it took is printed (`benchmarks/lab_up.py` measures it), never asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_helpers import pod_manifest, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.api import NOT_READY_TAINT
from kschedctl.lab.cluster import Lab

pytestmark = pytest.mark.scale

NODES = 2000
KWOK_CONDITIONS = {  # kwok's node-initialize stage: what its NodeConditions template gives
    "Ready": "True",
    "MemoryPressure": "False",
    "DiskPressure": "False",
    "PIDPressure": "False",
    "NetworkUnavailable": "False",
}


def test_two_thousand_nodes_ready_untainted_and_schedulable(own_lab_dir: Path) -> None:
    up = subprocess.run(
        [sys.executable, "-m", "kschedctl", "lab", "up", "--dir", str(own_lab_dir),
         "--nodes", str(NODES), "--timeout", "900"],
        capture_output=True, text=True, timeout=1200, env=dict(os.environ),
    )  # fmt: skip
    assert up.returncode == 0, up.stderr
    print("\n" + next(line for line in up.stderr.splitlines() if "lab ready in" in line))

    with Cluster.connect(str(Lab(own_lab_dir).kubeconfig)) as cluster:
        nodes = {n["metadata"]["name"]: n for n in cluster.list("/api/v1/nodes")}
        assert sorted(nodes) == sorted(f"lab-node-{i}" for i in range(1, NODES + 1))
        for name, node in nodes.items():
            conditions = {c["type"]: c["status"] for c in node["status"]["conditions"]}
            assert conditions == KWOK_CONDITIONS, name
            taints = node["spec"].get("taints") or []
            assert not [t for t in taints if t["key"] == NOT_READY_TAINT], name
            assert node["status"]["allocatable"] == node["status"]["capacity"], name
        leases = cluster.list("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases")
        assert {lease["metadata"]["name"] for lease in leases} == set(nodes)  # kwok renews them

        # The last node created, chosen by kube-scheduler's own filters; and one it picks.
        last = f"lab-node-{NODES}"
        pods = "/api/v1/namespaces/default/pods"
        cluster.create(pods, pod_manifest("on-last", nodeSelector={"kubernetes.io/hostname": last}))
        cluster.create(pods, pod_manifest("anywhere"))

        def running(name: str) -> dict[str, str] | None:
            pod = cluster.get(f"{pods}/{name}")
            return pod["spec"] if pod["status"].get("phase") == "Running" else None

        on_last = wait_for(lambda: running("on-last"), 120, "pod on-last Running")
        anywhere = wait_for(lambda: running("anywhere"), 120, "pod anywhere Running")
        assert on_last["nodeName"] == last
        assert anywhere["nodeName"] in nodes
