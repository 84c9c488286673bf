"""Latency of one TAB: static, kubeconfig-backed and cluster-backed completions.

Each sample is a fresh interpreter answering bash's completion request, as the shell runs it.
Prints the median per TAB and its ratio to ``python -c pass`` measured in the same run (the
interpreter alone: what no Python CLI can go below). The target: static completion under
100 ms per TAB. Cluster-backed candidates use $KUBECONFIG (for the lab:
``eval "$(kschedctl lab env)"``); without a reachable cluster they show the time a lookup is
given before it is abandoned (``KSCHEDCTL_COMPLETION_TIMEOUT``, default 1 s).

    python benchmarks/completion.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

BASELINE = [sys.executable, "-c", "pass"]
CASES = {
    # name: (words on the command line, kind); a trailing space starts a new word
    "commands (kschedctl cr<TAB>)": ("kschedctl cr", "static"),
    "forms (render x --as <TAB>)": ("kschedctl render x --as ", "static"),
    "-o values (list -o <TAB>)": ("kschedctl list -o ", "static"),
    "contexts (--context <TAB>)": ("kschedctl list --context ", "kubeconfig"),
    "namespaces (why -n <TAB>)": ("kschedctl why -n ", "cluster"),
    "schedulers (status <TAB>)": ("kschedctl status ", "cluster"),
    "pending pods (why <TAB>)": ("kschedctl why ", "cluster"),
}
# Measure what users get: bytecode caches written once, then used.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def complete_env(words: str) -> dict[str, str]:
    return {
        **ENV,
        "_KSCHEDCTL_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }


def sample(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, int]:
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, check=True, capture_output=True, text=True)
    return time.perf_counter() - start, len(out.stdout.split())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # what the `kschedctl` console script runs (python -m would add runpy's start-up)
    kschedctl = [sys.executable, "-c", "from kschedctl.quick_complete import main; main()"]
    commands = {"python -c pass": (BASELINE, ENV)}
    for name, (words, _kind) in CASES.items():
        commands[name] = (kschedctl, complete_env(words))
    with tempfile.TemporaryDirectory() as cwd:
        for cmd, env in commands.values():
            sample(cmd, env, cwd)  # warm the OS file cache and the bytecode caches
        times: dict[str, list[float]] = {name: [] for name in commands}
        found: dict[str, int] = {}
        for _ in range(args.runs):  # interleaved, so background load hits all alike
            for name, (cmd, env) in commands.items():
                elapsed, found[name] = sample(cmd, env, cwd)
                times[name].append(elapsed)
    median = {name: statistics.median(values) for name, values in times.items()}
    base = median["python -c pass"]
    print(f"runs: {args.runs} (fresh interpreter each, median per TAB)")
    print(f"{'python -c pass (interpreter alone)':44} {base * 1000:7.1f} ms")
    worst_static = 0.0
    for name, (_words, kind) in CASES.items():
        ms = median[name] * 1000
        if kind == "static":
            worst_static = max(worst_static, ms)
        print(
            f"{name:44} {ms:7.1f} ms  x{median[name] / base:5.1f}  "
            f"{kind:10} {found[name]} candidates"
        )
    verdict = "ok" if worst_static < 100 else "OVER"
    print(f"slowest static completion: {worst_static:.1f} ms (target < 100 ms: {verdict})")
    return 0 if worst_static < 100 else 1


if __name__ == "__main__":
    sys.exit(main())
