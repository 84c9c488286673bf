"""Compare ``kschedctl validate --replaces-default`` with a real kube-scheduler on the corpus.

    python tests/corpus/agreement.py [--kube-scheduler PATH] [-o json]

Prints the counts, then every disagreement grouped by class: what kube-scheduler said (its
first message with names, numbers and paths blurred) against what validate said. The oracle
test (tests/oracle/test_kube_scheduler_oracle.py) asserts there are none beyond its table of
deliberate differences.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kschedctl.ops.judge import FileVerdict, is_valid, judge_file  # noqa: E402
from kschedctl.ops.validate import check_path  # noqa: E402

CONFIGS = Path(__file__).parent / "configs"


@dataclass
class Outcome:
    name: str
    kube_scheduler: FileVerdict | None
    validate_valid: bool
    validate_problems: list[str]

    @property
    def oracle_accepts(self) -> bool | None:
        return None if self.kube_scheduler is None else self.kube_scheduler.accepted

    @property
    def agrees(self) -> bool:
        return self.oracle_accepts is None or self.oracle_accepts == self.validate_valid


def default_binary() -> Path | None:
    """The lab's pinned kube-scheduler build, if built."""
    from kschedctl.lab import binaries

    k8s = next(m for m in binaries.MODULES if m.key == "k8s")
    pinned = k8s.cache_path() / "kube-scheduler"
    if pinned.is_file():
        return pinned
    found = sorted(Path.home().glob(".cache/kschedctl/bin/k8s-*/kube-scheduler"))
    return found[-1] if found else None


def documents() -> list[Path]:
    return sorted(p for p in CONFIGS.iterdir() if p.is_file())


def outcome(binary: Path, path: Path) -> Outcome:
    report = check_path(str(path), replaces_default=True)
    errors = [p for p in report.problems if getattr(p, "severity", "error") == "error"]
    shown = [f"{p.path}: {p.message}" if p.path else str(p.message) for p in errors]
    return Outcome(path.name, judge_file(binary, path), is_valid(report.problems), shown)


def run(binary: Path, paths: list[Path] | None = None, workers: int = 4) -> list[Outcome]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda p: outcome(binary, p), paths or documents()))


_BLUR = [
    (re.compile(r"^initializing profiles: creating profile for scheduler name [^:]*: "), ""),
    (re.compile(r"^couldn't get version/kind; "), ""),
    (re.compile(r"\b[A-Z][A-Za-z]*Plugin \"[^\"]*\" does not exist"), 'plugin "…" does not exist'),
    (re.compile(r"does not extend [A-Za-z]+Plugin plugin"), "does not extend <point>"),
    (
        re.compile(
            r"profiles\[\d+\]\.pluginConfig\[\d+\]\.args\.([\w.]+?)(\[\d+\])?[.:].*?(Invalid value|Unsupported value|Required value|Duplicate value)?:.*"
        ),
        r"args.\1… \3",
    ),
    (re.compile(r"initializing plugin \"([^\"]*)\": ([\w.]+).*"), r"initializing plugin \1: \2 …"),
    (re.compile(r"Object 'Kind' is missing.*", re.S), "Object 'Kind' is missing"),
    (re.compile(r'"[^"]*"'), '"…"'),
    (re.compile(r"\b\d+(\.\d+)?\b"), "N"),
    (re.compile(r"json parse error: .*"), "json parse error"),
]


def blur(message: str) -> str:
    for pattern, repl in _BLUR:
        message = pattern.sub(repl, message)
    return message[:120]


def klass(o: Outcome) -> str:
    if o.kube_scheduler is None:
        return "no config for kube-scheduler"
    if o.name in deliberate():
        return "deliberate difference (table in tests/oracle/test_kube_scheduler_oracle.py)"
    if o.kube_scheduler.accepted:
        first = blur(o.validate_problems[0]) if o.validate_problems else "?"
        return f"FALSE ALARM: kube-scheduler accepts, validate refuses: {first}"
    first = o.kube_scheduler.messages[0] if o.kube_scheduler.messages else "?"
    return f"MISSED: kube-scheduler refuses ({blur(first)}), validate accepts"


def deliberate() -> dict[str, str]:
    """The oracle test's table of deliberate differences (the one table, read from there)."""
    import importlib.util

    path = ROOT / "tests" / "oracle" / "test_kube_scheduler_oracle.py"
    spec = importlib.util.spec_from_file_location("kube_scheduler_oracle", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.DELIBERATE)


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    judged = [o for o in outcomes if o.oracle_accepts is not None]
    table = deliberate()
    differ = [o for o in judged if not o.agrees]
    return {
        "documents": len(outcomes),
        "judged": len(judged),
        "bothAccept": sum(1 for o in judged if o.agrees and o.validate_valid),
        "bothReject": sum(1 for o in judged if o.agrees and not o.validate_valid),
        "deliberateDifferences": sum(1 for o in differ if o.name in table),
        "disagreements": sum(1 for o in differ if o.name not in table),
        "missedErrors": sum(1 for o in differ if o.name not in table and o.validate_valid),
        "falseAlarms": sum(1 for o in differ if o.name not in table and not o.validate_valid),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kube-scheduler", type=Path, default=default_binary())
    parser.add_argument("-o", "--output", choices=["text", "json"], default="text")
    parser.add_argument("files", nargs="*", type=Path)
    opts = parser.parse_args()
    if opts.kube_scheduler is None:
        print(
            "no kube-scheduler binary: run `kschedctl lab build` or pass --kube-scheduler",
            file=sys.stderr,
        )
        return 5
    outcomes = run(opts.kube_scheduler, opts.files or None)
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if not o.agrees:
            groups[klass(o)].append(o)
    if opts.output == "json":
        print(
            json.dumps(
                {
                    "summary": summary(outcomes),
                    "disagreements": [
                        {
                            "file": o.name,
                            "kubeScheduler": o.kube_scheduler.to_dict()
                            if o.kube_scheduler
                            else None,
                            "validateValid": o.validate_valid,
                            "validateProblems": o.validate_problems,
                        }
                        for o in outcomes
                        if not o.agrees
                    ],
                },
                indent=2,
            )
        )
        return 0
    print(json.dumps(summary(outcomes)))
    for name, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"\n[{len(members)}] {name}")
        for o in members:
            ks = o.kube_scheduler.messages if o.kube_scheduler else []
            print(f"    {o.name}")
            print(
                f"        kube-scheduler: {'accepted' if o.oracle_accepts else '; '.join(ks)[:300]}"
            )
            print(
                f"        validate:       {'valid' if o.validate_valid else '; '.join(o.validate_problems)[:300]}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
