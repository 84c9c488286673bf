"""How the filter engine behind ``kschedctl why`` scales with cluster size.

One pending pod evaluated against synthetic snapshots of 500, 5,000 and 20,000 nodes with 10
pods per node. For each size it prints the snapshot build time, the evaluation time of each
pod below (best of ``--repeat``), the FailedScheduling message time, the whole `why` decision
tree for the no-fit pod (``diagnose`` plus its JSON, what ``why -o json`` computes once the
cluster is read), the grouping of its nodes by reason (``why``'s default table on large
clusters), ``why --all`` over ``--pending`` Pending pods (one snapshot for all, one evaluation
per shape of pod: replicas of the four pods below, then as many distinct pods; then the table
by scheduler and reason) and the peak RSS. Each size runs in
a fresh process, so the peak memory is that size's own. Target: evaluation under 1 s at
5,000 nodes / 50,000 pods.

    python benchmarks/why.py [--sizes 500,5000,20000] [--repeat 3] [--pending 200] [--tracemalloc]

The three pods:
- ``simple``: cpu/memory requests, a nodeSelector and a toleration (fits somewhere);
- ``spread+anti``: also a zone topology spread constraint (DoNotSchedule) and a required
  hostname anti-affinity (both PreFilters walk every pod);
- ``preempt``: asks for more cpu than any node has free, with a priority above every running
  pod, so no node fits and DefaultPreemption's dry run finds candidates;
- ``no-fit``: the same request at the running pods' priority: no node fits, the dry run visits
  every node and the full FailedScheduling message is built.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedctl.model.filters import NodeInfoSnapshot, evaluate, failed_scheduling_message  # noqa: E402
from kschedctl.observe.diagnosis import diagnose  # noqa: E402
from kschedctl.observe.nodegroups import group_nodes  # noqa: E402
from kschedctl.observe.pending import pending_reasons  # noqa: E402
from kschedctl.observe.schedulers import Lease, Scheduler  # noqa: E402

PODS_PER_NODE = 10
ZONES = ("zone-a", "zone-b", "zone-c")


def make_nodes(n: int) -> list[dict[str, Any]]:
    nodes = []
    for i in range(n):
        name = f"node-{i:05d}"
        spec: dict[str, Any] = {}
        if i % 20 == 0:
            spec["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
        if i % 97 == 0:
            spec["unschedulable"] = True
        nodes.append(
            {
                "metadata": {
                    "name": name,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "kubernetes.io/os": "linux",
                        "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                        "node.kubernetes.io/instance-type": "m5.xlarge" if i % 2 else "m5.2xlarge",
                    },
                },
                "spec": spec,
                "status": {
                    "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110",
                                    "ephemeral-storage": "100Gi"},
                },
            }
        )  # fmt: skip
    return nodes


def make_pods(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pods = []
    for i, node in enumerate(nodes):
        node_name = node["metadata"]["name"]
        for j in range(PODS_PER_NODE):
            k = i * PODS_PER_NODE + j
            app = f"app-{k % 50}"
            c: dict[str, Any] = {
                "name": "main",
                "image": "example/app:1",
                "resources": {"requests": {"cpu": f"{100 + (k % 7) * 50}m", "memory": "256Mi"}},
            }
            if k % 25 == 0:
                c["ports"] = [{"containerPort": 9100, "hostPort": 9100, "protocol": "TCP"}]
            spec: dict[str, Any] = {
                "nodeName": node_name,
                "containers": [c],
                "initContainers": [
                    {"name": "proxy", "restartPolicy": "Always",
                     "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}}
                ] if k % 3 == 0 else [],
            }  # fmt: skip
            if k % 100 == 0:
                spec["affinity"] = {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": {"matchLabels": {"app": app}},
                             "topologyKey": "kubernetes.io/hostname"}
                        ]
                    }
                }  # fmt: skip
            pods.append(
                {
                    "metadata": {
                        "name": f"pod-{k:06d}",
                        "namespace": f"ns-{k % 20}",
                        "uid": f"uid-{k}",
                        "labels": {"app": app, "tier": "web" if k % 2 else "worker"},
                    },
                    "spec": spec,
                    "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"},
                }
            )
    return pods


def pending(name: str, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
        ],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "example.com/flaky", "operator": "Exists"}],
    }
    spec.update(extra)
    return {
        "metadata": {"name": name, "namespace": "ns-1", "uid": f"uid-{name}",
                     "labels": {"app": "app-1", "tier": "web"}},
        "spec": spec,
        "status": {"phase": "Pending"},
    }  # fmt: skip


PODS = {
    "simple": pending("simple"),
    "spread+anti": pending(
        "spread",
        topologySpreadConstraints=[
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
             "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "app-1"}}}
        ],
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "app-1"}},
             "topologyKey": "kubernetes.io/hostname"}]}},
    ),
    "preempt": pending(
        "preempt",
        priority=1000,
        containers=[{"name": "main", "resources": {"requests": {"cpu": "7500m"}}}],
    ),
    "no-fit": pending(
        "no-fit",
        containers=[{"name": "main", "resources": {"requests": {"cpu": "7500m"}}}],
    ),
}  # fmt: skip


def peak_rss_mib() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 if sys.platform != "darwin" else rss / 1024 / 1024


def run(size: int, repeat: int, trace: bool, pending_pods: int = 200) -> None:
    nodes = make_nodes(size)
    pods = make_pods(nodes)
    gc.collect()
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    snap = NodeInfoSnapshot(nodes, pods)
    build = time.perf_counter() - t0
    traced = ""
    if trace:
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        traced = f", snapshot traced {current / 2**20:.0f} MiB (peak {peak / 2**20:.0f} MiB)"
    print(f"{size:>6} nodes / {len(pods):>6} pods: snapshot build {build:6.2f} s{traced}")
    for label, pod in PODS.items():
        best = float("inf")
        ev = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            ev = evaluate(pod, snap)
            best = min(best, time.perf_counter() - t0)
        assert ev is not None
        t0 = time.perf_counter()
        msg = failed_scheduling_message(ev)
        msg_time = time.perf_counter() - t0
        outcome = f"{len(ev.feasible)} feasible" if ev.schedulable else (msg or "")[:70] + "..."
        print(f"        evaluate {label:<11} {best:6.3f} s  (message {msg_time * 1000:5.1f} ms)"
              f"  {outcome}")  # fmt: skip
    # The `why` command's pure part on top of the evaluation: findings and fixes grouped over
    # every node, the summary, and the JSON document.
    lease = Lease("kube-system", "kube-scheduler", holder="cp_1", renew_age=1, duration=15)
    schedulers = [Scheduler("default-scheduler", "process", lease=lease)]
    best = float("inf")
    size_json = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        diag = diagnose(PODS["no-fit"], snap, schedulers, server_version=(1, 36, 3))
        size_json = len(json.dumps(diag.to_dict()))
        best = min(best, time.perf_counter() - t0)
    print(f"        why no-fit (diagnose + JSON, {size_json / 2**20:.1f} MiB) {best:6.3f} s")
    best = float("inf")
    groups: tuple[Any, ...] = ()
    for _ in range(repeat):
        t0 = time.perf_counter()
        groups = group_nodes(diag.evaluation.nodes if diag.evaluation else (), (1, 36, 3))
        best = min(best, time.perf_counter() - t0)
    print(f"        group no-fit's nodes by reason ({len(groups)} groups) {best * 1000:6.1f} ms")
    if pending_pods:
        # why --all: every Pending pod against the one snapshot (as ops.why does: one
        # evaluation per shape of pod), then the summary table. Replicas: the four pods above
        # in turn; distinct: each pod asks for a different cpu request, so none is shared.
        shapes = list(PODS.values())
        for label, distinct in (("replicas", False), ("distinct", True)):
            batch = []
            for i in range(pending_pods):
                p = json.loads(json.dumps(shapes[i % len(shapes)]))
                p["metadata"].update(name=f"pending-{i:04d}", uid=f"uid-pending-{i}")
                if distinct:
                    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = f"{7000 + i}m"
                batch.append(p)
            cache: dict[str, Any] = {}
            t0 = time.perf_counter()
            diagnoses = [
                diagnose(p, snap, schedulers, server_version=(1, 36, 3), evaluations=cache)
                for p in batch
            ]
            took = time.perf_counter() - t0
            t0 = time.perf_counter()
            rows = pending_reasons(diagnoses)
            summed = time.perf_counter() - t0
            print(f"        why --all, {pending_pods} {label} pods ({len(cache)} evaluated): "
                  f"diagnose {took:6.2f} s ({took / pending_pods * 1000:.0f} ms/pod), "
                  f"summary {summed * 1000:.1f} ms ({len(rows)} rows)")  # fmt: skip
    print(f"        peak RSS {peak_rss_mib():7.0f} MiB")
    del snap, nodes, pods
    gc.collect()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="500,5000,20000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pending", type=int, default=200, help="Pending pods for why --all")
    ap.add_argument("--tracemalloc", action="store_true", help="trace the snapshot's memory")
    ap.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.in_process:
        for size in sizes:
            run(size, args.repeat, args.tracemalloc, args.pending)
        return
    print(f"python {sys.version.split()[0]}, {PODS_PER_NODE} pods per node")
    for size in sizes:  # a fresh process per size: its peak RSS is that size's alone
        argv = [sys.executable, __file__, "--in-process", "--sizes", str(size),
                "--repeat", str(args.repeat), "--pending", str(args.pending)]  # fmt: skip
        if args.tracemalloc:
            argv.append("--tracemalloc")
        subprocess.run(argv, check=True)


if __name__ == "__main__":
    main()
