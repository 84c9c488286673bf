"""`why` on large clusters (pure): the per-node verdicts grouped by verdict.

A 5,000-node cluster gives 5,000 per-node verdicts, but only a handful of distinct ones:
:func:`group_nodes` folds them into one group per distinct verdict — the reason strings
kube-scheduler records for the node, in the server's wording (the same strings its
FailedScheduling histogram counts), or "fits". ``why --all``'s summary across pods is
:mod:`kschedctl.observe.pending`.

Order is stable so tables and JSON diff cleanly: groups by node count (largest first), then
reason text; examples are the first node names in sorted order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.model.filters import NodeVerdict, Reason, reason_text
from kschedctl.printers.formats import json_fields

EXAMPLES = 3  # example names per group: enough to find the nodes, short enough for a row


@dataclass(frozen=True)
class GroupReason:
    """One reason shared by every node of a group.

    ``detail`` is the detail of the group's first example; ``details`` how many distinct
    details the group's nodes have for this reason (1: every node says exactly ``detail``).
    """

    plugin: str
    message: str
    detail: str
    details: int = field(metadata={"json": "distinctDetails"})

    def to_dict(self) -> dict[str, Any]:
        return json_fields(self)


@dataclass(frozen=True)
class VerdictGroup:
    """Nodes with the same verdict. ``names`` holds every member, sorted; the JSON gives the
    first :data:`EXAMPLES` of them (the full list is ``nodes`` beside it)."""

    fits: bool
    reasons: tuple[GroupReason, ...]
    names: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.names)

    @property
    def examples(self) -> tuple[str, ...]:
        return self.names[:EXAMPLES]

    @property
    def text(self) -> str:
        """The reasons as one line ("Insufficient cpu, Insufficient memory"), or "fits"."""
        return ", ".join(r.message for r in self.reasons) if self.reasons else "fits"

    def to_dict(self) -> dict[str, Any]:
        return {
            "fits": self.fits,
            "count": self.count,
            "reasons": [r.to_dict() for r in self.reasons],
            "examples": list(self.examples),
        }


def group_nodes(
    verdicts: Iterable[NodeVerdict],
    server_version: Sequence[int] = (1, 36),
    *,
    all_reasons: bool = False,
) -> tuple[VerdictGroup, ...]:
    """One group per distinct verdict: the (filter, reason string) pairs kube-scheduler records
    for the node (every failing filter's with ``all_reasons``), worded for ``server_version``
    (older servers name the taint, so different taints make different groups there, as in
    their FailedScheduling message). Nodes that fit form one group. Ordered by node count,
    largest first, then by reason text."""
    # One pass, no per-node allocation beyond the key: `why --all` runs this once per pod.
    members: dict[tuple[tuple[str, str], ...], list[tuple[str, tuple[Reason, ...]]]] = {}
    for v in verdicts:
        shown = () if v.fits else v.reasons if all_reasons else v.scheduler_reasons
        key = tuple(
            (r.plugin, r.message if r.taint is None else reason_text(r, server_version))
            for r in shown
        )
        members.setdefault(key, []).append((v.name, shown))
    groups = []
    for key, nodes in members.items():
        nodes.sort(key=lambda member: member[0])
        reasons = []
        for index, (plugin, message) in enumerate(key):
            details = {shown[index].detail for _name, shown in nodes}
            reasons.append(GroupReason(plugin, message, nodes[0][1][index].detail, len(details)))
        groups.append(
            VerdictGroup(fits=not key, reasons=tuple(reasons), names=tuple(n for n, _ in nodes))
        )
    groups.sort(key=lambda g: (-g.count, [r.message for r in g.reasons], g.fits))
    return tuple(groups)


# The node table of `why POD`: ``--nodes`` (see the command's help).
GROUPED, ALL = "grouped", "all"
PER_NODE_UP_TO = 10  # default: one row per node up to this many nodes, grouped above


def node_layout(choice: str | int | None, num_nodes: int) -> str | int:
    """The table to print for ``--nodes choice`` over ``num_nodes`` nodes: ``"grouped"``,
    ``"all"`` (one row per node) or N (one row per node, the first N). Without a choice,
    small clusters keep one row per node (a grouped table would hardly be shorter and would
    hide each node's numbers), larger ones are grouped."""
    if choice is None:
        return ALL if num_nodes <= PER_NODE_UP_TO else GROUPED
    if isinstance(choice, int) and choice >= num_nodes:
        return ALL
    return choice
