"""Where the test suite's time goes: wall time per test file and per lab started.

    python benchmarks/suite.py                 # the README's test command
    python benchmarks/suite.py -m "not lab"    # any pytest arguments: here the fast tests
    python benchmarks/suite.py --top 40 tests/e2e/test_deploy.py

Runs pytest once with a JUnit XML report and ``KSCHEDCTL_LAB_TIMINGS`` (every lab that becomes
Ready appends how long it took, kschedctl/lab/cluster.py), then prints the run's wall time, the
test files by their summed time (setup + call + teardown of their tests, which is what a file
costs a worker), and each lab started with its nodes and start-up time. The sum over files
against the wall time is the parallel speed-up the workers gave in this same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=25, help="how many files to list")
    args, pytest_args = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="suite-bench-") as tmp:
        report, labs = Path(tmp) / "junit.xml", Path(tmp) / "labs.jsonl"
        env = {**os.environ, "KSCHEDCTL_LAB_TIMINGS": str(labs)}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   f"--junitxml={report}", *pytest_args]  # fmt: skip
        print("$", " ".join(command[1:]), file=sys.stderr, flush=True)
        began = time.monotonic()
        code = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
        wall = time.monotonic() - began
        files, counts = _per_file(report) if report.exists() else ({}, {})
        lines = labs.read_text().splitlines() if labs.exists() else []
        started = [json.loads(line) for line in lines]
    _print(wall, code, files, counts, started, args.top)
    return code


def _per_file(report: Path) -> tuple[dict[str, float], dict[str, int]]:
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for case in ET.parse(report).iter("testcase"):
        name = case.get("file") or case.get("classname", "?").replace(".", "/") + ".py"
        seconds[name] += float(case.get("time", 0))
        counts[name] += 1
    return seconds, counts


def _print(
    wall: float,
    code: int,
    files: dict[str, float],
    counts: dict[str, int],
    labs: list[dict[str, Any]],
    top: int,
) -> None:
    total = sum(files.values())
    print(f"\nwall time {wall:7.1f} s   (pytest exit {code})")
    tests = sum(counts.values())
    print(f"test time {total:7.1f} s   summed over {tests} tests in {len(files)} files")
    if wall > 0:
        print(f"speed-up  {total / wall:7.2f}x  test time / wall time (parallel workers)")
    print(f"\n{'seconds':>8}  {'share':>6}  {'tests':>5}  file")
    for name, secs in sorted(files.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{secs:8.1f}  {secs / total:6.1%}  {counts[name]:5d}  {name}")
    if len(files) > top:
        rest = sum(sorted(files.values(), reverse=True)[top:])
        print(f"{rest:8.1f}  {rest / total:6.1%}  {'':5}  ({len(files) - top} more files)")
    lab_total = sum(lab["seconds"] for lab in labs)
    print(f"\nlabs started: {len(labs)}, {lab_total:.1f} s to Ready in all")
    for lab in sorted(labs, key=lambda lab: -lab["seconds"]):
        print(f"{lab['seconds']:8.1f}  {lab['nodes']:>5} nodes  {lab['dir']}")


if __name__ == "__main__":
    sys.exit(main())
