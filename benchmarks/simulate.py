"""Time `kschedctl simulate` on a generated snapshot: N nodes, P pods of which a share pending,
two candidates (default: kube-scheduler with its default profile, kschedctl's scheduler with
binpack).

    python benchmarks/simulate.py [--nodes 2000] [--pods 20000] [--pending 2000]
                                  [--candidates kube,binpack] [--report]

``--candidates``: two or more of kube, spread, binpack. ``--report``: print the side-by-side
report (the table `kschedctl simulate` prints) after the figures.

Needs the lab's binaries (`kschedctl lab build`). Prints the time of each phase (lab start,
nodes, pinned pods, each candidate) and the total, the side-by-side summary, then the peak
memory (VmHWM) of this process, of each candidate scheduler's process and of the lab's own
(kube-apiserver, etcd, kwok, …), read from /proc every half second while they run.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from kschedctl.base.signals import unwinding_on_termination
from kschedctl.cli.simulate_view import report_picture
from kschedctl.clustersnapshot import dump, snapshot_from_dict
from kschedctl.ops.simulate import load_plan, simulate

ZONES = ("zone-a", "zone-b", "zone-c")
SHAPES = (("8", "32Gi"), ("16", "64Gi"), ("4", "16Gi"))


def snapshot(nodes: int, pods: int, pending: int) -> dict[str, Any]:
    node_list = []
    for i in range(nodes):
        cpu, memory = SHAPES[i % len(SHAPES)]
        name = f"node-{i:05d}"
        resources = {"cpu": cpu, "memory": memory, "pods": "110"}
        node_list.append({
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3],
                       "node.kubernetes.io/instance-type": f"m-{cpu}"},
            "capacity": resources, "allocatable": resources,
        })  # fmt: skip
    bound = pods - pending
    pod_list = []
    for i in range(bound):
        pod_list.append({
            "namespace": f"team-{i % 20}", "name": f"run-{i}", "nodeName": f"node-{i % nodes:05d}",
            "labels": {"app": f"app-{i % 50}"}, "ownerKind": "ReplicaSet",
            "containers": [{"name": "c", "requests": {"cpu": "250m", "memory": "512Mi"}}],
        })  # fmt: skip
    pending_list = []
    for i in range(pending):
        pending_list.append({
            "namespace": f"team-{i % 20}", "name": f"new-{i}", "labels": {"app": f"new-{i % 10}"},
            "containers": [{"name": "c", "requests": {"cpu": "500m", "memory": "1Gi"}}],
        })  # fmt: skip
    return {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Snapshot",
        "metadata": {"created": "2026-12-03T00:00:00Z"},
        "spec": {"nodes": node_list, "pods": pod_list, "pendingPods": pending_list},
    }


def spec(name: str, program: str, strategy: str | None = None) -> str:
    body: dict[str, Any] = {"program": program}
    if strategy:
        body["builtin"] = {"strategy": strategy}
    # The lab's own API server can take the default client limits many times over.
    body["clientConnection"] = {"qps": 200, "burst": 400}
    doc = {"apiVersion": "kschedctl.io/v1alpha1", "kind": "Scheduler", "metadata": {"name": name},
           "spec": body}  # fmt: skip
    return yaml.safe_dump(doc, sort_keys=False)


CANDIDATES: dict[str, Callable[[], str]] = {
    "kube": lambda: spec("kube-default", "kube-scheduler"),
    "spread": lambda: spec("spread", "builtin", "spread"),
    "binpack": lambda: spec("binpack", "builtin", "binpack"),
}


def peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:  # gone between the listing and the read
        pass
    return 0


class PeakMemory:
    """Every half second, the VmHWM of the lab's processes (lab.json) and of the candidates
    (the lab's service records, procs/service_*.json), the highest seen per name."""

    def __init__(self, lab: Path) -> None:
        self.lab = lab
        self.peaks: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _processes(self) -> dict[str, int]:
        found: dict[str, int] = {}
        try:
            components = json.loads((self.lab / "lab.json").read_text())["components"]
            found.update({name: c["pid"] for name, c in components.items()})
        except (OSError, ValueError, KeyError):
            pass
        for record in self.lab.glob("procs/service_*.json"):
            try:
                found[record.stem.removeprefix("service_")] = json.loads(record.read_text())["pid"]
            except (OSError, ValueError, KeyError):
                pass
        return found

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            for name, pid in self._processes().items():
                self.peaks[name] = max(self.peaks.get(name, 0), peak_kib(pid))

    def __enter__(self) -> PeakMemory:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--pending", type=int, default=2000)
    parser.add_argument("--candidates", default="kube,binpack")
    parser.add_argument("--report", action="store_true")
    args = parser.parse_args()
    chosen = args.candidates.split(",")
    if not set(chosen) <= set(CANDIDATES):
        parser.error(f"--candidates: choose from {', '.join(CANDIDATES)}")
    start = time.monotonic()
    steps: list[tuple[float, str]] = []

    def progress(message: str) -> None:
        steps.append((time.monotonic() - start, message))
        print(f"{time.monotonic() - start:7.1f}s  {message}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="ksim-bench-") as tmp:
        work = Path(tmp)
        doc = snapshot(args.nodes, args.pods, args.pending)
        (work / "snap.json").write_text(dump(snapshot_from_dict(doc), as_json=True))
        for name in chosen:
            (work / f"{name}.yaml").write_text(CANDIDATES[name]())
        progress(f"snapshot written: {args.nodes} nodes, {args.pods} pods ({args.pending} pending)")
        plan, candidates = load_plan(
            str(work / "snap.json"), [str(work / f"{name}.yaml") for name in chosen], None
        )
        progress("snapshot loaded")
        with PeakMemory(work / "lab") as memory:
            report = simulate(plan, candidates, lab_dir=work, timeout=1800, progress=progress)
    total = time.monotonic() - start
    steps.append((total, "done"))
    print(f"nodes={args.nodes} pods={args.pods} pending={args.pending} total={total:.0f}s")
    for c in report.candidates:
        print(f"  {c.name:14} scheduled={c.scheduled} unschedulable={c.unschedulable} "
              f"nodes-used={c.nodes_used()} time-to-schedule={c.seconds:.1f}s")  # fmt: skip
    print("phases (s, each step until the next; steps under 1 s left out):")
    for (at, message), (until, _next) in zip(steps, steps[1:], strict=False):
        if until - at >= 1.0:
            print(f"  {until - at:7.1f}  {message}")
    print("peak memory (VmHWM, MiB):")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    for name, kib in [("simulate (this process)", own), *sorted(memory.peaks.items())]:
        print(f"  {name:32} {kib / 1024:8.0f}")
    if args.report:
        console = Console(width=160, color_system=None)
        console.print(report_picture(report, 10))


if __name__ == "__main__":
    with unwinding_on_termination():  # SIGTERM/SIGHUP: the lab goes down (finally)
        main()
