"""Seconds until ``kschedctl lab up --nodes N`` is Ready, and the memory its processes hold.

For each N, one lab in a fresh directory: the wall-clock seconds of the whole ``lab up`` (until
every node is Ready and untainted, which is what it waits for), then the resident memory (RSS)
of each control-plane process read from /proc with the lab still up, then ``lab down``.
The target (issue 29): 2,000 nodes Ready within 60 s on the project's 2-core machine.

    python benchmarks/lab_up.py [--nodes 500 --nodes 2000] [--timeout 600]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHOWN = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "runner")
LAB = [sys.executable, "-m", "kschedctl", "lab"]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(nodes: int, timeout: float) -> tuple[float, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="lab-up-bench-") as parent:
        lab = Path(parent) / "lab"
        started = time.monotonic()
        up = [*LAB, "up", "--dir", str(lab), "--nodes", str(nodes), "--timeout", str(timeout)]
        try:
            done = subprocess.run(up, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"lab up --nodes {nodes} failed:\n{done.stderr}")
            seconds = time.monotonic() - started
            components = json.loads((lab / "lab.json").read_text())["components"]
            memory = {name: rss_mib(c["pid"]) for name, c in components.items()}
        finally:
            subprocess.run([*LAB, "down", "--dir", str(lab)], capture_output=True)
    return seconds, memory


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, action="append", help="repeatable; 500 and 2000")
    parser.add_argument("--timeout", type=float, default=600.0, help="lab up's --timeout")
    args = parser.parse_args()
    header = f"{'nodes':>6} {'Ready s':>8} " + " ".join(SHOWN) + "  (RSS MiB)"
    print(header)
    for nodes in args.nodes or [500, 2000]:
        seconds, memory = measure(nodes, args.timeout)
        cells = " ".join(f"{memory.get(name, 0.0):>{len(name)}.0f}" for name in SHOWN)
        print(f"{nodes:>6} {seconds:>8.1f} {cells}  total {sum(memory.values()):.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
