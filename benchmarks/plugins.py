"""What a Python scheduling plugin costs kschedctl's scheduler, per node evaluation.

On synthetic snapshots (``--sizes`` nodes, 10 pods each, the nodes and pods of
``benchmarks/why.py``, slimmed as the scheduler's cache slims them), the same pending pod is
filtered over every node (``feasible_nodes``, no sampling) and fully decided (filter + score,
``--percentage`` of nodes) in one run, with:

- ``none``: no plugin (the built-in filters and scores alone);
- ``empty filter``: one plugin whose ``filter(pod, node, ctx)`` returns None;
- ``empty score``: one plugin whose ``score(pod, node, ctx)`` returns 0.

Each figure is the best of ``--repeat`` runs of the process's CPU time (a shared machine
steals wall-clock time, not CPU time), the variants interleaved so that noise hits them
alike. Printed per size: the time per node evaluation of each variant, the
plugin's own cost per node (difference with ``none``) and the ratio to ``none``.

    python benchmarks/plugins.py [--sizes 500,5000] [--repeat 5] [--percentage 100]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from why import make_nodes, make_pods  # noqa: E402

from kschedctl.model.filters import NodeInfoSnapshot, feasible_nodes  # noqa: E402
from kschedctl.model.scheduling.algorithm import Algorithm  # noqa: E402
from kschedctl.model.scheduling.pluginload import plugin_from_source  # noqa: E402
from kschedctl.model.scheduling.plugins import PluginSet  # noqa: E402
from kschedctl.model.scheduling.slim import slim_node, slim_pod  # noqa: E402

EMPTY_FILTER = "def filter(pod, node, ctx):\n    return None\n"
EMPTY_SCORE = "def score(pod, node, ctx):\n    return 0\n"

PENDING = {
    "metadata": {"name": "pending", "namespace": "default", "uid": "uid-pending",
                 "labels": {"app": "bench"}},
    "spec": {"schedulerName": "mine", "containers": [
        {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
        "tolerations": [{"key": "dedicated", "operator": "Exists"}]},
    "status": {"phase": "Pending"},
}  # fmt: skip


def best_of(repeat: int, runs: dict[str, Callable[[], object]]) -> dict[str, float]:
    best = {name: float("inf") for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            began = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - began)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="500,5000", help="node counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--percentage", type=int, default=100,
                        help="percentageOfNodesToScore of the decide() runs")  # fmt: skip
    args = parser.parse_args()
    variants = {
        "none": PluginSet(),
        "empty filter": PluginSet((plugin_from_source("empty_filter.py", EMPTY_FILTER),)),
        "empty score": PluginSet((plugin_from_source("empty_score.py", EMPTY_SCORE),)),
    }
    print(f"python {sys.version.split()[0]}; best of {args.repeat} (CPU time)")
    for size in (int(s) for s in args.sizes.split(",")):
        nodes = [slim_node(n, annotations=True) for n in make_nodes(size)]
        snap = NodeInfoSnapshot(nodes, [slim_pod(p, annotations=True) for p in make_pods(nodes)])
        filtering = {
            name: (lambda ps=ps, snap=snap: feasible_nodes(
                PENDING, snap, extra=ps.cycle(PENDING, snap).status if ps.filters else None))
            for name, ps in variants.items()
        }  # fmt: skip
        deciding = {
            name: (lambda ps=ps, snap=snap: Algorithm(
                percentage_of_nodes_to_score=args.percentage, plugins=ps).decide(PENDING, snap))
            for name, ps in variants.items()
        }  # fmt: skip
        feasible = len(feasible_nodes(PENDING, snap).names)
        print(f"\n{size} nodes, {size * 10} pods ({feasible} nodes fit the pod)")
        for what, runs in (
            ("filter every node", filtering),
            (f"decide ({args.percentage}% of nodes)", deciding),
        ):
            times = best_of(args.repeat, runs)
            base = times["none"]
            print(f"  {what}:")
            for name, seconds in times.items():
                # A plugin runs on the nodes the built-in filters pass: its cost is counted
                # per such node (with sampling, decide visits fewer: the figure is a bound).
                extra = (seconds - base) / max(feasible, 1) * 1e6
                print(
                    f"    {name:13s} {seconds * 1e3:9.2f} ms  {seconds / size * 1e6:7.2f} µs/node"
                    f"  plugin {extra:+6.2f} µs per node it ran on  ratio {seconds / base:5.2f}"
                )


if __name__ == "__main__":
    main()
