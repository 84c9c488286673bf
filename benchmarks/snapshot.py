"""Time `kschedctl snapshot`'s own work at scale, without a cluster: the pod pages decoded from
JSON as the API server sends them (managedFields, statuses and env included) and reduced page
by page, the snapshot written as JSON and as YAML, read back (what `simulate` does first), and
anonymised.

    python benchmarks/snapshot.py [--nodes 2000] [--pods 20000]

The cluster part is the list requests (nodes; pods in pages of 2,000; PDBs, PriorityClasses,
Namespaces), whose time is the API server's: `kubectl get pods -A -o json` pays the same.

Measured 2026-12-03 on the shared 2-core machine at a load average of 8 to 12 (so several
times the idle figures), 2,000 nodes / 20,000 pods, 25 MiB of API JSON: decode + reduce 5.8 s,
write JSON 3.4 s (13.5 MiB), read JSON 5.1 s, write YAML 17.5 s (15.1 MiB), read YAML 25.5 s,
anonymize 1.1 s. Against a lab of 500 kwok nodes and 5,000 pods, `kschedctl snapshot -o
FILE.json` took 9.3 s wall (1.2 s of CPU, 110 MB resident) at a load average of 12.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from typing import Any

from kschedctl.clustersnapshot import dump, snapshot_from_text
from kschedctl.clustersnapshot.anonymize import anonymize
from kschedctl.ops.snapshot import POD_PAGE, take_snapshot

ZONES = ("zone-a", "zone-b", "zone-c")


def node(i: int) -> dict[str, Any]:
    name = f"node-{i:05d}"
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    labels = {
        "kubernetes.io/hostname": name,
        "topology.kubernetes.io/zone": ZONES[i % 3],
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m5.2xlarge",
    }
    return {"metadata": {"name": name, "uid": f"u{i}", "labels": labels,
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {"podCIDR": "10.0.0.0/24"},
            "status": {"allocatable": resources, "capacity": resources,
                       "conditions": [{"type": "Ready", "status": "True"}] * 5,
                       "images": [{"names": [f"registry/app-{j}:v1"], "sizeBytes": 10**8}
                                  for j in range(10)]}}  # fmt: skip


def pod(i: int, nodes: int) -> dict[str, Any]:
    app = f"a{i % 20}"
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": app}},
    }
    return {
        "metadata": {"name": f"pod-{i}", "namespace": f"ns-{i % 50}", "uid": f"uid-{i}",
                     "labels": {"app": app, "pod-template-hash": "5d8f7c9b7"},
                     "ownerReferences": [{"kind": "ReplicaSet", "name": app, "controller": True}],
                     "managedFields": [{"manager": "kubectl", "operation": "Update",
                                        "fieldsV1": {"f:spec": {"f:containers": {}}}}]},
        "spec": {"nodeName": f"node-{i % nodes:05d}" if i % 100 else "",
                 "schedulerName": "default-scheduler", "priority": 0,
                 "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300}],
                 "topologySpreadConstraints": [spread],
                 "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                 "env": [{"name": "A", "value": "b"}] * 5,
                                 "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}],
                 "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "500m"}}}]},
        "status": {"phase": "Running" if i % 100 else "Pending",
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }  # fmt: skip


class Recorded:
    """The list answers as JSON text, decoded on each read as the client decodes them."""

    server = "https://benchmark.invalid"

    def __init__(self, nodes: int, pods: int) -> None:
        self.nodes = json.dumps({"items": [node(i) for i in range(nodes)]})
        self.pod_pages = [
            json.dumps({"items": [pod(i, nodes) for i in range(s, min(s + POD_PAGE, pods))]})
            for s in range(0, pods, POD_PAGE)
        ]

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = json.loads(self.nodes if path.endswith("/nodes") else "{}")
        return items.get("items", []) if isinstance(items, dict) else items  # type: ignore[union-attr]

    def pages(self, path: str, **query: Any) -> Iterator[list[dict[str, Any]]]:
        for page in self.pod_pages:
            yield json.loads(page)["items"]

    def server_version(self) -> dict[str, Any]:
        return {"gitVersion": "v1.36.3"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=20000)
    args = parser.parse_args()
    cluster = Recorded(args.nodes, args.pods)
    size = (len(cluster.nodes) + sum(map(len, cluster.pod_pages))) / 2**20

    started = time.perf_counter()
    snap = take_snapshot(cluster).snapshot  # type: ignore[arg-type]
    taken = time.perf_counter()
    as_json = dump(snap, as_json=True)
    json_written = time.perf_counter()
    snapshot_from_text(as_json)
    json_read = time.perf_counter()
    as_yaml = dump(snap)
    yaml_written = time.perf_counter()
    snapshot_from_text(as_yaml)
    yaml_read = time.perf_counter()
    anonymize(snap)
    anonymised = time.perf_counter()
    print(f"{args.nodes} nodes, {args.pods} pods ({size:.1f} MiB of API JSON)")
    print(f"  decode + reduce    {taken - started:6.2f} s")
    print(f"  write JSON         {json_written - taken:6.2f} s ({len(as_json) / 2**20:.1f} MiB)")
    print(f"  read JSON          {json_read - json_written:6.2f} s")
    print(
        f"  write YAML         {yaml_written - json_read:6.2f} s ({len(as_yaml) / 2**20:.1f} MiB)"
    )
    print(f"  read YAML          {yaml_read - yaml_written:6.2f} s")
    print(f"  anonymize          {anonymised - yaml_read:6.2f} s")


if __name__ == "__main__":
    main()
