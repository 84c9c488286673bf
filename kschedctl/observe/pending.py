"""`why --all` on many Pending pods (pure): one row per scheduler and reason.

Each pod counts once under every reason that keeps it Pending: what blocks it before the
filters (a finding code such as ``scheduling-gated`` or ``scheduler-not-served``), or each
reason string kube-scheduler records for its nodes (its node groups,
:mod:`kschedctl.observe.nodegroups`). Rows say how many pods and how many distinct nodes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kschedctl.model.filters.messages import NO_NODES_MESSAGE
from kschedctl.observe.diagnosis import WITHHELD, Diagnosis
from kschedctl.observe.nodegroups import EXAMPLES
from kschedctl.printers.formats import json_fields

# Finding codes of pods that reached the filters: their reasons are kube-scheduler's strings.
FILTER_CODES = ("no-node-fits", "prefilter-rejected", "no-nodes")
FITS_REASON = "can be scheduled"


@dataclass(frozen=True)
class PendingReason:
    """Pods of one scheduler held back by one reason.

    ``code`` is the finding code (``rejected-by-<Plugin>``, ``prefilter-rejected``,
    ``no-nodes``, ``fits``, ``plugins-not-run``, or the blocker's: ``scheduling-gated``,
    ``scheduler-not-served`` …);
    ``reason`` kube-scheduler's reason string for filter rejections, else a short text.
    ``nodes`` counts the distinct nodes giving this reason to at least one of the pods
    (that the pods fit on, for ``fits``); ``pods`` are ``namespace/name``, sorted.
    """

    scheduler: str
    code: str
    reason: str
    pods: tuple[str, ...]
    nodes: int

    def to_dict(self) -> dict[str, Any]:
        return json_fields(self, pods=len(self.pods), examples=list(self.pods[:EXAMPLES]))


def pod_reasons(d: Diagnosis) -> list[tuple[str, str, frozenset[str]]]:
    """(code, reason, nodes) for each reason that keeps ``d``'s pod Pending: what blocks it
    before the filters (one finding), or each reason string of its node groups."""
    ev = d.evaluation
    if d.schedulable:
        return [("fits", FITS_REASON, frozenset(ev.feasible if ev else ()))]
    if d.schedulable is None:  # its scheduler's plugins, not run, decide
        return [("plugins-not-run", WITHHELD, frozenset(ev.feasible if ev else ()))]
    blocking = d.blocking
    filtered = blocking is None or (
        blocking.code in FILTER_CODES or blocking.code.startswith("rejected-by-")
    )
    if not filtered or ev is None:
        # Held back before the filters (gates, scheduler missing or unhealthy, deletion):
        # the finding's message names the pod, its code is what pods share.
        code = blocking.code if blocking is not None else "blocked"
        return [(code, code, frozenset())]
    if ev.prefilter is not None:
        everyone = frozenset(v.name for v in ev.nodes)
        return [("prefilter-rejected", ev.prefilter.message, everyone)]
    if not ev.nodes:
        return [("no-nodes", NO_NODES_MESSAGE, frozenset())]
    found: dict[tuple[str, str], set[str]] = {}
    for group in d.node_groups:
        for r in group.reasons:
            found.setdefault((f"rejected-by-{r.plugin}", r.message), set()).update(group.names)
    return [(code, reason, frozenset(nodes)) for (code, reason), nodes in found.items()]


def pending_reasons(diagnoses: Iterable[Diagnosis]) -> tuple[PendingReason, ...]:
    """One row per scheduler and reason over ``diagnoses``; a pod counts once under each of
    its reasons. Ordered by scheduler, then pods (most first), then reason."""
    rows: dict[tuple[str, str, str], tuple[list[str], set[str]]] = {}
    for d in diagnoses:
        pod = f"{d.pod['namespace']}/{d.pod['name']}"
        for code, reason, nodes in pod_reasons(d):
            pods, seen = rows.setdefault((d.pod["schedulerName"], code, reason), ([], set()))
            pods.append(pod)
            seen |= nodes
    out = [
        PendingReason(scheduler, code, reason, tuple(sorted(pods)), len(nodes))
        for (scheduler, code, reason), (pods, nodes) in rows.items()
    ]
    out.sort(key=lambda r: (r.scheduler, -len(r.pods), r.reason, r.code))
    return tuple(out)
