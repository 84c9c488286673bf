"""Wall time of `kschedctl list` and `kschedctl status NAME` on a big lab cluster.

Starts its own lab (default 500 nodes), fills it with pods bound to the nodes (default 5,000),
deploys one additional scheduler, and times each command as a fresh process against
`kubectl get pods,leases -A` measured in the same run. Prints medians and ratios (target for
both: <= 1.5 x kubectl).

    python benchmarks/cluster_commands.py [--nodes 500] [--pods 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kschedctl.k8s.client import Cluster
from kschedctl.lab import binaries
from kschedctl.lab.cluster import Lab
from kschedctl.lab.nodes import default_nodes


def timed(argv: list[str], env: dict[str, str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(argv, env=env, capture_output=True, text=True)
        samples.append(time.perf_counter() - started)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr[-2000:]}")
    return statistics.median(samples)


def fill(cluster: Cluster, nodes: int, pods: int) -> None:
    cluster.create("/api/v1/namespaces", {"metadata": {"name": "bench"}})
    deadline = time.monotonic() + 60
    while True:
        try:
            cluster.get("/api/v1/namespaces/bench/serviceaccounts/default")
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)

    def create(i: int) -> None:
        cluster.create(
            "/api/v1/namespaces/bench/pods",
            {
                "metadata": {"name": f"p-{i}", "labels": {"app": f"a{i % 20}"}},
                "spec": {
                    "nodeName": f"lab-node-{i % nodes + 1}",
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}],
                },
            },
        )  # fmt: skip

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(create, range(pods)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    kubectl = str(binaries.locate()["kubectl"])
    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(Path(tmp) / "lab")
        started = time.monotonic()
        lab.up(default_nodes(args.nodes), progress=lambda m: print(f"  {m}", file=sys.stderr))
        try:
            print(f"lab with {args.nodes} nodes up in {time.monotonic() - started:.1f}s")
            cluster = Cluster.connect(str(lab.kubeconfig))
            started = time.monotonic()
            fill(cluster, args.nodes, args.pods)
            print(f"{args.pods} pods created in {time.monotonic() - started:.1f}s")
            env = {**os.environ, "KUBECONFIG": str(lab.kubeconfig)}
            kschedctl = [sys.executable, "-m", "kschedctl"]
            deploy = subprocess.run(
                [*kschedctl, "deploy", "bench-sched", "--as-service"],
                env=env, capture_output=True, text=True, cwd=tmp,
            )  # fmt: skip
            if deploy.returncode != 0:
                raise SystemExit(f"deploy failed: {deploy.stderr}")

            reference = timed([kubectl, "get", "pods,leases", "-A"], env, args.runs)
            listing = timed([*kschedctl, "list"], env, args.runs)
            status = timed([*kschedctl, "status", "bench-sched"], env, args.runs)
            print(f"\n{args.nodes} nodes, {args.pods} pods, median of {args.runs} fresh runs:")
            print(f"  kubectl get pods,leases -A   {reference * 1000:8.0f} ms  (reference)")
            for label, took in (
                ("kschedctl list", listing),
                ("kschedctl status bench-sched", status),
            ):
                print(f"  {label:28} {took * 1000:8.0f} ms  ratio {took / reference:.2f}")
            print("  target: ratio <= 1.5")
            cluster.close()
        finally:
            lab.down()


if __name__ == "__main__":
    main()
