"""Draw the README's pictures with kschedctl itself, on a lab of its own.

    python tools/readme_picture.py            # writes docs/top-nodes.svg, docs/events-timeline.svg

Starts a lab (4 nodes: 4 cpu, 8Gi, 110 pods) in a temporary directory, runs kschedctl's
scheduler twice (`scheduler run --name spread --strategy spread`, `--name binpack --strategy
binpack`), creates pods for each, for default-scheduler and one bound by hand (spec.nodeName,
on the busiest node: the over-commit the picture flags), waits until they are bound, then runs
`kschedctl top nodes --export docs/top-nodes.svg` and `kschedctl events binpack -A --timeline
--export docs/events-timeline.svg`. Every process it started is stopped by pid (the schedulers)
or by `kschedctl lab down --dir` (the lab), even when a step fails. Needs the lab binaries
(`kschedctl lab build`).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "demo"
# (scheduler, strategy or None for default-scheduler, pods, cpu, memory)
WORKLOADS = [
    ("spread", "spread", 8, "250m", "256Mi"),
    ("binpack", "binpack", 6, "500m", "1Gi"),
    ("default-scheduler", None, 3, "200m", "512Mi"),
]
WAVES = 3
PINNED_CPU = "200m"  # bound by hand next to binpack's pods: "(none)" in the picture
# Then the busiest node loses capacity (reserved for the system, say) below what its pods request:
# over-commit as it happens on a real node. The lab's kubelet admission rejects pods that do not
# fit when they arrive, as a kubelet does, so over-commit cannot be made by binding alone.
SHRUNK_CPU = "2"


def kschedctl(*args: str, env: dict[str, str]) -> str:
    result = subprocess.run([sys.executable, "-m", "kschedctl", *args], env=env, text=True,
                            capture_output=True, check=False, cwd=ROOT)  # fmt: skip
    sys.stderr.write(result.stderr)
    if result.returncode:
        raise SystemExit(f"kschedctl {' '.join(args)} exited {result.returncode}")
    return result.stdout


def pod(name: str, cpu: str, memory: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name.rsplit("-", 1)[0]}},
        "spec": {
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
            "terminationGracePeriodSeconds": 0,
            **spec,
        },
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="docs/top-nodes.svg", help="the per-node picture")
    parser.add_argument("--timeline-out", default="docs/events-timeline.svg",
                        help="binpack's decisions per minute")  # fmt: skip
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from kschedctl.kubeclient.client import Cluster

    lab_dir = Path(tempfile.mkdtemp(prefix="kschedctl-picture-")) / "lab"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    line = kschedctl("lab", "up", "--dir", str(lab_dir), "--nodes", "4", env=env)
    kubeconfig = line.strip().split("=", 1)[1].strip("'\"")
    env["KUBECONFIG"] = kubeconfig
    schedulers: list[subprocess.Popen[bytes]] = []
    try:
        for name, strategy, *_ in WORKLOADS:
            if strategy:
                with open(lab_dir / "logs" / f"scheduler-{name}.log", "ab") as log:
                    schedulers.append(subprocess.Popen(
                        [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={name}",
                         f"--strategy={strategy}", "--no-leader-elect", "--metrics-port=0"],
                        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))  # fmt: skip
        with Cluster.connect(kubeconfig) as cluster:
            cluster.create("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
            pods = f"/api/v1/namespaces/{NAMESPACE}/pods"
            # in WAVES a minute apart, so the timeline has more than one row
            created = 0
            for wave in range(WAVES):
                if wave:
                    time.sleep(60)
                for name, _strategy, count, cpu, memory in WORKLOADS:
                    for i in range(wave, count, WAVES):
                        cluster.create(pods, pod(f"{name}-{i}", cpu, memory, schedulerName=name))
                        created += 1
                if wave == 1:  # a pod no node fits: binpack's failures on the timeline
                    cluster.create(pods, pod("huge-0", "64", "1Gi", schedulerName="binpack"))
                _wait_bound(cluster, pods, created)
            busiest = cluster.get(f"{pods}/binpack-0")["spec"]["nodeName"]
            cluster.create(pods, pod("pinned-0", PINNED_CPU, "256Mi", nodeName=busiest))
            _wait_bound(cluster, pods, created + 1)
            cluster.patch(
                f"/api/v1/nodes/{busiest}/status", {"status": {"allocatable": {"cpu": SHRUNK_CPU}}}
            )
        for target in (options.out, options.timeline_out):
            Path(ROOT / target).parent.mkdir(parents=True, exist_ok=True)
        sys.stdout.write(kschedctl("top", "nodes", "--export", options.out, env=env))
        sys.stdout.write(kschedctl("events", "binpack", "-A", "--timeline", "--export",
                                   options.timeline_out, env=env))  # fmt: skip
    finally:
        for proc in schedulers:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        subprocess.run([sys.executable, "-m", "kschedctl", "lab", "down", "--dir", str(lab_dir)],
                       env=env, cwd=ROOT, check=False)  # fmt: skip
        if lab_dir.parent.exists() and not any(lab_dir.parent.iterdir()):
            lab_dir.parent.rmdir()  # the temporary directory made above, empty after lab down
    return 0


def _wait_bound(cluster: Any, pods: str, count: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        bound = [p for p in cluster.list(pods) if (p.get("spec") or {}).get("nodeName")]
        if len(bound) >= count:
            return
        time.sleep(0.5)
    raise SystemExit(f"timed out: {count} pods not bound within {timeout:.0f}s")


if __name__ == "__main__":
    sys.exit(main())
