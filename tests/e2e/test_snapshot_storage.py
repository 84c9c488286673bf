"""Issue 28: `snapshot` carries the storage objects the volume filters read and `simulate` seeds
them, so kube-scheduler decides in the simulation as it did on the live lab (the simulation
builds its own lab from the snapshot: its nodes, our namespace's objects, every cluster-scoped
storage object).

On the session lab, with kube-scheduler v1.36.3:
- ``roomy``: a WaitForFirstConsumer claim of a CSIDriver with ``storageCapacity: true`` whose
  CSIStorageCapacity has room on one node only; kube-scheduler chooses that node for the claim
  (no driver runs: the pod waits for a volume; in the simulation kschedctl provisions one,
  ``kschedctl.lab.provision``, and the pod is bound there);
- ``cramped``: a claim of a second such class whose capacity is too small everywhere;
  kube-scheduler's FailedScheduling message, word for word, in the simulation too;
- ``local``: a claim bound to a local PersistentVolume on a third node; the pod lands there.

The snapshot is edited as a user replaying it would: our bound pod goes back to pending, and
the node kube-scheduler chose for ``roomy``'s claim is forgotten, so the simulation decides
again. Cluster-scoped objects are named after the namespace and deleted at the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from e2e_helpers import wait_for
from test_builtin_volumes import (  # the same volume helpers and their cleanup fixture
    HOST,
    claim,
    cluster_objects,
    create_claim,
    create_class,
    create_pod,
    create_pv,
    failure,
    node_of,
    schedulable_nodes,
)
from test_simulate import FIXTURES, kschedctl
from test_why_storage import STORAGE, create

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.model.filters.volumebinding import SELECTED_NODE

__all__ = ["cluster_objects"]  # a fixture, imported to be used here
KUBE = "default-scheduler"


def capacity_class(cluster: Cluster, namespace: str, objects: list[str], name: str, node: str,
                   size: str) -> str:  # fmt: skip
    """A WaitForFirstConsumer class of its own CSIDriver (``storageCapacity: true``) with
    ``size`` free on ``node`` only."""
    driver, cls = f"{name}.{namespace[-5:]}.csi.example.com", f"{namespace}-{name}"
    create(cluster, f"{STORAGE}/csidrivers", {"metadata": {"name": driver},
           "spec": {"attachRequired": False, "storageCapacity": True}}, objects)  # fmt: skip
    create(cluster, f"{STORAGE}/storageclasses", {"metadata": {"name": cls}, "provisioner": driver,
           "volumeBindingMode": "WaitForFirstConsumer"}, objects)  # fmt: skip
    create(cluster, f"{STORAGE}/namespaces/{namespace}/csistoragecapacities", {
        "metadata": {"name": name}, "storageClassName": cls, "capacity": size,
        "nodeTopology": {"matchLabels": {HOST: node}}}, None)  # fmt: skip
    return cls


def test_simulate_decides_storage_as_the_live_lab_did(
    lab: Lab, cluster: Cluster, namespace: str, cluster_objects: list[str], tmp_path: Path
) -> None:
    nodes = schedulable_nodes(cluster)
    five = {"resources": {"requests": {"storage": "5Gi"}}}
    roomy = capacity_class(cluster, namespace, cluster_objects, "roomy", nodes[0], "10Gi")
    create_claim(cluster, namespace, "roomy", roomy, **five)
    cramped = capacity_class(cluster, namespace, cluster_objects, "cramped", nodes[1], "1Gi")
    create_claim(cluster, namespace, "cramped", cramped, **five)
    local = f"{namespace}-local"
    create_class(cluster, cluster_objects, local, "kubernetes.io/no-provisioner")
    create_pv(cluster, cluster_objects, f"{namespace}-disk", nodes[2], local)
    create_claim(cluster, namespace, "local", local)
    for name in ("roomy", "cramped", "local"):
        create_pod(cluster, namespace, name, KUBE, name)

    selected = wait_for(lambda: (claim(cluster, namespace, "roomy")["metadata"]
                        .get("annotations") or {}).get(SELECTED_NODE),
                        60, "kube-scheduler to choose a node for roomy's claim")  # fmt: skip
    assert selected == nodes[0]
    assert node_of(cluster, namespace, "local") == nodes[2]
    expected = failure(cluster, namespace, "cramped", KUBE)
    assert "node(s) did not have enough free storage" in expected
    print(f"\n  live kube-scheduler on cramped: {expected}")

    snap_file = tmp_path / "lab.yaml"
    taken = kschedctl("snapshot", "-f", str(snap_file), "-n", namespace,
                      "--kubeconfig", str(lab.kubeconfig))  # fmt: skip
    assert taken.exit_code == 0, taken.stderr
    doc = yaml.safe_load(snap_file.read_text())
    spec = doc["spec"]
    # the bound pod goes back to pending; roomy's claim forgets the node chosen for it
    ours = [p for p in spec["pods"] if p["namespace"] == namespace]
    spec["pods"] = [p for p in spec["pods"] if p["namespace"] != namespace]
    for pod in ours:
        pod.pop("nodeName")
        pod.pop("phase", None)
    spec["pendingPods"] = spec.get("pendingPods", []) + ours
    claims = {c["name"]: c for c in spec.get("persistentVolumeClaims") or []
              if c["namespace"] == namespace}  # fmt: skip
    chosen = claims.get("roomy", {}).pop("annotations", None)
    snap_file.write_text(yaml.safe_dump(doc))

    result = kschedctl("simulate", str(snap_file), "--scheduler",
                       str(FIXTURES / "kube-scheduler.yaml"), "--settle", "3",
                       "--timeout", "300", "-o", "yaml")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (run,) = yaml.safe_load(result.stdout)["candidates"]
    outcomes: dict[str, Any] = {
        p["pod"].split("/", 1)[1]: p for p in run["pods"] if p["pod"].startswith(namespace + "/")
    }
    print(f"  simulated: {outcomes}")
    assert {name: p["node"] for name, p in outcomes.items()} == {
        "roomy": nodes[0],
        "cramped": None,
        "local": nodes[2],
    }
    assert outcomes["cramped"]["message"] == expected
    assert chosen == {SELECTED_NODE: nodes[0]}  # taken from the live claim
    assert claims["local"]["volumeName"] == f"{namespace}-disk"
    assert "node(s) did not have enough free storage" in {r["reason"] for r in run["whyReasons"]}
