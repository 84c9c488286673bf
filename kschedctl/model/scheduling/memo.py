"""Which pod shapes the scheduler remembers node answers for (:mod:`kschedctl.model.filters.
nodememo`): the last few seen at least twice, so a one-off pod costs no memo.

A pod's shape is everything a filter or a score reads of it: the pod without its name, uid,
resourceVersion, creation time and conditions — two replicas of a workload have the same.
Not thread-safe: the scheduler decides one pod at a time, under its lock.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from typing import Any

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.filters.nodememo import ShapeMemo

__all__ = ["NodeMemo", "pod_shape"]

# Shapes remembered at once (least recently used first out): a few workloads scaling at the
# same time. At 5,000 nodes a shape's memo takes about 1 MB.
SHAPES = 8
_IDENTITY = ("name", "generateName", "uid", "resourceVersion", "creationTimestamp")


def pod_shape(pod: Mapping[str, Any]) -> str:
    """The pod as the filters and scores read it (JSON with sorted keys)."""
    md = {k: v for k, v in (pod.get("metadata") or {}).items() if k not in _IDENTITY}
    status = {k: v for k, v in (pod.get("status") or {}).items() if k != "conditions"}
    shape = {**pod, "metadata": md, "status": status}
    return json.dumps(shape, sort_keys=True, separators=(",", ":"), default=str)


class NodeMemo:
    def __init__(self) -> None:
        self._snapshot: weakref.ref[NodeInfoSnapshot] | None = None
        # shape -> its memo, or None when the shape was seen once
        self._shapes: dict[str, ShapeMemo | None] = {}

    def memo(self, pod: Mapping[str, Any], snapshot: NodeInfoSnapshot) -> ShapeMemo | None:
        """The memo for ``pod``'s shape on ``snapshot`` (None the first time a shape comes;
        every memo goes when the snapshot is replaced or its node set changes)."""
        current = self._snapshot() if self._snapshot is not None else None
        if current is not snapshot:
            self._snapshot = weakref.ref(snapshot)
            self._shapes.clear()
        key = pod_shape(pod)
        seen = key in self._shapes
        memo = self._shapes.pop(key, None)
        if seen and (memo is None or not memo.current(snapshot)):
            memo = ShapeMemo(snapshot)
        if not seen and len(self._shapes) >= SHAPES:
            del self._shapes[next(iter(self._shapes))]
        self._shapes[key] = memo  # most recently used last
        return memo
