"""Example kschedctl scheduling plugin: a FILTER.

A pod that asks for a rack with the annotation ``example.com/rack: r2`` may only go to nodes
labelled ``rack=r2``; pods without the annotation may go anywhere.

    kschedctl scheduler run --name rack-aware --plugin examples/plugins/rack_match.py

``pre_filter`` reads the annotation once per pod (``ctx.cycle`` carries it to ``filter``)
and refuses an empty value; ``filter`` compares it with each node's label. The reason is the
same text on every node it rejects, so the FailedScheduling histogram counts them together:
``0/3 nodes are available: 2 node(s) not in rack "r2" (annotation example.com/rack), ...``.
"""

from __future__ import annotations

from typing import Any

NAME = "rack-match"
ANNOTATION = "example.com/rack"
LABEL = "rack"


def pre_filter(pod: Any, ctx: Any) -> str | None:
    annotations = pod["metadata"].get("annotations") or {}
    rack = annotations.get(ANNOTATION)
    ctx.cycle["rack"] = rack
    if rack is not None and not rack.strip():
        return f"pod's annotation {ANNOTATION} is empty: name a rack or remove it"
    return None


def filter(pod: Any, node: Any, ctx: Any) -> str | None:
    rack = ctx.cycle.get("rack")
    if rack is None:
        return None  # the pod asks for no rack
    labels = node["metadata"].get("labels") or {}
    if labels.get(LABEL) == rack:
        return None
    return f'node(s) not in rack "{rack}" (annotation {ANNOTATION})'
