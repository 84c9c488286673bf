"""Wall time of `kschedctl list` and `kschedctl status NAME` on a big lab cluster, as pods grow.

Starts its own lab (default 500 nodes), deploys one additional scheduler, then fills the lab
with pods bound to the nodes (``spec.nodeName`` set at creation: no scheduler involved) step by
step up to each size of ``--pods`` (default 5,000, 20,000, 50,000) plus a few Pending pods, and
at each size times every command as a fresh process against `kubectl get pods,leases -A`
measured in the same run. Prints medians and ratios (target for `list`: <= 0.5 x kubectl at
5,000 pods; `status`: <= 1.5 x). With ``--kubeconfig`` it uses a running cluster whose nodes are
named ``lab-node-1`` … ``lab-node-N`` instead of starting one (pods go to namespace ``bench``).

    python benchmarks/cluster_commands.py [--nodes 500] [--pods 5000,20000,50000] [--runs 5]

Time goes into creating pods: the lab takes about 60 pods/s on the 2-core development machine
when it is otherwise idle (5,000 in 81 s), down to 17 pods/s when other work shares it (15,000
in 887 s), so the 50,000 pods take 14 to 50 minutes; each size then costs its kubectl runs
(5,000 pods: 1-13 s a run, 20,000: up to 76 s a run under load). The run of 2026-12-03
(43 min, on a machine shared with other labs: load average 7-18, so every wall time is
inflated several times; the ratios are of interleaved runs):

       pods   kubectl get pods,leases -A   kschedctl list    kschedctl status bench-sched
       5000                     13138 ms   10173 ms 0.77x           10806 ms 0.82x
      20000                     75947 ms   13015 ms 0.17x           23963 ms 0.32x
      50000                     47995 ms    4515 ms 0.09x           10767 ms 0.22x

`list` no longer grows with the pods: its CPU time at 50,000 pods was 1.26 s, 0.82 s of it
importing kschedctl and the kubernetes client (kubectl: 16.2 s of CPU on its side alone).
Since then certificate/token kubeconfigs connect without the kubernetes client and the
benchmark times kschedctl with its bytecode cached, as installed. The run of 2026-12-03 11:40
on the idle machine (`--pods 5000 --runs 5`, 193 s in all):

       pods   kubectl get pods,leases -A   kschedctl list    kschedctl status bench-sched
       5000                      3134 ms    1249 ms 0.40x            1916 ms 0.61x
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedctl.base.errors import ConflictError  # noqa: E402
from kschedctl.base.signals import unwinding_on_termination  # noqa: E402
from kschedctl.kubeclient.client import Cluster  # noqa: E402
from kschedctl.lab import binaries  # noqa: E402
from kschedctl.lab.cluster import Lab  # noqa: E402
from kschedctl.lab.nodes import default_nodes  # noqa: E402

NAMESPACE = "bench"
# Pods bench-sched cannot place (no node has their label): `list` counts them as Pending.
PENDING = 20


def timed(commands: list[list[str]], env: dict[str, str], runs: int) -> list[float]:
    """Median wall time of each command as a fresh process; the commands take turns in each
    round, so load from elsewhere on the machine weighs on all of them alike."""
    samples: list[list[float]] = [[] for _ in commands]
    for argv in commands:  # untimed: fills kschedctl's bytecode cache and the OS's file cache
        subprocess.run(argv, env=env, capture_output=True, check=False)
    for _ in range(runs):
        for argv, times in zip(commands, samples, strict=True):
            started = time.perf_counter()
            proc = subprocess.run(argv, env=env, capture_output=True, text=True)
            times.append(time.perf_counter() - started)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr[-2000:]}")
    return [statistics.median(times) for times in samples]


def pod(index: int, nodes: int | None) -> dict[str, object]:
    spec: dict[str, object] = {
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}],
    }  # fmt: skip
    if nodes is None:
        spec.update(schedulerName="bench-sched", nodeSelector={"bench": "nowhere"})
    else:
        spec["nodeName"] = f"lab-node-{index % nodes + 1}"
    name = f"p-{index}" if index >= 0 else f"pending{index}"
    return {"metadata": {"name": name, "labels": {"app": f"a{index % 20}"}}, "spec": spec}


def create_namespace(cluster: Cluster) -> None:
    try:
        cluster.create("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    except ConflictError:
        return
    deadline = time.monotonic() + 60
    while True:  # pods cannot be created before the namespace's default ServiceAccount
        try:
            cluster.get(f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/default")
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def fill(cluster: Cluster, nodes: int, start: int, stop: int, workers: int = 16) -> None:
    """Create bound pods ``p-start`` … ``p-(stop-1)`` (already existing ones are kept)."""
    local = threading.local()

    def create(index: int) -> None:
        # one connection pool per thread: urllib3's default pool keeps 4 connections
        conn = getattr(local, "cluster", None)
        if conn is None:
            conn = local.cluster = Cluster.connect(os.environ.get("KUBECONFIG"))
        try:
            conn.create(f"/api/v1/namespaces/{NAMESPACE}/pods", pod(index, nodes))
        except ConflictError:
            pass

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(create, range(start, stop), chunksize=64))


@contextmanager
def lab_cluster(nodes: int, kubeconfig: str | None) -> Iterator[str]:
    if kubeconfig:
        yield kubeconfig
        return
    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(Path(tmp) / "lab")
        started = time.monotonic()
        try:
            lab.up(default_nodes(nodes), progress=lambda m: print(f"  {m}", file=sys.stderr))
            print(f"lab with {nodes} nodes up in {time.monotonic() - started:.1f}s", flush=True)
            yield str(lab.kubeconfig)
        finally:
            lab.down()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", default="5000,20000,50000", help="comma-separated sizes")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kubeconfig", help="use this running cluster instead of a new lab")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.pods.split(","))

    kubectl = str(binaries.locate()["kubectl"])
    begun = time.monotonic()
    with (
        lab_cluster(args.nodes, args.kubeconfig) as kubeconfig,
        tempfile.TemporaryDirectory() as tmp,
    ):
        os.environ["KUBECONFIG"] = kubeconfig
        # kschedctl as installed: pip compiles its bytecode, so PYTHONDONTWRITEBYTECODE (set
        # in some development shells) would time compiling ~100 modules on every run instead
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
            "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache"),
        }
        cluster = Cluster.connect(kubeconfig)
        create_namespace(cluster)
        kschedctl = [sys.executable, "-m", "kschedctl"]
        deploy = subprocess.run(
            [*kschedctl, "deploy", "bench-sched", "--as-service"],
            env=env, capture_output=True, text=True, cwd=tmp,
        )  # fmt: skip
        if deploy.returncode != 0:
            raise SystemExit(f"deploy failed: {deploy.stderr}")
        for index in range(PENDING):
            try:
                cluster.create(f"/api/v1/namespaces/{NAMESPACE}/pods", pod(-1 - index, None))
            except ConflictError:
                pass
        results = []
        made = 0
        for size in sizes:
            started = time.monotonic()
            fill(cluster, args.nodes, made, size)
            made = size
            print(f"{size} bound pods present ({time.monotonic() - started:.1f}s to create "
                  f"this step)", flush=True)  # fmt: skip
            reference, listing, status = timed(
                [[kubectl, "get", "pods,leases", "-A"], [*kschedctl, "list"],
                 [*kschedctl, "status", "bench-sched"]],
                env, args.runs,
            )  # fmt: skip
            results.append((size, reference, listing, status))
            print(f"  kubectl get pods,leases -A {reference * 1000:7.0f} ms · kschedctl list "
                  f"{listing * 1000:7.0f} ms ({listing / reference:.2f}x) · status "
                  f"{status * 1000:7.0f} ms ({status / reference:.2f}x)", flush=True)  # fmt: skip
        cluster.close()
    print(f"\n{args.nodes} nodes, {PENDING} Pending pods, median of {args.runs} fresh runs "
          f"(whole run {time.monotonic() - begun:.0f}s):")  # fmt: skip
    print(f"  {'pods':>7}  {'kubectl get pods,leases -A':>27}  {'kschedctl list':>20}  "
          f"{'kschedctl status bench-sched':>28}")  # fmt: skip
    for size, reference, listing, status in results:
        print(f"  {size:7}  {reference * 1000:24.0f} ms  {listing * 1000:11.0f} ms "
              f"{listing / reference:5.2f}x  {status * 1000:19.0f} ms "
              f"{status / reference:5.2f}x")  # fmt: skip
    print("  target: list <= 0.5 x kubectl at 5,000 pods; status <= 1.5 x")


if __name__ == "__main__":
    with unwinding_on_termination():  # SIGTERM/SIGHUP: the lab goes down (finally)
        main()
