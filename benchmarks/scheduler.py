"""kschedctl's own scheduler against kube-scheduler on the lab, with the same client limits.

For each node count M (nodes are added to one lab as M grows) it creates N pending pods for a
scheduler name nothing serves yet, starts one scheduler, and records when each pod is seen
bound (one watch). It does that once with kube-scheduler (the lab's binary, one profile,
leader election off) and once with ``kschedctl scheduler run`` (leader election off), both with
the same client QPS/burst and the lab's system:kube-scheduler identity, in two series:

- ``--qps``/``--burst`` (default 50/100) at ``--nodes`` (default 100, 500, 1,000);
- unthrottled: client QPS 5,000 / burst 10,000 at ``--unthrottled-nodes`` (default 500 and
  2,000): neither client limit is in the way, so the ratio compares the schedulers
  themselves (the API server and the machine's cores are shared by both).

Each pair runs ``--rounds`` times (default 3; which scheduler goes first alternates): on this
shared machine the API server's share of the cores decides most of the rate, and the same run
repeated varies by +-15%, so the median of the rounds' ratios is the figure.

Printed per series, M, round and scheduler: pods/s over the binding window (first to last bind)
and from the scheduler's start, the ratio kschedctl / kube-scheduler (goal: >= 1.0), the decision
latency p50/p99 (from each scheduler's own histogram:
``scheduler_scheduling_algorithm_duration_seconds`` and
``kschedctl_scheduler_decision_duration_seconds``, same buckets), the scheduler's peak
memory (VmHWM) and its CPU time per pod over the binding window (user + system, every thread:
on this machine the API server runs on the same two cores, so a scheduler's CPU is the API
server's loss) and, for
kschedctl's, the median latency of a binding request.
``--py-spy PATH`` samples kschedctl's scheduler from outside during its runs (collapsed stacks
in the log directory; ``--py-spy-gil``: only the thread holding the GIL) and prints its
busiest functions.

Then the memory check: the lab grows to ``--memory-nodes`` nodes with ``--memory-pods`` pods
bound to them (created with spec.nodeName, so no scheduler is involved), kschedctl's
scheduler starts, lists and caches all of it, then kube-scheduler does the same, and both
peaks are printed side by side (goal for ours: under 500 MB for 5,000 nodes and 50,000 pods).

    python benchmarks/scheduler.py [--nodes 100,500,1000] [--pods 1000] [--qps 50 --burst 100]
                                   [--unthrottled-nodes 500,2000] [--rounds 3]
                                   [--py-spy PATH [--py-spy-gil]]
                                   [--memory-nodes 5000 --memory-pods 50000 | --no-memory]

``--nodes ''`` skips the throttled series, ``--unthrottled-nodes ''`` the unthrottled one.

It starts and removes its own lab (``--lab-dir``, default a temporary directory) and stops
every process it started.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedctl.base.errors import ClusterError, KschedError, NotFoundError  # noqa: E402
from kschedctl.base.signals import unwinding_on_termination  # noqa: E402
from kschedctl.kubeclient.client import Cluster  # noqa: E402
from kschedctl.kubeclient.watch import list_and_watch  # noqa: E402
from kschedctl.lab import binaries  # noqa: E402
from kschedctl.lab.api import (  # noqa: E402
    create_nodes,
    wait_default_service_account,
    wait_nodes_ready,
)
from kschedctl.lab.cluster import Lab  # noqa: E402
from kschedctl.lab.components import free_port  # noqa: E402
from kschedctl.lab.etcdload import EtcdLoader  # noqa: E402
from kschedctl.lab.nodes import lab_node  # noqa: E402
from kschedctl.lab.processes import proxy_free_environment  # noqa: E402
from kschedctl.model.scheduling.metrics import quantile  # noqa: E402

NAMESPACE = "bench"
KUBE_METRIC = "scheduler_scheduling_algorithm_duration_seconds"
OUR_METRIC = "kschedctl_scheduler_decision_duration_seconds"
# How long a binding request takes (kschedctl's only: kube-scheduler has no such histogram).
OUR_BIND_METRIC = "kschedctl_scheduler_binding_duration_seconds"


@dataclass(frozen=True)
class Limits:
    """Both schedulers' client QPS and burst in one series of runs."""

    qps: float
    burst: int


@dataclass
class Run:
    scheduler: str
    nodes: int
    pods: int
    limits: Limits
    round: int
    window_rate: float  # pods/s from the first to the last bind
    start_rate: float  # pods/s from the scheduler's start to the last bind
    p50: float | None
    p99: float | None
    peak_mb: float
    cpu_s: float = 0.0  # the scheduler's CPU time (user + system) from its first bind to its last
    bind_p50: float | None = None  # a binding request's latency (kschedctl's scheduler only)


def progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


def nodes_named(start: int, stop: int) -> list[dict[str, Any]]:
    return [
        lab_node(f"bench-{i:05d}", zone=("zone-a", "zone-b")[i % 2]) for i in range(start, stop)
    ]


def grow_nodes(lab: Lab, cluster: Cluster, have: int, want: int) -> None:
    if want <= have:
        return
    progress(f"adding nodes {have} → {want}")
    new = nodes_named(have, want)
    create_nodes(cluster, EtcdLoader(lab), new)  # as `lab up --nodes` adds them
    # Ready and untainted: both schedulers start from the same, schedulable nodes.
    wait_nodes_ready(cluster, [n["metadata"]["name"] for n in new], timeout=600)


def create_pods(cluster: Cluster, scheduler: str, count: int) -> None:
    def one(i: int) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{scheduler}-{i:05d}", "namespace": NAMESPACE},
            "spec": {
                "schedulerName": scheduler,
                "terminationGracePeriodSeconds": 0,
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                    }
                ],
            },
        }
        cluster.create(f"/api/v1/namespaces/{NAMESPACE}/pods", body)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(count)))


def delete_pods(cluster: Cluster) -> None:
    """Delete the namespace's pods one request each, in parallel: a loaded API server can take
    longer than the client's read timeout to delete a large collection in one request (and
    stops where the client hung up)."""
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"

    def one(name: str) -> None:
        try:
            cluster.delete(f"{path}/{name}", gracePeriodSeconds=0)
        except NotFoundError:
            pass
        except ClusterError as err:
            progress(f"deleting pod {name}: {err.message}; trying again")

    deadline = time.monotonic() + 300
    while names := [p["metadata"]["name"] for p in cluster.list(path)]:
        if time.monotonic() > deadline:
            raise KschedError(f"{len(names)} of the benchmark's pods not deleted within 300s")
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(one, names))
        time.sleep(0.5)


class BindClock:
    """When each pod of the namespace was first seen bound (a watch, not polling)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.stop = threading.Event()
        self.bound: dict[str, float] = {}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        path = f"/api/v1/namespaces/{NAMESPACE}/pods"
        for event in list_and_watch(self.cluster, path, self.stop, timeout_seconds=600):
            now = time.monotonic()
            for obj in event.objects if event.type == "SYNC" else [event.object]:
                if (obj.get("spec") or {}).get("nodeName"):
                    self.bound.setdefault(obj["metadata"]["name"], now)

    def __enter__(self) -> BindClock:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (every thread): on a machine whose cores the API
    server shares, what a scheduler burns per pod is taken from the API server."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def histogram(text: str, metric: str) -> list[tuple[float, int]]:
    """Cumulative buckets of a Prometheus histogram (labels other than ``le`` summed)."""
    buckets: dict[float, int] = {}
    pattern = re.compile(rf"^{metric}_bucket\{{(.*)\}} (\S+)$")
    for line in text.splitlines():
        match = pattern.match(line)
        if not match:
            continue
        le = re.search(r'le="([^"]+)"', match.group(1))
        if le is None:
            continue
        bound = float("inf") if le.group(1) == "+Inf" else float(le.group(1))
        buckets[bound] = buckets.get(bound, 0) + int(float(match.group(2)))
    return sorted(buckets.items())


def scrape(url: str) -> str:
    import ssl

    context = ssl._create_unverified_context()  # the schedulers' self-signed serving certificate
    with urllib.request.urlopen(url, timeout=10, context=context) as response:
        return str(response.read().decode())


def kube_scheduler(
    lab: Lab, workdir: Path, name: str, qps: float, burst: int
) -> tuple[list[str], str]:
    port = free_port()
    config = workdir / f"{name}.yaml"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {
                    "kubeconfig": str(lab.dir / "scheduler.kubeconfig"),
                    "qps": qps,
                    "burst": burst,
                },
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": name}],
            }
        )
    )
    argv = [
        str(binaries.locate()["kube-scheduler"]),
        f"--config={config}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--authentication-kubeconfig={lab.kubeconfig}",
        f"--authorization-kubeconfig={lab.kubeconfig}",
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
    ]
    return argv, f"https://127.0.0.1:{port}/metrics"


def ours(lab: Lab, name: str, qps: float, burst: int) -> tuple[list[str], str]:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "kschedctl",
        "scheduler",
        "run",
        f"--name={name}",
        f"--kubeconfig={lab.dir / 'scheduler.kubeconfig'}",
        "--no-leader-elect",
        f"--qps={qps}",
        f"--burst={burst}",
        "--metrics-address=127.0.0.1",
        f"--metrics-port={port}",
        "-v",
        "0",
    ]
    return argv, f"http://127.0.0.1:{port}/metrics"


def measure(
    cluster: Cluster,
    which: str,
    nodes: int,
    pods: int,
    limits: Limits,
    command: Callable[[str], tuple[list[str], str]],
    metric: str,
    log: Path,
    round_: int = 0,
    py_spy: tuple[list[str], Path] | None = None,
) -> Run:
    # A name per run: kwok may still act on a deleted pod's name when the next run starts.
    name = f"bench-{which}-{nodes}-{limits.qps:g}-r{round_}"
    progress(f"{which}: {pods} pending pods on {nodes} nodes, QPS {limits.qps:g}")
    create_pods(cluster, name, pods)
    argv, metrics_url = command(name)
    with BindClock(cluster) as clock, open(log, "ab") as out:
        started = time.monotonic()
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment()
        )
        profiler = None
        if py_spy is not None:  # sampled from outside: every thread, nothing changed inside
            spy, stacks = py_spy
            profiler = subprocess.Popen(
                [*spy, "--pid", str(proc.pid), "--rate", "250", "--format", "raw",
                 "--output", str(stacks), "--nonblocking"],
                stdout=subprocess.DEVNULL, stderr=out,
            )  # fmt: skip
        try:
            deadline = started + 900
            cpu_at_first: float | None = None  # start-up (imports, lists) left out
            while len(clock.bound) < pods:
                if cpu_at_first is None and clock.bound:
                    cpu_at_first = cpu_seconds(proc.pid)
                if proc.poll() is not None:
                    raise KschedError(f"{which} exited with {proc.returncode}; see {log}")
                if time.monotonic() > deadline:
                    raise KschedError(
                        f"{which} bound {len(clock.bound)}/{pods} pods in 900s; see {log}"
                    )
                time.sleep(0.05)
            cpu = cpu_seconds(proc.pid) - (cpu_at_first or 0.0)
            text = scrape(metrics_url)
            buckets = histogram(text, metric)
            bind_buckets = histogram(text, OUR_BIND_METRIC)
            peak = peak_mb(proc.pid)
        finally:
            if profiler is not None:
                profiler.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                try:
                    profiler.wait(30)
                except subprocess.TimeoutExpired:
                    profiler.kill()
                    profiler.wait(10)
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
    times = sorted(clock.bound.values())
    window = times[-1] - times[0]
    delete_pods(cluster)
    return Run(
        which,
        nodes,
        pods,
        limits,
        round_,
        window_rate=(pods - 1) / window if window > 0 else float("inf"),
        start_rate=pods / (times[-1] - started),
        p50=quantile(0.5, buckets),
        p99=quantile(0.99, buckets),
        peak_mb=peak,
        cpu_s=cpu,
        bind_p50=quantile(0.5, bind_buckets),
    )


def memory_check(
    lab: Lab, cluster: Cluster, have: int, nodes: int, pods: int, log: Path
) -> dict[str, Any]:
    grow_nodes(lab, cluster, have, nodes)
    progress(f"creating {pods} pods bound to {nodes} nodes")
    names = [f"bench-{i:05d}" for i in range(nodes)]

    def batch(start: int) -> None:
        for i in range(start, min(start + 500, pods)):
            cluster.create(
                f"/api/v1/namespaces/{NAMESPACE}/pods",
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"cached-{i:06d}",
                        "namespace": NAMESPACE,
                        "labels": {"app": f"app-{i % 50}", "tier": "web"},
                    },
                    "spec": {
                        "nodeName": names[i % nodes],
                        "terminationGracePeriodSeconds": 0,
                        "containers": [
                            {
                                "name": "c",
                                "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                            }
                        ],
                    },
                },
            )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(batch, range(0, pods, 500)))
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "kschedctl",
        "scheduler",
        "run",
        "--name=bench-memory",
        f"--kubeconfig={lab.dir / 'scheduler.kubeconfig'}",
        "--no-leader-elect",
        "--metrics-address=127.0.0.1",
        f"--metrics-port={port}",
        "-v",
        "0",
    ]
    ours_ = cached_peak(
        "kschedctl's scheduler", argv, f"http://127.0.0.1:{port}/metrics",
        r'kschedctl_scheduler_cache_objects\{kind="(\w+)"\} (\S+)', nodes, pods, log,
    )  # fmt: skip
    # The same objects in kube-scheduler's cache (client-go's default limits, as ours'):
    argv, url = kube_scheduler(lab, log.parent, "bench-memory-kube", 50, 100)
    kube = cached_peak(
        "kube-scheduler", argv, url, r'scheduler_cache_size\{type="(\w+)"\} (\S+)',
        nodes, pods, log,
    )  # fmt: skip
    return {"kschedctl": ours_, "kube-scheduler": kube}


def cached_peak(
    which: str, argv: list[str], url: str, gauge: str, nodes: int, pods: int, log: Path
) -> dict[str, Any]:
    """Start a scheduler, wait until its cache gauge (``gauge``: kind and value groups) counts
    every node and pod, let it settle, and read its peak memory."""
    progress(f"{which} lists and caches them")
    with open(log, "ab") as out:
        started = time.monotonic()
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment()
        )
        try:
            cached: dict[str, int] = {}
            while True:
                if proc.poll() is not None:
                    raise KschedError(f"{which} exited with {proc.returncode}; see {log}")
                try:
                    cached = {
                        m.group(1): int(float(m.group(2))) for m in re.finditer(gauge, scrape(url))
                    }
                except OSError:
                    pass
                if cached.get("nodes", 0) >= nodes and cached.get("pods", 0) >= pods:
                    break
                if time.monotonic() - started > 900:
                    raise KschedError(f"{which}'s cache did not fill within 900s: {cached}")
                time.sleep(1)
            synced = time.monotonic() - started
            time.sleep(5)  # steady state after the lists: watches and kwok's status updates
            return {
                "nodes": cached["nodes"],
                "pods": cached["pods"],
                "sync_s": synced,
                "peak_mb": peak_mb(proc.pid),
            }
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--nodes", default="100,500,1000", help="node counts M of the QPS/burst series ('' none)"
    )
    parser.add_argument("--pods", type=int, default=1000, help="pending pods N per run")
    parser.add_argument("--qps", type=float, default=50.0)
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument(
        "--unthrottled-nodes",
        default="500,2000",
        help="node counts of the unthrottled series (client QPS 5,000 / burst 10,000; '' none)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="runs of each scheduler per M (alternating which goes first); the median ratio "
        "is the figure (runs on a shared machine vary by +-15%%)",
    )
    parser.add_argument("--memory-nodes", type=int, default=5000)
    parser.add_argument("--memory-pods", type=int, default=50000)
    parser.add_argument("--no-memory", action="store_true", help="skip the memory check")
    parser.add_argument("--lab-dir", type=Path, default=None)
    parser.add_argument(
        "--py-spy",
        default=None,
        metavar="PATH",
        help="sample kschedctl's scheduler with this py-spy: collapsed stacks per run in the "
        "log directory, its busiest functions printed",
    )
    parser.add_argument(
        "--py-spy-gil",
        action="store_true",
        help="sample only the thread holding the GIL (py-spy --gil): where the process's "
        "Python time goes, waits on the network left out",
    )
    args = parser.parse_args()
    spy = [args.py_spy, "record", *(["--gil"] if args.py_spy_gil else [])] if args.py_spy else None
    series = {
        Limits(args.qps, args.burst): _counts(args.nodes),
        UNTHROTTLED: _counts(args.unthrottled_nodes),
    }

    workdir = Path(tempfile.mkdtemp(prefix="kschedctl-bench-"))
    lab = Lab(args.lab_dir or workdir / "lab")
    progress(f"lab at {lab.dir} (logs in {workdir})")
    lab.up([], progress=lambda _m: None, timeout=300)
    cluster = Cluster.connect(str(lab.kubeconfig))
    runs: list[Run] = []
    memory: dict[str, Any] | None = None
    try:
        cluster.create("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        wait_default_service_account(cluster, NAMESPACE, 120)
        have = 0
        # Nodes are only ever added: every series' runs at M happen when the lab has M nodes.
        for m in sorted({m for counts in series.values() for m in counts}):
            grow_nodes(lab, cluster, have, m)
            have = m
            for limits, counts in series.items():
                if m not in counts:
                    continue
                for round_ in range(args.rounds):
                    runs += run_pair(lab, cluster, workdir, m, args.pods, limits, round_, spy)
                report(runs, args, None, out=sys.stderr)  # so far, in case a later step fails
        if not args.no_memory:
            memory = memory_check(
                lab,
                cluster,
                have,
                max(args.memory_nodes, have),
                args.memory_pods,
                workdir / "memory.log",
            )
    finally:
        cluster.close()
        progress("lab down")
        lab.down()
    report(runs, args, memory)
    if args.py_spy:
        print(f"\npy-spy stacks of kschedctl's runs: {workdir}/kschedctl-*.stacks")
        for stacks in sorted(workdir.glob("kschedctl-*.stacks")):
            print(f"\n{stacks.name}: busiest functions (share of samples, self / total)")
            for share_self, share_total, where in busiest(stacks, 12):
                print(f"  {share_self:6.1%} {share_total:6.1%}  {where}")
    return 0


UNTHROTTLED = Limits(5000.0, 10000)  # issue 13: both schedulers without a client limit in the way


def _counts(text: str) -> list[int]:
    return sorted(int(n) for n in text.split(",") if n.strip())


def run_pair(
    lab: Lab,
    cluster: Cluster,
    workdir: Path,
    m: int,
    pods: int,
    limits: Limits,
    round_: int,
    py_spy: list[str] | None,
) -> list[Run]:
    """kube-scheduler and kschedctl's scheduler on the same M nodes with the same limits; the
    order alternates by round, so a drift of the machine's load favours neither."""
    stacks = workdir / f"kschedctl-{m}-qps{limits.qps:g}-r{round_}.stacks"
    kinds: list[tuple[str, Callable[[str], tuple[list[str], str]], str, Any]] = [
        (
            "kube-scheduler",
            lambda n: kube_scheduler(lab, workdir, n, limits.qps, limits.burst),
            KUBE_METRIC,
            None,
        ),
        (
            "kschedctl",
            lambda n: ours(lab, n, limits.qps, limits.burst),
            OUR_METRIC,
            (py_spy, stacks) if py_spy else None,
        ),
    ]
    if round_ % 2:
        kinds.reverse()
    runs = [
        measure(
            cluster, which, m, pods, limits, command, metric, workdir / f"{which}.log", round_, spy
        )  # fmt: skip
        for which, command, metric, spy in kinds
    ]
    return sorted(runs, key=lambda r: r.scheduler != "kube-scheduler")


def busiest(stacks: Path, top: int) -> list[tuple[float, float, str]]:
    """The functions with most samples in py-spy's collapsed stacks ("a;b;c COUNT" lines):
    (own share, share with callees, function), idle waits left out."""
    own: dict[str, int] = {}
    total: dict[str, int] = {}
    samples = 0
    for line in stacks.read_text().splitlines():
        frames, _, count = line.rpartition(" ")
        if not frames or not count.isdigit():
            continue
        parts = frames.split(";")
        if any(w in parts[-1] for w in ("wait (threading", "select (", "_wait_for_tstate_lock")):
            continue  # blocked, not working
        n = int(count)
        samples += n
        own[parts[-1]] = own.get(parts[-1], 0) + n
        for frame in set(parts):
            total[frame] = total.get(frame, 0) + n
    ranked = sorted(own, key=lambda f: own[f], reverse=True)[:top]
    return [(own[f] / samples, total[f] / samples, f) for f in ranked] if samples else []


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f}"


def report(
    runs: list[Run], args: argparse.Namespace, memory: dict[str, Any] | None, out: Any = sys.stdout
) -> None:
    def line(text: str) -> None:
        print(text, file=out)

    by_limits: dict[Limits, dict[int, dict[int, dict[str, Run]]]] = {}
    for r in runs:
        by_m = by_limits.setdefault(r.limits, {})
        by_m.setdefault(r.nodes, {}).setdefault(r.round, {})[r.scheduler] = r
    for limits, by_m in by_limits.items():
        # Both clients take a token per binding: after the burst, QPS caps the rate.
        limit = "no limit within the burst"
        if args.pods > limits.burst:
            ceiling = (args.pods - 1) / ((args.pods - limits.burst) / limits.qps)
            limit = f"the client limit allows at most ~{ceiling:.1f} pods/s over the binding window"
        what = "unthrottled: " if limits == UNTHROTTLED else ""
        line(
            f"\nN = {args.pods} pending pods, {what}client QPS {limits.qps:g} / burst "
            f"{limits.burst} for both ({limit})"
        )
        line(
            f"{'M nodes':>8} {'round':>5} {'scheduler':<15} {'pods/s':>8} {'(from start)':>12} "
            f"{'ratio':>6} {'p50 ms':>7} {'p99 ms':>7} {'peak MB':>8} {'cpu ms/pod':>10} "
            f"{'bind p50 ms':>11}"
        )
        for m, rounds in by_m.items():
            ratios: list[float] = []
            rates: dict[str, list[float]] = {}
            for round_, pair in rounds.items():
                kube = pair.get("kube-scheduler")
                for r in pair.values():
                    rates.setdefault(r.scheduler, []).append(r.window_rate)
                    ratio = ""
                    if kube and r is not kube:
                        ratios.append(r.window_rate / kube.window_rate)
                        ratio = f"{ratios[-1]:.2f}"
                    line(
                        f"{m:>8} {round_ + 1:>5} {r.scheduler:<15} {r.window_rate:>8.1f} "
                        f"{r.start_rate:>12.1f} {ratio:>6} {_ms(r.p50):>7} {_ms(r.p99):>7} "
                        f"{r.peak_mb:>8.0f} {r.cpu_s * 1000 / max(r.pods - 1, 1):>10.2f} "
                        f"{_ms(r.bind_p50):>11}"
                    )
            if len(rounds) > 1 and ratios:
                medians = ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in rates.items())
                line(
                    f"{m:>8} median pods/s: {medians}; ratio {statistics.median(ratios):.2f} "
                    f"(rounds {min(ratios):.2f}-{max(ratios):.2f})"
                )
    if memory is not None:
        ours_, kube = memory["kschedctl"], memory["kube-scheduler"]
        verdict = "under" if ours_["peak_mb"] < 500 else "OVER"
        line(f"\nmemory: each scheduler caching {ours_['nodes']} nodes and {ours_['pods']} pods")
        line(
            f"  kschedctl's scheduler: peak {ours_['peak_mb']:.0f} MB ({verdict} the 500 MB "
            f"goal), synced in {ours_['sync_s']:.1f}s"
        )
        line(
            f"  kube-scheduler:        peak {kube['peak_mb']:.0f} MB, synced in "
            f"{kube['sync_s']:.1f}s"
        )
    out.flush()


if __name__ == "__main__":
    try:
        with unwinding_on_termination():  # SIGTERM/SIGHUP: processes and lab stopped (finally)
            code = main()
        sys.exit(code)
    except NotFoundError as err:
        print(f"error: {err.message}", file=sys.stderr)
        sys.exit(5)
