"""The cost of one decision of kschedctl's scheduler (filter + score, ``Algorithm().decide``)
on a synthetic cache: ``--nodes`` nodes in three zones, ``--pods-per-node`` bound pods of 50
ReplicaSets, each selected by a Service (40,000 pods at the defaults).

Three incoming pods, each placed repeatedly for ``--seconds`` (the replicas of one workload,
scheduled one after the other, as the scheduler sees them: each decided from the rotating
start, then assumed on its node, so the next one sees it there):

- ``plain``: no Service or controller selects it, no pod affinity (no PodTopologySpread or
  InterPodAffinity work);
- ``replicaset``: owned by a ReplicaSet and selected by a Service: the system-default
  topology spreading counts the matching pods of every node;
- ``anti-affinity``: the same, with a preferred hostname anti-affinity to its own replicas:
  InterPodAffinity counts matching pods on every node too.

Printed: milliseconds per decision, wall clock and the deciding thread's CPU time (the
machine may be shared). kube-scheduler does the same counting at PreScore; the snapshot
remembers per-node counts until a pod comes or goes on that node, and the scheduler each
node's verdict and raw scores for a plain pod's shape until the node changes.

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
    start = 0
    for kind in ("plain", "replicaset", "anti-affinity"):
        pod = incoming(kind)
        for warm in range(2):  # a workload's first replicas count every node
            start = place(algorithm, replica(pod, f"{kind}-w{warm}"), snap, start)
        count, started, cpu = 0, time.perf_counter(), time.thread_time()
        while time.perf_counter() - started < args.seconds:
            start = place(algorithm, replica(pod, f"{kind}-{count}"), snap, start)
            count += 1
        per = (time.perf_counter() - started) / count
        per_cpu = (time.thread_time() - cpu) / count
        print(
            f"{kind:14s} {per * 1000:8.2f} ms/decision, {per_cpu * 1000:.2f} ms CPU "
            f"({count} decisions)"
        )


def replica(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return {**pod, "metadata": {**pod["metadata"], "name": name, "uid": name}}


def place(algorithm: Algorithm, pod: dict[str, Any], snap: NodeInfoSnapshot, start: int) -> int:
    """Decide, then assume the pod on its node as the scheduler does; the next start."""
    decision = algorithm.decide(pod, snap, start)
    if decision.node is not None:
        snap.assume(pod, decision.node)
    return decision.next_start


if __name__ == "__main__":
    main()
