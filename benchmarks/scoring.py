"""The cost of one decision of kschedctl's scheduler (filter + score, ``Algorithm().decide``)
on a synthetic cache: ``--nodes`` nodes in three zones, ``--pods-per-node`` bound pods of 50
ReplicaSets, each selected by a Service (40,000 pods at the defaults).

Three incoming pods, each decided repeatedly on the same snapshot for ``--seconds`` (the
replicas of one workload, scheduled one after the other, as the scheduler sees them):

- ``plain``: no Service or controller selects it, no pod affinity (no PodTopologySpread or
  InterPodAffinity work);
- ``replicaset``: owned by a ReplicaSet and selected by a Service: the system-default
  topology spreading counts the matching pods of every node;
- ``anti-affinity``: the same, with a preferred hostname anti-affinity to its own replicas:
  InterPodAffinity counts matching pods on every node too.

Printed: milliseconds per decision. kube-scheduler does the same counting at PreScore; the
snapshot remembers per-node counts until a pod comes or goes on that node.

    python benchmarks/scoring.py [--nodes 2000] [--pods-per-node 20] [--seconds 3]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.scheduling.algorithm import Algorithm

APPS = 50


def cluster(nodes: int, per_node: int) -> NodeInfoSnapshot:
    node_objs = [
        {
            "metadata": {
                "name": f"n{i:05d}",
                "labels": {
                    "kubernetes.io/hostname": f"n{i:05d}",
                    "topology.kubernetes.io/zone": f"z{i % 3}",
                },
            },
            "spec": {},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
        }
        for i in range(nodes)
    ]
    pods = []
    for i in range(nodes):
        for j in range(per_node):
            app = f"app{(i * per_node + j) % APPS}"
            pods.append(
                {
                    "metadata": {
                        "name": f"p{i}-{j}",
                        "namespace": "default",
                        "uid": f"u{i}-{j}",
                        "labels": {"app": app},
                        "ownerReferences": [owner(app)],
                    },
                    "spec": {
                        "nodeName": f"n{i:05d}",
                        "containers": [container("100m", "128Mi")],
                    },
                    "status": {"phase": "Running"},
                }
            )
    workloads = {
        "ReplicaSet": [
            {
                "metadata": {"name": f"rs-app{k}", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": f"app{k}"}}},
            }
            for k in range(APPS)
        ],
        "Service": [
            {
                "metadata": {"name": f"svc{k}", "namespace": "default"},
                "spec": {"selector": {"app": f"app{k}"}},
            }
            for k in range(APPS)
        ],
    }
    return NodeInfoSnapshot(node_objs, pods, workloads=workloads)


def owner(app: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"rs-{app}", "controller": True}


def container(cpu: str, memory: str) -> dict[str, Any]:
    return {
        "name": "c",
        "image": "nginx:1",
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }


def incoming(kind: str) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "metadata": {"name": "x", "namespace": "default", "uid": "x", "labels": {"app": "app7"}},
        "spec": {"containers": [container("200m", "256Mi")]},
        "status": {},
    }
    if kind == "plain":
        pod["metadata"]["labels"] = {"app": "lonely"}
    else:
        pod["metadata"]["ownerReferences"] = [owner("app7")]
    if kind == "anti-affinity":
        term = {
            "labelSelector": {"matchLabels": {"app": "app7"}},
            "topologyKey": "kubernetes.io/hostname",
        }
        pod["spec"]["affinity"] = {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "podAffinityTerm": term}
                ]
            }
        }
    return pod


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods-per-node", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    started = time.perf_counter()
    snap = cluster(args.nodes, args.pods_per_node)
    print(
        f"{args.nodes} nodes, {args.nodes * args.pods_per_node} pods: snapshot built in "
        f"{time.perf_counter() - started:.1f}s"
    )
    algorithm = Algorithm()
    for kind in ("plain", "replicaset", "anti-affinity"):
        pod = incoming(kind)
        algorithm.decide(pod, snap)  # the first decision of a workload counts every node
        count, started = 0, time.perf_counter()
        while time.perf_counter() - started < args.seconds:
            algorithm.decide(pod, snap)
            count += 1
        per = (time.perf_counter() - started) / count
        print(f"{kind:14s} {per * 1000:8.2f} ms/decision ({count} decisions)")


if __name__ == "__main__":
    main()
