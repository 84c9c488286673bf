"""Example kschedctl scheduling plugin: a SCORE.

Prefer the nodes running the fewest pods of the pod's own app (same namespace, same ``app``
label): 100 on a node without one, 100 / (1 + n) on a node with n of them. ``WEIGHT = 10``
makes the difference between 0 and 1 such pod (10 × 50 = 500 points) outweigh every
built-in score but untolerated PreferNoSchedule taints and preferred node affinity
(kschedctl/model/scheduling/scoring.py: 3, 2, 1 and 1 times 0..100).

    kschedctl scheduler run --name spread-apps --plugin examples/plugins/fewest_same_app.py

Pods without an ``app`` label get 100 everywhere: the plugin does not change their placement.
"""

from __future__ import annotations

from typing import Any

NAME = "fewest-same-app"
WEIGHT = 10
LABEL = "app"


def same_app_pods(pod: Any, node_name: str, ctx: Any) -> int:
    """How many pods of ``pod``'s app (namespace and ``app`` label) run on ``node_name``."""
    meta = pod["metadata"]
    app = (meta.get("labels") or {}).get(LABEL)
    if app is None:
        return 0
    namespace = meta.get("namespace")
    return sum(
        1
        for other in ctx.pods_on(node_name)
        if other["metadata"].get("namespace") == namespace
        and (other["metadata"].get("labels") or {}).get(LABEL) == app
        and other["metadata"].get("uid") != meta.get("uid")
    )


def score(pod: Any, node: Any, ctx: Any) -> float:
    return 100 / (1 + same_app_pods(pod, node["metadata"]["name"], ctx))
