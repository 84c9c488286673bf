"""Cold start of ``kschedctl render`` against a bare ``import kubernetes``, in the same run.

Each sample is a fresh interpreter. Prints the median of each and their ratio; the target is
a ratio under 0.5 (render must cost less than half of what importing the client costs, which
it can only do by never importing it).

    python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

RENDER = [sys.executable, "-m", "kschedctl", "render", "my-scheduler", "--as", "config"]
# For the record: a templated form also loads Jinja.
RENDER_DEPLOYMENT = [*RENDER[:-1], "deployment"]
CLIENT = [sys.executable, "-c", "import kubernetes"]
BASELINE = [sys.executable, "-c", "pass"]


# Measure what users get: bytecode caches written once, then used (kubernetes, installed by
# pip, has its caches already; a PYTHONDONTWRITEBYTECODE=1 environment would otherwise make
# kschedctl, run from a source tree, recompile itself on every start).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def sample(cmd: list[str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=ENV, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cwd:  # no workspace named my-scheduler here
        commands = {
            "render": RENDER,
            "deployment": RENDER_DEPLOYMENT,
            "client": CLIENT,
            "python": BASELINE,
        }
        for cmd in commands.values():
            sample(cmd, cwd)  # warm the OS file cache; bytecode caches are written once
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):  # interleaved, so background load hits all alike
            for name, cmd in commands.items():
                times[name].append(sample(cmd, cwd))
    median = {name: statistics.median(values) for name, values in times.items()}
    ratio = median["render"] / median["client"]
    print(f"runs: {args.runs} (fresh interpreter each)")
    print(f"kschedctl render my-scheduler --as config: median {median['render'] * 1000:7.1f} ms")
    print(
        f"  (--as deployment, templated:             median {median['deployment'] * 1000:7.1f} ms)"
    )
    print(f"python -c 'import kubernetes':             median {median['client'] * 1000:7.1f} ms")
    print(f"python -c 'pass' (interpreter alone):      median {median['python'] * 1000:7.1f} ms")
    print(f"ratio render / import kubernetes: {ratio:.2f} (target < 0.5)")
    print(f"  (--as deployment: {median['deployment'] / median['client']:.2f})")
    return 0 if ratio < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
