"""Time `kschedctl top nodes`' own work at scale, without a cluster: decoding the two list
responses (JSON as the API server sends them, managedFields included), the per-node model, the
table picture (default limit) and the SVG export.

    python benchmarks/top_nodes.py [--nodes 2000] [--pods 20000]

The cluster part is two list requests (nodes; bound non-terminal pods through a field
selector, pages of 2,000), whose time is the API server's; `kubectl get pods -A` pays the same.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from typing import Any

from rich.console import Console

from kschedctl.cli import picture_export, pictures
from kschedctl.observe.placement import placement

SCHEDULERS = ("default-scheduler", "spread", "binpack")


def node(i: int) -> dict[str, Any]:
    name = f"node-{i:05d}"
    resources = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "spec": {},
            "status": {"allocatable": resources, "capacity": resources}}  # fmt: skip


def pod(i: int, nodes: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"pod-{i}", "namespace": f"ns-{i % 50}", "uid": f"uid-{i}",
                     "labels": {"app": f"a{i % 20}"},
                     "managedFields": [{"manager": "kubectl", "operation": "Update",
                                        "fieldsV1": {"f:spec": {"f:containers": {}}}}]},
        "spec": {"nodeName": f"node-{i % nodes:05d}", "schedulerName": SCHEDULERS[i % 3],
                 "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}],
                 "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "500m"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=20000)
    args = parser.parse_args()
    node_json = json.dumps({"items": [node(i) for i in range(args.nodes)]})
    pod_json = json.dumps({"items": [pod(i, args.nodes) for i in range(args.pods)]})

    started = time.perf_counter()
    nodes = json.loads(node_json)["items"]
    pods = json.loads(pod_json)["items"]
    decoded = time.perf_counter()
    shown = placement(nodes, pods, sort_by="cpu")
    modelled = time.perf_counter()
    console = Console(file=io.StringIO(), width=120, force_terminal=True)
    console.print(pictures.nodes_picture(shown.first(50)))
    drawn = time.perf_counter()
    svg = picture_export.render_export(pictures.nodes_picture(shown.first(50)), ".svg", "t")
    exported = time.perf_counter()
    size = (len(node_json) + len(pod_json)) / 2**20
    print(f"{args.nodes} nodes, {args.pods} pods ({size:.1f} MiB of JSON)")
    print(f"  decode JSON        {decoded - started:6.2f} s")
    print(f"  per-node model     {modelled - decoded:6.2f} s")
    print(f"  table (50 nodes)   {drawn - modelled:6.2f} s")
    print(f"  SVG export         {exported - drawn:6.2f} s ({len(svg) / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
